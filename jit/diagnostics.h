// How the compiler prints what it reports: source locations, types, operations, and every
// MLIR diagnostic of a compile collected into one status. The one printer of each.
#ifndef TESSERA_JIT_DIAGNOSTICS_H_
#define TESSERA_JIT_DIAGNOSTICS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"

namespace tessera::jit {

/// `file:line:col` for a location that holds one (fused and named locations are searched),
/// else MLIR's own printing of the location.
std::string FormatLocation(mlir::Location location);

/// A type as the IR spells it, e.g. "memref<?x10xf32>".
std::string TypeText(mlir::Type type);

/// An operation as the IR spells it (with its regions).
std::string OperationText(mlir::Operation* op);

/// Collects every diagnostic of a compile as `location: severity: message` lines (notes
/// included), so a failure status carries all of them with their source locations. Installs
/// itself as `context`'s handler for its lifetime.
class DiagnosticCollector {
 public:
  explicit DiagnosticCollector(mlir::MLIRContext& context);

  bool HasErrors() const { return has_errors_; }

  /// InvalidArgument: `summary`, then every diagnostic recorded so far.
  absl::Status Failure(absl::string_view summary) const;

 private:
  void Record(mlir::Diagnostic& diagnostic);
  void AddLine(mlir::Diagnostic& diagnostic);

  mlir::ScopedDiagnosticHandler handler_;
  std::vector<std::string> lines_;
  bool has_errors_ = false;
};

}  // namespace tessera::jit

#endif  // TESSERA_JIT_DIAGNOSTICS_H_
