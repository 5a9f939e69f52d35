// The entry points JIT'd host code calls to load its device image and launch kernels (the
// `mgpu*` ABI that MLIR's gpu-to-llvm lowering emits), implemented on GpuRuntime. Launches go
// to the stream of the enclosing InvocationScope: an invoke enqueues on the caller's stream and
// returns without waiting.
#ifndef TESSERA_JIT_RUNTIME_KERNEL_ABI_H_
#define TESSERA_JIT_RUNTIME_KERNEL_ABI_H_

#include <cuda.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::jit::runtime {

class DelegateRuntime;

/// Packs a device image for embedding in host code: the cubin (loaded first) and the PTX (the
/// driver-JIT fallback). Either may be empty.
std::string PackDeviceImage(absl::string_view cubin, absl::string_view ptx);

/// Splits a packed image; false when `data` is not one (then it is treated as a raw cubin).
bool UnpackDeviceImage(absl::string_view data, absl::string_view& cubin, absl::string_view& ptx);

/// While alive, kernels launched by JIT'd host code on this thread go to `stream` on device
/// `ordinal`, delegate calls use `delegates` (the module's registry's state; null: none), and
/// the first runtime failure is kept here (the ABI's functions return nothing to check).
/// Thread-compatible; one per thread at a time.
class InvocationScope {
 public:
  InvocationScope(int ordinal, CUstream stream, DelegateRuntime* delegates = nullptr);
  ~InvocationScope();
  InvocationScope(const InvocationScope&) = delete;
  InvocationScope& operator=(const InvocationScope&) = delete;

  /// OK, or the first failure of a runtime call made inside the scope.
  const absl::Status& status() const { return status_; }

  /// Records `status` if it is the first failure.
  void Record(absl::Status status);

  int ordinal() const { return ordinal_; }
  CUstream stream() const { return stream_; }
  DelegateRuntime* delegates() const { return delegates_; }

 private:
  int ordinal_;
  CUstream stream_;
  DelegateRuntime* delegates_;
  absl::Status status_;
  InvocationScope* previous_;
};

/// For runtime entry points called by JIT'd code: the enclosing scope's device, stream and
/// delegate state (0, the default stream and null outside any scope), whether it already failed, and recording a
/// failure in it (dropped outside any scope).
int CurrentInvocationOrdinal();
CUstream CurrentInvocationStream();
DelegateRuntime* CurrentInvocationDelegates();
bool InvocationFailed();
void RecordFailure(absl::Status status);

/// The runtime's symbols for the JIT: (name, address) of every `mgpu*` entry point.
std::vector<std::pair<std::string, void*>> RuntimeSymbols();

}  // namespace tessera::jit::runtime

#endif  // TESSERA_JIT_RUNTIME_KERNEL_ABI_H_
