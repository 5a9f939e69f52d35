// The IR the service accepts: user IR is not trusted code. An allowlist of dialects and ops an
// entry may contain (docs/ir.md, "What a module may contain"); everything else is refused at
// compile with the op and its location, before any pass runs on it.
#ifndef TESSERA_JIT_ADMISSION_IR_ALLOWLIST_H_
#define TESSERA_JIT_ADMISSION_IR_ALLOWLIST_H_

#include "absl/status/status.h"
#include "jit/compile_options.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace tessera::jit {

/// OK when every op outside `gpu.module`s is allowed for `target` and every function signature
/// uses supported types; otherwise InvalidArgument `file:line:col: error: …` naming the op
/// (or function) and what to do instead.
absl::Status CheckAllowedIr(mlir::ModuleOp module, Target target);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ADMISSION_IR_ALLOWLIST_H_
