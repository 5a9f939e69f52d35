// The pass that brings delegates into a compile: resolving, checking and lowering
// tessera_nvidia.kernel_call (the choice of a delegate for a Tile op is
// jit/arbitration/arbitrate_tile_ops.h).
#ifndef TESSERA_JIT_DELEGATES_DELEGATE_PASSES_H_
#define TESSERA_JIT_DELEGATES_DELEGATE_PASSES_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "arbiter/arbitration_point.h"
#include "arbiter/candidate.h"
#include "arbiter/decision_record.h"
#include "jit/compile_options.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessera::jit::delegates {

class DelegateRegistry;

/// Module attributes the lowering leaves for the compiler: the resolved c_abi callees and the
/// identities of every delegate used (arrays of strings).
/// (Not `tessera.*`: the tessera dialect verifies its attributes and knows only
/// `tessera.deterministic`; these never leave the compiler.)
inline constexpr char kDelegateSymbolsAttr[] = "tessera_jit.delegate_symbols";
inline constexpr char kDelegateIdentitiesAttr[] = "tessera_jit.delegate_identities";

/// Every kernel_call in host code is resolved against `registry` (null: nothing registered) and
/// lowered: `c_abi` → a call of the symbol found in a registered library, operands checked
/// against the C signature catalogue or the op's declared `signature`; `cuda_kernel` (nvptx) → a
/// launch of the registered image's kernel with the op's `grid` and `block`. Each call counts as a
/// dispatch. Errors name the callee, the operand position, what was expected and found.
std::unique_ptr<mlir::Pass> CreateLowerDelegateCallsPass(const DelegateRegistry* registry,
                                                         Target target);

}  // namespace tessera::jit::delegates

#endif  // TESSERA_JIT_DELEGATES_DELEGATE_PASSES_H_
