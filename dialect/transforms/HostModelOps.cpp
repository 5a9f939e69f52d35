// The host lowering of the model ops: tile.norm (two or three passes over each row, statistics
// in kLanes lanes), tile.attention (an online softmax per query row, keys in ascending order)
// and tile.rope (one pass). Rows run in parallel; each row's result depends only on that row.
#include <limits>

#include "dialect/transforms/HostLoops.h"
#include "dialect/transforms/TileSemantics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace tessera::host {
namespace {

using lowering::indexConstant;
using lowering::memrefSizes;

mlir::Value f32Constant(mlir::OpBuilder& b, mlir::Location loc, float value) {
  return b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(value));
}

/// An index count as f32.
mlir::Value countAsF32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value count) {
  mlir::Value count64 = b.create<mlir::arith::IndexCastUIOp>(loc, b.getI64Type(), count);
  return b.create<mlir::arith::UIToFPOp>(loc, b.getF32Type(), count64);
}

/// 1 / sqrt(value): a correctly rounded square root and division, the same on every CPU.
mlir::Value reciprocalSqrt(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value) {
  return b.create<mlir::arith::DivFOp>(loc, f32Constant(b, loc, 1.0f),
                                       b.create<mlir::math::SqrtOp>(loc, value));
}

/// `index` with `last` appended.
llvm::SmallVector<mlir::Value> with(mlir::ValueRange index, mlir::Value last) {
  return lowering::insertAt(index, index.size(), last);
}

}  // namespace

void lowerNorm(mlir::OpBuilder& b, tile::NormOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getInput());
  mlir::Value length = sizes.back();
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  const bool layer = op.getKind() == tile::NormKind::layer;
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, innerProduct(b, loc, rowSizes), length);
  mlir::Value eps = f32Constant(b, loc, op.getEpsOrDefault());
  mlir::Value count = countAsF32(b, loc, length);
  auto outputElement = llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  parallelForEachIndex(b, loc, rowSizes, cost, parallel,
                       [&](mlir::OpBuilder& nested, mlir::ValueRange row) {
    // s = input (+ residual), in f32 lanes.
    auto load = [&](mlir::OpBuilder& in, mlir::Value i, mlir::Value mask) -> mlir::Value {
      mlir::Value s = loadLanes(in, loc, op.getInput(), row, i, mask);
      if (op.getResidual()) {
        s = in.create<mlir::arith::AddFOp>(loc, s,
                                           loadLanes(in, loc, op.getResidual(), row, i, mask));
      }
      return s;
    };
    mlir::Value mean, statistic;
    if (layer) {
      mean = nested.create<mlir::arith::DivFOp>(
          loc, laneFold(nested, loc, length, tile::ReduceKind::sum, load), count);
      mlir::Value meanLanes = splat(nested, loc, mean);
      mlir::Value squares = laneFold(
          nested, loc, length, tile::ReduceKind::sum,
          [&](mlir::OpBuilder& in, mlir::Value i, mlir::Value mask) -> mlir::Value {
            mlir::Value centered = in.create<mlir::arith::SubFOp>(loc, load(in, i, mask), meanLanes);
            return in.create<mlir::arith::MulFOp>(loc, centered, centered);
          });
      statistic = nested.create<mlir::arith::DivFOp>(loc, squares, count);
    } else {
      mlir::Value squares = laneFold(
          nested, loc, length, tile::ReduceKind::sum,
          [&](mlir::OpBuilder& in, mlir::Value i, mlir::Value mask) -> mlir::Value {
            mlir::Value s = load(in, i, mask);
            return in.create<mlir::arith::MulFOp>(loc, s, s);
          });
      statistic = nested.create<mlir::arith::DivFOp>(loc, squares, count);
    }
    mlir::Value scale = reciprocalSqrt(
        nested, loc, nested.create<mlir::arith::AddFOp>(loc, statistic, eps));
    forEachIndex(nested, loc, mlir::ValueRange{length},
                 [&](mlir::OpBuilder& in, mlir::ValueRange l) {
      auto at = with(row, l[0]);
      mlir::Value s = lowering::loadAsF32(in, loc, op.getInput(), at);
      if (op.getResidual()) {
        s = in.create<mlir::arith::AddFOp>(loc, s,
                                           lowering::loadAsF32(in, loc, op.getResidual(), at));
      }
      if (mlir::Value sum = op.getResidualOut()) {
        auto element = llvm::cast<mlir::MemRefType>(sum.getType()).getElementType();
        in.create<mlir::memref::StoreOp>(loc, lowering::convertFloat(in, loc, s, element), sum,
                                         at);
      }
      mlir::Value y = layer ? in.create<mlir::arith::SubFOp>(loc, s, mean).getResult() : s;
      y = in.create<mlir::arith::MulFOp>(loc, y, scale);
      if (mlir::Value weight = op.getWeight()) {
        y = in.create<mlir::arith::MulFOp>(loc, y, lowering::loadAsF32(in, loc, weight, l[0]));
      }
      if (mlir::Value bias = op.getBias()) {
        y = in.create<mlir::arith::AddFOp>(loc, y, lowering::loadAsF32(in, loc, bias, l[0]));
      }
      in.create<mlir::memref::StoreOp>(loc, lowering::convertFloat(in, loc, y, outputElement),
                                       op.getOutput(), at);
    });
  });
}

void lowerAttention(mlir::OpBuilder& b, tile::AttentionOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  auto q = memrefSizes(b, loc, op.getQuery());  // B, H, Sq, D
  auto k = memrefSizes(b, loc, op.getKey());    // B, Hkv, Sk, D
  auto v = memrefSizes(b, loc, op.getValue());  // B, Hkv, Sk, Dv
  mlir::Value heads = q[1], queries = q[2], depth = q[3];
  mlir::Value keys = k[2], valueDepth = v[3];
  mlir::Type i64 = b.getI64Type();
  mlir::Type f32 = b.getF32Type();
  // The output is not empty, so H > 0, hence Hkv > 0 (the contract: H is a multiple of Hkv).
  mlir::Value group = b.create<mlir::arith::DivUIOp>(loc, heads, k[1]);
  mlir::Value scale;
  if (op.getScale()) {
    scale = f32Constant(b, loc, op.getScale()->convertToFloat());
  } else {
    mlir::Value d = b.create<mlir::arith::MaxUIOp>(loc, depth, indexConstant(b, loc, 1));
    scale = reciprocalSqrt(b, loc, countAsF32(b, loc, d));
  }
  mlir::Value rows = lowering::product(b, loc, {q[0], heads, queries});
  mlir::Value cost = b.create<mlir::arith::MulIOp>(
      loc, keys, b.create<mlir::arith::AddIOp>(loc, depth, valueDepth));
  auto toI64 = [&](mlir::OpBuilder& at, mlir::Value index) -> mlir::Value {
    return at.create<mlir::arith::IndexCastOp>(loc, i64, index);
  };
  auto clamp = [&](mlir::OpBuilder& at, mlir::Value value, mlir::Value low, mlir::Value high) {
    return at.create<mlir::arith::MinSIOp>(loc, at.create<mlir::arith::MaxSIOp>(loc, value, low),
                                           high);
  };
  auto accumulatorType = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, f32);
  auto outputElement = llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  parallelForEachIndex(b, loc, mlir::ValueRange{rows}, cost, parallel,
                       [&](mlir::OpBuilder& at, mlir::ValueRange linear) {
    auto position = lowering::delinearize(at, loc, linear[0], {q[0], heads, queries});
    mlir::Value batch = position[0], head = position[1], query = position[2];
    mlir::Value kvHead = at.create<mlir::arith::DivUIOp>(loc, head, group);
    // The visible keys: [0, limit).
    mlir::Value zero64 = at.create<mlir::arith::ConstantOp>(loc, at.getI64IntegerAttr(0));
    mlir::Value length = toI64(at, keys);
    if (mlir::Value lengths = op.getKeyLengths()) {
      mlir::Value given = at.create<mlir::memref::LoadOp>(loc, lengths, batch);
      if (!given.getType().isInteger(64)) given = at.create<mlir::arith::ExtSIOp>(loc, i64, given);
      length = clamp(at, given, zero64, length);
    }
    mlir::Value limit = length;
    if (op.getCausal()) {
      // Query i sees key j <= i + L - Sq (bottom-right alignment).
      mlir::Value last = at.create<mlir::arith::SubIOp>(
          loc, at.create<mlir::arith::AddIOp>(loc, toI64(at, query), length), toI64(at, queries));
      mlir::Value one64 = at.create<mlir::arith::ConstantOp>(loc, at.getI64IntegerAttr(1));
      limit = clamp(at, at.create<mlir::arith::AddIOp>(loc, last, one64), zero64, length);
    }
    limit = at.create<mlir::arith::IndexCastOp>(loc, at.getIndexType(), limit);
    mlir::Value accumulators =
        at.create<mlir::memref::AllocOp>(loc, accumulatorType, mlir::ValueRange{valueDepth});
    mlir::Value zero = f32Constant(at, loc, 0.0f);
    forEachIndex(at, loc, mlir::ValueRange{valueDepth}, [&](mlir::OpBuilder& in, mlir::ValueRange d) {
      in.create<mlir::memref::StoreOp>(loc, zero, accumulators, d);
    });
    mlir::Value queryRow[] = {batch, head, query};
    mlir::Value negativeInfinity = f32Constant(at, loc, -std::numeric_limits<float>::infinity());
    auto keyLoop = at.create<mlir::scf::ForOp>(
        loc, indexConstant(at, loc, 0), limit, indexConstant(at, loc, 1),
        mlir::ValueRange{negativeInfinity, zero},
        [&](mlir::OpBuilder& in, mlir::Location, mlir::Value j, mlir::ValueRange state) {
          mlir::Value keyRow[] = {batch, kvHead, j};
          mlir::Value dot = laneFold(
              in, loc, depth, tile::ReduceKind::sum,
              [&](mlir::OpBuilder& lanes, mlir::Value d, mlir::Value mask) -> mlir::Value {
                return lanes.create<mlir::arith::MulFOp>(
                    loc, loadLanes(lanes, loc, op.getQuery(), queryRow, d, mask),
                    loadLanes(lanes, loc, op.getKey(), keyRow, d, mask));
              });
          mlir::Value score = in.create<mlir::arith::MulFOp>(loc, dot, scale);
          mlir::Value max = state[0], sum = state[1];
          mlir::Value newMax = in.create<mlir::arith::MaximumFOp>(loc, max, score);
          // The rescale of what was accumulated so far (1 while the maximum stays), and the
          // weight of this key (0 for a score of -inf, whatever the maximum).
          mlir::Value unchanged = in.create<mlir::arith::CmpFOp>(
              loc, mlir::arith::CmpFPredicate::OEQ, max, newMax);
          mlir::Value correction = in.create<mlir::arith::SelectOp>(
              loc, unchanged, f32Constant(in, loc, 1.0f),
              in.create<mlir::math::ExpOp>(loc, in.create<mlir::arith::SubFOp>(loc, max, newMax)));
          mlir::Value masked = in.create<mlir::arith::CmpFOp>(
              loc, mlir::arith::CmpFPredicate::OEQ, score, negativeInfinity);
          mlir::Value weight = in.create<mlir::arith::SelectOp>(
              loc, masked, zero,
              in.create<mlir::math::ExpOp>(loc, in.create<mlir::arith::SubFOp>(loc, score, newMax)));
          forEachIndex(in, loc, mlir::ValueRange{valueDepth},
                       [&](mlir::OpBuilder& e, mlir::ValueRange d) {
            mlir::Value value = lowering::loadAsF32(e, loc, op.getValue(), {batch, kvHead, j, d[0]});
            mlir::Value accumulator = e.create<mlir::memref::LoadOp>(loc, accumulators, d);
            mlir::Value next = e.create<mlir::arith::AddFOp>(
                loc, e.create<mlir::arith::MulFOp>(loc, accumulator, correction),
                e.create<mlir::arith::MulFOp>(loc, weight, value));
            e.create<mlir::memref::StoreOp>(loc, next, accumulators, d);
          });
          mlir::Value newSum = in.create<mlir::arith::AddFOp>(
              loc, in.create<mlir::arith::MulFOp>(loc, sum, correction), weight);
          in.create<mlir::scf::YieldOp>(loc, mlir::ValueRange{newMax, newSum});
        });
    mlir::Value total = keyLoop.getResult(1);
    mlir::Value none = at.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, limit,
                                                      indexConstant(at, loc, 0));
    forEachIndex(at, loc, mlir::ValueRange{valueDepth}, [&](mlir::OpBuilder& in, mlir::ValueRange d) {
      mlir::Value accumulator = in.create<mlir::memref::LoadOp>(loc, accumulators, d);
      mlir::Value result = in.create<mlir::arith::SelectOp>(
          loc, none, zero, in.create<mlir::arith::DivFOp>(loc, accumulator, total));
      in.create<mlir::memref::StoreOp>(loc, lowering::convertFloat(in, loc, result, outputElement),
                                       op.getOutput(), mlir::ValueRange{batch, head, query, d[0]});
    });
    at.create<mlir::memref::DeallocOp>(loc, accumulators);
  });
}

void lowerRope(mlir::OpBuilder& b, tile::RopeOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getInput());
  mlir::Value features = sizes.back();
  mlir::Value half = b.create<mlir::arith::DivUIOp>(loc, features, indexConstant(b, loc, 2));
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  const bool interleaved = op.getLayout() == tile::RopeLayout::interleaved;
  auto outputElement = llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, innerProduct(b, loc, rowSizes), features);
  parallelForEachIndex(b, loc, rowSizes, cost, parallel,
                       [&](mlir::OpBuilder& nested, mlir::ValueRange row) {
    mlir::Value position = row.back();
    forEachIndex(nested, loc, mlir::ValueRange{half}, [&](mlir::OpBuilder& in, mlir::ValueRange i) {
      mlir::Value first, second;
      if (interleaved) {
        first = in.create<mlir::arith::MulIOp>(loc, i[0], indexConstant(in, loc, 2));
        second = in.create<mlir::arith::AddIOp>(loc, first, indexConstant(in, loc, 1));
      } else {
        first = i[0];
        second = in.create<mlir::arith::AddIOp>(loc, i[0], half);
      }
      mlir::Value x1 = lowering::loadAsF32(in, loc, op.getInput(), with(row, first));
      mlir::Value x2 = lowering::loadAsF32(in, loc, op.getInput(), with(row, second));
      mlir::Value c = lowering::loadAsF32(in, loc, op.getCos(), {position, i[0]});
      mlir::Value s = lowering::loadAsF32(in, loc, op.getSin(), {position, i[0]});
      auto mul = [&](mlir::Value x, mlir::Value y) {
        return in.create<mlir::arith::MulFOp>(loc, x, y).getResult();
      };
      mlir::Value y1 = in.create<mlir::arith::SubFOp>(loc, mul(x1, c), mul(x2, s));
      mlir::Value y2 = in.create<mlir::arith::AddFOp>(loc, mul(x2, c), mul(x1, s));
      in.create<mlir::memref::StoreOp>(loc, lowering::convertFloat(in, loc, y1, outputElement),
                                       op.getOutput(), with(row, first));
      in.create<mlir::memref::StoreOp>(loc, lowering::convertFloat(in, loc, y2, outputElement),
                                       op.getOutput(), with(row, second));
    });
  });
}

}  // namespace tessera::host
