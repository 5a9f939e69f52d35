// Element-level semantics of the Tile ops, shared by the host and device lowerings.
// Over 600 lines: one table of element semantics that both lowerings must share; split, host and
// device could drift apart.
#include "dialect/conversion/TileSemantics.h"

#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace tessera::lowering {

mlir::Value f32Like(mlir::OpBuilder& b, mlir::Location loc, mlir::Type type, float value) {
  if (auto vector = llvm::dyn_cast<mlir::VectorType>(type)) {
    return b.create<mlir::arith::ConstantOp>(
        loc, mlir::DenseElementsAttr::get(vector, b.getF32FloatAttr(value)));
  }
  return b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(value));
}

mlir::Value f32Constant(mlir::OpBuilder& b, mlir::Location loc, float value) {
  return b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(value));
}

mlir::Value countAsF32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value count) {
  mlir::Value count64 = b.create<mlir::arith::IndexCastUIOp>(loc, b.getI64Type(), count);
  return b.create<mlir::arith::UIToFPOp>(loc, b.getF32Type(), count64);
}

mlir::Value reciprocalSqrt(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value) {
  return b.create<mlir::arith::DivFOp>(loc, f32Constant(b, loc, 1.0f),
                                       b.create<mlir::math::SqrtOp>(loc, value));
}

llvm::SmallVector<mlir::Value> append(mlir::ValueRange index, mlir::Value last) {
  return insertAt(index, index.size(), last);
}

mlir::Value normInput(mlir::OpBuilder& b, mlir::Location loc, tile::NormOp op,
                      mlir::ValueRange index) {
  mlir::Value s = loadAsF32(b, loc, op.getInput(), index);
  if (op.getResidual()) {
    s = b.create<mlir::arith::AddFOp>(loc, s, loadAsF32(b, loc, op.getResidual(), index));
  }
  return s;
}

mlir::Value normScale(mlir::OpBuilder& b, mlir::Location loc, tile::NormOp op,
                      mlir::Value statistic) {
  return reciprocalSqrt(
      b, loc,
      b.create<mlir::arith::AddFOp>(loc, statistic, f32Constant(b, loc, op.getEpsOrDefault())));
}

void normStore(mlir::OpBuilder& b, mlir::Location loc, tile::NormOp op, mlir::ValueRange index,
               mlir::Value l, mlir::Value s, mlir::Value mean, mlir::Value scale) {
  if (mlir::Value sum = op.getResidualOut()) {
    auto element = llvm::cast<mlir::MemRefType>(sum.getType()).getElementType();
    b.create<mlir::memref::StoreOp>(loc, convertFloat(b, loc, s, element), sum, index);
  }
  mlir::Value y = op.getKind() == tile::NormKind::layer
                      ? b.create<mlir::arith::SubFOp>(loc, s, mean).getResult()
                      : s;
  y = b.create<mlir::arith::MulFOp>(loc, y, scale);
  if (mlir::Value weight = op.getWeight()) {
    y = b.create<mlir::arith::MulFOp>(loc, y, loadAsF32(b, loc, weight, l));
  }
  if (mlir::Value bias = op.getBias()) {
    y = b.create<mlir::arith::AddFOp>(loc, y, loadAsF32(b, loc, bias, l));
  }
  auto output = llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  b.create<mlir::memref::StoreOp>(loc, convertFloat(b, loc, y, output), op.getOutput(), index);
}

mlir::Value attentionScale(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                           mlir::Value depth) {
  if (op.getScale()) return f32Constant(b, loc, op.getScale()->convertToFloat());
  mlir::Value d = b.create<mlir::arith::MaxUIOp>(loc, depth, indexConstant(b, loc, 1));
  return reciprocalSqrt(b, loc, countAsF32(b, loc, d));
}

namespace {

mlir::Value clampI64(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value, mlir::Value low,
                     mlir::Value high) {
  return b.create<mlir::arith::MinSIOp>(loc, b.create<mlir::arith::MaxSIOp>(loc, value, low), high);
}

/// batchKeys as i64.
mlir::Value batchKeysI64(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                         mlir::Value batch, mlir::Value keys) {
  mlir::Type i64 = b.getI64Type();
  mlir::Value length = b.create<mlir::arith::IndexCastOp>(loc, i64, keys);
  mlir::Value lengths = op.getKeyLengths();
  if (!lengths) return length;
  mlir::Value given = b.create<mlir::memref::LoadOp>(loc, lengths, batch);
  if (!given.getType().isInteger(64)) given = b.create<mlir::arith::ExtSIOp>(loc, i64, given);
  mlir::Value zero = b.create<mlir::arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
  return clampI64(b, loc, given, zero, length);
}

}  // namespace

mlir::Value batchKeys(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                      mlir::Value batch, mlir::Value keys) {
  return b.create<mlir::arith::IndexCastOp>(loc, b.getIndexType(),
                                            batchKeysI64(b, loc, op, batch, keys));
}

KeyRange visibleKeys(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                     mlir::Value batch, mlir::Value query, mlir::Value keys, mlir::Value queries) {
  mlir::Type i64 = b.getI64Type();
  auto toI64 = [&](mlir::Value index) -> mlir::Value {
    return b.create<mlir::arith::IndexCastOp>(loc, i64, index);
  };
  auto constant = [&](int64_t value) -> mlir::Value {
    return b.create<mlir::arith::ConstantOp>(loc, b.getI64IntegerAttr(value));
  };
  auto add = [&](mlir::Value x, mlir::Value y) -> mlir::Value {
    return b.create<mlir::arith::AddIOp>(loc, x, y);
  };
  mlir::Value zero = constant(0);
  mlir::Value length = batchKeysI64(b, loc, op, batch, keys);
  // The query's diagonal position among the keys (may be negative or past the keys).
  mlir::Value position = toI64(query);
  if (op.getAlignmentOrDefault() == tile::AttentionAlignment::bottom_right) {
    position = b.create<mlir::arith::SubIOp>(loc, add(position, length), toI64(queries));
  }
  // Window extents past 2^62 are as unbounded as -1 (and p ± extent must not wrap).
  const int64_t extentLimit = int64_t{1} << 62;
  mlir::Value end = length;
  if (op.getCausal()) {
    end = b.create<mlir::arith::MinSIOp>(loc, end, add(position, constant(1)));
  }
  if (op.getWindowRightOrUnbounded() >= 0 && op.getWindowRightOrUnbounded() < extentLimit) {
    end = b.create<mlir::arith::MinSIOp>(
        loc, end, add(position, constant(op.getWindowRightOrUnbounded() + 1)));
  }
  end = clampI64(b, loc, end, zero, length);
  mlir::Value first = zero;
  if (op.getWindowLeftOrUnbounded() >= 0 && op.getWindowLeftOrUnbounded() < extentLimit) {
    first = b.create<mlir::arith::MaxSIOp>(
        loc, zero,
        b.create<mlir::arith::SubIOp>(loc, position, constant(op.getWindowLeftOrUnbounded())));
  }
  first = b.create<mlir::arith::MinSIOp>(loc, first, end);
  auto toIndex = [&](mlir::Value value) -> mlir::Value {
    return b.create<mlir::arith::IndexCastOp>(loc, b.getIndexType(), value);
  };
  return {toIndex(first), toIndex(end)};
}

mlir::Value attentionBias(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                          mlir::Value batch, mlir::Value head, mlir::Value query, mlir::Value key) {
  llvm::SmallVector<mlir::Value> index =
      broadcastIndex(b, loc, op.getBias(), mlir::ValueRange{batch, head, query, key});
  return b.create<mlir::memref::LoadOp>(loc, op.getBias(), index);
}

mlir::Value attentionScore(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                           mlir::Value dot, mlir::Value scale, mlir::Value bias) {
  mlir::Type type = dot.getType();
  if (scale.getType() != type) scale = b.create<mlir::vector::BroadcastOp>(loc, type, scale);
  mlir::Value score = b.create<mlir::arith::MulFOp>(loc, dot, scale);
  if (bias) score = b.create<mlir::arith::AddFOp>(loc, score, bias);
  const double cap = op.getSoftcapOrZero();
  if (cap > 0) {
    // A -inf score (a bias that masks the key) stays -inf: capping it would give -c.
    mlir::Value c = f32Like(b, loc, type, static_cast<float>(cap));
    mlir::Value masked = b.create<mlir::arith::CmpFOp>(
        loc, mlir::arith::CmpFPredicate::OEQ, score,
        f32Like(b, loc, type, -std::numeric_limits<float>::infinity()));
    mlir::Value capped = b.create<mlir::arith::MulFOp>(
        loc, c, b.create<mlir::math::TanhOp>(loc, b.create<mlir::arith::DivFOp>(loc, score, c)));
    score = b.create<mlir::arith::SelectOp>(loc, masked, score, capped);
  }
  return score;
}

mlir::Value dropoutKeeps(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                         mlir::ValueRange position, mlir::ValueRange sizes) {
  mlir::Type i64 = b.getI64Type();
  auto constant = [&](uint64_t value) -> mlir::Value {
    return b.create<mlir::arith::ConstantOp>(loc, b.getIntegerAttr(i64, llvm::APInt(64, value)));
  };
  auto toI64 = [&](mlir::Value index) -> mlir::Value {
    return b.create<mlir::arith::IndexCastOp>(loc, i64, index);
  };
  // counter = ((b · H + h) · Sq + i) · Sk + j, wrapping in 64 bits.
  mlir::Value counter = toI64(position[0]);
  for (size_t d = 1; d < 4; ++d) {
    counter = b.create<mlir::arith::AddIOp>(
        loc, b.create<mlir::arith::MulIOp>(loc, counter, toI64(sizes[d])), toI64(position[d]));
  }
  const double p = op.getDropoutOrZero();
  const uint64_t threshold = static_cast<uint64_t>(p * 4294967296.0);
  const uint64_t seed = op.getDropoutSeedOrZero();
  mlir::Value hash;
  if (op.getDropoutRuleOrDefault() == tile::DropoutRule::lcg) {
    // The original Tessera's: (counter · 1664525 + seed + 1013904223) mod 2^32.
    hash = b.create<mlir::arith::AndIOp>(
        loc,
        b.create<mlir::arith::AddIOp>(
            loc, b.create<mlir::arith::MulIOp>(loc, counter, constant(1664525)),
            constant(seed + 1013904223)),
        constant(0xFFFFFFFFull));
  } else {
    // SplitMix64's finalizer of counter ^ (seed · φ) + φ; its high 32 bits.
    const uint64_t golden = 0x9E3779B97F4A7C15ull;
    mlir::Value z = b.create<mlir::arith::AddIOp>(
        loc, b.create<mlir::arith::XOrIOp>(loc, counter, constant(seed * golden)),
        constant(golden));
    auto mixStep = [&](mlir::Value value, uint64_t shift, uint64_t multiplier) -> mlir::Value {
      mlir::Value shifted = b.create<mlir::arith::ShRUIOp>(loc, value, constant(shift));
      mlir::Value mixed = b.create<mlir::arith::XOrIOp>(loc, value, shifted);
      return multiplier != 0
                 ? b.create<mlir::arith::MulIOp>(loc, mixed, constant(multiplier)).getResult()
                 : mixed;
    };
    z = mixStep(z, 30, 0xBF58476D1CE4E5B9ull);
    z = mixStep(z, 27, 0x94D049BB133111EBull);
    z = mixStep(z, 31, 0);
    hash = b.create<mlir::arith::ShRUIOp>(loc, z, constant(32));
  }
  return b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::uge, hash,
                                       constant(threshold));
}

mlir::Value droppedWeight(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                          mlir::Value weight, mlir::ValueRange position, mlir::ValueRange sizes) {
  const double p = op.getDropoutOrZero();
  if (p <= 0) return weight;
  mlir::Value kept = b.create<mlir::arith::MulFOp>(
      loc, weight, f32Constant(b, loc, static_cast<float>(1.0 / (1.0 - p))));
  return b.create<mlir::arith::SelectOp>(loc, dropoutKeeps(b, loc, op, position, sizes), kept,
                                         f32Constant(b, loc, 0.0f));
}

mlir::Value attentionResult(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                            mlir::Value empty, mlir::Value accumulator, mlir::Value sum) {
  const float none = op.getEmptyRowsOrDefault() == tile::EmptyRows::nan
                         ? std::numeric_limits<float>::quiet_NaN()
                         : 0.0f;
  return b.create<mlir::arith::SelectOp>(loc, empty, f32Constant(b, loc, none),
                                         b.create<mlir::arith::DivFOp>(loc, accumulator, sum));
}

void storeAttentionLse(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                       mlir::Value empty, mlir::Value max, mlir::Value sum, mlir::ValueRange row) {
  if (!op.getLse()) return;
  const float none = op.getEmptyRowsOrDefault() == tile::EmptyRows::nan
                         ? std::numeric_limits<float>::quiet_NaN()
                         : -std::numeric_limits<float>::infinity();
  mlir::Value lse = b.create<mlir::arith::AddFOp>(loc, max, b.create<mlir::math::LogOp>(loc, sum));
  b.create<mlir::memref::StoreOp>(
      loc, b.create<mlir::arith::SelectOp>(loc, empty, f32Constant(b, loc, none), lse), op.getLse(),
      row);
}

mlir::Value softmaxCorrection(mlir::OpBuilder& b, mlir::Location loc, mlir::Value max,
                              mlir::Value newMax) {
  mlir::Value unchanged =
      b.create<mlir::arith::CmpFOp>(loc, mlir::arith::CmpFPredicate::OEQ, max, newMax);
  return b.create<mlir::arith::SelectOp>(
      loc, unchanged, f32Like(b, loc, max.getType(), 1.0f),
      b.create<mlir::math::ExpOp>(loc, b.create<mlir::arith::SubFOp>(loc, max, newMax)));
}

mlir::Value softmaxWeight(mlir::OpBuilder& b, mlir::Location loc, mlir::Value score,
                          mlir::Value newMax) {
  mlir::Type type = score.getType();
  mlir::Value masked =
      b.create<mlir::arith::CmpFOp>(loc, mlir::arith::CmpFPredicate::OEQ, score,
                                    f32Like(b, loc, type, -std::numeric_limits<float>::infinity()));
  return b.create<mlir::arith::SelectOp>(
      loc, masked, f32Like(b, loc, type, 0.0f),
      b.create<mlir::math::ExpOp>(loc, b.create<mlir::arith::SubFOp>(loc, score, newMax)));
}

void ropeRotate(mlir::OpBuilder& b, mlir::Location loc, tile::RopeOp op, mlir::ValueRange row,
                mlir::Value i, mlir::Value half) {
  mlir::Value first, second;
  if (op.getLayout() == tile::RopeLayout::interleaved) {
    first = b.create<mlir::arith::MulIOp>(loc, i, indexConstant(b, loc, 2));
    second = b.create<mlir::arith::AddIOp>(loc, first, indexConstant(b, loc, 1));
  } else {
    first = i;
    second = b.create<mlir::arith::AddIOp>(loc, i, half);
  }
  mlir::Value x1 = loadAsF32(b, loc, op.getInput(), append(row, first));
  mlir::Value x2 = loadAsF32(b, loc, op.getInput(), append(row, second));
  mlir::Value position = row.back();
  mlir::Value c = loadAsF32(b, loc, op.getCos(), {position, i});
  mlir::Value s = loadAsF32(b, loc, op.getSin(), {position, i});
  auto mul = [&](mlir::Value x, mlir::Value y) {
    return b.create<mlir::arith::MulFOp>(loc, x, y).getResult();
  };
  mlir::Value y1 = b.create<mlir::arith::SubFOp>(loc, mul(x1, c), mul(x2, s));
  mlir::Value y2 = b.create<mlir::arith::AddFOp>(loc, mul(x2, c), mul(x1, s));
  auto output = llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  b.create<mlir::memref::StoreOp>(loc, convertFloat(b, loc, y1, output), op.getOutput(),
                                  append(row, first));
  b.create<mlir::memref::StoreOp>(loc, convertFloat(b, loc, y2, output), op.getOutput(),
                                  append(row, second));
}

mlir::Value convertFloat(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value,
                         mlir::Type target) {
  auto from = llvm::cast<mlir::FloatType>(value.getType());
  auto to = llvm::cast<mlir::FloatType>(target);
  if (from == to) return value;
  if (from.getWidth() == to.getWidth()) {
    // f16 <-> bf16 has no single conversion; go through f32, which holds both exactly.
    value = b.create<mlir::arith::ExtFOp>(loc, b.getF32Type(), value);
    return b.create<mlir::arith::TruncFOp>(loc, to, value);
  }
  if (from.getWidth() < to.getWidth()) return b.create<mlir::arith::ExtFOp>(loc, to, value);
  return b.create<mlir::arith::TruncFOp>(loc, to, value);
}

mlir::Value loadAsF32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref,
                      mlir::ValueRange indices) {
  mlir::Value element = b.create<mlir::memref::LoadOp>(loc, memref, indices);
  return convertFloat(b, loc, element, b.getF32Type());
}

mlir::Value roundToTf32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value) {
  // Add half of the dropped range (ties away from zero on the magnitude), then clear the 13
  // low mantissa bits. Infinities stay infinite; NaN stays NaN.
  mlir::Type i32 = b.getI32Type();
  mlir::Value bits = b.create<mlir::arith::BitcastOp>(loc, i32, value);
  mlir::Value half = b.create<mlir::arith::ConstantOp>(loc, b.getI32IntegerAttr(0x1000));
  mlir::Value mask = b.create<mlir::arith::ConstantOp>(loc, b.getI32IntegerAttr(~0x1FFF));
  mlir::Value rounded =
      b.create<mlir::arith::AndIOp>(loc, b.create<mlir::arith::AddIOp>(loc, bits, half), mask);
  // NaN payloads must not be rounded into infinity: keep NaN inputs as they are.
  mlir::Value isNan =
      b.create<mlir::arith::CmpFOp>(loc, mlir::arith::CmpFPredicate::UNO, value, value);
  mlir::Value result = b.create<mlir::arith::BitcastOp>(loc, value.getType(), rounded);
  return b.create<mlir::arith::SelectOp>(loc, isNan, value, result);
}

mlir::Type matmulAccumulatorType(tile::MatmulOp op) {
  mlir::Builder b(op.getContext());
  mlir::Type operand = llvm::cast<mlir::MemRefType>(op.getLhs().getType()).getElementType();
  if (operand.isInteger(8)) return b.getI32Type();
  if (operand.isF64()) return b.getF64Type();
  if (op.getNumericPolicyOrDefault() == tile::NumericPolicy::f16) return b.getF16Type();
  return b.getF32Type();
}

mlir::Value matmulZero(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op) {
  return b.create<mlir::arith::ConstantOp>(loc, b.getZeroAttr(matmulAccumulatorType(op)));
}

mlir::Value prepareMatmulInput(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op,
                               mlir::Value element) {
  mlir::Type accumulator = matmulAccumulatorType(op);
  if (llvm::isa<mlir::IntegerType>(accumulator)) {
    return b.create<mlir::arith::ExtSIOp>(loc, accumulator, element);
  }
  mlir::Value value = convertFloat(b, loc, element, accumulator);
  if (op.getNumericPolicyOrDefault() == tile::NumericPolicy::tf32) {
    value = roundToTf32(b, loc, value);
  }
  return value;
}

mlir::Value matmulMultiplyAdd(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op,
                              mlir::Value accumulator, mlir::Value x, mlir::Value y) {
  if (llvm::isa<mlir::IntegerType>(accumulator.getType())) {
    return b.create<mlir::arith::AddIOp>(loc, accumulator,
                                         b.create<mlir::arith::MulIOp>(loc, x, y));
  }
  if (op.getNumericPolicyOrDefault() == tile::NumericPolicy::fma) {
    return b.create<mlir::math::FmaOp>(loc, x, y, accumulator);
  }
  return b.create<mlir::arith::AddFOp>(loc, accumulator, b.create<mlir::arith::MulFOp>(loc, x, y));
}

void storeMatmulResult(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op,
                       mlir::Value product, mlir::ValueRange cIndex) {
  auto output = llvm::cast<mlir::MemRefType>(op.getOutput().getType());
  if (llvm::isa<mlir::IntegerType>(product.getType())) {  // i8 operands: no epilogue
    b.create<mlir::memref::StoreOp>(loc, product, op.getOutput(), cIndex);
    return;
  }
  // The epilogue runs in f64 for f64 operands, else in f32.
  mlir::Type type = product.getType().isF64() ? b.getF64Type() : b.getF32Type();
  auto constant = [&](double value) -> mlir::Value {
    return b.create<mlir::arith::ConstantOp>(loc, b.getFloatAttr(type, value));
  };
  mlir::Value value = convertFloat(b, loc, product, type);
  if (mlir::Value bias = op.getBias()) {
    mlir::Value element = b.create<mlir::memref::LoadOp>(loc, bias, cIndex.back());
    value = b.create<mlir::arith::AddFOp>(loc, value, convertFloat(b, loc, element, type));
  }
  switch (op.getActivationOrNone()) {
    case tile::Activation::none:
      break;
    case tile::Activation::relu:
      value = b.create<mlir::arith::MaximumFOp>(loc, value, constant(0.0));
      break;
    case tile::Activation::gelu: {
      // The erf form: 0.5 · x · (1 + erf(x / √2)).
      mlir::Value scaled =
          b.create<mlir::arith::MulFOp>(loc, value, constant(0.70710678118654752440));
      mlir::Value erf = b.create<mlir::math::ErfOp>(loc, scaled);
      mlir::Value onePlus = b.create<mlir::arith::AddFOp>(loc, constant(1.0), erf);
      mlir::Value halfX = b.create<mlir::arith::MulFOp>(loc, value, constant(0.5));
      value = b.create<mlir::arith::MulFOp>(loc, halfX, onePlus);
      break;
    }
    case tile::Activation::gelu_tanh: {
      // The tanh form: 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))).
      mlir::Value square = b.create<mlir::arith::MulFOp>(loc, value, value);
      mlir::Value cube = b.create<mlir::arith::MulFOp>(loc, square, value);
      mlir::Value inner = b.create<mlir::arith::AddFOp>(
          loc, value, b.create<mlir::arith::MulFOp>(loc, cube, constant(0.044715)));
      mlir::Value tanh = b.create<mlir::math::TanhOp>(
          loc, b.create<mlir::arith::MulFOp>(loc, inner, constant(0.79788456080286535588)));
      mlir::Value onePlus = b.create<mlir::arith::AddFOp>(loc, constant(1.0), tanh);
      mlir::Value halfX = b.create<mlir::arith::MulFOp>(loc, value, constant(0.5));
      value = b.create<mlir::arith::MulFOp>(loc, halfX, onePlus);
      break;
    }
    case tile::Activation::silu: {
      // x · sigmoid(x) = x / (1 + exp(−x)).
      mlir::Value negated = b.create<mlir::arith::NegFOp>(loc, value);
      mlir::Value exp = b.create<mlir::math::ExpOp>(loc, negated);
      mlir::Value denominator = b.create<mlir::arith::AddFOp>(loc, constant(1.0), exp);
      value = b.create<mlir::arith::DivFOp>(loc, value, denominator);
      break;
    }
  }
  if (mlir::Value residual = op.getResidual()) {
    mlir::Value element = b.create<mlir::memref::LoadOp>(loc, residual, cIndex);
    value = b.create<mlir::arith::AddFOp>(loc, value, convertFloat(b, loc, element, type));
  }
  b.create<mlir::memref::StoreOp>(loc, convertFloat(b, loc, value, output.getElementType()),
                                  op.getOutput(), cIndex);
}

mlir::Value reductionIdentity(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind) {
  switch (kind) {
    case tile::ReduceKind::sum:
    case tile::ReduceKind::mean:
      return f32Constant(b, loc, 0.0f);
    case tile::ReduceKind::prod:
      return f32Constant(b, loc, 1.0f);
    case tile::ReduceKind::max:
      return f32Constant(b, loc, -std::numeric_limits<float>::infinity());
    case tile::ReduceKind::min:
      return f32Constant(b, loc, std::numeric_limits<float>::infinity());
    case tile::ReduceKind::argmax:
    case tile::ReduceKind::argmin:
      break;  // (value, index) pairs: argCombine
  }
  llvm_unreachable("unknown reduce kind");
}

mlir::Value reductionCombine(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                             mlir::Value accumulator, mlir::Value value) {
  switch (kind) {
    case tile::ReduceKind::sum:
    case tile::ReduceKind::mean:
      return b.create<mlir::arith::AddFOp>(loc, accumulator, value);
    case tile::ReduceKind::prod:
      return b.create<mlir::arith::MulFOp>(loc, accumulator, value);
    case tile::ReduceKind::max:
      return b.create<mlir::arith::MaximumFOp>(loc, accumulator, value);
    case tile::ReduceKind::min:
      return b.create<mlir::arith::MinimumFOp>(loc, accumulator, value);
    case tile::ReduceKind::argmax:
    case tile::ReduceKind::argmin:
      break;  // (value, index) pairs: argCombine
  }
  llvm_unreachable("unknown reduce kind");
}

mlir::Value reductionFinalize(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                              mlir::Value accumulator, mlir::Value count) {
  if (kind != tile::ReduceKind::mean) return accumulator;
  return b.create<mlir::arith::DivFOp>(loc, accumulator, countAsF32(b, loc, count));
}

mlir::Value replacesExtreme(mlir::OpBuilder& b, mlir::Location loc, mlir::Value candidate,
                            mlir::Value best, bool max) {
  using mlir::arith::CmpFPredicate;
  mlir::Value better = b.create<mlir::arith::CmpFOp>(
      loc, max ? CmpFPredicate::OGT : CmpFPredicate::OLT, candidate, best);
  mlir::Value candidateNan =
      b.create<mlir::arith::CmpFOp>(loc, CmpFPredicate::UNO, candidate, candidate);
  mlir::Value bestNumber = b.create<mlir::arith::CmpFOp>(loc, CmpFPredicate::ORD, best, best);
  return b.create<mlir::arith::OrIOp>(loc, better,
                                      b.create<mlir::arith::AndIOp>(loc, candidateNan, bestNumber));
}

std::pair<mlir::Value, mlir::Value> argCombine(mlir::OpBuilder& b, mlir::Location loc,
                                               mlir::Value firstValue, mlir::Value firstIndex,
                                               mlir::Value secondValue, mlir::Value secondIndex,
                                               bool max) {
  using mlir::arith::CmpFPredicate;
  using mlir::arith::CmpIPredicate;
  mlir::Value zero = b.create<mlir::arith::ConstantOp>(loc, b.getZeroAttr(firstIndex.getType()));
  mlir::Value secondValid =
      b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::sge, secondIndex, zero);
  mlir::Value firstEmpty = b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::slt, firstIndex, zero);
  mlir::Value bothNan = b.create<mlir::arith::AndIOp>(
      loc, b.create<mlir::arith::CmpFOp>(loc, CmpFPredicate::UNO, secondValue, secondValue),
      b.create<mlir::arith::CmpFOp>(loc, CmpFPredicate::UNO, firstValue, firstValue));
  mlir::Value same = b.create<mlir::arith::OrIOp>(
      loc, b.create<mlir::arith::CmpFOp>(loc, CmpFPredicate::OEQ, secondValue, firstValue),
      bothNan);
  mlir::Value earlier = b.create<mlir::arith::AndIOp>(
      loc, same, b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::slt, secondIndex, firstIndex));
  mlir::Value wins = b.create<mlir::arith::AndIOp>(
      loc, secondValid,
      b.create<mlir::arith::OrIOp>(
          loc, firstEmpty,
          b.create<mlir::arith::OrIOp>(loc, replacesExtreme(b, loc, secondValue, firstValue, max),
                                       earlier)));
  return {b.create<mlir::arith::SelectOp>(loc, wins, secondValue, firstValue),
          b.create<mlir::arith::SelectOp>(loc, wins, secondIndex, firstIndex)};
}

llvm::SmallVector<mlir::Value> inlineMapBody(mlir::OpBuilder& b, tile::MapOp map,
                                             mlir::ValueRange elements) {
  mlir::Block& body = map.getBody().front();
  mlir::IRMapping mapping;
  mapping.map(body.getArguments(), elements);
  for (mlir::Operation& op : body.without_terminator()) b.clone(op, mapping);
  auto yield = llvm::cast<tile::YieldOp>(body.getTerminator());
  llvm::SmallVector<mlir::Value> results;
  for (mlir::Value value : yield.getValues()) results.push_back(mapping.lookup(value));
  return results;
}

llvm::SmallVector<mlir::Value> memrefSizes(mlir::OpBuilder& b, mlir::Location loc,
                                           mlir::Value memref) {
  auto type = llvm::cast<mlir::MemRefType>(memref.getType());
  llvm::SmallVector<mlir::Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d)) {
      sizes.push_back(b.create<mlir::memref::DimOp>(loc, memref, d));
    } else {
      sizes.push_back(b.create<mlir::arith::ConstantIndexOp>(loc, type.getDimSize(d)));
    }
  }
  return sizes;
}

mlir::Value indexConstant(mlir::OpBuilder& b, mlir::Location loc, int64_t value) {
  return b.create<mlir::arith::ConstantIndexOp>(loc, value);
}

mlir::Value ceilDiv(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value, int64_t divisor) {
  return b.create<mlir::arith::CeilDivUIOp>(loc, value, indexConstant(b, loc, divisor));
}

llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder& b, mlir::Location loc,
                                           mlir::Value linear, mlir::ValueRange sizes) {
  llvm::SmallVector<mlir::Value> index(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      index[d] = linear;
      break;
    }
    index[d] = b.create<mlir::arith::RemUIOp>(loc, linear, sizes[d]);
    linear = b.create<mlir::arith::DivUIOp>(loc, linear, sizes[d]);
  }
  return index;
}

llvm::SmallVector<mlir::Value> broadcastIndex(mlir::OpBuilder& b, mlir::Location loc,
                                              mlir::Value operand, mlir::ValueRange index,
                                              int64_t dims) {
  auto type = llvm::cast<mlir::MemRefType>(operand.getType());
  const int64_t rank = dims < 0 ? type.getRank() : dims;
  const int64_t offset = static_cast<int64_t>(index.size()) - rank;
  llvm::SmallVector<mlir::Value> result;
  mlir::Value zero = indexConstant(b, loc, 0);
  for (int64_t d = 0; d < rank; ++d) {
    mlir::Value position = index[d + offset];
    if (type.getDimSize(d) == 1) {
      result.push_back(zero);
    } else if (type.isDynamicDim(d)) {
      mlir::Value size = b.create<mlir::memref::DimOp>(loc, operand, d);
      mlir::Value one = b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, size,
                                                      indexConstant(b, loc, 1));
      result.push_back(b.create<mlir::arith::SelectOp>(loc, one, zero, position));
    } else {
      result.push_back(position);
    }
  }
  return result;
}

mlir::Value product(mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange sizes) {
  mlir::Value result = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  for (mlir::Value size : sizes) result = b.create<mlir::arith::MulIOp>(loc, result, size);
  return result;
}

llvm::SmallVector<mlir::Value> insertAt(mlir::ValueRange values, int64_t position,
                                        mlir::Value inserted) {
  llvm::SmallVector<mlir::Value> result(values.begin(), values.end());
  result.insert(result.begin() + position, inserted);
  return result;
}

llvm::SmallVector<mlir::Value> eraseAt(mlir::ValueRange values, int64_t position) {
  llvm::SmallVector<mlir::Value> result(values.begin(), values.end());
  result.erase(result.begin() + position);
  return result;
}

}  // namespace tessera::lowering
