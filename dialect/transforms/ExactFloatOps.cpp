// tessera-exact-float-ops: the float operations whose upstream lowering rounds twice or is
// missing, rewritten in terms of operations every target lowers exactly. Narrow results are
// reached by one rounding from a wider value that is *rounded to odd* — a wider format with at
// least 2p + 2 bits, rounded to odd, then rounded to nearest at p bits, is the correctly rounded
// p-bit result (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved
// algorithms using rounding to odd", IEEE TC 2008).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "dialect/Passes.h"
#include "llvm/ADT/APFloat.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera {

#define GEN_PASS_DEF_EXACTFLOATOPS
#include "dialect/Passes.h.inc"

namespace {

using mlir::arith::CmpFPredicate;
using mlir::arith::CmpIPredicate;

bool IsNarrowFloat(mlir::Type type) {
  mlir::Type element = mlir::getElementTypeOrSelf(type);
  return element.isF16() || element.isBF16();
}

/// Scalar-or-vector arithmetic shaped like a reference value (the host vectorizes map bodies).
class ShapedBuilder {
 public:
  ShapedBuilder(mlir::PatternRewriter& rewriter, mlir::Location loc, mlir::Type like)
      : b_(rewriter), loc_(loc), vector_(llvm::dyn_cast<mlir::VectorType>(like)) {}

  /// `element` shaped like the reference (a vector of it, or itself).
  mlir::Type shaped(mlir::Type element) const {
    return vector_ ? mlir::Type(vector_.clone(element)) : element;
  }
  mlir::Type f64() const { return shaped(b_.getF64Type()); }
  mlir::Type f32() const { return shaped(b_.getF32Type()); }

  mlir::Value constant(mlir::Type element, mlir::TypedAttr scalar) {
    if (vector_) {
      return mlir::arith::ConstantOp::create(
          b_, loc_, mlir::DenseElementsAttr::get(vector_.clone(element), scalar));
    }
    return mlir::arith::ConstantOp::create(b_, loc_, scalar);
  }
  mlir::Value f64(double value) { return constant(b_.getF64Type(), b_.getF64FloatAttr(value)); }
  mlir::Value int_of(mlir::Type element, int64_t value) {
    return constant(element, b_.getIntegerAttr(element, value));
  }

  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddFOp::create(b_, loc_, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return mlir::arith::SubFOp::create(b_, loc_, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulFOp::create(b_, loc_, x, y);
  }
  mlir::Value cmpf(CmpFPredicate predicate, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpFOp::create(b_, loc_, predicate, x, y);
  }
  mlir::Value cmpi(CmpIPredicate predicate, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b_, loc_, predicate, x, y);
  }
  mlir::Value select(mlir::Value condition, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b_, loc_, condition, x, y);
  }
  mlir::Value both(mlir::Value x, mlir::Value y) {
    return mlir::arith::AndIOp::create(b_, loc_, x, y);
  }
  mlir::Value bitcast(mlir::Type type, mlir::Value x) {
    return mlir::arith::BitcastOp::create(b_, loc_, type, x);
  }
  mlir::Value extf(mlir::Type type, mlir::Value x) {
    return mlir::arith::ExtFOp::create(b_, loc_, type, x);
  }
  mlir::Value truncf(mlir::Type type, mlir::Value x) {
    return mlir::arith::TruncFOp::create(b_, loc_, type, x);
  }
  mlir::Value abs(mlir::Value x) { return mlir::math::AbsFOp::create(b_, loc_, x); }

  /// `rounded` (a float that a rounding to nearest gave for an exact value lying on the side
  /// `above` says) moved to its odd neighbour toward the exact value when it is inexact and
  /// even: the rounding to odd of the exact value. `bits` is the integer type of its width.
  mlir::Value toOdd(mlir::Value rounded, mlir::Value inexact, mlir::Value above,
                    mlir::Type bits_element) {
    mlir::Type bits_type = shaped(bits_element);
    mlir::Value bits = bitcast(bits_type, rounded);
    mlir::Value low = mlir::arith::AndIOp::create(b_, loc_, bits, int_of(bits_element, 1));
    mlir::Value even = cmpi(CmpIPredicate::eq, low, int_of(bits_element, 0));
    // Away from zero when the exact value lies beyond `rounded` in its sign's direction (by
    // the sign bit: a rounding that underflowed to ±0 steps away from it).
    mlir::Value positive = cmpi(CmpIPredicate::sge, bits, int_of(bits_element, 0));
    mlir::Value away = cmpi(CmpIPredicate::eq, above, positive);
    mlir::Value step = select(away, int_of(bits_element, 1), int_of(bits_element, -1));
    mlir::Value stepped = mlir::arith::AddIOp::create(b_, loc_, bits, step);
    return bitcast(rounded.getType(), select(both(inexact, even), stepped, bits));
  }

  /// x + y in f64 rounded to odd (x, y f64; TwoSum gives the rounding error exactly).
  mlir::Value sumToOdd(mlir::Value x, mlir::Value y) {
    mlir::Value s = add(x, y);
    mlir::Value y_part = sub(s, x);
    mlir::Value error = add(sub(x, sub(s, y_part)), sub(y, y_part));
    mlir::Value zero = f64(0.0);
    mlir::Value inexact = cmpf(CmpFPredicate::ONE, error, zero);  // false for NaN, ±inf sums
    mlir::Value above = cmpf(CmpFPredicate::OGT, error, zero);
    return toOdd(s, inexact, above, b_.getI64Type());
  }

  /// An f64 rounded once to the narrow float type `narrow` (through f32 rounded to odd: 24 ≥
  /// 2·11 + 2 bits).
  mlir::Value narrowOnce(mlir::Value wide, mlir::Type narrow) {
    mlir::Value single = truncf(f32(), wide);
    mlir::Value back = extf(f64(), single);
    mlir::Value inexact = cmpf(CmpFPredicate::ONE, back, wide);  // false for NaN
    mlir::Value above = cmpf(CmpFPredicate::OGT, wide, back);
    mlir::Value odd = toOdd(single, inexact, above, b_.getI32Type());
    return truncf(narrow, odd);
  }

 private:
  mlir::PatternRewriter& b_;
  mlir::Location loc_;
  mutable mlir::VectorType vector_;  // clone() is not const
};

/// math.fma on f16/bf16: the product of two narrow values is exact in f64, the sum rounded to
/// odd there, then rounded once. (Upstream extends to an f32 fma and rounds again: bf16
/// fma(9, 29, 2^-30) gave 260 instead of 262, and a subnormal addend was lost.)
struct NarrowFma : mlir::OpRewritePattern<mlir::math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(mlir::math::FmaOp op,
                                      mlir::PatternRewriter& rewriter) const override {
    if (!IsNarrowFloat(op.getType())) return mlir::failure();
    ShapedBuilder b(rewriter, op.getLoc(), op.getType());
    mlir::Value product = b.mul(b.extf(b.f64(), op.getA()), b.extf(b.f64(), op.getB()));
    mlir::Value sum = b.sumToOdd(product, b.extf(b.f64(), op.getC()));
    rewriter.replaceOp(op, b.narrowOnce(sum, op.getType()));
    return mlir::success();
  }
};

/// arith.truncf f64 → f16/bf16 in one rounding (LLVM may go through f32 and round twice).
struct NarrowTruncFromF64 : mlir::OpRewritePattern<mlir::arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(mlir::arith::TruncFOp op,
                                      mlir::PatternRewriter& rewriter) const override {
    if (!IsNarrowFloat(op.getType()) || !mlir::getElementTypeOrSelf(op.getIn().getType()).isF64() ||
        op.getRoundingmodeAttr()) {
      return mlir::failure();
    }
    ShapedBuilder b(rewriter, op.getLoc(), op.getType());
    rewriter.replaceOp(op, b.narrowOnce(op.getIn(), op.getType()));
    return mlir::success();
  }
};

/// sitofp/uitofp to bf16 in one rounding (LLVM converts through f32 and rounds twice:
/// 2^30 + 2^22 + 1 gave 2^30). Up to 32 bits the integer is exact in f64; a 64-bit one is
/// split into halves, each exact in f64, summed rounded to odd.
template <typename Op, bool kSigned>
struct IntToBf16 : mlir::OpRewritePattern<Op> {
  using mlir::OpRewritePattern<Op>::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter& rewriter) const override {
    if (!mlir::getElementTypeOrSelf(op.getType()).isBF16()) return mlir::failure();
    mlir::Value in = op.getIn();
    auto width = mlir::getElementTypeOrSelf(in.getType()).getIntOrFloatBitWidth();
    if (width > 64) return mlir::failure();
    ShapedBuilder b(rewriter, op.getLoc(), op.getType());
    auto to_f64 = [&](mlir::Value integer, bool is_signed) -> mlir::Value {
      if (is_signed) return mlir::arith::SIToFPOp::create(rewriter, op.getLoc(), b.f64(), integer);
      return mlir::arith::UIToFPOp::create(rewriter, op.getLoc(), b.f64(), integer);
    };
    mlir::Value wide;
    if (width <= 32) {
      wide = to_f64(in, kSigned);
    } else {
      mlir::Type i64 = rewriter.getI64Type();
      mlir::Value shift = b.int_of(i64, 32);
      mlir::Value high =
          kSigned ? mlir::Value(mlir::arith::ShRSIOp::create(rewriter, op.getLoc(), in, shift))
                  : mlir::Value(mlir::arith::ShRUIOp::create(rewriter, op.getLoc(), in, shift));
      mlir::Value low =
          mlir::arith::AndIOp::create(rewriter, op.getLoc(), in, b.int_of(i64, 0xFFFFFFFFll));
      mlir::Value high_part = b.mul(to_f64(high, kSigned), b.f64(4294967296.0));  // exact
      wide = b.sumToOdd(high_part, to_f64(low, /*is_signed=*/false));
    }
    rewriter.replaceOp(op, b.narrowOnce(wide, op.getType()));
    return mlir::success();
  }
};

/// math.isinf and math.isnormal (MLIR 22 lowers neither to LLVM), as compares of |x| in the
/// operand's own type (extending first would make an f16 subnormal normal).
template <typename Op>
struct Classify : mlir::OpRewritePattern<Op> {
  using mlir::OpRewritePattern<Op>::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter& rewriter) const override {
    mlir::Value x = op.getOperand();
    ShapedBuilder b(rewriter, op.getLoc(), x.getType());
    mlir::Type element = mlir::getElementTypeOrSelf(x.getType());
    const llvm::fltSemantics& semantics = llvm::cast<mlir::FloatType>(element).getFloatSemantics();
    auto constant = [&](const llvm::APFloat& value) {
      return b.constant(element, rewriter.getFloatAttr(element, value));
    };
    mlir::Value magnitude = b.abs(x);
    mlir::Value inf = constant(llvm::APFloat::getInf(semantics));
    if constexpr (std::is_same_v<Op, mlir::math::IsInfOp>) {
      rewriter.replaceOp(op, b.cmpf(CmpFPredicate::OEQ, magnitude, inf));
    } else {
      mlir::Value smallest = constant(llvm::APFloat::getSmallestNormalized(semantics));
      rewriter.replaceOp(op, b.both(b.cmpf(CmpFPredicate::OGE, magnitude, smallest),
                                    b.cmpf(CmpFPredicate::OLT, magnitude, inf)));
    }
    return mlir::success();
  }
};

/// `value` as a float constant: a constant, or what upstream's folder makes of the f32/f64 op
/// defining it when its operands are (up to 8 levels down) such constants — what
/// canonicalization would fold it to anyway, seen here first. math.atan2 is never folded by
/// upstream's folder (Atan2OfConstants folds it); ops on other types are left alone.
mlir::FloatAttr FoldedFloatConstant(mlir::Value value, int depth = 0) {
  mlir::FloatAttr constant;
  if (mlir::matchPattern(value, mlir::m_Constant(&constant))) return constant;
  auto wide = [](mlir::Type type) { return type.isF32() || type.isF64(); };
  mlir::Operation* op = value.getDefiningOp();
  if (op == nullptr || depth >= 8 || op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      !wide(value.getType()) || llvm::isa<mlir::math::Atan2Op>(op)) {
    return {};
  }
  llvm::SmallVector<mlir::Attribute> operands;
  for (mlir::Value operand : op->getOperands()) {
    mlir::FloatAttr folded =
        wide(operand.getType()) ? FoldedFloatConstant(operand, depth + 1) : mlir::FloatAttr();
    if (!folded) return {};
    operands.push_back(folded);
  }
  llvm::SmallVector<mlir::OpFoldResult> results;
  if (mlir::failed(op->fold(operands, results)) || results.size() != 1) return {};
  return llvm::dyn_cast_if_present<mlir::FloatAttr>(
      llvm::dyn_cast_if_present<mlir::Attribute>(results[0]));
}

/// math.atan2 of two scalar constants — or of operands that fold to constants, such as
/// log2(1.0) — folded as the target computes it: libm's atan2 in the operands' type (f16 and
/// bf16 through f32, rounded once). MLIR 22's own folder gives NaN for atan2(±0, ±0), which is
/// ±0 or ±π; this pass runs with folding off, before any canonicalization.
struct Atan2OfConstants : mlir::OpRewritePattern<mlir::math::Atan2Op> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(mlir::math::Atan2Op op,
                                      mlir::PatternRewriter& rewriter) const override {
    const mlir::FloatAttr y = FoldedFloatConstant(op.getLhs());
    const mlir::FloatAttr x = y ? FoldedFloatConstant(op.getRhs()) : mlir::FloatAttr();
    if (!y || !x) return mlir::failure();
    auto type = llvm::cast<mlir::FloatType>(op.getType());
    llvm::APFloat result(0.0);
    if (type.isF64()) {
      result = llvm::APFloat(std::atan2(y.getValueAsDouble(), x.getValueAsDouble()));
    } else {
      result = llvm::APFloat(std::atan2(static_cast<float>(y.getValueAsDouble()),
                                        static_cast<float>(x.getValueAsDouble())));
    }
    bool lost = false;
    result.convert(type.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
    rewriter.replaceOpWithNewOp<mlir::arith::ConstantOp>(op, rewriter.getFloatAttr(type, result));
    return mlir::success();
  }
};

/// arith.cmpf `false` and `true` as the constants they are. MLIR 22.1's canonicalization of a
/// compare whose left operand is an integer converted to float and whose right is a constant
/// (CmpFIntToFPConst) reaches llvm_unreachable for these two predicates and crashes.
struct ConstantPredicateCmpF : mlir::OpRewritePattern<mlir::arith::CmpFOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(mlir::arith::CmpFOp op,
                                      mlir::PatternRewriter& rewriter) const override {
    const CmpFPredicate predicate = op.getPredicate();
    if (predicate != CmpFPredicate::AlwaysFalse && predicate != CmpFPredicate::AlwaysTrue) {
      return mlir::failure();
    }
    const bool value = predicate == CmpFPredicate::AlwaysTrue;
    mlir::TypedAttr attribute;
    if (auto shaped = llvm::dyn_cast<mlir::ShapedType>(op.getType())) {
      attribute = mlir::DenseElementsAttr::get(shaped, value);
    } else {
      attribute = rewriter.getIntegerAttr(op.getType(), value ? 1 : 0);
    }
    rewriter.replaceOpWithNewOp<mlir::arith::ConstantOp>(op, attribute);
    return mlir::success();
  }
};

class ExactFloatOps : public impl::ExactFloatOpsBase<ExactFloatOps> {
 public:
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<NarrowFma, NarrowTruncFromF64, IntToBf16<mlir::arith::SIToFPOp, true>,
                 IntToBf16<mlir::arith::UIToFPOp, false>, Classify<mlir::math::IsInfOp>,
                 Classify<mlir::math::IsNormalOp>, Atan2OfConstants, ConstantPredicateCmpF>(
        &getContext());
    // No folding: upstream's folders are what some of these patterns correct. Constants stay
    // where they are made (this pass also runs on Tile op bodies, which must not capture
    // values from outside).
    mlir::GreedyRewriteConfig config;
    config.enableFolding(false);
    config.enableConstantCSE(false);
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns), config))) {
      signalPassFailure();
    }
  }
};

}  // namespace
}  // namespace tessera
