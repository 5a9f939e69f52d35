// tessera-approximate-math: vectorizable f32 math with a measured error bound (≤ 4 ulp over the
// whole range, special values exact; tests/jit/math_accuracy_test.cc). exp, expm1, tanh and
// erf are our own (Cody–Waite reduction, fitted polynomials, subnormal results through two
// exact scalings, piecewise polynomials for erf); log and log2 are MLIR's polynomial
// approximations behind a rescaling of subnormal inputs (which MLIR's flush); log1p is MLIR's
// as it is. Functions MLIR approximates beyond 4 ulp (atan, sin, cos) keep their libm calls.
#include "dialect/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera {

#define GEN_PASS_DEF_APPROXIMATEMATH
#include "dialect/Passes.h.inc"

namespace {

/// Marks a math op whose input has already been rescaled, so the rescaling is not applied
/// again before MLIR's approximation rewrites it.
constexpr llvm::StringLiteral kRescaled = "tessera.rescaled";

bool IsF32(mlir::Type type) { return mlir::getElementTypeOrSelf(type).isF32(); }

/// Builds arithmetic on f32 scalars or vectors of the same shape as a reference value.
class F32Builder {
 public:
  F32Builder(mlir::PatternRewriter& rewriter, mlir::Location loc, mlir::Type type)
      : b_(rewriter), loc_(loc), type_(type) {
    auto vector = llvm::dyn_cast<mlir::VectorType>(type);
    intType_ = vector ? mlir::Type(mlir::VectorType::get(vector.getShape(), b_.getI32Type()))
                      : mlir::Type(b_.getI32Type());
  }

  mlir::Value f(float value) { return constant(type_, b_.getF32FloatAttr(value)); }
  mlir::Value i(int32_t value) { return constant(intType_, b_.getI32IntegerAttr(value)); }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return b_.create<mlir::arith::AddFOp>(loc_, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return b_.create<mlir::arith::SubFOp>(loc_, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return b_.create<mlir::arith::MulFOp>(loc_, x, y);
  }
  mlir::Value div(mlir::Value x, mlir::Value y) {
    return b_.create<mlir::arith::DivFOp>(loc_, x, y);
  }
  mlir::Value fma(mlir::Value x, mlir::Value y, mlir::Value z) {
    return b_.create<mlir::math::FmaOp>(loc_, x, y, z);
  }
  mlir::Value abs(mlir::Value x) { return b_.create<mlir::math::AbsFOp>(loc_, x); }
  mlir::Value copysign(mlir::Value x, mlir::Value sign) {
    return b_.create<mlir::math::CopySignOp>(loc_, x, sign);
  }
  mlir::Value less(mlir::Value x, mlir::Value y) {
    return b_.create<mlir::arith::CmpFOp>(loc_, mlir::arith::CmpFPredicate::OLT, x, y);
  }
  mlir::Value greater(mlir::Value x, mlir::Value y) {
    return b_.create<mlir::arith::CmpFOp>(loc_, mlir::arith::CmpFPredicate::OGT, x, y);
  }
  mlir::Value isNan(mlir::Value x) {
    return b_.create<mlir::arith::CmpFOp>(loc_, mlir::arith::CmpFPredicate::UNO, x, x);
  }
  mlir::Value select(mlir::Value condition, mlir::Value x, mlir::Value y) {
    return b_.create<mlir::arith::SelectOp>(loc_, condition, x, y);
  }
  mlir::Value both(mlir::Value x, mlir::Value y) {
    return b_.create<mlir::arith::AndIOp>(loc_, x, y);
  }
  /// c[0] + c[1]·x + c[2]·x² + … by Horner's rule with fused multiply-adds.
  mlir::Value polynomial(mlir::Value x, llvm::ArrayRef<float> c) {
    mlir::Value result = f(c.back());
    for (size_t k = c.size() - 1; k-- > 0;) result = fma(result, x, f(c[k]));
    return result;
  }
  /// 2^k for an integer-valued f32 k in [-126, 127], as an exact power of two.
  mlir::Value powerOfTwo(mlir::Value k) {
    mlir::Value integer = b_.create<mlir::arith::FPToSIOp>(loc_, intType_, k);
    mlir::Value biased = b_.create<mlir::arith::AddIOp>(loc_, integer, i(127));
    mlir::Value bits = b_.create<mlir::arith::ShLIOp>(loc_, biased, i(23));
    return b_.create<mlir::arith::BitcastOp>(loc_, type_, bits);
  }
  mlir::Value roundEven(mlir::Value x) { return b_.create<mlir::math::RoundEvenOp>(loc_, x); }
  mlir::Value floor(mlir::Value x) { return b_.create<mlir::math::FloorOp>(loc_, x); }

 private:
  mlir::Value constant(mlir::Type type, mlir::TypedAttr scalar) {
    if (auto vector = llvm::dyn_cast<mlir::VectorType>(type)) {
      return b_.create<mlir::arith::ConstantOp>(loc_, mlir::DenseElementsAttr::get(vector, scalar));
    }
    return b_.create<mlir::arith::ConstantOp>(loc_, scalar);
  }

  mlir::PatternRewriter& b_;
  mlir::Location loc_;
  mlir::Type type_;
  mlir::Type intType_;
};

/// `x` limited to [low, high], NaN replaced by 0 (NaN would reach an fptosi, which is poison).
mlir::Value ClampForReduction(F32Builder& f, mlir::Value x, float low, float high) {
  mlir::Value clamped = f.select(f.isNan(x), f.f(0.0f), x);
  clamped = f.select(f.less(clamped, f.f(low)), f.f(low), clamped);
  return f.select(f.greater(clamped, f.f(high)), f.f(high), clamped);
}

/// x = k·ln 2 + r with k = round(x / ln 2) (an integer-valued f32) and r exact to well below an
/// ulp (two-part ln 2, fused); e^r − 1 = r + r²·Q(r), Q fitted on [−ln2/2, ln2/2] (0.8 ulp).
struct ExpReduction {
  mlir::Value k;
  mlir::Value expm1r;
};

ExpReduction ReduceExp(F32Builder& f, mlir::Value x) {
  mlir::Value k = f.roundEven(f.mul(x, f.f(1.44269504088896341f)));
  mlir::Value r = f.fma(k, f.f(-0x1.62e430p-1f), x);
  r = f.fma(k, f.f(0x1.05c610p-29f), r);
  mlir::Value q = f.polynomial(r, {0.49999988079071045f, 0.166665181517601f, 0.04166953265666962f,
                                   0.008368915878236294f, 0.0013751407386735082f});
  return {k, f.fma(f.mul(r, r), q, r)};
}

/// e^x = 2^k · (1 + (e^r − 1)), with 2^k applied as two exact powers of two, so a subnormal
/// result is rounded once. Inputs are clamped to [−104, 89] (beyond: 0 and +inf, which the
/// scaling produces).
mlir::Value Exp(F32Builder& f, mlir::Value x) {
  ExpReduction reduced = ReduceExp(f, ClampForReduction(f, x, -104.0f, 89.0f));
  mlir::Value er = f.add(reduced.expm1r, f.f(1.0f));
  // k in [−150, 128]: split into two halves that are both normal exponents.
  mlir::Value k1 = f.floor(f.mul(reduced.k, f.f(0.5f)));
  mlir::Value k2 = f.sub(reduced.k, k1);
  mlir::Value result = f.mul(f.mul(er, f.powerOfTwo(k1)), f.powerOfTwo(k2));
  return f.select(f.isNan(x), x, result);
}

/// e^x − 1 without cancellation: 2^k·(e^r − 1) + (2^k − 1), with x clamped to [−30, 20] (beyond,
/// −1 and e^x are the rounded results). 2^k − 1 is exact for |k| ≤ 24; for larger |k| its
/// rounding is below half an ulp of the result. Inputs below 2^−25 in magnitude
/// (±0 and subnormals included) are their own result.
mlir::Value Expm1(F32Builder& f, mlir::Value x) {
  ExpReduction reduced = ReduceExp(f, ClampForReduction(f, x, -30.0f, 20.0f));
  mlir::Value scale = f.powerOfTwo(reduced.k);
  mlir::Value result = f.fma(reduced.expm1r, scale, f.sub(scale, f.f(1.0f)));
  result = f.select(f.greater(x, f.f(20.0f)), Exp(f, x), result);
  result = f.select(f.less(f.abs(x), f.f(0x1p-25f)), x, result);
  return f.select(f.isNan(x), x, result);
}

/// tanh x: for |x| < 0.625, |x| + |x|·x²·P(x²) (P fitted, 0.65 ulp); above, 1 − 2/(e^{2|x|} + 1)
/// (≈ 1.5 ulp; e^{2|x|} overflowing gives exactly 1); then the sign of x (so tanh(−0) = −0).
mlir::Value Tanh(F32Builder& f, mlir::Value x) {
  mlir::Value a = f.abs(x);
  mlir::Value z = f.mul(a, a);
  mlir::Value p =
      f.polynomial(z, {-0.3333333134651184f, 0.13333217799663544f, -0.053948141634464264f,
                       0.02170809544622898f, -0.008195310831069946f, 0.0021590448450297117f});
  mlir::Value small = f.fma(f.mul(a, z), p, a);
  mlir::Value e = Exp(f, f.add(a, a));
  mlir::Value large = f.sub(f.f(1.0f), f.div(f.f(2.0f), f.add(e, f.f(1.0f))));
  return f.copysign(f.select(f.less(a, f.f(0.625f)), small, large), x);
}

/// erf x, odd: for |x| < 0.921875, |x| + |x|·P(x²) (P fitted, 0.75 ulp); on [0.921875, 2),
/// [2, 3) and [3, 3.95), degree-10 polynomials in |x| minus the interval's middle (fitted,
/// ≤ 1 ulp); beyond, 1 (erf rounds to 1 from 3.92 on). Then the sign of x; NaN stays NaN.
mlir::Value Erf(F32Builder& f, mlir::Value x) {
  mlir::Value a = f.abs(x);
  mlir::Value small = f.fma(
      a,
      f.polynomial(f.mul(a, a), {0.12837916612625122f, -0.37612634897232056f, 0.11283709853887558f,
                                 -0.02686009183526039f, 0.005202587228268385f,
                                 -0.000815893872641027f, 8.434017945546657e-05f}),
      a);
  mlir::Value near = f.polynomial(
      f.sub(a, f.f(1.4609375f)),
      {0.9611788392066956f, 0.13351303339004517f, -0.19505420327186584f, 0.14547069370746613f,
       -0.04124360531568527f, -0.019546935334801674f, 0.02051583118736744f, -0.003849603468552232f,
       -0.002983282320201397f, 0.0015072893584147096f, 7.483039371436462e-05f});
  mlir::Value middle = f.polynomial(
      f.sub(a, f.f(2.5f)), {0.9995930194854736f, 0.002178284339606762f, -0.005445710849016905f,
                            0.008350083604454994f, -0.008622354827821255f, 0.0061174905858933926f,
                            -0.002798850415274501f, 0.0005411307793110609f, 0.00026351161068305373f,
                            -0.00024549488443881273f, 6.84868500684388e-05f});
  mlir::Value far =
      f.polynomial(f.sub(a, f.f(3.475f)),
                   {0.9999991059303284f, 6.428028427762911e-06f, -2.23373863263987e-05f,
                    4.96055836265441e-05f, -7.874457514844835e-05f, 9.457372652832419e-05f,
                    -8.853651524987072e-05f, 6.538200977956876e-05f, -3.793953510466963e-05f,
                    1.6605055861873552e-05f, -4.353534222900635e-06f});
  mlir::Value result = f.select(f.less(a, f.f(3.95f)), far, f.f(1.0f));
  result = f.select(f.less(a, f.f(3.0f)), middle, result);
  result = f.select(f.less(a, f.f(2.0f)), near, result);
  result = f.select(f.less(a, f.f(0.921875f)), small, result);
  return f.select(f.isNan(x), x, f.copysign(result, x));
}

template <typename Op>
struct Rewrite : public mlir::OpRewritePattern<Op> {
  using Function = mlir::Value (*)(F32Builder&, mlir::Value);
  Rewrite(mlir::MLIRContext* context, Function function)
      : mlir::OpRewritePattern<Op>(context, /*benefit=*/2), function(function) {}

  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter& rewriter) const override {
    if (!IsF32(op.getType())) return mlir::failure();
    F32Builder f(rewriter, op.getLoc(), op.getType());
    rewriter.replaceOp(op, function(f, op.getOperand()));
    return mlir::success();
  }
  Function function;
};

/// log and log2 of a subnormal input through a normal one: log(x·2^24) − 24·log(2), with the
/// inner op marked so that only MLIR's approximation rewrites it next.
template <typename Op>
struct RescaleSubnormalInput : public mlir::OpRewritePattern<Op> {
  RescaleSubnormalInput(mlir::MLIRContext* context, float log2Scale)
      : mlir::OpRewritePattern<Op>(context, /*benefit=*/2), offset(log2Scale) {}

  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter& rewriter) const override {
    if (!IsF32(op.getType()) || op->hasAttr(kRescaled)) return mlir::failure();
    F32Builder f(rewriter, op.getLoc(), op.getType());
    mlir::Value x = op.getOperand();
    mlir::Value subnormal = f.both(f.greater(x, f.f(0.0f)), f.less(x, f.f(0x1p-126f)));
    mlir::Value input = f.select(subnormal, f.mul(x, f.f(0x1p24f)), x);
    auto inner = rewriter.create<Op>(op.getLoc(), input);
    inner->setAttr(kRescaled, rewriter.getUnitAttr());
    mlir::Value correction = f.select(subnormal, f.f(offset), f.f(0.0f));
    rewriter.replaceOp(op, f.sub(inner, correction));
    return mlir::success();
  }
  float offset;
};

bool IsApproximatedByMlir(llvm::StringRef name) {
  static const llvm::StringSet<> kApproximated = {"log", "log2", "log1p"};
  name.consume_front("math.");
  return kApproximated.contains(name);
}

class ApproximateMath : public impl::ApproximateMathBase<ApproximateMath> {
 public:
  void runOnOperation() override {
    mlir::MLIRContext* context = &getContext();
    mlir::RewritePatternSet patterns(context);
    patterns.add<Rewrite<mlir::math::ExpOp>>(context, &Exp);
    patterns.add<Rewrite<mlir::math::ExpM1Op>>(context, &Expm1);
    patterns.add<Rewrite<mlir::math::TanhOp>>(context, &Tanh);
    patterns.add<Rewrite<mlir::math::ErfOp>>(context, &Erf);
    patterns.add<RescaleSubnormalInput<mlir::math::LogOp>>(context, 24.0f * 0.693147180559945f);
    patterns.add<RescaleSubnormalInput<mlir::math::Log2Op>>(context, 24.0f);
    mlir::populateMathPolynomialApproximationPatterns(patterns, IsApproximatedByMlir);
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      signalPassFailure();
    }
    getOperation()->walk([](mlir::Operation* op) { op->removeAttr(kRescaled); });
  }
};

}  // namespace
}  // namespace tessera
