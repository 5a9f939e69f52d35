// tessera-lower-tile-to-loops: each Tile op becomes an scf loop nest over memref loads and
// stores (the host target). A reduction over the innermost axis runs in kLanes vector lanes
// (lane l folds elements l, l + kLanes, ... in order; the lanes are then combined pairwise in a
// fixed tree); a reduction over another axis streams the input row by row into blocks of
// column accumulators, so each output folds its elements in index order; a matmul sums each
// element's products in ascending K order (HostMatmul.cpp); norm, attention and rope are in
// HostModelOps.cpp. No order depends on the CPU's vector width, the shape of the other axes,
// the batch or the thread count.
#include "dialect/Passes.h"
#include "dialect/TileOps.h"
#include "dialect/conversion/TileSemantics.h"
#include "dialect/conversion/tile_to_loops/HostLoops.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

namespace tessera {

#define GEN_PASS_DEF_LOWERTILETOLOOPS
#include "dialect/Passes.h.inc"

namespace {

using host::forEachIndex;
using host::innerProduct;
using host::parallelForEachIndex;
using host::ParallelLoop;
using host::ParallelLoops;
using lowering::indexConstant;
using lowering::memrefSizes;

/// The map as one loop nest over the output; each memref input is read at `index(input, ivs)`.
void emitMapLoops(mlir::OpBuilder& b, tile::MapOp op, ParallelLoops& parallel,
                  llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::OpBuilder&, mlir::Value,
                                                                    mlir::ValueRange)>
                      index) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getOutputs().front());
  parallelForEachIndex(b, loc, sizes, innerProduct(b, loc, sizes), parallel,
                       [&](mlir::OpBuilder& nested, mlir::ValueRange ivs) {
                         llvm::SmallVector<mlir::Value> elements;
                         for (mlir::Value input : op.getInputs()) {
                           if (llvm::isa<mlir::MemRefType>(input.getType())) {
                             elements.push_back(nested.create<mlir::memref::LoadOp>(
                                 loc, input, index(nested, input, ivs)));
                           } else {
                             elements.push_back(input);
                           }
                         }
                         auto results = lowering::inlineMapBody(nested, op, elements);
                         for (auto [value, output] : llvm::zip(results, op.getOutputs())) {
                           nested.create<mlir::memref::StoreOp>(loc, value, output, ivs);
                         }
                       });
}

/// Memref inputs broadcast to the output's shape. A dimension of static size 1 always reads
/// index 0; dynamic dimensions that could be 1 take the broadcasting loops only when one is 1
/// at run time and the output's is not, so the common case (equal shapes) keeps plain,
/// vectorisable indexing.
void lowerMap(mlir::OpBuilder& b, tile::MapOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  mlir::Value output = op.getOutputs().front();
  const int64_t rank = llvm::cast<mlir::MemRefType>(output.getType()).getRank();
  auto outputSizes = memrefSizes(b, loc, output);
  // Static broadcasting: aligned ivs with 0 for static size-1 dimensions.
  auto staticIndex = [&](mlir::OpBuilder& at, mlir::Value input, mlir::ValueRange ivs) {
    auto type = llvm::cast<mlir::MemRefType>(input.getType());
    const int64_t offset = rank - type.getRank();
    llvm::SmallVector<mlir::Value> index;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      index.push_back(type.getDimSize(d) == 1 ? indexConstant(at, loc, 0) : ivs[d + offset]);
    }
    return index;
  };
  mlir::Value broadcasting;  // true when a dynamic input dimension differs from the output's
  for (mlir::Value input : op.getInputs()) {
    auto type = llvm::dyn_cast<mlir::MemRefType>(input.getType());
    if (!type) continue;
    const int64_t offset = rank - type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) continue;
      mlir::Value size = b.create<mlir::memref::DimOp>(loc, input, d);
      mlir::Value differs = b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ne, size,
                                                          outputSizes[d + offset]);
      broadcasting =
          broadcasting ? b.create<mlir::arith::OrIOp>(loc, broadcasting, differs) : differs;
    }
  }
  if (!broadcasting) return emitMapLoops(b, op, parallel, staticIndex);
  auto choice = b.create<mlir::scf::IfOp>(loc, broadcasting, /*withElseRegion=*/true);
  mlir::OpBuilder general = choice.getThenBodyBuilder();
  emitMapLoops(general, op, parallel,
               [&](mlir::OpBuilder& at, mlir::Value input, mlir::ValueRange ivs) {
                 return lowering::broadcastIndex(at, loc, input, ivs);
               });
  mlir::OpBuilder plain = choice.getElseBodyBuilder();
  emitMapLoops(plain, op, parallel, staticIndex);
}

/// The columns one iteration of a streamed reduction accumulates: a quarter of the last axis
/// (so four iterations can run in parallel), rounded up to 64 and kept within [256, 4096] —
/// at most 16 KiB of f32 accumulators, which stay in L1 while the rows stream past in
/// segments of at least 1 KiB. Chosen at run time: each output's order does not depend on it.
mlir::Value columnBlock(mlir::OpBuilder& b, mlir::Location loc, mlir::Value columns) {
  mlir::Value rounded = b.create<mlir::arith::MulIOp>(
      loc, lowering::ceilDiv(b, loc, lowering::ceilDiv(b, loc, columns, 4), 64),
      indexConstant(b, loc, 64));
  return b.create<mlir::arith::MinUIOp>(
      loc, indexConstant(b, loc, 4096),
      b.create<mlir::arith::MaxUIOp>(loc, indexConstant(b, loc, 256), rounded));
}

/// The rows a streamed reduction's hot loop takes per iteration.
constexpr int64_t kStreamedRows = 4;

/// What a streamed reduction keeps per column: `buffers` accumulator element types, set by
/// `init`, updated by `update` with row r's f32 value, and turned into the output value by
/// `finish`.
struct ColumnAccumulation {
  llvm::SmallVector<mlir::Type> buffers;
  std::function<void(mlir::OpBuilder&, mlir::ValueRange buffers, mlir::Value j)> init;
  std::function<void(mlir::OpBuilder&, mlir::ValueRange buffers, mlir::Value j, mlir::Value r,
                     mlir::Value value)>
      update;
  std::function<mlir::Value(mlir::OpBuilder&, mlir::ValueRange buffers, mlir::Value j)> finish;
};

/// A reduction over `axis` < rank - 1: streams the rows of the reduced axis into a block of
/// column accumulators, so every input element is read once, in memory order, and the innermost
/// loop is contiguous. One parallel iteration per (outer index, inner index but the last, block
/// of last-axis columns).
void lowerStreamedReduce(mlir::OpBuilder& b, tile::ReduceOp op, ParallelLoops& parallel,
                         const ColumnAccumulation& accumulation) {
  mlir::Location loc = op.getLoc();
  const int64_t axis = op.getAxis();
  auto inputSizes = memrefSizes(b, loc, op.getInput());
  mlir::Value count = inputSizes[axis];
  auto outerSizes = llvm::ArrayRef<mlir::Value>(inputSizes).take_front(axis);
  auto innerSizes = llvm::ArrayRef<mlir::Value>(inputSizes).drop_front(axis + 1);
  mlir::Value columns = innerSizes.back();
  mlir::Value block = columnBlock(b, loc, columns);
  mlir::Value blocks = b.create<mlir::arith::CeilDivUIOp>(loc, columns, block);
  llvm::SmallVector<mlir::Value> iterationSizes(outerSizes.begin(), outerSizes.end());
  iterationSizes.append(innerSizes.begin(), innerSizes.end() - 1);
  iterationSizes.push_back(blocks);
  mlir::Value iterations = lowering::product(b, loc, iterationSizes);
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, count, block);
  mlir::Value zeroIndex = indexConstant(b, loc, 0);
  parallelForEachIndex(
      b, loc, mlir::ValueRange{iterations}, cost, parallel,
      [&](mlir::OpBuilder& nested, mlir::ValueRange linear) {
        auto position = lowering::delinearize(nested, loc, linear[0], iterationSizes);
        auto outer = llvm::ArrayRef<mlir::Value>(position).take_front(axis);
        auto prefix = llvm::ArrayRef<mlir::Value>(position).slice(axis, innerSizes.size() - 1);
        mlir::Value first = nested.create<mlir::arith::MulIOp>(loc, position.back(), block);
        mlir::Value width = nested.create<mlir::arith::MinUIOp>(
            loc, block, nested.create<mlir::arith::SubIOp>(loc, columns, first));
        llvm::SmallVector<mlir::Value> buffers;
        for (mlir::Type element : accumulation.buffers) {
          buffers.push_back(nested.create<mlir::memref::AllocOp>(
              loc, mlir::MemRefType::get({mlir::ShapedType::kDynamic}, element),
              mlir::ValueRange{width}));
        }
        auto inner = [&](mlir::OpBuilder& in, mlir::Value j) {
          llvm::SmallVector<mlir::Value> index(prefix.begin(), prefix.end());
          index.push_back(in.create<mlir::arith::AddIOp>(loc, first, j));
          return index;
        };
        forEachIndex(
            nested, loc, mlir::ValueRange{width},
            [&](mlir::OpBuilder& in, mlir::ValueRange j) { accumulation.init(in, buffers, j[0]); });
        // Row r's segment into the accumulators of its columns.
        auto accumulateRow = [&](mlir::OpBuilder& in, mlir::Value r, mlir::Value j) {
          llvm::SmallVector<mlir::Value> index(outer.begin(), outer.end());
          index.push_back(r);
          auto columnIndex = inner(in, j);
          index.append(columnIndex.begin(), columnIndex.end());
          accumulation.update(in, buffers, j, r,
                              lowering::loadAsF32(in, loc, op.getInput(), index));
        };
        // The hot loop: rows in groups of kStreamedRows, each column taking the group's rows in
        // order (the order of one row at a time, so no result changes). Several row segments
        // stream at once, which the prefetchers need when a segment is a page or less, and the
        // accumulators are loaded and stored once per group. Short independent iterations that
        // interleaving keeps the load and add units busy with.
        mlir::Value groups = nested.create<mlir::arith::DivUIOp>(
            loc, count, indexConstant(nested, loc, kStreamedRows));
        mlir::Value grouped = nested.create<mlir::arith::MulIOp>(
            loc, groups, indexConstant(nested, loc, kStreamedRows));
        forEachIndex(
            nested, loc, mlir::ValueRange{groups}, [&](mlir::OpBuilder& rows, mlir::ValueRange g) {
              mlir::Value base = rows.create<mlir::arith::MulIOp>(
                  loc, g[0], indexConstant(rows, loc, kStreamedRows));
              auto loops = forEachIndex(
                  rows, loc, mlir::ValueRange{width}, [&](mlir::OpBuilder& in, mlir::ValueRange j) {
                    for (int64_t k = 0; k < kStreamedRows; ++k) {
                      accumulateRow(
                          in, in.create<mlir::arith::AddIOp>(loc, base, indexConstant(in, loc, k)),
                          j[0]);
                    }
                  });
              host::interleaveLoop(loops.front(), 2);
            });
        // The rows after the last whole group, one at a time.
        forEachIndex(
            nested, loc, mlir::ValueRange{nested.create<mlir::arith::SubIOp>(loc, count, grouped)},
            [&](mlir::OpBuilder& rows, mlir::ValueRange r) {
              mlir::Value row = rows.create<mlir::arith::AddIOp>(loc, grouped, r[0]);
              forEachIndex(
                  rows, loc, mlir::ValueRange{width},
                  [&](mlir::OpBuilder& in, mlir::ValueRange j) { accumulateRow(in, row, j[0]); });
            });
        forEachIndex(nested, loc, mlir::ValueRange{width},
                     [&](mlir::OpBuilder& in, mlir::ValueRange j) {
                       llvm::SmallVector<mlir::Value> index(outer.begin(), outer.end());
                       if (op.getKeepdims()) index.push_back(zeroIndex);
                       auto columnIndex = inner(in, j[0]);
                       index.append(columnIndex.begin(), columnIndex.end());
                       in.create<mlir::memref::StoreOp>(loc, accumulation.finish(in, buffers, j[0]),
                                                        op.getOutput(), index);
                     });
        for (mlir::Value buffer : buffers) nested.create<mlir::memref::DeallocOp>(loc, buffer);
      });
}

/// An i64 index converted to the output's integer type.
mlir::Value indexForOutput(mlir::OpBuilder& b, mlir::Location loc, mlir::Value index,
                           mlir::Type element) {
  if (element.isSignlessInteger(64)) return index;
  return b.create<mlir::arith::TruncIOp>(loc, element, index);
}

void lowerReduce(mlir::OpBuilder& b, tile::ReduceOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  const int64_t axis = op.getAxis();
  const tile::ReduceKind kind = op.getKind();
  const bool arg = op.isArgReduction();
  const bool max = kind == tile::ReduceKind::argmax;
  auto inputSizes = memrefSizes(b, loc, op.getInput());
  const int64_t rank = static_cast<int64_t>(inputSizes.size());
  mlir::Value count = inputSizes[axis];
  mlir::Type outputElement =
      llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  auto finalize = [&](mlir::OpBuilder& in, mlir::Value total) {
    mlir::Value result = lowering::reductionFinalize(in, loc, kind, total, count);
    return lowering::convertFloat(in, loc, result, outputElement);
  };
  if (axis == rank - 1) {
    auto outerSizes = lowering::eraseAt(inputSizes, axis);
    mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, innerProduct(b, loc, outerSizes), count);
    mlir::Value zeroIndex = indexConstant(b, loc, 0);
    parallelForEachIndex(
        b, loc, outerSizes, cost, parallel, [&](mlir::OpBuilder& nested, mlir::ValueRange ivs) {
          mlir::Value result;
          if (arg) {
            result = indexForOutput(nested, loc,
                                    host::laneArgFold(nested, loc, op.getInput(), ivs, count, max),
                                    outputElement);
          } else {
            result = finalize(
                nested, host::laneFold(nested, loc, count, kind,
                                       [&](mlir::OpBuilder& at, mlir::Value i, mlir::Value mask) {
                                         return host::loadLanes(at, loc, op.getInput(), ivs, i,
                                                                mask);
                                       }));
          }
          llvm::SmallVector<mlir::Value> index(ivs.begin(), ivs.end());
          if (op.getKeepdims()) index.push_back(zeroIndex);
          nested.create<mlir::memref::StoreOp>(loc, result, op.getOutput(), index);
        });
    return;
  }
  ColumnAccumulation accumulation;
  mlir::Type f32 = b.getF32Type();
  mlir::Value identity = lowering::reductionIdentity(b, loc, arg ? tile::ReduceKind::sum : kind);
  if (!arg) {
    accumulation.buffers = {f32};
    accumulation.init = [=](mlir::OpBuilder& in, mlir::ValueRange buffers, mlir::Value j) {
      in.create<mlir::memref::StoreOp>(loc, identity, buffers[0], j);
    };
    accumulation.update = [=](mlir::OpBuilder& in, mlir::ValueRange buffers, mlir::Value j,
                              mlir::Value, mlir::Value value) {
      mlir::Value accumulator = in.create<mlir::memref::LoadOp>(loc, buffers[0], j);
      in.create<mlir::memref::StoreOp>(
          loc, lowering::reductionCombine(in, loc, kind, accumulator, value), buffers[0], j);
    };
    accumulation.finish = [&](mlir::OpBuilder& in, mlir::ValueRange buffers, mlir::Value j) {
      return finalize(in, in.create<mlir::memref::LoadOp>(loc, buffers[0], j));
    };
  } else {
    // (best value, its index); index -1 until the first row. Rows come in order, so a strict
    // improvement keeps the first extreme.
    mlir::Type i64 = b.getI64Type();
    accumulation.buffers = {f32, i64};
    accumulation.init = [=](mlir::OpBuilder& in, mlir::ValueRange buffers, mlir::Value j) {
      in.create<mlir::memref::StoreOp>(loc, identity, buffers[0], j);
      in.create<mlir::memref::StoreOp>(
          loc, in.create<mlir::arith::ConstantOp>(loc, in.getI64IntegerAttr(-1)), buffers[1], j);
    };
    accumulation.update = [=](mlir::OpBuilder& in, mlir::ValueRange buffers, mlir::Value j,
                              mlir::Value r, mlir::Value value) {
      mlir::Value best = in.create<mlir::memref::LoadOp>(loc, buffers[0], j);
      mlir::Value bestIndex = in.create<mlir::memref::LoadOp>(loc, buffers[1], j);
      mlir::Value empty = in.create<mlir::arith::CmpIOp>(
          loc, mlir::arith::CmpIPredicate::slt, bestIndex,
          in.create<mlir::arith::ConstantOp>(loc, in.getI64IntegerAttr(0)));
      mlir::Value take = in.create<mlir::arith::OrIOp>(
          loc, empty, lowering::replacesExtreme(in, loc, value, best, max));
      in.create<mlir::memref::StoreOp>(
          loc, in.create<mlir::arith::SelectOp>(loc, take, value, best), buffers[0], j);
      mlir::Value row = in.create<mlir::arith::IndexCastOp>(loc, i64, r);
      in.create<mlir::memref::StoreOp>(
          loc, in.create<mlir::arith::SelectOp>(loc, take, row, bestIndex), buffers[1], j);
    };
    accumulation.finish = [&](mlir::OpBuilder& in, mlir::ValueRange buffers, mlir::Value j) {
      return indexForOutput(in, loc, in.create<mlir::memref::LoadOp>(loc, buffers[1], j),
                            outputElement);
    };
  }
  lowerStreamedReduce(b, op, parallel, accumulation);
}

void lowerSoftmax(mlir::OpBuilder& b, tile::SoftmaxOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getInput());
  mlir::Value length = sizes.back();
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  auto outputType = llvm::cast<mlir::MemRefType>(op.getOutput().getType());
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, innerProduct(b, loc, rowSizes), length);
  parallelForEachIndex(
      b, loc, rowSizes, cost, parallel, [&](mlir::OpBuilder& nested, mlir::ValueRange row) {
        auto at = [&](mlir::Value l) { return lowering::insertAt(row, row.size(), l); };
        auto load = [&](mlir::OpBuilder& in, mlir::Value i, mlir::Value mask) {
          return host::loadLanes(in, loc, op.getInput(), row, i, mask);
        };
        mlir::Value max = host::laneFold(nested, loc, length, tile::ReduceKind::max, load);
        mlir::Value maxLanes = host::splat(nested, loc, max);
        mlir::Value sum = host::laneFold(
            nested, loc, length, tile::ReduceKind::sum,
            [&](mlir::OpBuilder& in, mlir::Value i, mlir::Value mask) -> mlir::Value {
              return in.create<mlir::math::ExpOp>(
                  loc, in.create<mlir::arith::SubFOp>(loc, load(in, i, mask), maxLanes));
            });
        forEachIndex(nested, loc, mlir::ValueRange{length},
                     [&](mlir::OpBuilder& inner, mlir::ValueRange l) {
                       mlir::Value x = lowering::loadAsF32(inner, loc, op.getInput(), at(l[0]));
                       mlir::Value e = inner.create<mlir::math::ExpOp>(
                           loc, inner.create<mlir::arith::SubFOp>(loc, x, max));
                       mlir::Value y = inner.create<mlir::arith::DivFOp>(loc, e, sum);
                       y = lowering::convertFloat(inner, loc, y, outputType.getElementType());
                       inner.create<mlir::memref::StoreOp>(loc, y, op.getOutput(), at(l[0]));
                     });
      });
}

/// The output whose emptiness makes `op` a no-op.
mlir::Value primaryOutput(mlir::Operation* op) {
  return llvm::TypeSwitch<mlir::Operation*, mlir::Value>(op)
      .Case([](tile::MapOp map) { return map.getOutputs().front(); })
      .Case<tile::ReduceOp, tile::MatmulOp, tile::SoftmaxOp, tile::NormOp, tile::AttentionOp,
            tile::RopeOp>([](auto tileOp) { return tileOp.getOutput(); })
      .Case([](tile::AttentionBackwardOp backward) { return backward.getGradKey(); })
      .Default([](mlir::Operation*) { return mlir::Value(); });
}

class LowerTileToLoops : public impl::LowerTileToLoopsBase<LowerTileToLoops> {
 public:
  using LowerTileToLoopsBase::LowerTileToLoopsBase;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::SymbolTable symbols(module);
    llvm::SmallVector<mlir::Operation*> tileOps;
    module.walk([&](mlir::Operation* op) {
      if (primaryOutput(op)) tileOps.push_back(op);
    });
    for (mlir::Operation* op : tileOps) {
      mlir::OpBuilder b(op);
      // An op whose output has no elements does nothing: without this guard its outer loops
      // would still run over the non-empty dimensions (2^60 rows of zero columns).
      mlir::Location loc = op->getLoc();
      mlir::Value elements =
          lowering::product(b, loc, lowering::memrefSizes(b, loc, primaryOutput(op)));
      // Ops with outputs of other shapes: a no-op only when every output is empty (an lse
      // when Dv = 0; dV when D = 0, dQ when Sk = 0).
      llvm::SmallVector<mlir::Value> others;
      if (auto attention = llvm::dyn_cast<tile::AttentionOp>(op)) {
        if (attention.getLse()) others.push_back(attention.getLse());
      } else if (auto backward = llvm::dyn_cast<tile::AttentionBackwardOp>(op)) {
        others = {backward.getGradQuery(), backward.getGradValue()};
      }
      for (mlir::Value other : others) {
        elements = b.create<mlir::arith::AddIOp>(
            loc, elements, lowering::product(b, loc, lowering::memrefSizes(b, loc, other)));
      }
      mlir::Value nonEmpty = b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ne,
                                                           elements, indexConstant(b, loc, 0));
      auto guard = b.create<mlir::scf::IfOp>(loc, nonEmpty, /*withElseRegion=*/false);
      b.setInsertionPointToStart(&guard.getThenRegion().front());
      ParallelLoops parallel;
      llvm::TypeSwitch<mlir::Operation*>(op)
          .Case([&](tile::MapOp map) { lowerMap(b, map, parallel); })
          .Case([&](tile::ReduceOp reduce) { lowerReduce(b, reduce, parallel); })
          .Case([&](tile::MatmulOp matmul) { host::lowerMatmul(b, matmul, parallel, vectorBits); })
          .Case([&](tile::SoftmaxOp softmax) { lowerSoftmax(b, softmax, parallel); })
          .Case([&](tile::NormOp norm) { host::lowerNorm(b, norm, parallel); })
          .Case([&](tile::AttentionOp attention) { host::lowerAttention(b, attention, parallel); })
          .Case([&](tile::AttentionBackwardOp backward) {
            host::lowerAttentionBackward(b, backward, parallel);
          })
          .Case([&](tile::RopeOp rope) { host::lowerRope(b, rope, parallel); });
      op->erase();
      for (const ParallelLoop& loop : parallel) host::outlineParallelLoop(module, symbols, loop);
    }
  }
};

}  // namespace
}  // namespace tessera
