// What a caller sees of a module's entries: names, argument kinds, types, SSA names and shape
// contracts, from the verified IR.
#ifndef TESSERA_JIT_ADMISSION_ENTRY_DESCRIPTION_H_
#define TESSERA_JIT_ADMISSION_ENTRY_DESCRIPTION_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/compiled_module.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessera::jit {

/// The public, defined functions of the module: what callers invoke.
std::vector<mlir::func::FuncOp> EntryFunctions(mlir::ModuleOp module);

/// Checks the entry signatures and describes them: memref or scalar arguments, at most one
/// scalar result, argument names from `source`, and each entry's shape contract
/// (jit/admission/shape_contract.h). InvalidArgument with the location otherwise.
absl::StatusOr<std::vector<EntryFunction>> DescribeEntries(mlir::ModuleOp module,
                                                           absl::string_view source);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ADMISSION_ENTRY_DESCRIPTION_H_
