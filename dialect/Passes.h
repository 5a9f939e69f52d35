// Passes over Tessera IR (definitions: Passes.td; one pass per file under transforms/).
#ifndef TESSERA_DIALECT_PASSES_H_
#define TESSERA_DIALECT_PASSES_H_

#include <memory>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessera {

#define GEN_PASS_DECL
#include "dialect/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialect/Passes.h.inc"

}  // namespace tessera

#endif  // TESSERA_DIALECT_PASSES_H_
