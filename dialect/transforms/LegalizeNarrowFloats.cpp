// tessera-legalize-narrow-floats: f16/bf16 math functions computed in f32, and (on the host) bf16
// arithmetic as f32 arithmetic — each result rounded to its narrow type before it is used.
// Upstream's math-extend-to-supported-types and arith-emulate-unsupported-floats patterns, with a
// widening conversion that no folder may remove.
#include "dialect/Passes.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tessera {

#define GEN_PASS_DEF_LEGALIZENARROWFLOATS
#include "dialect/Passes.h.inc"

namespace {

/// The conversions around each widened operation: `narrow` types (scalars or vectors of them)
/// become f32. Upstream's converters mark both `extf` and `truncf` `fastmath<contract>`, and
/// `arith.extf`'s folder then turns `extf(truncf(x))` into `x`: the rounding between two narrow
/// operations disappeared (a bf16 `a·b + c` and an f16 `cos(exp2(x))` were computed in f32 and
/// rounded once). The folder needs the flag on both; this `extf` carries none, so no pair folds.
class RoundingTypeConverter : public mlir::TypeConverter {
 public:
  explicit RoundingTypeConverter(llvm::ArrayRef<mlir::Type> narrow) {
    llvm::SmallVector<mlir::Type> types(narrow.begin(), narrow.end());
    addConversion([types](mlir::Type type) -> mlir::Type {
      auto vector = llvm::dyn_cast<mlir::VectorType>(type);
      mlir::Type element = vector ? vector.getElementType() : type;
      if (!llvm::is_contained(types, element)) return type;
      mlir::Type f32 = mlir::Float32Type::get(type.getContext());
      return vector ? mlir::Type(vector.clone(f32)) : f32;
    });
    addSourceMaterialization([](mlir::OpBuilder& b, mlir::Type narrow_type, mlir::ValueRange inputs,
                                mlir::Location loc) -> mlir::Value {
      if (inputs.size() != 1) return nullptr;
      return mlir::arith::TruncFOp::create(b, loc, narrow_type, inputs.front());
    });
    addTargetMaterialization([](mlir::OpBuilder& b, mlir::Type wide, mlir::ValueRange inputs,
                                mlir::Location loc) -> mlir::Value {
      if (inputs.size() != 1) return nullptr;
      return mlir::arith::ExtFOp::create(b, loc, wide, inputs.front());
    });
  }
};

class LegalizeNarrowFloats : public impl::LegalizeNarrowFloatsBase<LegalizeNarrowFloats> {
 public:
  using LegalizeNarrowFloatsBase::LegalizeNarrowFloatsBase;

  void runOnOperation() override {
    mlir::MLIRContext* context = &getContext();
    mlir::Type f16 = mlir::Float16Type::get(context);
    mlir::Type bf16 = mlir::BFloat16Type::get(context);
    {  // Math functions of f16 and bf16 in f32 (no target has them narrower).
      RoundingTypeConverter converter(llvm::ArrayRef<mlir::Type>{f16, bf16});
      mlir::ConversionTarget target(*context);
      mlir::math::populateExtendToSupportedTypesConversionTarget(target, converter);
      mlir::RewritePatternSet patterns(context);
      mlir::math::populateExtendToSupportedTypesPatterns(patterns, converter);
      if (mlir::failed(mlir::applyPartialConversion(getOperation(), target, std::move(patterns)))) {
        return signalPassFailure();
      }
    }
    if (!emulateBf16Arithmetic) return;
    RoundingTypeConverter converter(llvm::ArrayRef<mlir::Type>{bf16});
    mlir::ConversionTarget target(*context);
    mlir::arith::populateEmulateUnsupportedFloatsLegality(target, converter);
    mlir::RewritePatternSet patterns(context);
    mlir::arith::populateEmulateUnsupportedFloatsPatterns(patterns, converter);
    if (mlir::failed(mlir::applyPartialConversion(getOperation(), target, std::move(patterns)))) {
      signalPassFailure();
    }
  }
};

}  // namespace
}  // namespace tessera
