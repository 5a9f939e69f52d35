// The compiler's printers and its diagnostic collector.
#include "jit/diagnostics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

namespace tessera::jit {
namespace {

absl::string_view SeverityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
    case mlir::DiagnosticSeverity::Error:
      return "error";
    case mlir::DiagnosticSeverity::Warning:
      return "warning";
    case mlir::DiagnosticSeverity::Note:
      return "note";
    case mlir::DiagnosticSeverity::Remark:
      return "remark";
  }
  return "diagnostic";
}

}  // namespace

std::string FormatLocation(mlir::Location location) {
  if (auto file = location->findInstanceOf<mlir::FileLineColLoc>()) {
    return absl::StrCat(file.getFilename().str(), ":", file.getLine(), ":", file.getColumn());
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << location;
  return text;
}

std::string TypeText(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

std::string OperationText(mlir::Operation* op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

DiagnosticCollector::DiagnosticCollector(mlir::MLIRContext& context)
    : handler_(&context, [this](mlir::Diagnostic& diagnostic) {
        Record(diagnostic);
        return mlir::success();
      }) {}

absl::Status DiagnosticCollector::Failure(absl::string_view summary) const {
  if (lines_.empty()) return absl::InvalidArgumentError(summary);
  return absl::InvalidArgumentError(absl::StrCat(summary, ":\n", absl::StrJoin(lines_, "\n")));
}

void DiagnosticCollector::Record(mlir::Diagnostic& diagnostic) {
  if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error) has_errors_ = true;
  AddLine(diagnostic);
  for (mlir::Diagnostic& note : diagnostic.getNotes()) {
    // MLIR attaches the failing operation's full text to pass failures; it repeats the IR and
    // hides the message, so it is left out.
    if (llvm::StringRef(note.str()).starts_with("see current operation")) continue;
    AddLine(note);
  }
}

void DiagnosticCollector::AddLine(mlir::Diagnostic& diagnostic) {
  lines_.push_back(absl::StrCat(FormatLocation(diagnostic.getLocation()), ": ",
                                SeverityName(diagnostic.getSeverity()), ": ", diagnostic.str()));
}

}  // namespace tessera::jit
