// The `tessera_nvidia` dialect: the delegation contract of DESIGN.md §4, checked in the order the
// contract fixes (the first fault found is the one reported).
#include "dialect/NVIDIAOps.h"

#include "dialect/DelegationContract.h"

#include <optional>
#include <string_view>
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

/// Contract rules 2–5 (dialect/DelegationContract.h), shared with provider declarations.
mlir::LogicalResult verifyContract(DelegateOpInterface delegate,
                                   std::optional<std::string_view> provenance,
                                   std::optional<std::string_view> covers) {
  auto bound = [](mlir::FloatAttr attr) -> std::optional<double> {
    if (!attr) return std::nullopt;
    return attr.getValueAsDouble();
  };
  ContractTerms terms;
  terms.arch = delegate.getArch();
  terms.provenance = provenance;
  terms.covers = covers;
  terms.determinism = delegate.getDeterminism();
  terms.accuracy = delegate.getAccuracy();
  terms.tolerance = bound(delegate.getToleranceAttr());
  terms.tolerance_rel = bound(delegate.getToleranceRelAttr());
  if (std::optional<std::string> fault = CheckContractTerms(terms)) {
    return delegate->emitOpError() << *fault;
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
  return verifyContract(*this, std::string_view(getProvenance()),
                        std::string_view(getCoversOrDefault()));
}

mlir::LogicalResult InlinePtxOp::verify() {
  // An empty body would be a silently successful no-op.
  if (getPtx().empty()) return emitOpError() << "requires non-empty `ptx`";
  if (getConstraints().empty()) {
    return emitOpError() << "requires a non-empty `constraints` string";
  }
  if (mlir::failed(verifyContract(*this, std::nullopt, std::nullopt))) return mlir::failure();

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
