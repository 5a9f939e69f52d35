// The invocation a runtime entry point serves: while an InvocationScope is alive on a thread,
// kernels launched by JIT'd host code go to its stream on its device, delegate calls use its
// registry's state, and the first failure is kept in it (the entry points return nothing to
// check).
#ifndef TESSERA_RUNTIME_INVOCATION_H_
#define TESSERA_RUNTIME_INVOCATION_H_

#include <cuda.h>

#include "absl/status/status.h"

namespace tessera::runtime {

class DelegateRuntime;

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
/// delegate state (0, the default stream and null outside any scope), whether it already failed,
/// and recording a failure in it (dropped outside any scope).
int CurrentInvocationOrdinal();
CUstream CurrentInvocationStream();
DelegateRuntime* CurrentInvocationDelegates();
bool InvocationFailed();
void RecordFailure(absl::Status status);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_INVOCATION_H_
