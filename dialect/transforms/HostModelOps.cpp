// The host lowering of the model ops: tile.norm (two or three passes over each row, statistics
// in kLanes lanes), tile.attention (an online softmax per query row over blocks of kLanes keys
// in ascending order) and tile.rope (one pass). Rows run in parallel; each row's result depends only on that row.
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

// Keys go in blocks of kLanes. K is first packed (in parallel) block-major and transposed, f32:
// block t of (b, g) holds K[b, g, 32t + l, d] at ((((b·Hkv + g)·T + t)·D + d)·32 + l), zero past
// Sk, so a block's 32 scores are 32 vector lanes each summing q[d]·k[d] over d in ascending
// order — bit for bit a scalar dot product, which is what the fallback (packed K could not be
// allocated) computes key by key. Per block: the scores scaled and masked (-inf), the block
// maximum and the sum of p = exp(s − m) in the lane tree, one rescale of the accumulators, then
// acc += p_j · V[j] for the block's keys in ascending order.
void lowerAttention(mlir::OpBuilder& b, tile::AttentionOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  auto q = memrefSizes(b, loc, op.getQuery());  // B, H, Sq, D
  auto k = memrefSizes(b, loc, op.getKey());    // B, Hkv, Sk, D
  auto v = memrefSizes(b, loc, op.getValue());  // B, Hkv, Sk, Dv
  mlir::Value heads = q[1], queries = q[2], depth = q[3];
  mlir::Value kvHeads = k[1], keys = k[2], valueDepth = v[3];
  mlir::Type i64 = b.getI64Type();
  mlir::Type f32 = b.getF32Type();
  mlir::VectorType lanes = laneType(f32);
  auto buffer = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, f32);
  auto mul = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::MulIOp>(loc, x, y);
  };
  auto add = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::AddIOp>(loc, x, y);
  };
  mlir::Value block = indexConstant(b, loc, kLanes);
  // The output is not empty, so H > 0, hence Hkv > 0 (the contract: H is a multiple of Hkv).
  mlir::Value group = b.create<mlir::arith::DivUIOp>(loc, heads, kvHeads);
  mlir::Value scale;
  if (op.getScale()) {
    scale = f32Constant(b, loc, op.getScale()->convertToFloat());
  } else {
    mlir::Value d = b.create<mlir::arith::MaxUIOp>(loc, depth, indexConstant(b, loc, 1));
    scale = reciprocalSqrt(b, loc, countAsF32(b, loc, d));
  }
  mlir::Value keyBlocks = lowering::ceilDiv(b, loc, keys, kLanes);

  // Pack K (or find that it cannot be: then `packed` is a 1-element placeholder).
  mlir::Value pairs = mul(b, q[0], kvHeads);
  mlir::Value packedSize = b.create<mlir::arith::MaxUIOp>(
      loc, mul(b, mul(b, mul(b, pairs, keyBlocks), depth), block), indexConstant(b, loc, 1));
  mlir::Value packed = b.create<mlir::memref::AllocOp>(loc, buffer, mlir::ValueRange{packedSize});
  auto isAllocated = [&](mlir::OpBuilder& at) -> mlir::Value {
    return at.create<mlir::arith::CmpIOp>(
        loc, mlir::arith::CmpIPredicate::ne,
        at.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, packed),
        indexConstant(at, loc, 0));
  };
  auto packing = b.create<mlir::scf::IfOp>(loc, isAllocated(b), /*withElseRegion=*/false);
  {
    mlir::OpBuilder at = packing.getThenBodyBuilder();
    mlir::Value zero = f32Constant(at, loc, 0.0f);
    parallelForEachIndex(
        at, loc, mlir::ValueRange{mul(at, pairs, keyBlocks)}, mul(at, depth, block), parallel,
        [&](mlir::OpBuilder& in, mlir::ValueRange unit) {
          auto position = lowering::delinearize(in, loc, unit[0], {q[0], kvHeads, keyBlocks});
          mlir::Value first = mul(in, position[2], block);
          mlir::Value base = mul(in, mul(in, unit[0], depth), block);
          forEachIndex(in, loc, mlir::ValueRange{depth, block},
                       [&](mlir::OpBuilder& e, mlir::ValueRange dl) {
            mlir::Value j = add(e, first, dl[1]);
            auto value = e.create<mlir::scf::IfOp>(
                loc, e.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ult, j, keys),
                [&](mlir::OpBuilder& t, mlir::Location) {
                  t.create<mlir::scf::YieldOp>(
                      loc, lowering::loadAsF32(t, loc, op.getKey(),
                                               {position[0], position[1], j, dl[0]}));
                },
                [&](mlir::OpBuilder& t, mlir::Location) {
                  t.create<mlir::scf::YieldOp>(loc, zero);
                });
            e.create<mlir::memref::StoreOp>(loc, value.getResult(0), packed,
                                            add(e, base, add(e, mul(e, dl[0], block), dl[1])));
          });
        });
  }

  mlir::Value rows = lowering::product(b, loc, {q[0], heads, queries});
  mlir::Value cost = mul(b, keys, add(b, depth, valueDepth));
  auto toI64 = [&](mlir::OpBuilder& at, mlir::Value index) -> mlir::Value {
    return at.create<mlir::arith::IndexCastOp>(loc, i64, index);
  };
  auto clamp = [&](mlir::OpBuilder& at, mlir::Value value, mlir::Value low, mlir::Value high) {
    return at.create<mlir::arith::MinSIOp>(loc, at.create<mlir::arith::MaxSIOp>(loc, value, low),
                                           high);
  };
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
    // One heap row: Dv accumulators, then a block's 32 scores, then its 32 weights.
    mlir::Value row = at.create<mlir::memref::AllocOp>(
        loc, buffer, mlir::ValueRange{add(at, valueDepth, indexConstant(at, loc, 2 * kLanes))});
    mlir::Value scoresAt = valueDepth;
    mlir::Value weightsAt = add(at, valueDepth, block);
    mlir::Value zero = f32Constant(at, loc, 0.0f);
    forEachIndex(at, loc, mlir::ValueRange{valueDepth}, [&](mlir::OpBuilder& in, mlir::ValueRange d) {
      in.create<mlir::memref::StoreOp>(loc, zero, row, d);
    });
    mlir::Value packedK = isAllocated(at);
    mlir::Value pairBase = mul(at, add(at, mul(at, batch, kvHeads), kvHead), keyBlocks);
    mlir::Value negativeInfinity = f32Constant(at, loc, -std::numeric_limits<float>::infinity());
    mlir::Value negativeInfinityLanes = splat(at, loc, negativeInfinity);
    mlir::Value zeroLanes = splat(at, loc, zero);
    auto blocks = at.create<mlir::scf::ForOp>(
        loc, indexConstant(at, loc, 0), lowering::ceilDiv(at, loc, limit, kLanes),
        indexConstant(at, loc, 1), mlir::ValueRange{negativeInfinity, zero},
        [&](mlir::OpBuilder& in, mlir::Location, mlir::Value t, mlir::ValueRange state) {
          mlir::Value first = mul(in, t, block);
          mlir::Value count = in.create<mlir::arith::MinUIOp>(
              loc, block, in.create<mlir::arith::SubIOp>(loc, limit, first));
          // The block's raw scores q·k, one key per lane.
          auto scores = in.create<mlir::scf::IfOp>(
              loc, packedK,
              [&](mlir::OpBuilder& f, mlir::Location) {
                mlir::Value base = mul(f, mul(f, add(f, pairBase, t), depth), block);
                auto dot = f.create<mlir::scf::ForOp>(
                    loc, indexConstant(f, loc, 0), depth, indexConstant(f, loc, 1),
                    mlir::ValueRange{zeroLanes},
                    [&](mlir::OpBuilder& e, mlir::Location, mlir::Value d, mlir::ValueRange sum) {
                      mlir::Value qd = splat(
                          e, loc, lowering::loadAsF32(e, loc, op.getQuery(), {batch, head, query, d}));
                      mlir::Value kd = e.create<mlir::vector::LoadOp>(
                          loc, lanes, packed, mlir::ValueRange{add(e, base, mul(e, d, block))});
                      e.create<mlir::scf::YieldOp>(
                          loc, mlir::ValueRange{e.create<mlir::arith::AddFOp>(
                                   loc, sum[0], e.create<mlir::arith::MulFOp>(loc, qd, kd))});
                    });
                f.create<mlir::scf::YieldOp>(loc, dot.getResults());
              },
              [&](mlir::OpBuilder& f, mlir::Location) {
                forEachIndex(f, loc, mlir::ValueRange{count}, [&](mlir::OpBuilder& e, mlir::ValueRange l) {
                  mlir::Value j = add(e, first, l[0]);
                  auto dot = e.create<mlir::scf::ForOp>(
                      loc, indexConstant(e, loc, 0), depth, indexConstant(e, loc, 1),
                      mlir::ValueRange{zero},
                      [&](mlir::OpBuilder& g, mlir::Location, mlir::Value d, mlir::ValueRange sum) {
                        mlir::Value product = g.create<mlir::arith::MulFOp>(
                            loc, lowering::loadAsF32(g, loc, op.getQuery(), {batch, head, query, d}),
                            lowering::loadAsF32(g, loc, op.getKey(), {batch, kvHead, j, d}));
                        g.create<mlir::scf::YieldOp>(
                            loc, mlir::ValueRange{g.create<mlir::arith::AddFOp>(loc, sum[0], product)});
                      });
                  e.create<mlir::memref::StoreOp>(loc, dot.getResult(0), row, add(e, scoresAt, l[0]));
                });
                f.create<mlir::scf::YieldOp>(
                    loc, mlir::ValueRange{f.create<mlir::vector::LoadOp>(
                             loc, lanes, row, mlir::ValueRange{scoresAt})});
              });
          mlir::Value valid = in.create<mlir::vector::CreateMaskOp>(
              loc, mlir::VectorType::get({kLanes}, in.getI1Type()), mlir::ValueRange{count});
          mlir::Value score = in.create<mlir::arith::SelectOp>(
              loc, valid, in.create<mlir::arith::MulFOp>(loc, scores.getResult(0), splat(in, loc, scale)),
              negativeInfinityLanes);
          mlir::Value max = state[0], sum = state[1];
          mlir::Value newMax = in.create<mlir::arith::MaximumFOp>(
              loc, max, combineLanes(in, loc, tile::ReduceKind::max, score));
          // The rescale of what was accumulated so far (1 while the maximum stays), and the
          // weights of this block's keys (0 for a score of -inf, whatever the maximum).
          mlir::Value correction = in.create<mlir::arith::SelectOp>(
              loc, in.create<mlir::arith::CmpFOp>(loc, mlir::arith::CmpFPredicate::OEQ, max, newMax),
              f32Constant(in, loc, 1.0f),
              in.create<mlir::math::ExpOp>(loc, in.create<mlir::arith::SubFOp>(loc, max, newMax)));
          mlir::Value weights = in.create<mlir::arith::SelectOp>(
              loc,
              in.create<mlir::arith::CmpFOp>(loc, mlir::arith::CmpFPredicate::OEQ, score,
                                             negativeInfinityLanes),
              zeroLanes,
              in.create<mlir::math::ExpOp>(
                  loc, in.create<mlir::arith::SubFOp>(loc, score, splat(in, loc, newMax))));
          mlir::Value newSum = in.create<mlir::arith::AddFOp>(
              loc, in.create<mlir::arith::MulFOp>(loc, sum, correction),
              combineLanes(in, loc, tile::ReduceKind::sum, weights));
          in.create<mlir::vector::StoreOp>(loc, weights, row, mlir::ValueRange{weightsAt});
          forEachIndex(in, loc, mlir::ValueRange{valueDepth}, [&](mlir::OpBuilder& e, mlir::ValueRange d) {
            mlir::Value accumulator = e.create<mlir::memref::LoadOp>(loc, row, d);
            e.create<mlir::memref::StoreOp>(
                loc, e.create<mlir::arith::MulFOp>(loc, accumulator, correction), row, d);
          });
          forEachIndex(in, loc, mlir::ValueRange{count}, [&](mlir::OpBuilder& e, mlir::ValueRange l) {
            mlir::Value weight = e.create<mlir::memref::LoadOp>(loc, row, add(e, weightsAt, l[0]));
            mlir::Value j = add(e, first, l[0]);
            forEachIndex(e, loc, mlir::ValueRange{valueDepth}, [&](mlir::OpBuilder& g, mlir::ValueRange d) {
              mlir::Value value = lowering::loadAsF32(g, loc, op.getValue(), {batch, kvHead, j, d[0]});
              mlir::Value accumulator = g.create<mlir::memref::LoadOp>(loc, row, d);
              g.create<mlir::memref::StoreOp>(
                  loc,
                  g.create<mlir::arith::AddFOp>(loc, accumulator,
                                                g.create<mlir::arith::MulFOp>(loc, weight, value)),
                  row, d);
            });
          });
          in.create<mlir::scf::YieldOp>(loc, mlir::ValueRange{newMax, newSum});
        });
    mlir::Value total = blocks.getResult(1);
    mlir::Value none = at.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, limit,
                                                      indexConstant(at, loc, 0));
    forEachIndex(at, loc, mlir::ValueRange{valueDepth}, [&](mlir::OpBuilder& in, mlir::ValueRange d) {
      mlir::Value accumulator = in.create<mlir::memref::LoadOp>(loc, row, d);
      mlir::Value result = in.create<mlir::arith::SelectOp>(
          loc, none, zero, in.create<mlir::arith::DivFOp>(loc, accumulator, total));
      in.create<mlir::memref::StoreOp>(loc, lowering::convertFloat(in, loc, result, outputElement),
                                       op.getOutput(), mlir::ValueRange{batch, head, query, d[0]});
    });
    at.create<mlir::memref::DeallocOp>(loc, row);
  });
  b.create<mlir::memref::DeallocOp>(loc, packed);
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
