// The `tessera_nvidia` dialect: the delegation contract of DESIGN.md §4, checked in the order the
// contract fixes (the first fault found is the one reported).
#include "dialect/NVIDIAOps.h"

#include <cmath>
#include <cstddef>
#include <string>

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialect/NVIDIADialect.cpp.inc"
#include "dialect/NVIDIAInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialect/NVIDIAOps.cpp.inc"

namespace tessera::nvidia {
namespace {

/// Spells a bound the same way on every platform: `nan`, `inf`, `-inf` or the value.
std::string formatBound(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text;
  llvm::raw_string_ostream(text) << value;
  return text;
}

/// Contract rule 3: a declared bound is finite and > 0 (rejects 0, negatives, NaN and ±inf).
mlir::LogicalResult verifyBound(mlir::Operation* op, llvm::StringRef name,
                                mlir::FloatAttr bound) {
  if (!bound) return mlir::success();
  const double value = bound.getValueAsDouble();
  if (!std::isfinite(value) || !(value > 0.0)) {
    return op->emitOpError() << "`" << name << "` must be finite and greater than zero, found "
                             << formatBound(value);
  }
  return mlir::success();
}

/// Contract rules 2–5, shared by kernel_call and inline_ptx (rule 1 is op-specific).
mlir::LogicalResult verifyContract(DelegateOpInterface delegate) {
  mlir::Operation* op = delegate.getOperation();
  if (delegate.getArch().empty()) return op->emitOpError() << "requires a non-empty `arch`";
  mlir::FloatAttr tolerance = delegate.getToleranceAttr();
  mlir::FloatAttr toleranceRel = delegate.getToleranceRelAttr();
  if (mlir::failed(verifyBound(op, "tolerance", tolerance)) ||
      mlir::failed(verifyBound(op, "tolerance_rel", toleranceRel))) {
    return mlir::failure();
  }
  const bool hasBound = tolerance || toleranceRel;
  if (delegate.getAccuracy() == "tolerance_bounded" && !hasBound) {
    return op->emitOpError()
           << "accuracy=tolerance_bounded requires `tolerance` and/or `tolerance_rel`";
  }
  if (delegate.getAccuracy() == "reference_exact" && hasBound) {
    return op->emitOpError() << "accuracy=reference_exact must not carry a tolerance";
  }
  return mlir::success();
}

bool isScalar(mlir::Type type) { return type.isIntOrIndexOrFloat(); }

}  // namespace

void NVIDIADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/NVIDIAOps.cpp.inc"
      >();
}

mlir::LogicalResult KernelCallOp::verify() {
  // A delegation with no named target cannot be bound, cached or re-measured.
  if (getCallee().empty()) return emitOpError() << "requires a non-empty `callee`";
  return verifyContract(*this);
}

mlir::LogicalResult InlinePtxOp::verify() {
  // An empty body would be a silently successful no-op.
  if (getPtx().empty()) return emitOpError() << "requires non-empty `ptx`";
  if (getConstraints().empty()) {
    return emitOpError() << "requires a non-empty `constraints` string";
  }
  if (mlir::failed(verifyContract(*this))) return mlir::failure();

  // Beyond the contract: the constraint string describes exactly the op's results (entries
  // starting with `=`) and operands (the other entries; `~{...}` clobbers count as neither).
  size_t outputs = 0;
  size_t inputs = 0;
  llvm::SmallVector<llvm::StringRef> entries;
  getConstraints().split(entries, ',');
  for (llvm::StringRef entry : entries) {
    entry = entry.trim();
    if (entry.starts_with("~")) continue;
    if (entry.starts_with("=")) {
      ++outputs;
    } else {
      ++inputs;
    }
  }
  if (outputs != getResults().size() || inputs != getArgs().size()) {
    return emitOpError() << "expected `constraints` to describe " << getResults().size()
                         << " output(s) and " << getArgs().size()
                         << " input(s) (the op's results and operands), found " << outputs
                         << " output(s) and " << inputs << " input(s) in \""
                         << getConstraints() << "\"";
  }
  for (auto [index, type] : llvm::enumerate(getArgs().getTypes())) {
    if (!isScalar(type)) {
      return emitOpError() << "expected operand #" << index
                           << " to be an integer or float scalar, found " << type;
    }
  }
  for (auto [index, type] : llvm::enumerate(getResults().getTypes())) {
    if (!isScalar(type)) {
      return emitOpError() << "expected result #" << index
                           << " to be an integer or float scalar, found " << type;
    }
  }
  return mlir::success();
}

}  // namespace tessera::nvidia
