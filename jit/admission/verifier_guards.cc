#include "jit/admission/verifier_guards.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "jit/diagnostics.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace tessera::jit {
namespace {

absl::Status Refuse(mlir::Operation* op, absl::string_view attribute, absl::string_view extent,
                    int64_t value) {
  return absl::InvalidArgumentError(
      absl::StrCat(FormatLocation(op->getLoc()), ": error: '", op->getName().getStringRef().str(),
                   "' ", attribute, " has ", extent, " = ", value, "; matrix extents lie in [1, ",
                   kMaxMatrixExtent, "] (MLIR 22.1's verifier sizes vectors from them unchecked)"));
}

bool InRange(int64_t value) { return value >= 1 && value <= kMaxMatrixExtent; }

/// The first extent of `value` (the attribute `name` of `op`) out of range.
absl::Status CheckAttribute(mlir::Operation* op, llvm::StringRef name, mlir::Attribute value) {
  const std::string what = absl::StrCat("attribute '", name.str(), "'");
  if (auto shape = llvm::dyn_cast<mlir::NVVM::MMAShapeAttr>(value)) {
    if (!InRange(shape.getM())) return Refuse(op, what, "m", shape.getM());
    if (!InRange(shape.getN())) return Refuse(op, what, "n", shape.getN());
    if (!InRange(shape.getK())) return Refuse(op, what, "k", shape.getK());
    return absl::OkStatus();
  }
  if (auto shape = llvm::dyn_cast<mlir::NVVM::LdStMatrixShapeAttr>(value)) {
    if (!InRange(shape.getM())) return Refuse(op, what, "m", shape.getM());
    if (!InRange(shape.getN())) return Refuse(op, what, "n", shape.getN());
    return absl::OkStatus();
  }
  // The wmma ops' m/n/k and ldmatrix's num (cp.async.wait.group's n is a count: 0 is valid).
  const llvm::StringRef op_name = op->getName().getStringRef();
  const bool extent =
      (op_name.starts_with("nvvm.wmma.") && (name == "m" || name == "n" || name == "k")) ||
      (op_name == "nvvm.ldmatrix" && name == "num");
  auto integer = llvm::dyn_cast<mlir::IntegerAttr>(value);
  if (integer == nullptr || !extent) return absl::OkStatus();
  const llvm::APInt& bits = integer.getValue();
  const int64_t size = bits.getSignificantBits() <= 64 ? bits.getSExtValue() : INT64_MIN;
  if (!InRange(size)) return Refuse(op, what, absl::string_view(name.data(), name.size()), size);
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckBeforeVerifying(mlir::Operation* root) {
  absl::Status status = absl::OkStatus();
  root->walk([&](mlir::Operation* op) {
    if (op->getName().getDialectNamespace() != "nvvm") return mlir::WalkResult::advance();
    // Inherent attributes (properties) and discardable ones alike.
    for (mlir::NamedAttribute attribute : op->getAttrDictionary()) {
      status = CheckAttribute(op, attribute.getName().getValue(), attribute.getValue());
      if (!status.ok()) return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return status;
}

}  // namespace tessera::jit
