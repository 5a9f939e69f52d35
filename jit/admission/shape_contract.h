// The contract of an entry function: which sizes the caller's arguments must agree on, which
// tensor arguments it writes and which of them may share memory, derived from the semantics of
// every Tile op the entry runs (directly or through func.call). Recorded in the compiled module and
// the cache artifact; checked by invoke before anything runs (runtime/entry_contract.h).
#ifndef TESSERA_JIT_ADMISSION_SHAPE_CONTRACT_H_
#define TESSERA_JIT_ADMISSION_SHAPE_CONTRACT_H_

#include <vector>

#include "absl/status/status.h"
#include "jit/compiled_module.h"

namespace mlir::func {
class FuncOp;
}  // namespace mlir::func

namespace tessera::jit {

/// Fills `entry.size_constraints` and `entry.overlaps` and marks the tensor arguments `entry`
/// writes (EntryArgument::written) for entry function `function`, whose arguments
/// `entry.arguments` already describes.
///
/// Every size a Tile op reads must be static, a dimension of an argument, an integer scalar
/// argument of type `index`, or `memref.dim` of those (also through the sizes of
/// `memref.alloc`/`alloca`; a cast may change a value, so none is followed);
/// anything else — a size computed at run time, a value of unknown origin — is an
/// InvalidArgument at the op's location, as are two static sizes that disagree, calls nested
/// deeper than 16 and call graphs that reach more than 4096 bodies. So is an op that writes a
/// buffer it also reads or writes through another operand (the same argument passed twice
/// through func.call, say), unless both operands are elementwise and one is only read
/// (jit/admission/memref_accesses.h).
absl::Status DeriveShapeContract(mlir::func::FuncOp function, EntryFunction& entry);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ADMISSION_SHAPE_CONTRACT_H_
