// Which memref operands an op reads and writes, and which of them it touches element by element:
// what the entry's contract needs to say which tensor arguments are outputs and which may share
// memory (runtime::ArgumentOverlap).
#ifndef TESSERA_JIT_ADMISSION_MEMREF_ACCESSES_H_
#define TESSERA_JIT_ADMISSION_MEMREF_ACCESSES_H_

#include <optional>
#include <vector>

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace tessera::jit {

/// One memref operand of an op, as the op uses it.
struct MemRefAccess {
  mlir::Value value;
  bool written = false;  ///< the op may write it (else it only reads it)
  /// The op reads or writes it at the same index as each output element, reading every element
  /// before it writes that element (tile.map's operands, a norm's rows, a matmul's C and
  /// residual): a read and a written operand of this kind may be one buffer.
  bool elementwise = false;
};

/// The memref operands `op` reads and writes, from its MemoryEffectOpInterface (one entry per
/// operand, in operand order; none for an op without memory effects on its operands).
/// std::nullopt for code the compiler did not generate (tessera_nvidia.kernel_call,
/// gpu.launch_func): it may write any buffer it is given, and how it may share memory is the
/// callee's contract, not one the compiler knows.
std::optional<std::vector<MemRefAccess>> MemRefAccesses(mlir::Operation* op);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ADMISSION_MEMREF_ACCESSES_H_
