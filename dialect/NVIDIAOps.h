// The `tessera_nvidia` dialect: delegation ops (kernel_call, inline_ptx) and the
// DelegateOpInterface they share.
#ifndef TESSERA_DIALECT_NVIDIAOPS_H_
#define TESSERA_DIALECT_NVIDIAOPS_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "dialect/NVIDIADialect.h.inc"
#include "dialect/NVIDIAInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialect/NVIDIAOps.h.inc"

namespace tessera::nvidia {

/// Whether `op` is in device code: directly in a tile.map body, or anywhere in a gpu.func or a
/// gpu.launch body (where the GPU lowering puts a map's body before outlining it).
bool isInDeviceCode(mlir::Operation* op);

}  // namespace tessera::nvidia

#endif  // TESSERA_DIALECT_NVIDIAOPS_H_
