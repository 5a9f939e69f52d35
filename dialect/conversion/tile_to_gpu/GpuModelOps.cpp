// The device lowering of the model ops:
//   norm       one 256-thread block per row: block sums (fixed tree) of s, then of the centred
//              squares (layer) or of the squares (rms), then a strided write (its
//              warp-per-row variant is in GpuVariants.cpp)
//   attention  one 256-thread block per query row: keys in blocks of 256 (one score per
//              thread), an online softmax across blocks (block max, rescale, block sum), each
//              thread accumulating output columns d = thread, thread + 256, ...
//   rope       one thread per rotated pair
#include <limits>
#include <tuple>

#include "dialect/conversion/TileSemantics.h"
#include "dialect/conversion/tile_to_gpu/GpuKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera::device {
namespace {

using lowering::indexConstant;
using lowering::memrefSizes;

using lowering::append;
using lowering::f32Constant;

/// One block per row of `rowSizes` (nothing when there are none; at most kMaxGridX blocks, each
/// looping over rows in steps of the grid).
void launchPerRow(
    mlir::OpBuilder& b, mlir::Location loc, llvm::ArrayRef<mlir::Value> rowSizes,
    mlir::TypeRange workgroup, llvm::StringRef name,
    llvm::function_ref<void(mlir::OpBuilder&, mlir::gpu::LaunchOp, llvm::ArrayRef<mlir::Value> row)>
        body) {
  mlir::Value rows = lowering::product(b, loc, rowSizes);
  ifThen(b, loc, lessThan(b, loc, indexConstant(b, loc, 0), rows), [&](mlir::OpBuilder& guarded) {
    launch(guarded, loc, {gridFor(guarded, loc, rows, kMaxGridX), nullptr, nullptr},
           {kBlockSize, 1}, workgroup, name, [&](mlir::OpBuilder& k, mlir::gpu::LaunchOp l) {
             forEachBlockUnit(k, loc, l, rows, [&](mlir::OpBuilder& in, mlir::Value row) {
               body(in, l, lowering::delinearize(in, loc, row, rowSizes));
             });
           });
  });
}

}  // namespace

std::pair<mlir::Value, mlir::Value> normRowStatistics(
    mlir::OpBuilder& b, mlir::Location loc, tile::NormOp op, mlir::Value length, RowTerm input,
    llvm::function_ref<mlir::Value(RowTerm)> rowSum) {
  mlir::Value count = lowering::countAsF32(b, loc, length);
  mlir::Value mean;
  mlir::Value statistic;
  if (op.getKind() == tile::NormKind::layer) {
    mean = b.create<mlir::arith::DivFOp>(loc, rowSum(input), count);
    statistic = b.create<mlir::arith::DivFOp>(
        loc, rowSum([&](mlir::OpBuilder& in, mlir::Value i) -> mlir::Value {
          mlir::Value centered = in.create<mlir::arith::SubFOp>(loc, input(in, i), mean);
          return in.create<mlir::arith::MulFOp>(loc, centered, centered);
        }),
        count);
  } else {
    statistic = b.create<mlir::arith::DivFOp>(
        loc, rowSum([&](mlir::OpBuilder& in, mlir::Value i) -> mlir::Value {
          mlir::Value s = input(in, i);
          return in.create<mlir::arith::MulFOp>(loc, s, s);
        }),
        count);
  }
  return {mean, lowering::normScale(b, loc, op, statistic)};
}

void lowerNorm(mlir::OpBuilder& b, tile::NormOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getInput());
  mlir::Value length = sizes.back();
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  mlir::Value work =
      b.create<mlir::arith::MulIOp>(loc, lowering::product(b, loc, rowSizes), length);
  ifThen(b, loc, lessThan(b, loc, indexConstant(b, loc, 0), work), [&](mlir::OpBuilder& guarded) {
    launchPerRow(
        guarded, loc, rowSizes, {workgroupBuffer(guarded, {kBlockSize}, guarded.getF32Type())},
        namer.next("norm"),
        [&](mlir::OpBuilder& k, mlir::gpu::LaunchOp l, llvm::ArrayRef<mlir::Value> row) {
          mlir::Value thread = l.getThreadIds().x;
          mlir::Value scratch = l.getWorkgroupAttributions()[0];
          auto blockSum = [&](RowTerm term) {
            mlir::Value partial = foldStrided(
                k, loc, thread, length, f32Constant(k, loc, 0.0f),
                [&](mlir::OpBuilder& in, mlir::Value accumulator, mlir::Value i) -> mlir::Value {
                  return in.create<mlir::arith::AddFOp>(loc, accumulator, term(in, i));
                });
            return blockReduce(k, loc, tile::ReduceKind::sum, scratch, thread, partial);
          };
          auto sumAt = [&](mlir::OpBuilder& in, mlir::Value i) {
            return lowering::normInput(in, loc, op, append(row, i));
          };
          mlir::Value mean, scale;
          std::tie(mean, scale) = normRowStatistics(k, loc, op, length, sumAt, blockSum);
          k.create<mlir::scf::ForOp>(
              loc, thread, length, indexConstant(k, loc, kBlockSize), mlir::ValueRange{},
              [&](mlir::OpBuilder& in, mlir::Location, mlir::Value i, mlir::ValueRange) {
                lowering::normStore(in, loc, op, append(row, i), i, sumAt(in, i), mean, scale);
                in.create<mlir::scf::YieldOp>(loc);
              });
        });
  });
}

void lowerAttention(mlir::OpBuilder& b, tile::AttentionOp attention, KernelNamer& namer) {
  tile::AttentionOp op = attention;
  const lowering::AttentionSpec spec = lowering::AttentionSpec::of(attention);
  mlir::Location loc = op.getLoc();
  auto q = memrefSizes(b, loc, op.getQuery());     // B, H, Sq, D
  auto kSizes = memrefSizes(b, loc, op.getKey());  // B, Hkv, Sk, D
  auto v = memrefSizes(b, loc, op.getValue());     // B, Hkv, Sk, Dv
  mlir::Value heads = q[1], queries = q[2], depth = q[3];
  mlir::Value keys = kSizes[2], valueDepth = v[3];
  auto outputElement = llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  // With an lse output a row is work even when Dv = 0 (its log-sum-exp is still written).
  mlir::Value columns =
      op.getLse()
          ? b.create<mlir::arith::MaxUIOp>(loc, valueDepth, indexConstant(b, loc, 1)).getResult()
          : valueDepth;
  mlir::Value work = b.create<mlir::arith::MulIOp>(
      loc, lowering::product(b, loc, {q[0], heads, queries}), columns);
  ifThen(b, loc, lessThan(b, loc, indexConstant(b, loc, 0), work), [&](mlir::OpBuilder& guarded) {
    // The output is not empty, so H > 0, hence Hkv > 0 (the contract: H is a multiple of Hkv).
    mlir::Value group = guarded.create<mlir::arith::DivUIOp>(loc, heads, kSizes[1]);
    mlir::Type f32 = guarded.getF32Type();
    launchPerRow(
        guarded, loc, {q[0], heads, queries},
        {workgroupBuffer(guarded, {kBlockSize}, f32), workgroupBuffer(guarded, {kBlockSize}, f32)},
        namer.next("attention"),
        [&](mlir::OpBuilder& k, mlir::gpu::LaunchOp l, llvm::ArrayRef<mlir::Value> position) {
          mlir::Value thread = l.getThreadIds().x;
          mlir::Value scratch = l.getWorkgroupAttributions()[0];
          mlir::Value weights = l.getWorkgroupAttributions()[1];
          mlir::Value batch = position[0], head = position[1], query = position[2];
          mlir::Value kvHead = k.create<mlir::arith::DivUIOp>(loc, head, group);
          mlir::Value scale = lowering::attentionScale(k, loc, spec, depth);
          const lowering::KeyRange visible =
              lowering::visibleKeys(k, loc, spec, batch, query, keys, queries);
          mlir::Value firstKey = visible.first, limit = visible.end;
          const mlir::Value sizes[] = {q[0], heads, queries, keys};
          mlir::Value block = indexConstant(k, loc, kBlockSize);
          mlir::Value firstBlock = k.create<mlir::arith::DivUIOp>(loc, firstKey, block);
          mlir::Value keyBlocks = lowering::ceilDiv(k, loc, limit, kBlockSize);
          mlir::Value chunks = lowering::ceilDiv(k, loc, columns, kBlockSize);
          mlir::Value zero = f32Constant(k, loc, 0.0f);
          mlir::Value negativeInfinity =
              f32Constant(k, loc, -std::numeric_limits<float>::infinity());
          k.create<mlir::scf::ForOp>(
              loc, indexConstant(k, loc, 0), chunks, indexConstant(k, loc, 1), mlir::ValueRange{},
              [&](mlir::OpBuilder& c, mlir::Location, mlir::Value chunk, mlir::ValueRange) {
                mlir::Value column = c.create<mlir::arith::AddIOp>(
                    loc, c.create<mlir::arith::MulIOp>(loc, chunk, block), thread);
                mlir::Value active = lessThan(c, loc, column, valueDepth);
                auto blocks = c.create<mlir::scf::ForOp>(
                    loc, firstBlock, keyBlocks, indexConstant(c, loc, 1),
                    mlir::ValueRange{negativeInfinity, zero, zero},
                    [&](mlir::OpBuilder& in, mlir::Location, mlir::Value keyBlock,
                        mlir::ValueRange state) {
                      mlir::Value first = in.create<mlir::arith::MulIOp>(loc, keyBlock, block);
                      mlir::Value j = in.create<mlir::arith::AddIOp>(loc, first, thread);
                      // This thread's score: key j, or -inf outside the visible keys.
                      mlir::Value visibleKey = in.create<mlir::arith::AndIOp>(
                          loc, lessThan(in, loc, j, limit),
                          in.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::uge, j,
                                                         firstKey));
                      auto scoreIf = in.create<mlir::scf::IfOp>(
                          loc, visibleKey,
                          [&](mlir::OpBuilder& t, mlir::Location) {
                            auto dot = t.create<mlir::scf::ForOp>(
                                loc, indexConstant(t, loc, 0), depth, indexConstant(t, loc, 1),
                                mlir::ValueRange{zero},
                                [&](mlir::OpBuilder& d, mlir::Location, mlir::Value dd,
                                    mlir::ValueRange sum) {
                                  mlir::Value x = lowering::loadAsF32(d, loc, op.getQuery(),
                                                                      {batch, head, query, dd});
                                  mlir::Value y = lowering::loadAsF32(d, loc, op.getKey(),
                                                                      {batch, kvHead, j, dd});
                                  d.create<mlir::scf::YieldOp>(
                                      loc,
                                      mlir::ValueRange{d.create<mlir::arith::AddFOp>(
                                          loc, sum[0], d.create<mlir::arith::MulFOp>(loc, x, y))});
                                });
                            mlir::Value bias =
                                op.getBias()
                                    ? lowering::attentionBias(t, loc, spec, batch, head, query, j)
                                    : mlir::Value();
                            t.create<mlir::scf::YieldOp>(
                                loc, mlir::ValueRange{lowering::attentionScore(
                                         t, loc, spec, dot.getResult(0), scale, bias)});
                          },
                          [&](mlir::OpBuilder& e, mlir::Location) {
                            e.create<mlir::scf::YieldOp>(loc, mlir::ValueRange{negativeInfinity});
                          });
                      mlir::Value score = scoreIf.getResult(0);
                      mlir::Value max = state[0], sum = state[1], accumulator = state[2];
                      mlir::Value blockMax =
                          blockReduce(in, loc, tile::ReduceKind::max, scratch, thread, score);
                      mlir::Value newMax = in.create<mlir::arith::MaximumFOp>(loc, max, blockMax);
                      mlir::Value correction = lowering::softmaxCorrection(in, loc, max, newMax);
                      mlir::Value weight = lowering::softmaxWeight(in, loc, score, newMax);
                      in.create<mlir::memref::StoreOp>(loc, weight, weights, thread);
                      // blockReduce's barriers also publish every thread's weight.
                      mlir::Value blockTotal =
                          blockReduce(in, loc, tile::ReduceKind::sum, scratch, thread, weight);
                      mlir::Value newSum = in.create<mlir::arith::AddFOp>(
                          loc, in.create<mlir::arith::MulFOp>(loc, sum, correction), blockTotal);
                      mlir::Value inBlock = in.create<mlir::arith::MinUIOp>(
                          loc, block, in.create<mlir::arith::SubIOp>(loc, limit, first));
                      // The visible keys of the block start past a window's left edge.
                      mlir::Value before = in.create<mlir::arith::SubIOp>(
                          loc, in.create<mlir::arith::MaxUIOp>(loc, firstKey, first), first);
                      auto update = in.create<mlir::scf::IfOp>(
                          loc, active,
                          [&](mlir::OpBuilder& t, mlir::Location) {
                            mlir::Value scaled =
                                t.create<mlir::arith::MulFOp>(loc, accumulator, correction);
                            auto keysLoop = t.create<mlir::scf::ForOp>(
                                loc, before, inBlock, indexConstant(t, loc, 1),
                                mlir::ValueRange{scaled},
                                [&](mlir::OpBuilder& d, mlir::Location, mlir::Value jj,
                                    mlir::ValueRange acc) {
                                  mlir::Value key = d.create<mlir::arith::AddIOp>(loc, first, jj);
                                  mlir::Value w = lowering::droppedWeight(
                                      d, loc, spec,
                                      d.create<mlir::memref::LoadOp>(loc, weights, jj),
                                      {batch, head, query, key}, sizes);
                                  mlir::Value value = lowering::loadAsF32(
                                      d, loc, op.getValue(), {batch, kvHead, key, column});
                                  d.create<mlir::scf::YieldOp>(
                                      loc, mlir::ValueRange{d.create<mlir::arith::AddFOp>(
                                               loc, acc[0],
                                               d.create<mlir::arith::MulFOp>(loc, w, value))});
                                });
                            t.create<mlir::scf::YieldOp>(loc, keysLoop.getResults());
                          },
                          [&](mlir::OpBuilder& e, mlir::Location) {
                            e.create<mlir::scf::YieldOp>(loc, mlir::ValueRange{accumulator});
                          });
                      in.create<mlir::scf::YieldOp>(
                          loc, mlir::ValueRange{newMax, newSum, update.getResult(0)});
                    });
                mlir::Value none = c.create<mlir::arith::CmpIOp>(
                    loc, mlir::arith::CmpIPredicate::eq, limit, firstKey);
                if (op.getLse()) {
                  // One thread writes the row's log-sum-exp (every thread holds the same).
                  mlir::Value writer = c.create<mlir::arith::AndIOp>(
                      loc,
                      c.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, chunk,
                                                    indexConstant(c, loc, 0)),
                      c.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, thread,
                                                    indexConstant(c, loc, 0)));
                  ifThen(c, loc, writer, [&](mlir::OpBuilder& in) {
                    lowering::storeAttentionLse(in, loc, spec, none, blocks.getResult(0),
                                                blocks.getResult(1), {batch, head, query});
                  });
                }
                ifThen(c, loc, active, [&](mlir::OpBuilder& in) {
                  mlir::Value result = lowering::attentionResult(
                      in, loc, spec, none, blocks.getResult(2), blocks.getResult(1));
                  in.create<mlir::memref::StoreOp>(
                      loc, lowering::convertFloat(in, loc, result, outputElement), op.getOutput(),
                      mlir::ValueRange{batch, head, query, column});
                });
                c.create<mlir::scf::YieldOp>(loc);
              });
        });
  });
}

void lowerRope(mlir::OpBuilder& b, tile::RopeOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getInput());
  mlir::Value half = b.create<mlir::arith::DivUIOp>(loc, sizes.back(), indexConstant(b, loc, 2));
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  mlir::Value total = b.create<mlir::arith::MulIOp>(loc, lowering::product(b, loc, rowSizes), half);
  launchPerElement(b, loc, total, namer.next("rope"), [&](mlir::OpBuilder& in, mlir::Value linear) {
    mlir::Value i = in.create<mlir::arith::RemUIOp>(loc, linear, half);
    auto row = lowering::delinearize(in, loc, in.create<mlir::arith::DivUIOp>(loc, linear, half),
                                     rowSizes);
    lowering::ropeRotate(in, loc, op, row, i, half);
  });
}

}  // namespace tessera::device
