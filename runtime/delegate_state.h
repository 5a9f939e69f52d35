// The run-time state of one delegate registry: its kernel images (loaded on each device on
// first launch) and its cuBLAS entry points (a handle per thread and device). Owned by the
// DelegateRegistry of the context that registered them; reaches JIT'd code through the
// InvocationScope of each call (runtime/invocation.h), never through process globals.
#ifndef TESSERA_RUNTIME_DELEGATE_STATE_H_
#define TESSERA_RUNTIME_DELEGATE_STATE_H_

#include <cuda.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace tessera::runtime {

/// Thread-safe.
class DelegateRuntime {
 public:
  DelegateRuntime();
  ~DelegateRuntime();
  DelegateRuntime(const DelegateRuntime&) = delete;
  DelegateRuntime& operator=(const DelegateRuntime&) = delete;

  /// Makes a registered kernel image launchable by name (cubin first, PTX fallback on load).
  void AddKernelImage(const std::string& name, std::string cubin, std::string ptx);

  /// The module of image `name` on `device`, loaded on first use. FailedPrecondition for an
  /// image this registry does not hold.
  absl::StatusOr<CUmodule> ImageModule(const std::string& name, int device);

  /// The cuBLAS entry points the handle management needs, from the registered library.
  void SetCublasEntryPoints(void* create, void* set_stream, void* destroy);

  /// This thread's cuBLAS handle for `device`, bound to `stream` (a handle is used by one
  /// thread at a time). FailedPrecondition when this registry has no cuBLAS.
  absl::StatusOr<void*> CublasHandle(int device, CUstream stream);

  /// Destroys every cuBLAS handle made so far (the registry calls it before it closes the
  /// library) and unloads the images' modules.
  void Release();

 private:
  using CublasCreate = int (*)(void**);
  using CublasSetStream = int (*)(void*, void*);
  using CublasDestroy = int (*)(void*);

  std::atomic<CublasCreate> cublas_create_{nullptr};
  std::atomic<CublasSetStream> cublas_set_stream_{nullptr};
  std::atomic<CublasDestroy> cublas_destroy_{nullptr};
  absl::Mutex mu_;
  std::map<std::string, std::pair<std::string, std::string>> images_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, int>, CUmodule> loaded_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::thread::id, int>, void*> handles_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_DELEGATE_STATE_H_
