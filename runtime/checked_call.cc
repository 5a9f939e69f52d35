#include "runtime/checked_call.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>

namespace tessera::runtime {
namespace {

/// The innermost CallChecked on this thread.
thread_local std::jmp_buf* current_call = nullptr;

// JIT'd code has no destructors or cleanups between here and CallChecked, so leaving its frames
// with longjmp skips nothing but the rest of the entry.
extern "C" void TesseraCheckFailed(int64_t id) {
  if (current_call == nullptr) {
    // Called outside CallChecked (a test calling the packed entry directly): nothing can take
    // the failure back, and continuing would run the faulty access.
    std::fprintf(stderr, "tessera-jit: run-time check %lld failed outside a checked call\n",
                 static_cast<long long>(id));
    std::abort();
  }
  std::longjmp(*current_call, static_cast<int>(id) + 1);
}

}  // namespace

int64_t CallChecked(PackedEntry entry, void** args) {
  std::jmp_buf buffer;
  std::jmp_buf* const outer = current_call;
  current_call = &buffer;
  const int failed = setjmp(buffer);
  if (failed == 0) entry(args);
  current_call = outer;
  return failed == 0 ? -1 : failed - 1;
}

RuntimeSymbolList RuntimeCheckSymbols() {
  return {{kCheckFailedSymbol, reinterpret_cast<void*>(&TesseraCheckFailed)}};
}

}  // namespace tessera::runtime
