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

using lowering::f32Constant;
using lowering::indexConstant;
using lowering::memrefSizes;

}  // namespace

void lowerNorm(mlir::OpBuilder& b, tile::NormOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getInput());
  mlir::Value length = sizes.back();
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  const bool layer = op.getKind() == tile::NormKind::layer;
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, innerProduct(b, loc, rowSizes), length);
  mlir::Value count = lowering::countAsF32(b, loc, length);
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
    mlir::Value scale = lowering::normScale(nested, loc, op, statistic);
    forEachIndex(nested, loc, mlir::ValueRange{length},
                 [&](mlir::OpBuilder& in, mlir::ValueRange l) {
      auto at = lowering::append(row, l[0]);
      lowering::normStore(in, loc, op, at, l[0], lowering::normInput(in, loc, op, at), mean,
                          scale);
    });
  });
}

// Keys go in blocks of kLanes. K is first packed (in parallel) block-major and transposed, f32:
// block t of (b, g) holds K[b, g, 32t + l, d] at ((((b·Hkv + g)·T + t)·D + d)·32 + l), zero past
// Sk, so a block's 32 scores are 32 vector lanes each summing q[d]·k[d] over d in ascending
// order — bit for bit a scalar dot product, which is what the direct path (decoding: too few
// query rows per key to pay for the copy; or packed K could not be allocated) computes key by
// key. Per block: the scores scaled and masked (-inf), the block
// maximum and the sum of p = exp(s − m) in the lane tree, one rescale of the accumulators, then
// acc += p_j · V[j] for the block's keys in ascending order.
void lowerAttention(mlir::OpBuilder& b, tile::AttentionOp attention, ParallelLoops& parallel) {
  tile::AttentionOp op = attention;
  const lowering::AttentionSpec spec = lowering::AttentionSpec::of(attention);
  mlir::Location loc = op.getLoc();
  auto q = memrefSizes(b, loc, op.getQuery());  // B, H, Sq, D
  auto k = memrefSizes(b, loc, op.getKey());    // B, Hkv, Sk, D
  auto v = memrefSizes(b, loc, op.getValue());  // B, Hkv, Sk, Dv
  mlir::Value heads = q[1], queries = q[2], depth = q[3];
  mlir::Value kvHeads = k[1], keys = k[2], valueDepth = v[3];
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
  mlir::Value scale = lowering::attentionScale(b, loc, spec, depth);
  mlir::Value keyBlocks = lowering::ceilDiv(b, loc, keys, kLanes);

  // Pack K when each key serves at least kMinReuse query rows (Sq · H/Hkv; decoding reads K
  // directly), and when the copy can be allocated; else `packed` is a 1-element placeholder.
  // Either way the bits are the same.
  constexpr int64_t kMinReuse = 8;
  auto worthPacking = [&](mlir::OpBuilder& at) -> mlir::Value {
    return at.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::uge,
                                          mul(at, queries, group),
                                          indexConstant(at, loc, kMinReuse));
  };
  mlir::Value pairs = mul(b, q[0], kvHeads);
  mlir::Value packedSize = b.create<mlir::arith::SelectOp>(
      loc, worthPacking(b), mul(b, mul(b, mul(b, pairs, keyBlocks), depth), block),
      indexConstant(b, loc, 1));
  packedSize = b.create<mlir::arith::MaxUIOp>(loc, packedSize, indexConstant(b, loc, 1));
  mlir::Value packed = b.create<mlir::memref::AllocOp>(loc, buffer, mlir::ValueRange{packedSize});
  auto isAllocated = [&](mlir::OpBuilder& at) -> mlir::Value {
    mlir::Value allocated = at.create<mlir::arith::CmpIOp>(
        loc, mlir::arith::CmpIPredicate::ne,
        at.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, packed),
        indexConstant(at, loc, 0));
    return at.create<mlir::arith::AndIOp>(loc, allocated, worthPacking(at));
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
          // Only the blocks some query of this batch sees (a KV cache's capacity may be far
          // larger than its key length).
          mlir::Value needed = in.create<mlir::arith::CmpIOp>(
              loc, mlir::arith::CmpIPredicate::ult, first,
              lowering::batchKeys(in, loc, spec, position[0], keys));
          auto ifNeeded = in.create<mlir::scf::IfOp>(loc, needed, /*withElseRegion=*/false);
          mlir::OpBuilder packer = ifNeeded.getThenBodyBuilder();
          forEachIndex(packer, loc, mlir::ValueRange{depth, block},
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
  auto outputElement = llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  parallelForEachIndex(b, loc, mlir::ValueRange{rows}, cost, parallel,
                       [&](mlir::OpBuilder& at, mlir::ValueRange linear) {
    auto position = lowering::delinearize(at, loc, linear[0], {q[0], heads, queries});
    mlir::Value batch = position[0], head = position[1], query = position[2];
    mlir::Value kvHead = at.create<mlir::arith::DivUIOp>(loc, head, group);
    const lowering::KeyRange visible =
        lowering::visibleKeys(at, loc, spec, batch, query, keys, queries);
    mlir::Value firstKey = visible.first, limit = visible.end;
    const mlir::Value sizes[] = {q[0], heads, queries, keys};
    // One heap row: Dv accumulators, then a block's 32 scores, its 32 weights, its 32 biases.
    mlir::Value row = at.create<mlir::memref::AllocOp>(
        loc, buffer, mlir::ValueRange{add(at, valueDepth, indexConstant(at, loc, 3 * kLanes))});
    mlir::Value scoresAt = valueDepth;
    mlir::Value weightsAt = add(at, valueDepth, block);
    mlir::Value biasesAt = add(at, weightsAt, block);
    mlir::Value zero = f32Constant(at, loc, 0.0f);
    forEachIndex(at, loc, mlir::ValueRange{valueDepth}, [&](mlir::OpBuilder& in, mlir::ValueRange d) {
      in.create<mlir::memref::StoreOp>(loc, zero, row, d);
    });
    mlir::Value packedK = isAllocated(at);
    mlir::Value pairBase = mul(at, add(at, mul(at, batch, kvHeads), kvHead), keyBlocks);
    mlir::Value negativeInfinity = f32Constant(at, loc, -std::numeric_limits<float>::infinity());
    mlir::Value negativeInfinityLanes = splat(at, loc, negativeInfinity);
    mlir::Value zeroLanes = splat(at, loc, zero);
    // Lanes of a block at or past firstKey (a window's left edge inside the block).
    mlir::Value allLanes = at.create<mlir::arith::ConstantOp>(
        loc, mlir::DenseElementsAttr::get(mlir::VectorType::get({kLanes}, at.getI1Type()), true));
    auto blocks = at.create<mlir::scf::ForOp>(
        loc, at.create<mlir::arith::DivUIOp>(loc, firstKey, block),
        lowering::ceilDiv(at, loc, limit, kLanes),
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
          auto maskType = mlir::VectorType::get({kLanes}, in.getI1Type());
          mlir::Value before = in.create<mlir::arith::SubIOp>(
              loc, in.create<mlir::arith::MaxUIOp>(loc, firstKey, first), first);
          mlir::Value valid = in.create<mlir::arith::AndIOp>(
              loc, in.create<mlir::vector::CreateMaskOp>(loc, maskType, mlir::ValueRange{count}),
              in.create<mlir::arith::XOrIOp>(
                  loc, in.create<mlir::vector::CreateMaskOp>(loc, maskType, mlir::ValueRange{before}),
                  allLanes));
          mlir::Value biases;
          if (op.getBias()) {
            forEachIndex(in, loc, mlir::ValueRange{count}, [&](mlir::OpBuilder& e, mlir::ValueRange l) {
              e.create<mlir::memref::StoreOp>(
                  loc, lowering::attentionBias(e, loc, spec, batch, head, query, add(e, first, l[0])),
                  row, add(e, biasesAt, l[0]));
            });
            biases = in.create<mlir::vector::LoadOp>(loc, lanes, row, mlir::ValueRange{biasesAt});
          }
          mlir::Value score = in.create<mlir::arith::SelectOp>(
              loc, valid,
              lowering::attentionScore(in, loc, spec, scores.getResult(0), scale, biases),
              negativeInfinityLanes);
          mlir::Value max = state[0], sum = state[1];
          mlir::Value newMax = in.create<mlir::arith::MaximumFOp>(
              loc, max, combineLanes(in, loc, tile::ReduceKind::max, score));
          mlir::Value correction = lowering::softmaxCorrection(in, loc, max, newMax);
          mlir::Value weights = lowering::softmaxWeight(in, loc, score, splat(in, loc, newMax));
          mlir::Value newSum = in.create<mlir::arith::AddFOp>(
              loc, in.create<mlir::arith::MulFOp>(loc, sum, correction),
              combineLanes(in, loc, tile::ReduceKind::sum, weights));
          in.create<mlir::vector::StoreOp>(loc, weights, row, mlir::ValueRange{weightsAt});
          forEachIndex(in, loc, mlir::ValueRange{valueDepth}, [&](mlir::OpBuilder& e, mlir::ValueRange d) {
            mlir::Value accumulator = e.create<mlir::memref::LoadOp>(loc, row, d);
            e.create<mlir::memref::StoreOp>(
                loc, e.create<mlir::arith::MulFOp>(loc, accumulator, correction), row, d);
          });
          // The visible keys only (a masked key's V must not reach the sum, even as 0 · inf).
          mlir::Value seen = in.create<mlir::arith::SubIOp>(loc, count, before);
          forEachIndex(in, loc, mlir::ValueRange{seen}, [&](mlir::OpBuilder& e, mlir::ValueRange l) {
            mlir::Value lane = add(e, before, l[0]);
            mlir::Value j = add(e, first, lane);
            mlir::Value weight = lowering::droppedWeight(
                e, loc, spec, e.create<mlir::memref::LoadOp>(loc, row, add(e, weightsAt, lane)),
                {batch, head, query, j}, sizes);
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
    mlir::Value none =
        at.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, limit, firstKey);
    lowering::storeAttentionLse(at, loc, spec, none, blocks.getResult(0), total,
                                {batch, head, query});
    forEachIndex(at, loc, mlir::ValueRange{valueDepth}, [&](mlir::OpBuilder& in, mlir::ValueRange d) {
      mlir::Value accumulator = in.create<mlir::memref::LoadOp>(loc, row, d);
      mlir::Value result = lowering::attentionResult(in, loc, spec, none, accumulator, total);
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
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, innerProduct(b, loc, rowSizes), features);
  parallelForEachIndex(b, loc, rowSizes, cost, parallel,
                       [&](mlir::OpBuilder& nested, mlir::ValueRange row) {
    forEachIndex(nested, loc, mlir::ValueRange{half}, [&](mlir::OpBuilder& in, mlir::ValueRange i) {
      lowering::ropeRotate(in, loc, op, row, i[0], half);
    });
  });
}

}  // namespace tessera::host
