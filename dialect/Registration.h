// Registration of the dialects needed to parse and verify Tessera IR. (The passes register
// through registerTesseraPasses() in dialect/Passes.h.)
#ifndef TESSERA_DIALECT_REGISTRATION_H_
#define TESSERA_DIALECT_REGISTRATION_H_

#include "mlir/IR/DialectRegistry.h"

namespace tessera {

/// Adds the Tessera dialects (`tessera`, `tile`, `tessera_nvidia`) and the upstream dialects
/// Tessera IR is written in (func, arith, math, memref, gpu) to `registry`.
void registerTesseraDialects(mlir::DialectRegistry& registry);

}  // namespace tessera

#endif  // TESSERA_DIALECT_REGISTRATION_H_
