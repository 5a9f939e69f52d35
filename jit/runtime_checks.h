// Run-time checks of user IR that report instead of aborting: MLIR's runtime verification
// (-generate-runtime-verification) inserts `cf.assert`s before every memref access user IR makes
// itself; this pass turns each into a call of tessera_rt_check_failed(id) when it fails
// (jit/runtime/checked_call.h), with the messages kept on the module.
#ifndef TESSERA_JIT_RUNTIME_CHECKS_H_
#define TESSERA_JIT_RUNTIME_CHECKS_H_

#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace tessera::jit {

/// The module attribute (an array of strings, indexed by check id) where the pass leaves the
/// message of every check: `file:line:col: what failed`.
inline constexpr char kRuntimeCheckMessagesAttr[] = "tessera_jit.runtime_checks";

/// Lowers every `cf.assert` of a module to `scf.if (!cond) call @tessera_rt_check_failed(id)`.
std::unique_ptr<mlir::Pass> CreateLowerRuntimeChecksPass();

}  // namespace tessera::jit

#endif  // TESSERA_JIT_RUNTIME_CHECKS_H_
