// The `tile` dialect: Tile ops (map, reduce, matmul, softmax, ...) on memrefs, and the original
// Tessera's launch-level kernels it imports (TileLaunchOps.td).
#ifndef TESSERA_DIALECT_TILEOPS_H_
#define TESSERA_DIALECT_TILEOPS_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/TileDialect.h.inc"
#include "dialect/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/TileAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/TileOps.h.inc"

#endif  // TESSERA_DIALECT_TILEOPS_H_
