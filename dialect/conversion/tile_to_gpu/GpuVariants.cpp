// The kernel variants of tessera-lower-tile-to-gpu (KernelSchedules.h): the schedules beyond
// each Tile op's baseline. Every one is deterministic run to run: each output element is
// accumulated in one fixed order (fixed shuffle butterflies, fixed shared-memory trees, K in
// order), with no atomics.
//   map      vectorized: 128-bit vector loads/stores (4 x 32-bit or 8 x 16-bit per thread per
//            step), grid-stride over at most kMaxVectorBlocks blocks; the launch site checks
//            at run time that every operand is 16-byte aligned and of the output's sizes, else
//            the baseline kernel runs
//   reduce   warp_per_row: 8 warps per block, one output element per warp, a 5-step xor
//            butterfly of warp shuffles; along the last axis each lane folds chunks of one
//            128-bit load (4 x 32-bit, 8 x 16-bit) strided by 32 chunks — with vector loads
//            when the launch site finds the input 16-byte aligned and rows of whole chunks,
//            else element by element in the same order; along another axis lanes stride by 32
//   softmax  warp_per_row: as reduce along rows (max, then the sum of exp), no shared memory;
//            online: one block per row, each thread folds a running (max, sum) in one pass,
//            a fixed tree combines the pairs, then the write pass
//   norm     warp_per_row: one row per warp, lanes strided by 32 elements (no chunks: the
//            input may add a residual), butterfly sums (layer: the mean, then the centred
//            squares; rms: the squares), then the lanes write the row
// The tensor-core matmuls (mma_sync, mma_async) are in GpuMmaMatmul.cpp.
#include <limits>
#include <optional>
#include <tuple>

#include "dialect/conversion/TileSemantics.h"
#include "dialect/conversion/tile_to_gpu/GpuKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace tessera::device {
namespace {

using lowering::indexConstant;

constexpr int64_t kWarpsPerBlock = kBlockSize / kWarp;
/// The vectorized map's grid: enough blocks to fill an H200 (132 SMs) twice over; past that,
/// each thread takes several vectors.
constexpr int64_t kMaxVectorBlocks = 2048;
constexpr int64_t kVectorBytes = 16;

mlir::Value i32Constant(mlir::OpBuilder& b, mlir::Location loc, int32_t value) {
  return b.create<mlir::arith::ConstantOp>(loc, b.getI32IntegerAttr(value));
}

mlir::Value equal(mlir::OpBuilder& b, mlir::Location loc, mlir::Value lhs, mlir::Value rhs) {
  return b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, lhs, rhs);
}

/// `memref` as one dimension (identity layout: contiguous).
mlir::Value flatten(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref) {
  auto type = llvm::cast<mlir::MemRefType>(memref.getType());
  if (type.getRank() == 1) return memref;
  mlir::ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d) all.push_back(d);
  return b.create<mlir::memref::CollapseShapeOp>(loc, memref,
                                                 llvm::ArrayRef<mlir::ReassociationIndices>{all});
}

}  // namespace

mlir::Value warpReduce(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                       mlir::Value value) {
  for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
    auto shuffle =
        b.create<mlir::gpu::ShuffleOp>(loc, value, i32Constant(b, loc, offset),
                                       i32Constant(b, loc, kWarp), mlir::gpu::ShuffleMode::XOR);
    value = lowering::reductionCombine(b, loc, kind, value, shuffle.getShuffleResult());
  }
  return value;
}

void launchPerWarp(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value units, llvm::StringRef name,
    llvm::function_ref<void(mlir::OpBuilder&, mlir::Value lane, mlir::Value unit)> body) {
  mlir::Value blocks = gridFor(b, loc, lowering::ceilDiv(b, loc, units, kWarpsPerBlock), kMaxGridX);
  launch(b, loc, {blocks, nullptr, nullptr}, {kBlockSize, 1}, {}, name,
         [&](mlir::OpBuilder& k, mlir::gpu::LaunchOp l) {
           mlir::Value warpSize = indexConstant(k, loc, kWarp);
           mlir::Value thread = l.getThreadIds().x;
           mlir::Value lane = k.create<mlir::arith::RemUIOp>(loc, thread, warpSize);
           mlir::Value warps = indexConstant(k, loc, kWarpsPerBlock);
           mlir::Value first = k.create<mlir::arith::AddIOp>(
               loc, k.create<mlir::arith::MulIOp>(loc, l.getBlockIds().x, warps),
               k.create<mlir::arith::DivUIOp>(loc, thread, warpSize));
           mlir::Value stride = k.create<mlir::arith::MulIOp>(loc, l.getGridSize().x, warps);
           k.create<mlir::scf::ForOp>(
               loc, first, units, stride, mlir::ValueRange{},
               [&](mlir::OpBuilder& in, mlir::Location l2, mlir::Value unit, mlir::ValueRange) {
                 body(in, lane, unit);
                 in.create<mlir::scf::YieldOp>(l2);
               });
         });
}

namespace {

/// One online-softmax state (max, sum) folded with another: the larger max, each sum rescaled
/// to it (a state of -inf max and 0 sum is the identity).
std::pair<mlir::Value, mlir::Value> combineSoftmaxStates(mlir::OpBuilder& b, mlir::Location loc,
                                                         mlir::Value max, mlir::Value sum,
                                                         mlir::Value otherMax,
                                                         mlir::Value otherSum) {
  mlir::Value newMax = b.create<mlir::arith::MaximumFOp>(loc, max, otherMax);
  mlir::Value scaled =
      b.create<mlir::arith::MulFOp>(loc, sum, lowering::softmaxCorrection(b, loc, max, newMax));
  mlir::Value otherScaled = b.create<mlir::arith::MulFOp>(
      loc, otherSum, lowering::softmaxCorrection(b, loc, otherMax, newMax));
  return {newMax, b.create<mlir::arith::AddFOp>(loc, scaled, otherScaled)};
}

/// Elements of `memref` per 128-bit load along its rows: 4 (32-bit) or 8 (16-bit); 1 for other
/// element types or a layout that is not dense row-major (element by element).
int64_t rowChunkOf(mlir::Value memref) {
  auto type = llvm::cast<mlir::MemRefType>(memref.getType());
  if (!type.getLayout().isIdentity() || !llvm::isa<mlir::FloatType>(type.getElementType())) {
    return 1;
  }
  const unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return bits == 16 || bits == 32 ? kVectorBytes * 8 / static_cast<int64_t>(bits) : 1;
}

/// Runs `body(builder, vectorized)` for the rows of `input` (each `length` long): with true
/// under an scf.if that `input` is 16-byte aligned and `length` a multiple of `chunk` (so every
/// chunk of every row is one aligned 128-bit load), with false otherwise; once with false when
/// `chunk` is 1 or `length` a constant that is not a multiple of it.
void forRowLoads(mlir::OpBuilder& b, mlir::Location loc, mlir::Value input, mlir::Value length,
                 int64_t chunk, llvm::function_ref<void(mlir::OpBuilder&, bool)> body) {
  std::optional<int64_t> known = mlir::getConstantIntValue(length);
  if (chunk == 1 || (known && *known % chunk != 0)) {  // no row is whole chunks
    body(b, false);
    return;
  }
  mlir::Value zero = indexConstant(b, loc, 0);
  mlir::Value pointer = b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, input);
  mlir::Value aligned = equal(
      b, loc, b.create<mlir::arith::AndIOp>(loc, pointer, indexConstant(b, loc, kVectorBytes - 1)),
      zero);
  mlir::Value whole = equal(
      b, loc, b.create<mlir::arith::RemUIOp>(loc, length, indexConstant(b, loc, chunk)), zero);
  b.create<mlir::scf::IfOp>(
      loc, b.create<mlir::arith::AndIOp>(loc, aligned, whole),
      [&](mlir::OpBuilder& then, mlir::Location l) {
        body(then, true);
        then.create<mlir::scf::YieldOp>(l);
      },
      [&](mlir::OpBuilder& otherwise, mlir::Location l) {
        body(otherwise, false);
        otherwise.create<mlir::scf::YieldOp>(l);
      });
}

/// One lane's fold of `step` over row `row` of `input` (all indices but the last; the row is
/// `length` long): the chunks of `chunk` consecutive elements starting at chunk·c for c = lane,
/// lane + 32, ..., each in index order, as f32. `vectorized` reads a chunk with one 128-bit
/// load (forRowLoads checked it may); otherwise each element alone, bounds-checked — in the
/// same order, so the two agree bit for bit.
mlir::Value foldRowChunks(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value input, llvm::ArrayRef<mlir::Value> row,
    mlir::Value lane, mlir::Value length, int64_t chunk, bool vectorized, mlir::Value init,
    llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value, mlir::Value)> step) {
  mlir::Type element = llvm::cast<mlir::MemRefType>(input.getType()).getElementType();
  mlir::Type f32 = b.getF32Type();
  mlir::Value chunks = lowering::ceilDiv(b, loc, length, chunk);
  auto loop = b.create<mlir::scf::ForOp>(
      loc, lane, chunks, indexConstant(b, loc, kWarp), mlir::ValueRange{init},
      [&](mlir::OpBuilder& in, mlir::Location l, mlir::Value c, mlir::ValueRange iters) {
        mlir::Value first = in.create<mlir::arith::MulIOp>(loc, c, indexConstant(in, loc, chunk));
        mlir::Value accumulator = iters.front();
        if (vectorized) {
          mlir::Value vector = in.create<mlir::vector::LoadOp>(
              loc, mlir::VectorType::get({chunk}, element), input,
              lowering::insertAt(row, row.size(), first), /*nontemporal=*/false,
              llvm::MaybeAlign(kVectorBytes));
          for (int64_t j = 0; j < chunk; ++j) {
            mlir::Value x = lowering::convertFloat(
                in, loc, in.create<mlir::vector::ExtractOp>(loc, vector, j), f32);
            accumulator = step(in, accumulator, x);
          }
        } else {
          for (int64_t j = 0; j < chunk; ++j) {
            mlir::Value i = first;
            if (j > 0) i = in.create<mlir::arith::AddIOp>(loc, first, indexConstant(in, loc, j));
            auto inside = in.create<mlir::scf::IfOp>(
                loc, lessThan(in, loc, i, length),
                [&](mlir::OpBuilder& then, mlir::Location l2) {
                  mlir::Value x =
                      lowering::loadAsF32(then, loc, input, lowering::insertAt(row, row.size(), i));
                  then.create<mlir::scf::YieldOp>(l2, step(then, accumulator, x));
                },
                [&](mlir::OpBuilder& otherwise, mlir::Location l2) {
                  otherwise.create<mlir::scf::YieldOp>(l2, accumulator);
                });
            accumulator = inside.getResult(0);
          }
        }
        in.create<mlir::scf::YieldOp>(l, accumulator);
      });
  return loop.getResult(0);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// map

void lowerMapVectorized(mlir::OpBuilder& b, tile::MapOp op, KernelNamer& namer,
                        llvm::function_ref<void(mlir::OpBuilder&)> baseline) {
  mlir::Location loc = op.getLoc();
  mlir::Value output = op.getOutputs().front();
  auto outputType = llvm::cast<mlir::MemRefType>(output.getType());
  const int64_t width =
      kVectorBytes * 8 / static_cast<int64_t>(outputType.getElementType().getIntOrFloatBitWidth());
  auto sizes = lowering::memrefSizes(b, loc, output);
  mlir::Value total = lowering::product(b, loc, sizes);
  llvm::SmallVector<mlir::Value> tensors(op.getOutputs().begin(), op.getOutputs().end());
  for (mlir::Value input : op.getInputs()) {
    if (llvm::isa<mlir::MemRefType>(input.getType())) tensors.push_back(input);
  }
  // Every operand of the output's sizes (no broadcasting at run time) and 16-byte aligned
  // (identity layouts have offset 0: the aligned pointer is where the data starts).
  mlir::Value fits = b.create<mlir::arith::ConstantOp>(loc, b.getBoolAttr(true));
  mlir::Value alignmentMask = indexConstant(b, loc, kVectorBytes - 1);
  mlir::Value zero = indexConstant(b, loc, 0);
  for (mlir::Value tensor : tensors) {
    auto tensorSizes = lowering::memrefSizes(b, loc, tensor);
    for (auto [size, outputSize] : llvm::zip(tensorSizes, sizes)) {
      fits = b.create<mlir::arith::AndIOp>(loc, fits, equal(b, loc, size, outputSize));
    }
    mlir::Value pointer = b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, tensor);
    fits = b.create<mlir::arith::AndIOp>(
        loc, fits, equal(b, loc, b.create<mlir::arith::AndIOp>(loc, pointer, alignmentMask), zero));
  }
  const std::string name = namer.next("map_vectorized");
  b.create<mlir::scf::IfOp>(
      loc, fits,
      [&](mlir::OpBuilder& then, mlir::Location l) {
        ifThen(then, loc, lessThan(then, loc, zero, total), [&](mlir::OpBuilder& guarded) {
          llvm::DenseMap<mlir::Value, mlir::Value> flat;
          for (mlir::Value tensor : tensors) flat[tensor] = flatten(guarded, loc, tensor);
          mlir::Value widthValue = indexConstant(guarded, loc, width);
          mlir::Value vectors = guarded.create<mlir::arith::DivUIOp>(loc, total, widthValue);
          mlir::Value tailStart = guarded.create<mlir::arith::MulIOp>(loc, vectors, widthValue);
          mlir::Value tail = guarded.create<mlir::arith::SubIOp>(loc, total, tailStart);
          // At least one block: the tail needs one when there is no full vector.
          mlir::Value blocks = guarded.create<mlir::arith::MaxUIOp>(
              loc, indexConstant(guarded, loc, 1),
              gridFor(guarded, loc, lowering::ceilDiv(guarded, loc, vectors, kBlockSize),
                      kMaxVectorBlocks));
          launch(
              guarded, loc, {blocks, nullptr, nullptr}, {kBlockSize, 1}, {}, name,
              [&](mlir::OpBuilder& k, mlir::gpu::LaunchOp launchOp) {
                mlir::Value block = indexConstant(k, loc, kBlockSize);
                mlir::Value first = k.create<mlir::arith::AddIOp>(
                    loc, k.create<mlir::arith::MulIOp>(loc, launchOp.getBlockIds().x, block),
                    launchOp.getThreadIds().x);
                mlir::Value stride =
                    k.create<mlir::arith::MulIOp>(loc, launchOp.getGridSize().x, block);
                k.create<mlir::scf::ForOp>(
                    loc, first, vectors, stride, mlir::ValueRange{},
                    [&](mlir::OpBuilder& in, mlir::Location l2, mlir::Value v, mlir::ValueRange) {
                      mlir::Value base = in.create<mlir::arith::MulIOp>(loc, v, widthValue);
                      llvm::SmallVector<mlir::Value> loaded;
                      for (mlir::Value input : op.getInputs()) {
                        if (!llvm::isa<mlir::MemRefType>(input.getType())) {
                          loaded.push_back(nullptr);
                          continue;
                        }
                        auto type = mlir::VectorType::get(
                            {width},
                            llvm::cast<mlir::MemRefType>(input.getType()).getElementType());
                        loaded.push_back(in.create<mlir::vector::LoadOp>(
                            loc, type, flat[input], mlir::ValueRange{base}, /*nontemporal=*/false,
                            llvm::MaybeAlign(kVectorBytes)));
                      }
                      llvm::SmallVector<llvm::SmallVector<mlir::Value>> lanes(
                          op.getOutputs().size());
                      for (int64_t j = 0; j < width; ++j) {
                        llvm::SmallVector<mlir::Value> elements;
                        for (auto [input, vector] : llvm::zip(op.getInputs(), loaded)) {
                          elements.push_back(
                              vector ? in.create<mlir::vector::ExtractOp>(loc, vector, j) : input);
                        }
                        auto results = lowering::inlineMapBody(in, op, elements);
                        for (auto [o, result] : llvm::enumerate(results))
                          lanes[o].push_back(result);
                      }
                      for (auto [o, outputValue] : llvm::enumerate(op.getOutputs())) {
                        auto type = mlir::VectorType::get(
                            {width},
                            llvm::cast<mlir::MemRefType>(outputValue.getType()).getElementType());
                        mlir::Value vector =
                            in.create<mlir::vector::FromElementsOp>(loc, type, lanes[o]);
                        in.create<mlir::vector::StoreOp>(
                            loc, vector, flat[outputValue], mlir::ValueRange{base},
                            /*nontemporal=*/false, llvm::MaybeAlign(kVectorBytes));
                      }
                      in.create<mlir::scf::YieldOp>(l2);
                    });
                // The last total % width elements, one per thread of the first threads.
                ifThen(k, loc, lessThan(k, loc, first, tail), [&](mlir::OpBuilder& in) {
                  mlir::Value i = in.create<mlir::arith::AddIOp>(loc, tailStart, first);
                  llvm::SmallVector<mlir::Value> elements;
                  for (mlir::Value input : op.getInputs()) {
                    elements.push_back(
                        llvm::isa<mlir::MemRefType>(input.getType())
                            ? in.create<mlir::memref::LoadOp>(loc, flat[input], mlir::ValueRange{i})
                                  .getResult()
                            : input);
                  }
                  auto results = lowering::inlineMapBody(in, op, elements);
                  for (auto [value, outputValue] : llvm::zip(results, op.getOutputs())) {
                    in.create<mlir::memref::StoreOp>(loc, value, flat[outputValue],
                                                     mlir::ValueRange{i});
                  }
                });
              });
        });
        then.create<mlir::scf::YieldOp>(l);
      },
      [&](mlir::OpBuilder& otherwise, mlir::Location l) {
        baseline(otherwise);
        otherwise.create<mlir::scf::YieldOp>(l);
      });
}

// ---------------------------------------------------------------------------------------------
// reduce, softmax

void lowerReduceWarpPerRow(mlir::OpBuilder& b, tile::ReduceOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  const int64_t axis = op.getAxis();
  const tile::ReduceKind kind = op.getKind();
  auto inputSizes = lowering::memrefSizes(b, loc, op.getInput());
  mlir::Value count = inputSizes[axis];
  auto outerSizes = lowering::eraseAt(inputSizes, axis);
  mlir::Value outputs = lowering::product(b, loc, outerSizes);
  mlir::Type outputElement =
      llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  mlir::Value zero = indexConstant(b, loc, 0);
  // Along the last axis the rows are contiguous: lanes take chunks of one 128-bit load each.
  const bool rows = axis + 1 == static_cast<int64_t>(inputSizes.size());
  const int64_t chunk = rows ? rowChunkOf(op.getInput()) : 1;
  ifThen(b, loc, lessThan(b, loc, zero, outputs), [&](mlir::OpBuilder& guarded) {
    forRowLoads(
        guarded, loc, op.getInput(), count, chunk, [&](mlir::OpBuilder& site, bool vectorized) {
          launchPerWarp(
              site, loc, outputs,
              namer.next(vectorized ? "reduce_warp_per_row_vector" : "reduce_warp_per_row"),
              [&](mlir::OpBuilder& k, mlir::Value lane, mlir::Value unit) {
                auto outer = lowering::delinearize(k, loc, unit, outerSizes);
                auto combine = [&](mlir::OpBuilder& in, mlir::Value accumulator,
                                   mlir::Value value) {
                  return lowering::reductionCombine(in, loc, kind, accumulator, value);
                };
                mlir::Value identity = lowering::reductionIdentity(k, loc, kind);
                mlir::Value partial =
                    rows ? foldRowChunks(k, loc, op.getInput(), outer, lane, count, chunk,
                                         vectorized, identity, combine)
                         : foldStrided(
                               k, loc, lane, count, identity,
                               [&](mlir::OpBuilder& in, mlir::Value accumulator, mlir::Value r) {
                                 return combine(
                                     in, accumulator,
                                     lowering::loadAsF32(in, loc, op.getInput(),
                                                         lowering::insertAt(outer, axis, r)));
                               },
                               kWarp);
                mlir::Value total = warpReduce(k, loc, kind, partial);
                mlir::Value result = lowering::convertFloat(
                    k, loc, lowering::reductionFinalize(k, loc, kind, total, count), outputElement);
                ifThen(k, loc, equal(k, loc, lane, indexConstant(k, loc, 0)),
                       [&](mlir::OpBuilder& in) {
                         llvm::SmallVector<mlir::Value> outIndex(outer.begin(), outer.end());
                         if (op.getKeepdims())
                           outIndex = lowering::insertAt(outer, axis, indexConstant(in, loc, 0));
                         in.create<mlir::memref::StoreOp>(loc, result, op.getOutput(), outIndex);
                       });
              });
        });
  });
}

namespace {

/// The shared prologue of the per-row variants (softmax, norm) over `input`'s rows: their
/// count, the row length and the row sizes; runs `body` when there is work.
void forRowWork(mlir::OpBuilder& b, mlir::Location loc, mlir::Value input,
                llvm::function_ref<void(mlir::OpBuilder&, mlir::Value rows, mlir::Value length,
                                        llvm::ArrayRef<mlir::Value> rowSizes)>
                    body) {
  auto sizes = lowering::memrefSizes(b, loc, input);
  mlir::Value length = sizes.back();
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  mlir::Value rows = lowering::product(b, loc, rowSizes);
  mlir::Value work = b.create<mlir::arith::MulIOp>(loc, rows, length);
  ifThen(b, loc, lessThan(b, loc, indexConstant(b, loc, 0), work),
         [&](mlir::OpBuilder& guarded) { body(guarded, rows, length, rowSizes); });
}

/// Writes softmax row `row` from its max and sum: y[i] = exp(x[i] - max) / sum for i = first,
/// first + stride, ... < length.
void writeSoftmaxRow(mlir::OpBuilder& b, mlir::Location loc, tile::SoftmaxOp op,
                     llvm::ArrayRef<mlir::Value> row, mlir::Value first, int64_t stride,
                     mlir::Value length, mlir::Value max, mlir::Value sum) {
  mlir::Type outputElement =
      llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  b.create<mlir::scf::ForOp>(
      loc, first, length, indexConstant(b, loc, stride), mlir::ValueRange{},
      [&](mlir::OpBuilder& in, mlir::Location l, mlir::Value i, mlir::ValueRange) {
        auto index = lowering::insertAt(row, row.size(), i);
        mlir::Value x = lowering::loadAsF32(in, loc, op.getInput(), index);
        mlir::Value y =
            in.create<mlir::arith::DivFOp>(loc, lowering::softmaxWeight(in, loc, x, max), sum);
        in.create<mlir::memref::StoreOp>(loc, lowering::convertFloat(in, loc, y, outputElement),
                                         op.getOutput(), index);
        in.create<mlir::scf::YieldOp>(l);
      });
}

}  // namespace

void lowerSoftmaxWarpPerRow(mlir::OpBuilder& b, tile::SoftmaxOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  forRowWork(
      b, loc, op.getInput(),
      [&](mlir::OpBuilder& guarded, mlir::Value rows, mlir::Value length,
          llvm::ArrayRef<mlir::Value> rowSizes) {
        const int64_t chunk = rowChunkOf(op.getInput());
        forRowLoads(
            guarded, loc, op.getInput(), length, chunk,
            [&](mlir::OpBuilder& site, bool vectorized) {
              launchPerWarp(
                  site, loc, rows,
                  namer.next(vectorized ? "softmax_warp_per_row_vector" : "softmax_warp_per_row"),
                  [&](mlir::OpBuilder& k, mlir::Value lane, mlir::Value unit) {
                    auto row = lowering::delinearize(k, loc, unit, rowSizes);
                    mlir::Value partialMax = foldRowChunks(
                        k, loc, op.getInput(), row, lane, length, chunk, vectorized,
                        lowering::reductionIdentity(k, loc, tile::ReduceKind::max),
                        [&](mlir::OpBuilder& in, mlir::Value accumulator, mlir::Value x) {
                          return lowering::reductionCombine(in, loc, tile::ReduceKind::max,
                                                            accumulator, x);
                        });
                    mlir::Value max = warpReduce(k, loc, tile::ReduceKind::max, partialMax);
                    mlir::Value partialSum = foldRowChunks(
                        k, loc, op.getInput(), row, lane, length, chunk, vectorized,
                        lowering::reductionIdentity(k, loc, tile::ReduceKind::sum),
                        [&](mlir::OpBuilder& in, mlir::Value accumulator,
                            mlir::Value x) -> mlir::Value {
                          return in.create<mlir::arith::AddFOp>(
                              loc, accumulator, lowering::softmaxWeight(in, loc, x, max));
                        });
                    mlir::Value sum = warpReduce(k, loc, tile::ReduceKind::sum, partialSum);
                    writeSoftmaxRow(k, loc, op, row, lane, kWarp, length, max, sum);
                  });
            });
      });
}

void lowerNormWarpPerRow(mlir::OpBuilder& b, tile::NormOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  forRowWork(
      b, loc, op.getInput(),
      [&](mlir::OpBuilder& guarded, mlir::Value rows, mlir::Value length,
          llvm::ArrayRef<mlir::Value> rowSizes) {
        launchPerWarp(
            guarded, loc, rows, namer.next("norm_warp_per_row"),
            [&](mlir::OpBuilder& k, mlir::Value lane, mlir::Value unit) {
              auto row = lowering::delinearize(k, loc, unit, rowSizes);
              auto input = [&](mlir::OpBuilder& in, mlir::Value i) {
                return lowering::normInput(in, loc, op, lowering::append(row, i));
              };
              auto warpSum = [&](RowTerm term) {
                mlir::Value partial = foldStrided(
                    k, loc, lane, length, lowering::f32Constant(k, loc, 0.0f),
                    [&](mlir::OpBuilder& in, mlir::Value accumulator,
                        mlir::Value i) -> mlir::Value {
                      return in.create<mlir::arith::AddFOp>(loc, accumulator, term(in, i));
                    },
                    kWarp);
                return warpReduce(k, loc, tile::ReduceKind::sum, partial);
              };
              mlir::Value mean, scale;
              std::tie(mean, scale) = normRowStatistics(k, loc, op, length, input, warpSum);
              k.create<mlir::scf::ForOp>(
                  loc, lane, length, indexConstant(k, loc, kWarp), mlir::ValueRange{},
                  [&](mlir::OpBuilder& in, mlir::Location l, mlir::Value i, mlir::ValueRange) {
                    lowering::normStore(in, loc, op, lowering::append(row, i), i, input(in, i),
                                        mean, scale);
                    in.create<mlir::scf::YieldOp>(l);
                  });
            });
      });
}

void lowerSoftmaxOnline(mlir::OpBuilder& b, tile::SoftmaxOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  forRowWork(
      b, loc, op.getInput(),
      [&](mlir::OpBuilder& guarded, mlir::Value rows, mlir::Value length,
          llvm::ArrayRef<mlir::Value> rowSizes) {
        mlir::Type scratchType = workgroupBuffer(guarded, {kBlockSize}, guarded.getF32Type());
        launch(guarded, loc, {gridFor(guarded, loc, rows, kMaxGridX), nullptr, nullptr},
               {kBlockSize, 1}, {scratchType, scratchType}, namer.next("softmax_online"),
               [&](mlir::OpBuilder& launchBuilder, mlir::gpu::LaunchOp l) {
                 forEachBlockUnit(
                     launchBuilder, loc, l, rows, [&](mlir::OpBuilder& k, mlir::Value unit) {
                       mlir::Value thread = l.getThreadIds().x;
                       mlir::Value maxes = l.getWorkgroupAttributions()[0];
                       mlir::Value sums = l.getWorkgroupAttributions()[1];
                       auto row = lowering::delinearize(k, loc, unit, rowSizes);
                       // One pass: each thread's running (max, sum of exp(x - max)) over its
                       // strided share.
                       mlir::Value minusInf =
                           lowering::f32Constant(k, loc, -std::numeric_limits<float>::infinity());
                       auto fold = k.create<mlir::scf::ForOp>(
                           loc, thread, length, indexConstant(k, loc, kBlockSize),
                           mlir::ValueRange{minusInf, lowering::f32Constant(k, loc, 0.0f)},
                           [&](mlir::OpBuilder& in, mlir::Location l2, mlir::Value i,
                               mlir::ValueRange state) {
                             mlir::Value x = lowering::loadAsF32(
                                 in, loc, op.getInput(), lowering::insertAt(row, row.size(), i));
                             mlir::Value newMax =
                                 in.create<mlir::arith::MaximumFOp>(loc, state[0], x);
                             mlir::Value sum = in.create<mlir::arith::AddFOp>(
                                 loc,
                                 in.create<mlir::arith::MulFOp>(
                                     loc, state[1],
                                     lowering::softmaxCorrection(in, loc, state[0], newMax)),
                                 lowering::softmaxWeight(in, loc, x, newMax));
                             in.create<mlir::scf::YieldOp>(l2, mlir::ValueRange{newMax, sum});
                           });
                       // A fixed tree over the block's pairs.
                       auto [max, sum] = blockReducePair(
                           k, loc, maxes, sums, thread, fold.getResult(0), fold.getResult(1),
                           [&](mlir::OpBuilder& in, mlir::Value m, mlir::Value s,
                               mlir::Value otherMax, mlir::Value otherSum) {
                             return combineSoftmaxStates(in, loc, m, s, otherMax, otherSum);
                           });
                       writeSoftmaxRow(k, loc, op, row, thread, kBlockSize, length, max, sum);
                     });
               });
      });
}

}  // namespace tessera::device
