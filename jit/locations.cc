#include "jit/locations.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace tessera::jit {

std::string FormatLocation(mlir::Location location) {
  if (auto file = location->findInstanceOf<mlir::FileLineColLoc>()) {
    return absl::StrCat(file.getFilename().str(), ":", file.getLine(), ":", file.getColumn());
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << location;
  return text;
}

}  // namespace tessera::jit
