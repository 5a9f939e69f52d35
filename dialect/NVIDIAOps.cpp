// The `tessera_nvidia` dialect: the delegation contract of docs/design.md §4, checked in the order
// the contract fixes (the first fault found is the one reported).
#include "dialect/NVIDIAOps.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "dialect/DelegationContract.h"
#include "dialect/InlinePtxText.h"
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
  terms.determinism = delegate.getDeclaredDeterminism();
  terms.accuracy = delegate.getDeclaredAccuracy();
  terms.tolerance = bound(delegate.getToleranceAttr());
  terms.tolerance_rel = bound(delegate.getToleranceRelAttr());
  if (std::optional<std::string> fault = CheckContractTerms(terms)) {
    return delegate->emitOpError() << *fault;
  }
  return mlir::success();
}

/// Whether register class `c` (dialect/InlinePtxText.h) holds values of `type`.
bool holds(char c, mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return llvm::is_contained(RegisterClassTypeNames(c), std::string_view(text));
}

/// CUDA's launch limits: grid x < 2^31, y and z ≤ 65535; block x and y ≤ 1024, z ≤ 64, and at
/// most 1024 threads in all.
mlir::LogicalResult verifyLaunchSizes(KernelCallOp op, llvm::StringRef name,
                                      llvm::ArrayRef<int64_t> sizes,
                                      llvm::ArrayRef<int64_t> limits) {
  if (sizes.empty() || sizes.size() > 3) {
    return op.emitOpError() << "expected `" << name << "` to hold 1 to 3 sizes (x, y, z), found "
                            << sizes.size();
  }
  static constexpr const char* kAxes[] = {"x", "y", "z"};
  for (auto [axis, size] : llvm::enumerate(sizes)) {
    if (size < 1 || size > limits[axis]) {
      return op.emitOpError() << "expected `" << name << "` " << kAxes[axis] << " to be in [1, "
                              << limits[axis] << "], found " << size;
    }
  }
  return mlir::success();
}

mlir::LogicalResult verifyCudaKernelLaunch(KernelCallOp op) {
  if (op.getArch() == "host") {
    return op.emitOpError() << "a cuda_kernel delegate runs on NVIDIA GPUs: `arch` must be a GPU "
                               "envelope such as `sm_80+`, found 'host'";
  }
  // The launch configuration is optional in the contract (the original's launcher supplies
  // it); a compile that lowers the call needs it (jit/delegates/delegate_targets.cc). Given, it is
  // whole.
  if (op.getGrid().has_value() != op.getBlock().has_value()) {
    return op.emitOpError() << "binding=cuda_kernel takes `grid` and `block` together (the "
                               "launch configuration, e.g. grid = array<i64: 128>, block = "
                               "array<i64: 256>) or neither";
  }
  if (op.getGrid()) {
    if (mlir::failed(
            verifyLaunchSizes(op, "grid", *op.getGrid(), {int64_t{2147483647}, 65535, 65535})) ||
        mlir::failed(verifyLaunchSizes(op, "block", *op.getBlock(), {1024, 1024, 64}))) {
      return mlir::failure();
    }
    int64_t threads = 1;
    const llvm::ArrayRef<int64_t> block = *op.getBlock();  // (not a range over a temporary)
    for (int64_t size : block) threads *= size;
    if (threads > 1024) {
      return op.emitOpError() << "expected `block` to hold at most 1024 threads, found " << threads;
    }
  }
  if (!op.getResults().empty()) {
    return op.emitOpError() << "expected no results: a cuda_kernel delegate writes its "
                               "memref operands and returns nothing";
  }
  if (op.getSignature()) {
    return op.emitOpError() << "`signature` declares a c_abi callee's C signature; a "
                               "cuda_kernel delegate takes its operands as kernel parameters";
  }
  return mlir::success();
}

mlir::LogicalResult verifyCAbiSignature(KernelCallOp op) {
  if (op.getGrid() || op.getBlock()) {
    return op.emitOpError() << "`grid` and `block` launch a cuda_kernel delegate; a c_abi "
                               "call takes none";
  }
  if (!op.getSignature()) return mlir::success();
  mlir::FunctionType signature = *op.getSignature();
  if (signature.getNumInputs() != op.getArgs().size()) {
    return op.emitOpError() << "expected `signature` to declare " << op.getArgs().size()
                            << " parameter(s), one per operand, found " << signature.getNumInputs();
  }
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(signature.getInputs(), op.getArgs().getTypes()))) {
    auto [declared, found] = pair;
    if (!llvm::isa<mlir::MemRefType>(declared) && !declared.isIntOrFloat()) {
      return op.emitOpError() << "expected `signature` parameter #" << index
                              << " to be a memref or an integer or float scalar, found "
                              << declared;
    }
    if (declared != found) {
      return op.emitOpError() << "expected `signature` parameter #" << index << " to be " << found
                              << " (the operand's type), found " << declared;
    }
  }
  if (signature.getNumResults() > 1 ||
      (signature.getNumResults() == 1 && !signature.getResult(0).isIntOrFloat()) ||
      !llvm::equal(signature.getResults(), op.getResults().getTypes())) {
    return op.emitOpError() << "expected `signature` results to be the op's results: at most "
                               "one integer or float";
  }
  return mlir::success();
}

}  // namespace

/// Whether `op` is in device code: directly in a tile.map body, or anywhere in a gpu.func or
/// a gpu.launch body (where the GPU lowering puts a map's body before outlining it). By name:
/// the NVIDIA dialect depends on neither the Tile nor the GPU dialect.
bool isInDeviceCode(mlir::Operation* op) {
  mlir::Operation* parent = op->getParentOp();
  if (parent != nullptr && parent->getName().getStringRef() == "tile.map") return true;
  for (; parent != nullptr; parent = parent->getParentOp()) {
    const llvm::StringRef name = parent->getName().getStringRef();
    if (name == "gpu.func" || name == "gpu.launch") return true;
  }
  return false;
}

void NVIDIADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/NVIDIAOps.cpp.inc"
      >();
}

mlir::LogicalResult KernelCallOp::verify() {
  // A delegation with no named target cannot be bound, cached or re-measured.
  if (getCallee().empty()) return emitOpError() << "requires a non-empty `callee`";
  // The contract is declared whole, or not at all (the original's undeclared form: `callee`
  // and `arch` only, which a compile refuses: jit/delegates/delegate_targets.cc).
  const std::pair<const char*, bool> contract[] = {{"binding", getBinding().has_value()},
                                                   {"provenance", getProvenance().has_value()},
                                                   {"accuracy", getAccuracy().has_value()},
                                                   {"determinism", getDeterminism().has_value()}};
  int declared = 0;
  for (const auto& [name, present] : contract) declared += present ? 1 : 0;
  if (declared == 0) {
    if (getArch().empty()) return emitOpError() << "requires a non-empty `arch`";
    const std::pair<const char*, bool> terms[] = {
        {"tolerance", getTolerance().has_value()}, {"tolerance_rel", getToleranceRel().has_value()},
        {"covers", getCovers().has_value()},       {"grid", getGrid().has_value()},
        {"block", getBlock().has_value()},         {"signature", getSignature().has_value()}};
    for (const auto& [name, present] : terms) {
      if (present) {
        return emitOpError() << "declares `" << name
                             << "` without the delegation contract (binding, provenance, "
                                "accuracy, determinism)";
      }
    }
    return mlir::success();
  }
  for (const auto& [name, present] : contract) {
    if (!present) {
      return emitOpError() << "requires attribute '" << name
                           << "' (binding, provenance, accuracy and determinism are declared "
                              "together)";
    }
  }
  if (mlir::failed(verifyContract(*this, std::string_view(getDeclaredProvenance()),
                                  std::string_view(getCoversOrDefault())))) {
    return mlir::failure();
  }
  // What the lowering reads: the launch configuration or the declared C signature.
  return getDeclaredBinding() == "cuda_kernel" ? verifyCudaKernelLaunch(*this)
                                               : verifyCAbiSignature(*this);
}

mlir::LogicalResult InlinePtxOp::verify() {
  // An empty body would be a silently successful no-op.
  if (getPtx().empty()) return emitOpError() << "requires non-empty `ptx`";
  if (getConstraints().empty()) {
    return emitOpError() << "requires a non-empty `constraints` string";
  }
  if (mlir::failed(verifyContract(*this, std::nullopt, std::nullopt))) return mlir::failure();
  if (getArch() == "host") {
    return emitOpError() << "inline PTX runs on NVIDIA GPUs: `arch` must be a GPU envelope such "
                            "as `sm_80+`, found 'host'";
  }

  // Beyond the contract: the constraint string describes exactly the op's results and
  // operands, each in a register class that holds its type.
  std::string error;
  std::optional<PtxConstraints> constraints = ParsePtxConstraints(getConstraints(), &error);
  if (!constraints) return emitOpError() << error;
  if (constraints->results.size() != getResults().size() ||
      constraints->operands.size() != getArgs().size()) {
    return emitOpError() << "expected `constraints` to describe " << getResults().size()
                         << " output(s) and " << getArgs().size()
                         << " input(s) (the op's results and operands), found "
                         << constraints->results.size() << " output(s) and "
                         << constraints->operands.size() << " input(s) in \"" << getConstraints()
                         << "\"";
  }
  auto checkTypes = [&](llvm::StringRef what, mlir::TypeRange types,
                        llvm::ArrayRef<char> classes) -> mlir::LogicalResult {
    for (auto [index, pair] : llvm::enumerate(llvm::zip(types, classes))) {
      auto [type, c] = pair;
      if (!holds(c, type)) {
        return emitOpError() << "expected " << what << " #" << index << " to have a type that "
                             << "register class '" << c << "' holds (" << RegisterClassTypes(c)
                             << "), found " << type;
      }
    }
    return mlir::success();
  };
  if (mlir::failed(checkTypes("result", getResults().getTypes(), constraints->results)) ||
      mlir::failed(checkTypes("operand", getArgs().getTypes(), constraints->operands))) {
    return mlir::failure();
  }
  if (std::optional<std::string> fault =
          CheckPtxOperandReferences(getPtx(), getResults().size() + getArgs().size())) {
    return emitOpError() << *fault;
  }
  if (getResults().empty() && !getHasSideEffects()) {
    return emitOpError() << "expected `has_side_effects` on an inline_ptx without results "
                            "(otherwise it is removed as dead code)";
  }
  // Where it stands is not part of the contract (Target IR holds it before outlining); a
  // compile that lowers it refuses it outside device code (jit/delegates/delegate_targets.cc).
  return mlir::success();
}

}  // namespace tessera::nvidia
