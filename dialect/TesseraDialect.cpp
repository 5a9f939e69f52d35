// The `tessera` dialect: verification of `tessera.deterministic` and `tessera.accuracy` on
// entry functions and `tessera.determinism` on raw kernels.
#include "dialect/TesseraDialect.h"

#include <cmath>

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "dialect/TesseraDialect.cpp.inc"

namespace tessera {
namespace {

constexpr llvm::StringLiteral kSeedKey = "seed";
constexpr llvm::StringLiteral kLevelKey = "level";

mlir::LogicalResult verifyDeterministicAttr(mlir::Operation* op, mlir::Attribute value) {
  if (!llvm::isa<mlir::FunctionOpInterface>(op)) {
    return op->emitError() << "'" << kDeterministicAttrName
                           << "' is only valid on a function, found it on '" << op->getName()
                           << "'";
  }
  if (llvm::isa<mlir::UnitAttr>(value)) return mlir::success();
  auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(value);
  if (!dict) {
    return op->emitError() << "'" << kDeterministicAttrName
                           << "' expects a unit attribute or a dictionary {seed = N, level = "
                              "\"run_to_run\" | \"batch_invariant\"}, found "
                           << value;
  }
  for (mlir::NamedAttribute entry : dict) {
    if (entry.getName() == kLevelKey) {
      auto level = llvm::dyn_cast<mlir::StringAttr>(entry.getValue());
      if (!level || (level.getValue() != "run_to_run" && level.getValue() != "batch_invariant")) {
        return op->emitError() << "'" << kDeterministicAttrName
                               << "' expects 'level' to be \"run_to_run\" or "
                                  "\"batch_invariant\", found "
                               << entry.getValue();
      }
      continue;
    }
    if (entry.getName() != kSeedKey) {
      return op->emitError() << "'" << kDeterministicAttrName << "' has unknown key '"
                             << entry.getName().getValue() << "'; expected only 'seed' and 'level'";
    }
    auto seed = llvm::dyn_cast<mlir::IntegerAttr>(entry.getValue());
    if (!seed || !seed.getType().isSignlessInteger() || seed.getValue().isNegative() ||
        seed.getValue().getActiveBits() > 64) {
      return op->emitError() << "'" << kDeterministicAttrName
                             << "' expects 'seed' to be a non-negative integer of at most 64 "
                                "bits, found "
                             << entry.getValue();
    }
  }
  return mlir::success();
}

mlir::LogicalResult verifyAccuracyAttr(mlir::Operation* op, mlir::Attribute value) {
  if (!llvm::isa<mlir::FunctionOpInterface>(op)) {
    return op->emitError() << "'" << kAccuracyAttrName
                           << "' is only valid on a function, found it on '" << op->getName()
                           << "'";
  }
  auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(value);
  if (!dict || dict.empty()) {
    return op->emitError() << "'" << kAccuracyAttrName
                           << "' expects a dictionary {atol = F, rtol = F} with at least one "
                              "key, found "
                           << value;
  }
  for (mlir::NamedAttribute entry : dict) {
    if (entry.getName() != "atol" && entry.getName() != "rtol") {
      return op->emitError() << "'" << kAccuracyAttrName << "' has unknown key '"
                             << entry.getName().getValue() << "'; expected only 'atol' and 'rtol'";
    }
    auto bound = llvm::dyn_cast<mlir::FloatAttr>(entry.getValue());
    if (!bound || !std::isfinite(bound.getValueAsDouble()) || bound.getValueAsDouble() < 0) {
      return op->emitError() << "'" << kAccuracyAttrName << "' expects '"
                             << entry.getName().getValue()
                             << "' to be a finite non-negative float, found " << entry.getValue();
    }
  }
  return mlir::success();
}

mlir::LogicalResult verifyDeterminismAttr(mlir::Operation* op, mlir::Attribute value) {
  // (It stays on the llvm.func a gpu.func lowers to.)
  const llvm::StringRef name = op->getName().getStringRef();
  if (name != "gpu.func" && name != "llvm.func") {
    // (Message: the llvm.func form is the compiler's, not something a user writes.)
    return op->emitError() << "'" << kDeterminismAttrName
                           << "' declares a raw kernel's determinism and is only valid on a "
                              "'gpu.func', found it on '"
                           << op->getName() << "' (a function requests determinism with '"
                           << kDeterministicAttrName << "')";
  }
  auto text = llvm::dyn_cast<mlir::StringAttr>(value);
  if (!text || (text.getValue() != "deterministic" && text.getValue() != "nondeterministic")) {
    return op->emitError() << "'" << kDeterminismAttrName
                           << "' must be \"deterministic\" or \"nondeterministic\", found "
                           << value;
  }
  return mlir::success();
}

}  // namespace

void TesseraDialect::initialize() {}

mlir::LogicalResult TesseraDialect::verifyOperationAttribute(mlir::Operation* op,
                                                             mlir::NamedAttribute attribute) {
  if (attribute.getName() == kDeterministicAttrName) {
    return verifyDeterministicAttr(op, attribute.getValue());
  }
  if (attribute.getName() == kDeterminismAttrName) {
    return verifyDeterminismAttr(op, attribute.getValue());
  }
  if (attribute.getName() == kAccuracyAttrName) {
    return verifyAccuracyAttr(op, attribute.getValue());
  }
  if (attribute.getName() == kCandidateAttrName) {
    auto id = llvm::dyn_cast<mlir::StringAttr>(attribute.getValue());
    // Every Tile op but its region terminator (tile.yield) is an arbitration point.
    if (!id || id.getValue().empty() || op->getDialect() == nullptr ||
        op->getDialect()->getNamespace() != "tile" || op->hasTrait<mlir::OpTrait::IsTerminator>()) {
      return op->emitError() << "'" << kCandidateAttrName
                             << "' is a non-empty string on a Tile op (not tile.yield): the "
                                "candidate id to restrict its arbitration to";
    }
    if (auto delegate = op->getAttrOfType<mlir::StringAttr>("delegate");
        delegate && delegate != id) {
      return op->emitError() << "'" << kCandidateAttrName << "' (\"" << id.getValue()
                             << "\") and 'delegate' (\"" << delegate.getValue()
                             << "\") force different candidates; set one of them";
    }
    return mlir::success();
  }
  // The original Tessera's other attributes under this prefix — its module attributes and the
  // hints on its launch-level kernels (tessera.canonical_k_loop, tessera.tile_m, ...) — are
  // accepted and ignored (docs/original-ir.md).
  if (llvm::isa<mlir::ModuleOp>(op) || (op->getName().getDialectNamespace() == "tile" &&
                                        op->getName().getStringRef().ends_with("_kernel"))) {
    return mlir::success();
  }
  return op->emitError() << "unknown attribute '" << attribute.getName().getValue()
                         << "'; the tessera dialect defines only '" << kDeterministicAttrName
                         << "' and '" << kAccuracyAttrName << "' (on functions), '"
                         << kDeterminismAttrName << "' (on raw kernels) and '" << kCandidateAttrName
                         << "' (on Tile ops)";
}

std::optional<llvm::StringRef> getDeclaredDeterminism(mlir::Operation* op) {
  auto text = op->getAttrOfType<mlir::StringAttr>(kDeterminismAttrName);
  if (!text) return std::nullopt;
  return text.getValue();
}

std::optional<std::pair<double, double>> getDeclaredAccuracy(mlir::Operation* op) {
  auto dict = op->getAttrOfType<mlir::DictionaryAttr>(kAccuracyAttrName);
  if (!dict) return std::nullopt;
  auto bound = [&](llvm::StringRef key) {
    auto value = dict.getAs<mlir::FloatAttr>(key);
    return value ? value.getValueAsDouble() : 0.0;
  };
  return std::make_pair(bound("atol"), bound("rtol"));
}

bool isDeterministic(mlir::Operation* op) { return op->hasAttr(kDeterministicAttrName); }

bool isBatchInvariant(mlir::Operation* op) {
  auto dict = op->getAttrOfType<mlir::DictionaryAttr>(kDeterministicAttrName);
  if (!dict) return false;
  auto level = dict.getAs<mlir::StringAttr>(kLevelKey);
  return level && level.getValue() == "batch_invariant";
}

std::optional<uint64_t> getDeterministicSeed(mlir::Operation* op) {
  auto dict = op->getAttrOfType<mlir::DictionaryAttr>(kDeterministicAttrName);
  if (!dict) return std::nullopt;
  auto seed = dict.getAs<mlir::IntegerAttr>(kSeedKey);
  if (!seed) return std::nullopt;
  return seed.getValue().getZExtValue();
}

}  // namespace tessera
