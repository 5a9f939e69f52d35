// The compiler's own passes (jit/Passes.td): their generated declarations (`createX()`,
// `XOptions`) and registration (`registerTesseraJitPasses()`, for tessera-opt). The compiler
// builds the two that need its run-time state with their own factories:
// ArbitrateTileOps (jit/arbitration/arbitrate_tile_ops.h) and CreateLowerDelegateCallsPass
// (jit/delegates/delegate_passes.h).
#ifndef TESSERA_JIT_PASSES_H_
#define TESSERA_JIT_PASSES_H_

#include <memory>
#include <string>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessera::jit {

#define GEN_PASS_DECL
#include "jit/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "jit/Passes.h.inc"

}  // namespace tessera::jit

#endif  // TESSERA_JIT_PASSES_H_
