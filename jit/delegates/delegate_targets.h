// Whether each delegate a module names can serve this compile (docs/design.md §4, docs/ir.md "Arch
// envelopes", docs/delegates.md "Targets and pointer spaces"): checked after arbitration and the
// determinism check, before anything is lowered or dispatched.
#ifndef TESSERA_JIT_DELEGATES_DELEGATE_TARGETS_H_
#define TESSERA_JIT_DELEGATES_DELEGATE_TARGETS_H_

#include "absl/status/status.h"
#include "jit/compile_options.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace tessera::jit::delegates {

/// OK when every delegate op fits the compile; otherwise FailedPrecondition
/// `file:line:col: error: …` for the first one that does not:
/// * on the host target, an `inline_ptx` or a `cuda_kernel` delegate (named with the nvptx
///   target it needs), and raw `gpu.module` kernels;
/// * an arch envelope that does not include the compile's target and arch (naming both);
/// * a `c_abi` callee whose library takes the other target's pointers (OpenBLAS on nvptx,
///   cuBLAS on host), found through `options.delegates`.
absl::Status CheckDelegateTargets(mlir::ModuleOp module, const CompileOptions& options);

}  // namespace tessera::jit::delegates

#endif  // TESSERA_JIT_DELEGATES_DELEGATE_TARGETS_H_
