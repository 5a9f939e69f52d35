// tessera-emulate-bf16-arithmetic: bf16 operations as f32 operations, each result rounded to
// bf16 before it is used (upstream arith-emulate-unsupported-floats' patterns, with a widening
// conversion that no folder may remove).
#include "dialect/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tessera {

#define GEN_PASS_DEF_EMULATEBF16ARITHMETIC
#include "dialect/Passes.h.inc"

namespace {

/// bf16 → f32, elementwise through vectors; every other type as it is.
mlir::Type Widened(mlir::Type type) {
  if (type.isBF16()) return mlir::Float32Type::get(type.getContext());
  if (auto vector = llvm::dyn_cast<mlir::VectorType>(type); vector && vector.getElementType().isBF16()) {
    return vector.clone(mlir::Float32Type::get(type.getContext()));
  }
  return type;
}

/// The conversions around each emulated operation. Upstream's mark both `extf` and `truncf`
/// `fastmath<contract>`, and `arith.extf`'s folder then turns `extf(truncf(x))` into `x`: the
/// rounding between two bf16 operations disappeared. The folder needs the flag on both; this
/// `extf` carries none (upstream's patterns still mark their `truncf`), so no pair folds.
class RoundingTypeConverter : public mlir::TypeConverter {
 public:
  RoundingTypeConverter() {
    addConversion([](mlir::Type type) { return Widened(type); });
    addSourceMaterialization([](mlir::OpBuilder& b, mlir::Type narrow, mlir::ValueRange inputs,
                                mlir::Location loc) -> mlir::Value {
      if (inputs.size() != 1) return nullptr;
      return mlir::arith::TruncFOp::create(b, loc, narrow, inputs.front());
    });
    addTargetMaterialization([](mlir::OpBuilder& b, mlir::Type wide, mlir::ValueRange inputs,
                                mlir::Location loc) -> mlir::Value {
      if (inputs.size() != 1) return nullptr;
      return mlir::arith::ExtFOp::create(b, loc, wide, inputs.front());
    });
  }
};

class EmulateBf16Arithmetic
    : public impl::EmulateBf16ArithmeticBase<EmulateBf16Arithmetic> {
 public:
  void runOnOperation() override {
    mlir::MLIRContext* context = &getContext();
    RoundingTypeConverter converter;
    mlir::ConversionTarget target(*context);
    mlir::arith::populateEmulateUnsupportedFloatsLegality(target, converter);
    mlir::RewritePatternSet patterns(context);
    mlir::arith::populateEmulateUnsupportedFloatsPatterns(patterns, converter);
    if (mlir::failed(
            mlir::applyPartialConversion(getOperation(), target, std::move(patterns)))) {
      signalPassFailure();
    }
  }
};

}  // namespace
}  // namespace tessera
