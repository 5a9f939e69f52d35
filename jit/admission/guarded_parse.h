// The one way Tessera IR text becomes a module, for the compiler and every tool: the accepted
// Tile forms (jit/admission/tile_forms.h) and the source limits before parsing
// (jit/admission/source_limits.h), a parse without verification, the verifier guards
// (jit/admission/verifier_guards.h), then MLIR's verifier.
#ifndef TESSERA_JIT_ADMISSION_GUARDED_PARSE_H_
#define TESSERA_JIT_ADMISSION_GUARDED_PARSE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace tessera::jit {

/// Parses a NUL-terminated copy of `source` (MLIR's lexer reads one byte past the end of its
/// buffer) without running the verifier. Null when it does not parse (the diagnostics went to
/// `context`'s handler). Only for IR that CheckSourceBeforeParsing has accepted.
mlir::OwningOpRef<mlir::ModuleOp> ParseWithoutVerifying(mlir::MLIRContext& context,
                                                        absl::string_view source,
                                                        absl::string_view source_name);

/// CheckTileForms, CheckSourceBeforeParsing, ParseWithoutVerifying, CheckBeforeVerifying, then
/// mlir::verify. A guard's refusal is its InvalidArgument status; IR that does not parse or verify
/// is InvalidArgument "invalid Tessera IR", its diagnostics left to `context`'s handler.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ParseGuarded(mlir::MLIRContext& context,
                                                               absl::string_view source,
                                                               absl::string_view source_name);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ADMISSION_GUARDED_PARSE_H_
