// TSan builds only (--config=tsan): teaches ThreadSanitizer the happens-before edges of
// abseil's Mutex and Notification. The system abseil is not built with TSan, so its locking
// is invisible to it and every access guarded by an absl::Mutex would be reported as a race.
// These definitions interpose the library's (the binary is linked statically: its symbols come
// first), call the real ones through dlsym(RTLD_NEXT) and annotate acquire/release around them.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);

namespace {

template <typename Function>
Function Real(const char* mangled) {
  void* symbol = dlsym(RTLD_NEXT, mangled);
  if (symbol == nullptr) {
    std::fprintf(stderr, "tsan_absl_sync: %s not found\n", mangled);
    std::abort();
  }
  return reinterpret_cast<Function>(symbol);
}

using MutexCall = void (*)(absl::Mutex*);
using MutexTry = bool (*)(absl::Mutex*);
using NotificationCall = void (*)(absl::Notification*);
using NotificationWait = void (*)(const absl::Notification*);

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const auto real = Real<MutexCall>("_ZN4absl7debian35Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::Unlock() {
  static const auto real = Real<MutexCall>("_ZN4absl7debian35Mutex6UnlockEv");
  __tsan_release(this);
  real(this);
}

bool Mutex::TryLock() {
  static const auto real = Real<MutexTry>("_ZN4absl7debian35Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Mutex::ReaderLock() {
  static const auto real = Real<MutexCall>("_ZN4absl7debian35Mutex10ReaderLockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::ReaderUnlock() {
  static const auto real = Real<MutexCall>("_ZN4absl7debian35Mutex12ReaderUnlockEv");
  __tsan_release(this);
  real(this);
}

bool Mutex::ReaderTryLock() {
  static const auto real = Real<MutexTry>("_ZN4absl7debian35Mutex13ReaderTryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Notification::Notify() {
  static const auto real = Real<NotificationCall>("_ZN4absl7debian312Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}

void Notification::WaitForNotification() const {
  static const auto real =
      Real<NotificationWait>("_ZNK4absl7debian312Notification19WaitForNotificationEv");
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

ABSL_NAMESPACE_END
}  // namespace absl
