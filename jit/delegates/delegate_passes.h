// The passes that bring delegates into a compile: choosing a vendor library for tile.matmul,
// and resolving, checking and lowering tessera_nvidia.kernel_call.
#ifndef TESSERA_JIT_DELEGATES_DELEGATE_PASSES_H_
#define TESSERA_JIT_DELEGATES_DELEGATE_PASSES_H_

#include <memory>
#include <string>

#include "jit/compile_options.h"
#include "mlir/Pass/Pass.h"

namespace tessera::jit::delegates {

class DelegateRegistry;

/// Module attributes the lowering leaves for the compiler: the resolved c_abi callees and the
/// identities of every delegate used (arrays of strings).
/// (Not `tessera.*`: the tessera dialect verifies its attributes and knows only
/// `tessera.deterministic`; these never leave the compiler.)
inline constexpr char kDelegateSymbolsAttr[] = "tessera_jit.delegate_symbols";
inline constexpr char kDelegateIdentitiesAttr[] = "tessera_jit.delegate_identities";

/// tile.matmul with `delegate = "<provider>"` — or every tile.matmul when `forced` names a
/// provider — becomes a `tessera_nvidia.kernel_call` to that vendor library (cblas_sgemm on the
/// host, cublasSgemm_v2 on nvptx) with the provider's contract, its operands marshalled into
/// the callee's ABI (layout, transposes, leading dimensions). A provider that does not apply is
/// an error naming the gate: the target, f32-only storage, the numeric policy, or `covers =
/// "root_only"` declining a fused epilogue.
std::unique_ptr<mlir::Pass> CreateSelectMatmulDelegatesPass(Target target, std::string forced);

/// Every kernel_call in host code is resolved against `registry` (null: nothing registered) and
/// lowered: `c_abi` → a call of the symbol found in a registered library, operands checked
/// against the ABI catalogue or the op's declared `signature`; `cuda_kernel` (nvptx) → a launch
/// of the registered image's kernel with the op's `grid` and `block`. Each call counts as a
/// dispatch. Errors name the callee, the operand position, what was expected and found.
std::unique_ptr<mlir::Pass> CreateLowerDelegateCallsPass(const DelegateRegistry* registry,
                                                         Target target);

}  // namespace tessera::jit::delegates

#endif  // TESSERA_JIT_DELEGATES_DELEGATE_PASSES_H_
