// tessera-expand-arith: upstream arith-expand's bf16 conversion and integer division
// expansions, without its compare-and-select expansion of maximumf/minimumf (which loses the
// order of -0.0 and +0.0; LLVM's llvm.maximum/llvm.minimum keep it); and the widening of the
// fp8 formats (LLVM has no fp8 type), as integer operations that decode them exactly.
#include <cmath>
#include <optional>

#include "dialect/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera {

#define GEN_PASS_DEF_EXPANDARITH
#include "dialect/Passes.h.inc"

namespace {

/// The layout of an fp8 format: OCP FP8 E4M3 ("FN": no infinity, one NaN per sign) or E5M2
/// (IEEE-like: infinities and NaNs at the top exponent).
struct Float8Format {
  int mantissaBits;
  int bias;
  bool hasInfinity;
};

std::optional<Float8Format> FormatOf(mlir::Type type) {
  if (llvm::isa<mlir::Float8E4M3FNType>(type)) return Float8Format{3, 7, false};
  if (llvm::isa<mlir::Float8E5M2Type>(type)) return Float8Format{2, 15, true};
  return std::nullopt;
}

/// `arith.extf` from f8E4M3FN or f8E5M2 (scalars or vectors) to a wider float: the f32 bits
/// assembled from the byte (every fp8 value, subnormals included, is exact in f32; no operation
/// touches a subnormal f32, so flush-to-zero modes cannot change the result), then an exact
/// conversion to the target type.
class DecodeFloat8 : public mlir::OpRewritePattern<mlir::arith::ExtFOp> {
 public:
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(mlir::arith::ExtFOp op,
                                      mlir::PatternRewriter& rewriter) const override {
    mlir::Type sourceType = op.getIn().getType();
    std::optional<Float8Format> format = FormatOf(mlir::getElementTypeOrSelf(sourceType));
    if (!format) return mlir::failure();
    mlir::Location loc = op.getLoc();
    auto shaped = [&](mlir::Type element) -> mlir::Type {
      if (auto vector = llvm::dyn_cast<mlir::VectorType>(sourceType)) return vector.clone(element);
      return element;
    };
    mlir::Type i8 = shaped(rewriter.getI8Type());
    mlir::Type i32 = shaped(rewriter.getI32Type());
    mlir::Type f32 = shaped(rewriter.getF32Type());
    auto integer = [&](int64_t value) -> mlir::Value {
      mlir::TypedAttr attr = rewriter.getI32IntegerAttr(static_cast<int32_t>(value));
      if (auto vector = llvm::dyn_cast<mlir::VectorType>(i32)) {
        attr = mlir::DenseElementsAttr::get(vector, attr);
      }
      return mlir::arith::ConstantOp::create(rewriter, loc, attr);
    };
    auto floating = [&](float value) -> mlir::Value {
      mlir::TypedAttr attr = rewriter.getF32FloatAttr(value);
      if (auto vector = llvm::dyn_cast<mlir::VectorType>(f32)) {
        attr = mlir::DenseElementsAttr::get(vector, attr);
      }
      return mlir::arith::ConstantOp::create(rewriter, loc, attr);
    };
    auto compare = [&](mlir::arith::CmpIPredicate predicate, mlir::Value x, int64_t y) {
      return mlir::arith::CmpIOp::create(rewriter, loc, predicate, x, integer(y)).getResult();
    };
    const int m = format->mantissaBits;
    const int exponentBits = 7 - m;
    mlir::Value byte = mlir::arith::BitcastOp::create(rewriter, loc, i8, op.getIn());
    mlir::Value bits = mlir::arith::ExtUIOp::create(rewriter, loc, i32, byte);
    mlir::Value sign = mlir::arith::ShLIOp::create(
        rewriter, loc, mlir::arith::AndIOp::create(rewriter, loc, bits, integer(0x80)),
        integer(24));
    mlir::Value magnitude = mlir::arith::AndIOp::create(rewriter, loc, bits, integer(0x7F));
    // Normal: rebias the exponent and move exponent and mantissa to f32's fields.
    mlir::Value normal = mlir::arith::ShLIOp::create(
        rewriter, loc,
        mlir::arith::AddIOp::create(rewriter, loc, magnitude,
                                    integer(int64_t{127 - format->bias} << m)),
        integer(23 - m));
    // Subnormal (exponent field 0): mantissa · 2^(1 - bias - m), exact in f32.
    mlir::Value scaled = mlir::arith::MulFOp::create(
        rewriter, loc, mlir::arith::UIToFPOp::create(rewriter, loc, f32, magnitude),
        floating(std::ldexp(1.0f, 1 - format->bias - m)));
    mlir::Value subnormal = mlir::arith::BitcastOp::create(rewriter, loc, i32, scaled);
    mlir::Value value = mlir::arith::SelectOp::create(
        rewriter, loc, compare(mlir::arith::CmpIPredicate::ult, magnitude, 1 << m), subnormal,
        normal);
    const int64_t top = ((1 << exponentBits) - 1) << m;  // the all-ones exponent field
    if (format->hasInfinity) {
      value = mlir::arith::SelectOp::create(rewriter, loc,
                                            compare(mlir::arith::CmpIPredicate::eq, magnitude, top),
                                            integer(0x7F800000), value);
      value = mlir::arith::SelectOp::create(
          rewriter, loc, compare(mlir::arith::CmpIPredicate::ugt, magnitude, top),
          integer(0x7FC00000), value);
    } else {
      value = mlir::arith::SelectOp::create(
          rewriter, loc, compare(mlir::arith::CmpIPredicate::eq, magnitude, 0x7F),
          integer(0x7FC00000), value);
    }
    value = mlir::arith::OrIOp::create(rewriter, loc, value, sign);
    mlir::Value result = mlir::arith::BitcastOp::create(rewriter, loc, f32, value);
    mlir::Type target = op.getType();
    if (target != f32) {
      // Exact: every fp8 value is representable in f16, bf16 and f64.
      result = mlir::getElementTypeOrSelf(target).getIntOrFloatBitWidth() > 32
                   ? mlir::arith::ExtFOp::create(rewriter, loc, target, result).getResult()
                   : mlir::arith::TruncFOp::create(rewriter, loc, target, result).getResult();
    }
    rewriter.replaceOp(op, result);
    return mlir::success();
  }
};

class ExpandArith : public impl::ExpandArithBase<ExpandArith> {
 public:
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    mlir::arith::populateExpandBFloat16Patterns(patterns);
    patterns.add<DecodeFloat8>(&getContext());
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      signalPassFailure();
    }
  }
};

}  // namespace
}  // namespace tessera
