// Entry descriptions from the verified IR.
#include "jit/admission/entry_description.h"

#include <cctype>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "dialect/TesseraDialect.h"
#include "jit/admission/shape_contract.h"
#include "jit/diagnostics.h"
#include "llvm/ADT/STLExtras.h"

namespace tessera::jit {
namespace {

bool IsScalar(mlir::Type type) { return type.isIntOrIndexOrFloat(); }

ElementType DescribeElement(mlir::Type type) {
  if (type.isIndex()) return {ElementType::Class::kIndex, 64};
  if (type.isBF16()) return {ElementType::Class::kBFloat, 16};
  if (llvm::isa<mlir::Float8E4M3FNType>(type)) return {ElementType::Class::kFloat8E4M3FN, 8};
  if (llvm::isa<mlir::Float8E5M2Type>(type)) return {ElementType::Class::kFloat8E5M2, 8};
  if (auto integer = llvm::dyn_cast<mlir::IntegerType>(type)) {
    return {ElementType::Class::kInt, static_cast<int>(integer.getWidth())};
  }
  return {ElementType::Class::kFloat, static_cast<int>(type.getIntOrFloatBitWidth())};
}

EntryArgument DescribeScalar(mlir::Type type) {
  EntryArgument argument;
  argument.kind = EntryArgument::Kind::kScalar;
  argument.type = TypeText(type);
  argument.element = DescribeElement(type);
  return argument;
}

}  // namespace

std::vector<mlir::func::FuncOp> EntryFunctions(mlir::ModuleOp module) {
  std::vector<mlir::func::FuncOp> entries;
  for (auto function : module.getOps<mlir::func::FuncOp>()) {
    if (!function.isPrivate() && !function.isExternal()) entries.push_back(function);
  }
  return entries;
}

namespace {

/// The SSA name (without `%`) that `location` points at in `source`, or "" when it points at
/// none (a location from elsewhere, an `loc(...)` override).
std::string SourceName(absl::string_view source, mlir::Location location) {
  auto file = llvm::dyn_cast<mlir::FileLineColLoc>(location);
  if (file == nullptr || file.getLine() == 0 || file.getColumn() == 0) return "";
  size_t at = 0;
  for (unsigned line = 1; line < file.getLine(); ++line) {
    at = source.find('\n', at);
    if (at == absl::string_view::npos) return "";
    ++at;
  }
  at += file.getColumn() - 1;
  if (at >= source.size() || source[at] != '%') return "";
  size_t end = at + 1;
  while (end < source.size() &&
         (std::isalnum(static_cast<unsigned char>(source[end])) || source[end] == '_' ||
          source[end] == '$' || source[end] == '.' || source[end] == '-')) {
    ++end;
  }
  return std::string(source.substr(at + 1, end - at - 1));
}

}  // namespace

absl::StatusOr<std::vector<EntryFunction>> DescribeEntries(mlir::ModuleOp module,
                                                           absl::string_view source) {
  std::vector<EntryFunction> entries;
  for (mlir::func::FuncOp function : EntryFunctions(module)) {
    EntryFunction entry{function.getName().str(), {}, {}, isDeterministic(function), {}};
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
      auto memref = llvm::dyn_cast<mlir::MemRefType>(type);
      if (memref && IsScalar(memref.getElementType()) && memref.getLayout().isIdentity()) {
        EntryArgument argument;
        argument.kind = EntryArgument::Kind::kMemRef;
        argument.type = TypeText(type);
        argument.element = DescribeElement(memref.getElementType());
        argument.rank = memref.getRank();
        for (int64_t size : memref.getShape()) {
          argument.shape.push_back(mlir::ShapedType::isDynamic(size) ? -1 : size);
        }
        entry.arguments.push_back(std::move(argument));
      } else if (IsScalar(type)) {
        entry.arguments.push_back(DescribeScalar(type));
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            FormatLocation(function.getLoc()), ": error: argument #", index, " of entry @",
            entry.name, " has type ", TypeText(type),
            "; expected a ranked memref with the identity layout or an integer, index or float "
            "scalar"));
      }
    }
    if (function.getNumResults() > 1 ||
        (function.getNumResults() == 1 && !IsScalar(function.getResultTypes()[0]))) {
      return absl::InvalidArgumentError(absl::StrCat(
          FormatLocation(function.getLoc()), ": error: entry @", entry.name,
          " must return nothing or one scalar (write tensors through memref arguments)"));
    }
    for (mlir::Type result : function.getResultTypes()) {
      entry.results.push_back(DescribeScalar(result));
    }
    for (auto [index, argument] : llvm::enumerate(entry.arguments)) {
      argument.name = SourceName(source, function.getArgument(index).getLoc());
    }
    TESSERA_RETURN_IF_ERROR(DeriveShapeContract(function, entry));
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace tessera::jit
