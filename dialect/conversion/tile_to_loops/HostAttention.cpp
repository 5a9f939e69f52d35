// The host lowering of tile.attention: FlashAttention's tiling on the CPU. K is packed once,
// Over 600 lines: one op's tiled schedule (packing, the online softmax, the V accumulation) whose
// parts share its tile constants.
// block-major and transposed (kLanes keys per block); a work unit of kUnitRows query rows of
// one KV head (its query heads' rows, then queries, in order) walks the blocks of keys its rows
// see, ascending, and while a block is in L1 its rows use it kQueryRows at a time: their scores
// in vector lanes, an online softmax per row, then their V accumulation in vector registers,
// each row of V (packed too: aligned, zero-padded rows) loaded once for the group. The direct
// path (decoding: too few query rows per key to pay for packing; or the packed copy could not
// be allocated) reads K and V in place, row by row. Both compute every value in the same
// order, so they give the same bits:
//   score lane l = Σ_d q[d]·k_l[d], d ascending; per block the scaled, biased, capped and
//   masked scores, the block max and Σ p in the lane tree; acc = acc · exp(m_old − m), then
//   acc += p_j · V[j] for the block's visible keys in ascending order; O = acc / Σ.
#include <limits>

#include "dialect/conversion/TileSemantics.h"
#include "dialect/conversion/tile_to_loops/HostLoops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace tessera::host {
namespace {

using lowering::f32Constant;
using lowering::indexConstant;

/// Query rows per blocked work unit: they share each packed block of K while it is in L1.
constexpr int64_t kUnitRows = 32;
/// Rows of a group within a unit: they share each load of K and of V, their scores and V
/// accumulators in registers.
constexpr int64_t kQueryRows = 4;
/// Lanes of one group of score accumulators and of one chunk of V: half a block, so that the
/// rows' accumulators stay within 16 AVX2 registers. Grouping changes no value's order.
constexpr int64_t kGroup = kLanes / 2;

/// The op, its sizes, and what both paths compute once.
struct Attention {
  mutable tile::AttentionOp op;  // mutable: MLIR op handles have non-const accessors
  lowering::AttentionSpec spec;
  mlir::Location loc;
  llvm::SmallVector<mlir::Value> q;  ///< B, H, Sq, D
  mlir::Value kvHeads, keys, valueDepth;
  mlir::Value group;  ///< H / Hkv
  mlir::Value scale, keyBlocks, block;
  mlir::Value valueWidth;  ///< Dv rounded up to whole chunks of kGroup
  mlir::Type outputElement;

  mlir::Value batches() const { return q[0]; }
  mlir::Value heads() const { return q[1]; }
  mlir::Value queries() const { return q[2]; }
  mlir::Value depth() const { return q[3]; }
  mlir::Value add(mlir::OpBuilder& b, mlir::Value x, mlir::Value y) const {
    return b.create<mlir::arith::AddIOp>(loc, x, y);
  }
  mlir::Value sub(mlir::OpBuilder& b, mlir::Value x, mlir::Value y) const {
    return b.create<mlir::arith::SubIOp>(loc, x, y);
  }
  mlir::Value mul(mlir::OpBuilder& b, mlir::Value x, mlir::Value y) const {
    return b.create<mlir::arith::MulIOp>(loc, x, y);
  }
  mlir::Value less(mlir::OpBuilder& b, mlir::Value x, mlir::Value y) const {
    return b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ult, x, y);
  }
  llvm::SmallVector<mlir::Value, 4> positionSizes() const {
    return {batches(), heads(), queries(), keys};
  }
};

/// One block of keys [first, first + kLanes) for a query row that sees keys [firstKey, limit).
struct SoftmaxStep {
  mlir::Value before, count;  ///< the block's lanes [before, count) are keys the row sees
  mlir::Value max, sum;       ///< the online softmax's state after the block
  mlir::Value correction;     ///< exp(m_old − m): the rescale of what was accumulated
  mlir::Value weights;        ///< p = exp(s − m) per lane, 0 where masked
};

/// `raw`: the block's kLanes dot products q·k. The scores are scaled, biased (the biases go
/// through `scratch[biasAt, biasAt + kLanes)`), capped and masked (-inf outside [firstKey,
/// limit)); (max, sum) is the row's state before the block.
SoftmaxStep softmaxStep(mlir::OpBuilder& b, const Attention& a, mlir::Value raw,
                        llvm::ArrayRef<mlir::Value> row, mlir::Value first, mlir::Value firstKey,
                        mlir::Value limit, mlir::Value max, mlir::Value sum, mlir::Value scratch,
                        mlir::Value biasAt) {
  mlir::Location loc = a.loc;
  SoftmaxStep step;
  auto beyond = [&](mlir::Value key) -> mlir::Value {  // lanes of the block below `key`
    return a.sub(b, b.create<mlir::arith::MaxUIOp>(loc, key, first), first);
  };
  step.count = b.create<mlir::arith::MinUIOp>(loc, a.block, beyond(limit));
  step.before = beyond(firstKey);
  auto maskType = mlir::VectorType::get({kLanes}, b.getI1Type());
  mlir::Value all =
      b.create<mlir::arith::ConstantOp>(loc, mlir::DenseElementsAttr::get(maskType, true));
  mlir::Value valid = b.create<mlir::arith::AndIOp>(
      loc, b.create<mlir::vector::CreateMaskOp>(loc, maskType, mlir::ValueRange{step.count}),
      b.create<mlir::arith::XOrIOp>(
          loc, b.create<mlir::vector::CreateMaskOp>(loc, maskType, mlir::ValueRange{step.before}),
          all));
  mlir::Value biases;
  if (a.op.getBias()) {
    forEachIndex(b, loc, mlir::ValueRange{step.count}, [&](mlir::OpBuilder& e, mlir::ValueRange l) {
      e.create<mlir::memref::StoreOp>(
          loc,
          lowering::attentionBias(e, loc, a.spec, row[0], row[1], row[2], a.add(e, first, l[0])),
          scratch, a.add(e, biasAt, l[0]));
    });
    biases = b.create<mlir::vector::LoadOp>(loc, laneType(b.getF32Type()), scratch,
                                            mlir::ValueRange{biasAt});
  }
  mlir::Value score = b.create<mlir::arith::SelectOp>(
      loc, valid, lowering::attentionScore(b, loc, a.spec, raw, a.scale, biases),
      splat(b, loc, f32Constant(b, loc, -std::numeric_limits<float>::infinity())));
  step.max = b.create<mlir::arith::MaximumFOp>(loc, max,
                                               combineLanes(b, loc, tile::ReduceKind::max, score));
  step.correction = lowering::softmaxCorrection(b, loc, max, step.max);
  step.weights = lowering::softmaxWeight(b, loc, score, splat(b, loc, step.max));
  step.sum =
      b.create<mlir::arith::AddFOp>(loc, b.create<mlir::arith::MulFOp>(loc, sum, step.correction),
                                    combineLanes(b, loc, tile::ReduceKind::sum, step.weights));
  return step;
}

/// Stores the lse and the output of a row from its final (max, sum) and its accumulators.
void finishRow(mlir::OpBuilder& b, const Attention& a, llvm::ArrayRef<mlir::Value> row,
               mlir::Value firstKey, mlir::Value limit, mlir::Value max, mlir::Value sum,
               llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value d)> accumulator) {
  mlir::Location loc = a.loc;
  mlir::Value none =
      b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, limit, firstKey);
  lowering::storeAttentionLse(b, loc, a.spec, none, max, sum, row);
  forEachIndex(
      b, loc, mlir::ValueRange{a.valueDepth}, [&](mlir::OpBuilder& in, mlir::ValueRange d) {
        mlir::Value result =
            lowering::attentionResult(in, loc, a.spec, none, accumulator(in, d[0]), sum);
        in.create<mlir::memref::StoreOp>(loc,
                                         lowering::convertFloat(in, loc, result, a.outputElement),
                                         a.op.getOutput(), lowering::append(row, d[0]));
      });
}

/// The direct path: a query row per iteration (in parallel), its scores key by key from K in
/// place, its accumulators on the heap.
void lowerDirect(mlir::OpBuilder& b, const Attention& a, ParallelLoops& parallel) {
  mlir::Location loc = a.loc;
  tile::AttentionOp op = a.op;
  mlir::Value rows = lowering::product(b, loc, {a.batches(), a.heads(), a.queries()});
  mlir::Value cost = a.mul(b, a.keys, a.add(b, a.depth(), a.valueDepth));
  parallelForEachIndex(
      b, loc, mlir::ValueRange{rows}, cost, parallel,
      [&](mlir::OpBuilder& at, mlir::ValueRange linear) {
        auto row = lowering::delinearize(at, loc, linear[0], {a.batches(), a.heads(), a.queries()});
        mlir::Value batch = row[0], head = row[1], query = row[2];
        mlir::Value kvHead = at.create<mlir::arith::DivUIOp>(loc, head, a.group);
        const lowering::KeyRange visible =
            lowering::visibleKeys(at, loc, a.spec, batch, query, a.keys, a.queries());
        // One heap row: Dv accumulators, then a block's scores, its weights, its biases.
        mlir::Value scoresAt = a.valueDepth;
        mlir::Value weightsAt = a.add(at, scoresAt, a.block);
        mlir::Value biasAt = a.add(at, weightsAt, a.block);
        mlir::Value memory = allocateF32(at, loc, a.add(at, biasAt, a.block));
        mlir::Value zero = f32Constant(at, loc, 0.0f);
        forEachIndex(at, loc, mlir::ValueRange{a.valueDepth},
                     [&](mlir::OpBuilder& in, mlir::ValueRange d) {
                       in.create<mlir::memref::StoreOp>(loc, zero, memory, d);
                     });
        auto blocks = at.create<mlir::scf::ForOp>(
            loc, at.create<mlir::arith::DivUIOp>(loc, visible.first, a.block),
            lowering::ceilDiv(at, loc, visible.end, kLanes), indexConstant(at, loc, 1),
            mlir::ValueRange{f32Constant(at, loc, -std::numeric_limits<float>::infinity()), zero},
            [&](mlir::OpBuilder& in, mlir::Location, mlir::Value t, mlir::ValueRange state) {
              mlir::Value first = a.mul(in, t, a.block);
              mlir::Value count =
                  in.create<mlir::arith::MinUIOp>(loc, a.block, a.sub(in, visible.end, first));
              forEachIndex(
                  in, loc, mlir::ValueRange{count}, [&](mlir::OpBuilder& e, mlir::ValueRange l) {
                    mlir::Value j = a.add(e, first, l[0]);
                    auto dot = e.create<mlir::scf::ForOp>(
                        loc, indexConstant(e, loc, 0), a.depth(), indexConstant(e, loc, 1),
                        mlir::ValueRange{zero},
                        [&](mlir::OpBuilder& g, mlir::Location, mlir::Value d,
                            mlir::ValueRange sum) {
                          mlir::Value product = g.create<mlir::arith::MulFOp>(
                              loc,
                              lowering::loadAsF32(g, loc, op.getQuery(), {batch, head, query, d}),
                              lowering::loadAsF32(g, loc, op.getKey(), {batch, kvHead, j, d}));
                          g.create<mlir::scf::YieldOp>(
                              loc, mlir::ValueRange{
                                       g.create<mlir::arith::AddFOp>(loc, sum[0], product)});
                        });
                    e.create<mlir::memref::StoreOp>(loc, dot.getResult(0), memory,
                                                    a.add(e, scoresAt, l[0]));
                  });
              mlir::Value raw = in.create<mlir::vector::LoadOp>(loc, laneType(in.getF32Type()),
                                                                memory, mlir::ValueRange{scoresAt});
              SoftmaxStep step = softmaxStep(in, a, raw, row, first, visible.first, visible.end,
                                             state[0], state[1], memory, biasAt);
              in.create<mlir::vector::StoreOp>(loc, step.weights, memory,
                                               mlir::ValueRange{weightsAt});
              forEachIndex(
                  in, loc, mlir::ValueRange{a.valueDepth},
                  [&](mlir::OpBuilder& e, mlir::ValueRange d) {
                    mlir::Value accumulator = e.create<mlir::memref::LoadOp>(loc, memory, d);
                    e.create<mlir::memref::StoreOp>(
                        loc, e.create<mlir::arith::MulFOp>(loc, accumulator, step.correction),
                        memory, d);
                  });
              // The visible keys only (a masked key's V must not reach the sum, even as 0 · inf).
              forEachIndex(
                  in, loc, mlir::ValueRange{a.sub(in, step.count, step.before)},
                  [&](mlir::OpBuilder& e, mlir::ValueRange l) {
                    mlir::Value lane = a.add(e, step.before, l[0]);
                    mlir::Value j = a.add(e, first, lane);
                    mlir::Value weight = lowering::droppedWeight(
                        e, loc, a.spec,
                        e.create<mlir::memref::LoadOp>(loc, memory, a.add(e, weightsAt, lane)),
                        {batch, head, query, j}, a.positionSizes());
                    forEachIndex(e, loc, mlir::ValueRange{a.valueDepth},
                                 [&](mlir::OpBuilder& g, mlir::ValueRange d) {
                                   mlir::Value value = lowering::loadAsF32(
                                       g, loc, op.getValue(), {batch, kvHead, j, d[0]});
                                   mlir::Value accumulator =
                                       g.create<mlir::memref::LoadOp>(loc, memory, d);
                                   g.create<mlir::memref::StoreOp>(
                                       loc,
                                       g.create<mlir::arith::AddFOp>(
                                           loc, accumulator,
                                           g.create<mlir::arith::MulFOp>(loc, weight, value)),
                                       memory, d);
                                 });
                  });
              in.create<mlir::scf::YieldOp>(loc, mlir::ValueRange{step.max, step.sum});
            });
        finishRow(at, a, row, visible.first, visible.end, blocks.getResult(0), blocks.getResult(1),
                  [&](mlir::OpBuilder& in, mlir::Value d) -> mlir::Value {
                    return in.create<mlir::memref::LoadOp>(loc, memory, d);
                  });
        at.create<mlir::memref::DeallocOp>(loc, memory);
      });
}

/// The blocked path over packed K (block t of (b, g) at ((b·Hkv + g)·T + t)·D·kLanes, lane l of
/// row d holding K[b, g, 32t + l, d]) and packed V (from `valuesAt`, row ((b·Hkv + g)·T·32 + j)
/// of valueWidth holding V[b, g, j, :], zero-padded): units of kUnitRows rows of a KV head, in
/// parallel. Per block of keys (in L1 while the unit's rows use it), groups of kQueryRows rows that
/// see a key of it compute their scores together and accumulate V in registers; each row's
/// online-softmax state and accumulators live in the unit's heap between blocks.
void lowerBlocked(mlir::OpBuilder& b, const Attention& a, mlir::Value packed, mlir::Value valuesAt,
                  ParallelLoops& parallel) {
  mlir::Location loc = a.loc;
  tile::AttentionOp op = a.op;
  mlir::Type f32 = b.getF32Type();
  mlir::Value rowsPerKvHead = a.mul(b, a.group, a.queries());
  mlir::Value rowBlocks = lowering::ceilDiv(b, loc, rowsPerKvHead, kUnitRows);
  mlir::Value units = lowering::product(b, loc, {a.batches(), a.kvHeads, rowBlocks});
  mlir::Value cost = lowering::product(
      b, loc, {indexConstant(b, loc, kUnitRows), a.keys, a.add(b, a.depth(), a.valueDepth)});
  parallelForEachIndex(
      b, loc, mlir::ValueRange{units}, cost, parallel,
      [&](mlir::OpBuilder& at, mlir::ValueRange unit) {
        auto position =
            lowering::delinearize(at, loc, unit[0], {a.batches(), a.kvHeads, rowBlocks});
        mlir::Value batch = position[0], kvHead = position[1];
        mlir::Value firstRow = a.mul(at, position[2], indexConstant(at, loc, kUnitRows));
        mlir::Value unitRows = at.create<mlir::arith::MinUIOp>(
            loc, indexConstant(at, loc, kUnitRows), a.sub(at, rowsPerKvHead, firstRow));
        mlir::Value lastRow = a.sub(at, rowsPerKvHead, indexConstant(at, loc, 1));
        // Row r of the unit: query head kvHead·group + ρ / Sq, query ρ mod Sq, ρ = firstRow + r; a
        // group reaching past the unit's rows computes copies of its last row in slots of their
        // own.
        struct Row {
          mlir::Value slot, head, query;
          lowering::KeyRange visible;
        };
        auto rowAt = [&](mlir::OpBuilder& in, mlir::Value r) {
          mlir::Value rho = in.create<mlir::arith::MinUIOp>(loc, a.add(in, firstRow, r), lastRow);
          Row row;
          row.slot = r;
          row.head = a.add(in, a.mul(in, kvHead, a.group),
                           in.create<mlir::arith::DivUIOp>(loc, rho, a.queries()));
          row.query = in.create<mlir::arith::RemUIOp>(loc, rho, a.queries());
          row.visible =
              lowering::visibleKeys(in, loc, a.spec, batch, row.query, a.keys, a.queries());
          return row;
        };
        // [lowest, highest): the keys some of `rows` see.
        auto span = [&](mlir::OpBuilder& in, llvm::ArrayRef<Row> rows, mlir::Value lowest,
                        mlir::Value highest) -> std::pair<mlir::Value, mlir::Value> {
          for (const Row& row : rows) {
            mlir::Value empty = in.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq,
                                                               row.visible.first, row.visible.end);
            lowest = in.create<mlir::arith::SelectOp>(
                loc, empty, lowest,
                in.create<mlir::arith::MinUIOp>(loc, lowest, row.visible.first));
            highest = in.create<mlir::arith::MaxUIOp>(loc, highest, row.visible.end);
          }
          return {in.create<mlir::arith::MinUIOp>(loc, lowest, highest), highest};
        };
        // The heap: each slot's accumulators (Dv rounded up to whole chunks), its max and its sum;
        // then per row of a group a block's scores and weights; then a block's biases.
        mlir::Value valueWidth = a.valueWidth;
        mlir::Value slots = indexConstant(at, loc, kUnitRows + kQueryRows);
        mlir::Value maxAt = a.mul(at, slots, valueWidth);
        mlir::Value sumAt = a.add(at, maxAt, slots);
        mlir::Value scoresAt = a.add(at, sumAt, slots);
        mlir::Value rowsConstant = indexConstant(at, loc, kQueryRows);
        mlir::Value weightsAt = a.add(at, scoresAt, a.mul(at, rowsConstant, a.block));
        mlir::Value biasAt = a.add(at, weightsAt, a.mul(at, rowsConstant, a.block));
        mlir::Value memory = allocateF32(at, loc, a.add(at, biasAt, a.block));
        mlir::Value zero = f32Constant(at, loc, 0.0f);
        mlir::Value negativeInfinity =
            f32Constant(at, loc, -std::numeric_limits<float>::infinity());
        forEachIndex(at, loc, mlir::ValueRange{maxAt},
                     [&](mlir::OpBuilder& in, mlir::ValueRange i) {
                       in.create<mlir::memref::StoreOp>(loc, zero, memory, i);
                     });
        forEachIndex(at, loc, mlir::ValueRange{slots},
                     [&](mlir::OpBuilder& in, mlir::ValueRange i) {
                       in.create<mlir::memref::StoreOp>(loc, negativeInfinity, memory,
                                                        a.add(in, maxAt, i[0]));
                       in.create<mlir::memref::StoreOp>(loc, zero, memory, a.add(in, sumAt, i[0]));
                     });
        auto unitSpan = at.create<mlir::scf::ForOp>(
            loc, indexConstant(at, loc, 0), unitRows, indexConstant(at, loc, 1),
            mlir::ValueRange{a.keys, indexConstant(at, loc, 0)},
            [&](mlir::OpBuilder& in, mlir::Location, mlir::Value r, mlir::ValueRange bounds) {
              auto [lowest, highest] = span(in, {rowAt(in, r)}, bounds[0], bounds[1]);
              in.create<mlir::scf::YieldOp>(loc, mlir::ValueRange{lowest, highest});
            });
        mlir::Value unitLowest =
            at.create<mlir::arith::MinUIOp>(loc, unitSpan.getResult(0), unitSpan.getResult(1));
        mlir::VectorType group = laneType(f32, kGroup);
        auto at16 = [&](mlir::OpBuilder& in, int64_t r, mlir::Value base, mlir::Value offset) {
          return a.add(in, a.add(in, base, a.mul(in, indexConstant(in, loc, r), a.block)), offset);
        };
        mlir::Value pairBase =
            a.mul(at, a.add(at, a.mul(at, batch, a.kvHeads), kvHead), a.keyBlocks);
        mlir::Value pairRow = a.mul(at, pairBase, a.block);  // packed V's row of key 0 of (b, g)
        at.create<mlir::scf::ForOp>(
            loc, at.create<mlir::arith::DivUIOp>(loc, unitLowest, a.block),
            lowering::ceilDiv(at, loc, unitSpan.getResult(1), kLanes), indexConstant(at, loc, 1),
            mlir::ValueRange{},
            [&](mlir::OpBuilder& tb, mlir::Location, mlir::Value t, mlir::ValueRange) {
              mlir::Value first = a.mul(tb, t, a.block);
              mlir::Value base = a.mul(tb, a.mul(tb, a.add(tb, pairBase, t), a.depth()), a.block);
              tb.create<mlir::scf::ForOp>(
                  loc, indexConstant(tb, loc, 0), unitRows, rowsConstant, mlir::ValueRange{},
                  [&](mlir::OpBuilder& gb, mlir::Location, mlir::Value firstSlot,
                      mlir::ValueRange) {
                    llvm::SmallVector<Row> rows;
                    for (int64_t r = 0; r < kQueryRows; ++r) {
                      rows.push_back(rowAt(gb, a.add(gb, firstSlot, indexConstant(gb, loc, r))));
                    }
                    auto [lowest, highest] = span(gb, rows, a.keys, indexConstant(gb, loc, 0));
                    mlir::Value keyBegin = gb.create<mlir::arith::MaxUIOp>(loc, first, lowest);
                    mlir::Value keyEnd =
                        gb.create<mlir::arith::MinUIOp>(loc, a.add(gb, first, a.block), highest);
                    // A group none of whose rows sees a key of the block skips it (its state would
                    // not change: correction 1, weights 0).
                    auto sees = gb.create<mlir::scf::IfOp>(loc, a.less(gb, keyBegin, keyEnd),
                                                           /*withElseRegion=*/false);
                    mlir::OpBuilder in = sees.getThenBodyBuilder();
                    // The rows' scores, half a block at a time: lane l of row r = Σ_d
                    // q_r[d]·k_l[d].
                    for (int64_t half = 0; half < 2; ++half) {
                      mlir::Value halfAt = indexConstant(in, loc, half * kGroup);
                      llvm::SmallVector<mlir::Value> zeros(
                          kQueryRows, splat(in, loc, f32Constant(in, loc, 0.0f), kGroup));
                      auto dots = in.create<mlir::scf::ForOp>(
                          loc, indexConstant(in, loc, 0), a.depth(), indexConstant(in, loc, 1),
                          zeros,
                          [&](mlir::OpBuilder& e, mlir::Location, mlir::Value d,
                              mlir::ValueRange sums) {
                            mlir::Value k = e.create<mlir::vector::LoadOp>(
                                loc, group, packed,
                                mlir::ValueRange{
                                    a.add(e, base, a.add(e, a.mul(e, d, a.block), halfAt))});
                            llvm::SmallVector<mlir::Value> next;
                            for (int64_t r = 0; r < kQueryRows; ++r) {
                              mlir::Value qd = splat(
                                  e, loc,
                                  lowering::loadAsF32(e, loc, op.getQuery(),
                                                      {batch, rows[r].head, rows[r].query, d}),
                                  kGroup);
                              next.push_back(e.create<mlir::arith::AddFOp>(
                                  loc, sums[r], e.create<mlir::arith::MulFOp>(loc, qd, k)));
                            }
                            e.create<mlir::scf::YieldOp>(loc, next);
                          });
                      for (int64_t r = 0; r < kQueryRows; ++r) {
                        in.create<mlir::vector::StoreOp>(
                            loc, dots.getResult(r), memory,
                            mlir::ValueRange{at16(in, r, scoresAt, halfAt)});
                      }
                    }
                    llvm::SmallVector<mlir::Value> corrections;
                    for (int64_t r = 0; r < kQueryRows; ++r) {
                      const Row& row = rows[r];
                      const mlir::Value index[] = {batch, row.head, row.query};
                      mlir::Value zeroAt = indexConstant(in, loc, 0);
                      mlir::Value raw = in.create<mlir::vector::LoadOp>(
                          loc, laneType(f32), memory,
                          mlir::ValueRange{at16(in, r, scoresAt, zeroAt)});
                      mlir::Value maxSlot = a.add(in, maxAt, row.slot);
                      mlir::Value sumSlot = a.add(in, sumAt, row.slot);
                      SoftmaxStep step = softmaxStep(
                          in, a, raw, index, first, row.visible.first, row.visible.end,
                          in.create<mlir::memref::LoadOp>(loc, memory, maxSlot),
                          in.create<mlir::memref::LoadOp>(loc, memory, sumSlot), memory, biasAt);
                      in.create<mlir::memref::StoreOp>(loc, step.max, memory, maxSlot);
                      in.create<mlir::memref::StoreOp>(loc, step.sum, memory, sumSlot);
                      mlir::Value weightsRow = at16(in, r, weightsAt, zeroAt);
                      in.create<mlir::vector::StoreOp>(loc, step.weights, memory,
                                                       mlir::ValueRange{weightsRow});
                      if (op.getDropout()) {  // the weight each key's V is accumulated with
                        forEachIndex(in, loc, mlir::ValueRange{a.block},
                                     [&](mlir::OpBuilder& e, mlir::ValueRange l) {
                                       mlir::Value slot = a.add(e, weightsRow, l[0]);
                                       e.create<mlir::memref::StoreOp>(
                                           loc,
                                           lowering::droppedWeight(
                                               e, loc, a.spec,
                                               e.create<mlir::memref::LoadOp>(loc, memory, slot),
                                               {batch, row.head, row.query, a.add(e, first, l[0])},
                                               a.positionSizes()),
                                           memory, slot);
                                     });
                      }
                      corrections.push_back(step.correction);
                    }
                    llvm::SmallVector<lowering::KeyRange> ranges;
                    for (const Row& row : rows) ranges.push_back(row.visible);
                    // acc_r = acc_r · correction_r, then acc_r += w_rj · V[j] over the block's keys
                    // in ascending order, for the rows that see key j — a chunk of V at a time.
                    in.create<mlir::scf::ForOp>(
                        loc, indexConstant(in, loc, 0), a.valueDepth,
                        indexConstant(in, loc, kGroup), mlir::ValueRange{},
                        [&](mlir::OpBuilder& cb, mlir::Location, mlir::Value c, mlir::ValueRange) {
                          llvm::SmallVector<mlir::Value> accumulatorSlots, accumulators;
                          for (int64_t r = 0; r < kQueryRows; ++r) {
                            accumulatorSlots.push_back(
                                a.add(cb, a.mul(cb, rows[r].slot, valueWidth), c));
                            accumulators.push_back(cb.create<mlir::arith::MulFOp>(
                                loc,
                                cb.create<mlir::vector::LoadOp>(
                                    loc, group, memory, mlir::ValueRange{accumulatorSlots[r]}),
                                splat(cb, loc, corrections[r], kGroup)));
                          }
                          auto sums = accumulateRows(
                              cb, loc, keyBegin, keyEnd, accumulators, ranges,
                              [&](mlir::OpBuilder& e, mlir::Value j) -> mlir::Value {
                                return e.create<mlir::vector::LoadOp>(
                                    loc, group, packed,
                                    mlir::ValueRange{
                                        a.add(e,
                                              a.add(e, valuesAt,
                                                    a.mul(e, a.add(e, pairRow, j), valueWidth)),
                                              c)});
                              },
                              [&](mlir::OpBuilder& e, size_t r, mlir::Value j) -> mlir::Value {
                                return e.create<mlir::memref::LoadOp>(
                                    loc, memory,
                                    at16(e, static_cast<int64_t>(r), weightsAt,
                                         a.sub(e, j, first)));
                              });
                          for (int64_t r = 0; r < kQueryRows; ++r) {
                            cb.create<mlir::vector::StoreOp>(loc, sums[r], memory,
                                                             mlir::ValueRange{accumulatorSlots[r]});
                          }
                          cb.create<mlir::scf::YieldOp>(loc);
                        });
                    gb.create<mlir::scf::YieldOp>(loc);
                  });
              tb.create<mlir::scf::YieldOp>(loc);
            });
        forEachIndex(
            at, loc, mlir::ValueRange{unitRows}, [&](mlir::OpBuilder& in, mlir::ValueRange r) {
              Row row = rowAt(in, r[0]);
              mlir::Value rowAtHeap = a.mul(in, r[0], valueWidth);
              finishRow(in, a, {batch, row.head, row.query}, row.visible.first, row.visible.end,
                        in.create<mlir::memref::LoadOp>(loc, memory, a.add(in, maxAt, r[0])),
                        in.create<mlir::memref::LoadOp>(loc, memory, a.add(in, sumAt, r[0])),
                        [&](mlir::OpBuilder& e, mlir::Value d) -> mlir::Value {
                          return e.create<mlir::memref::LoadOp>(loc, memory,
                                                                a.add(e, rowAtHeap, d));
                        });
            });
        at.create<mlir::memref::DeallocOp>(loc, memory);
      });
}

}  // namespace

void lowerAttention(mlir::OpBuilder& b, tile::AttentionOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  Attention a{op, lowering::AttentionSpec::of(op), loc};
  a.q = lowering::memrefSizes(b, loc, op.getQuery());
  auto k = lowering::memrefSizes(b, loc, op.getKey());  // B, Hkv, Sk, D
  a.kvHeads = k[1];
  a.keys = k[2];
  a.valueDepth = lowering::memrefSizes(b, loc, op.getValue())[3];
  a.block = indexConstant(b, loc, kLanes);
  // The output is not empty, so H > 0, hence Hkv > 0 (the contract: H is a multiple of Hkv).
  a.group = b.create<mlir::arith::DivUIOp>(loc, a.heads(), a.kvHeads);
  a.scale = lowering::attentionScale(b, loc, a.spec, a.depth());
  a.keyBlocks = lowering::ceilDiv(b, loc, a.keys, kLanes);
  a.valueWidth =
      a.mul(b, lowering::ceilDiv(b, loc, a.valueDepth, kGroup), indexConstant(b, loc, kGroup));
  a.outputElement = llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();

  // Pack K when each key serves at least kMinReuse query rows (Sq · H/Hkv; decoding reads K
  // directly), and when the copy can be allocated; else `packed` is a 1-element placeholder.
  constexpr int64_t kMinReuse = 8;
  auto worthPacking = [&](mlir::OpBuilder& at) -> mlir::Value {
    return at.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::uge,
                                          a.mul(at, a.queries(), a.group),
                                          indexConstant(at, loc, kMinReuse));
  };
  // [K blocks | V rows]: K as below, V row-major in rows of valueWidth (aligned, zero-padded:
  // the chunks of V load whole, whatever the caller's alignment).
  mlir::Value pairs = a.mul(b, a.batches(), a.kvHeads);
  mlir::Value packedKeys = a.mul(b, a.mul(b, pairs, a.keyBlocks), a.block);
  mlir::Value valuesAt = a.mul(b, packedKeys, a.depth());
  mlir::Value packedSize = b.create<mlir::arith::SelectOp>(
      loc, worthPacking(b), a.add(b, valuesAt, a.mul(b, packedKeys, a.valueWidth)),
      indexConstant(b, loc, 1));
  packedSize = b.create<mlir::arith::MaxUIOp>(loc, packedSize, indexConstant(b, loc, 1));
  mlir::Value packed = allocateF32(b, loc, packedSize);
  mlir::Value allocated = b.create<mlir::arith::AndIOp>(
      loc,
      b.create<mlir::arith::CmpIOp>(
          loc, mlir::arith::CmpIPredicate::ne,
          b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, packed),
          indexConstant(b, loc, 0)),
      worthPacking(b));
  auto paths = b.create<mlir::scf::IfOp>(loc, allocated, /*withElseRegion=*/true);
  {
    // Packing (in parallel): block t of (b, g) holds K[b, g, 32t + l, d] at
    // ((((b·Hkv + g)·T + t)·D + d)·32 + l) in f32, zero past Sk, and its V rows; only the blocks
    // some query of the batch sees (a KV cache's capacity may be far larger than its key
    // length).
    mlir::OpBuilder at = paths.getThenBodyBuilder();
    mlir::Value zero = f32Constant(at, loc, 0.0f);
    parallelForEachIndex(
        at, loc, mlir::ValueRange{a.mul(at, pairs, a.keyBlocks)}, a.mul(at, a.depth(), a.block),
        parallel, [&](mlir::OpBuilder& in, mlir::ValueRange unit) {
          auto position =
              lowering::delinearize(in, loc, unit[0], {a.batches(), a.kvHeads, a.keyBlocks});
          mlir::Value first = a.mul(in, position[2], a.block);
          mlir::Value base = a.mul(in, a.mul(in, unit[0], a.depth()), a.block);
          auto ifNeeded = in.create<mlir::scf::IfOp>(
              loc, a.less(in, first, lowering::batchKeys(in, loc, a.spec, position[0], a.keys)),
              /*withElseRegion=*/false);
          mlir::OpBuilder packer = ifNeeded.getThenBodyBuilder();
          forEachIndex(packer, loc, mlir::ValueRange{a.depth(), a.block},
                       [&](mlir::OpBuilder& e, mlir::ValueRange dl) {
                         mlir::Value j = a.add(e, first, dl[1]);
                         auto value = e.create<mlir::scf::IfOp>(
                             loc, a.less(e, j, a.keys),
                             [&](mlir::OpBuilder& t, mlir::Location) {
                               t.create<mlir::scf::YieldOp>(
                                   loc, lowering::loadAsF32(t, loc, op.getKey(),
                                                            {position[0], position[1], j, dl[0]}));
                             },
                             [&](mlir::OpBuilder& t, mlir::Location) {
                               t.create<mlir::scf::YieldOp>(loc, zero);
                             });
                         e.create<mlir::memref::StoreOp>(
                             loc, value.getResult(0), packed,
                             a.add(e, base, a.add(e, a.mul(e, dl[0], a.block), dl[1])));
                       });
          mlir::Value rows =
              a.add(packer, valuesAt, a.mul(packer, a.mul(packer, unit[0], a.block), a.valueWidth));
          forEachIndex(packer, loc, mlir::ValueRange{a.block, a.valueWidth},
                       [&](mlir::OpBuilder& e, mlir::ValueRange lc) {
                         mlir::Value j = a.add(e, first, lc[0]);
                         auto value = e.create<mlir::scf::IfOp>(
                             loc,
                             e.create<mlir::arith::AndIOp>(loc, a.less(e, j, a.keys),
                                                           a.less(e, lc[1], a.valueDepth)),
                             [&](mlir::OpBuilder& t, mlir::Location) {
                               t.create<mlir::scf::YieldOp>(
                                   loc, lowering::loadAsF32(t, loc, op.getValue(),
                                                            {position[0], position[1], j, lc[1]}));
                             },
                             [&](mlir::OpBuilder& t, mlir::Location) {
                               t.create<mlir::scf::YieldOp>(loc, zero);
                             });
                         e.create<mlir::memref::StoreOp>(
                             loc, value.getResult(0), packed,
                             a.add(e, rows, a.add(e, a.mul(e, lc[0], a.valueWidth), lc[1])));
                       });
        });
    lowerBlocked(at, a, packed, valuesAt, parallel);
  }
  {
    mlir::OpBuilder at = paths.getElseBodyBuilder();
    lowerDirect(at, a, parallel);
  }
  b.create<mlir::memref::DeallocOp>(loc, packed);
}

}  // namespace tessera::host
