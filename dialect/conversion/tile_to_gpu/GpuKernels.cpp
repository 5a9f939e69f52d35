// The kernel-building blocks of the device lowering; see GpuKernels.h.
#include "dialect/conversion/tile_to_gpu/GpuKernels.h"

#include "dialect/conversion/TileSemantics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera::device {
namespace {

/// Each kernel gets a gpu.module of its own, `tessera_kernels_<kernel>`: each becomes its own
/// device image, so the kernels of one module are compiled to PTX and linked in parallel.
constexpr llvm::StringLiteral kKernelModulePrefix = "tessera_kernels_";

}  // namespace

using lowering::indexConstant;

mlir::Value lessThan(mlir::OpBuilder& b, mlir::Location loc, mlir::Value lhs, mlir::Value rhs) {
  return b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ult, lhs, rhs);
}

mlir::MemRefType workgroupBuffer(mlir::OpBuilder& b, llvm::ArrayRef<int64_t> shape,
                                 mlir::Type element) {
  auto space = mlir::gpu::AddressSpaceAttr::get(b.getContext(), mlir::gpu::AddressSpace::Workgroup);
  return mlir::MemRefType::get(shape, element, mlir::MemRefLayoutAttrInterface(), space);
}

void ifThen(mlir::OpBuilder& b, mlir::Location loc, mlir::Value condition,
            llvm::function_ref<void(mlir::OpBuilder&)> body) {
  b.create<mlir::scf::IfOp>(loc, condition, [&](mlir::OpBuilder& nested, mlir::Location l) {
    body(nested);
    nested.create<mlir::scf::YieldOp>(l);
  });
}

mlir::gpu::LaunchOp launch(mlir::OpBuilder& b, mlir::Location loc, std::array<mlir::Value, 3> grid,
                           std::array<int64_t, 2> block, mlir::TypeRange workgroup,
                           llvm::StringRef name,
                           llvm::function_ref<void(mlir::OpBuilder&, mlir::gpu::LaunchOp)> body) {
  mlir::Value one = indexConstant(b, loc, 1);
  auto op = b.create<mlir::gpu::LaunchOp>(
      loc, grid[0], grid[1] ? grid[1] : one, grid[2] ? grid[2] : one,
      indexConstant(b, loc, block[0]), indexConstant(b, loc, block[1]), one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/mlir::ValueRange{}, workgroup,
      /*privateAttributions=*/mlir::TypeRange{}, nullptr, nullptr, nullptr,
      mlir::FlatSymbolRefAttr::get(b.getContext(), (kKernelModulePrefix + name).str()),
      mlir::FlatSymbolRefAttr::get(b.getContext(), name));
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&op.getBody().front());
  body(b, op);
  b.create<mlir::gpu::TerminatorOp>(loc);
  return op;
}

mlir::Value blockReduce(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                        mlir::Value scratch, mlir::Value thread, mlir::Value value) {
  // The leading barrier keeps a previous reduction's readers ahead of this one's writers.
  b.create<mlir::gpu::BarrierOp>(loc);
  b.create<mlir::memref::StoreOp>(loc, value, scratch, thread);
  for (int64_t stride = kBlockSize / 2; stride > 0; stride /= 2) {
    b.create<mlir::gpu::BarrierOp>(loc);
    mlir::Value strideValue = indexConstant(b, loc, stride);
    ifThen(b, loc, lessThan(b, loc, thread, strideValue), [&](mlir::OpBuilder& nested) {
      mlir::Value partner = nested.create<mlir::arith::AddIOp>(loc, thread, strideValue);
      mlir::Value mine = nested.create<mlir::memref::LoadOp>(loc, scratch, thread);
      mlir::Value theirs = nested.create<mlir::memref::LoadOp>(loc, scratch, partner);
      nested.create<mlir::memref::StoreOp>(
          loc, lowering::reductionCombine(nested, loc, kind, mine, theirs), scratch, thread);
    });
  }
  b.create<mlir::gpu::BarrierOp>(loc);
  return b.create<mlir::memref::LoadOp>(loc, scratch, indexConstant(b, loc, 0));
}

std::pair<mlir::Value, mlir::Value> blockReducePair(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value firstScratch, mlir::Value secondScratch,
    mlir::Value thread, mlir::Value first, mlir::Value second,
    llvm::function_ref<std::pair<mlir::Value, mlir::Value>(mlir::OpBuilder&, mlir::Value,
                                                           mlir::Value, mlir::Value, mlir::Value)>
        combine) {
  // The leading barrier keeps a previous unit's readers ahead of this one's writers.
  b.create<mlir::gpu::BarrierOp>(loc);
  b.create<mlir::memref::StoreOp>(loc, first, firstScratch, thread);
  b.create<mlir::memref::StoreOp>(loc, second, secondScratch, thread);
  for (int64_t stride = kBlockSize / 2; stride > 0; stride /= 2) {
    b.create<mlir::gpu::BarrierOp>(loc);
    mlir::Value strideValue = indexConstant(b, loc, stride);
    ifThen(b, loc, lessThan(b, loc, thread, strideValue), [&](mlir::OpBuilder& in) {
      mlir::Value partner = in.create<mlir::arith::AddIOp>(loc, thread, strideValue);
      auto [x, y] = combine(in, in.create<mlir::memref::LoadOp>(loc, firstScratch, thread),
                            in.create<mlir::memref::LoadOp>(loc, secondScratch, thread),
                            in.create<mlir::memref::LoadOp>(loc, firstScratch, partner),
                            in.create<mlir::memref::LoadOp>(loc, secondScratch, partner));
      in.create<mlir::memref::StoreOp>(loc, x, firstScratch, thread);
      in.create<mlir::memref::StoreOp>(loc, y, secondScratch, thread);
    });
  }
  b.create<mlir::gpu::BarrierOp>(loc);
  mlir::Value zero = indexConstant(b, loc, 0);
  return {b.create<mlir::memref::LoadOp>(loc, firstScratch, zero),
          b.create<mlir::memref::LoadOp>(loc, secondScratch, zero)};
}

mlir::Value foldStrided(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value thread, mlir::Value count, mlir::Value init,
    llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value, mlir::Value)> step,
    int64_t stride) {
  auto loop = b.create<mlir::scf::ForOp>(
      loc, thread, count, indexConstant(b, loc, stride), mlir::ValueRange{init},
      [&](mlir::OpBuilder& nested, mlir::Location l, mlir::Value iv, mlir::ValueRange iters) {
        nested.create<mlir::scf::YieldOp>(l, step(nested, iters.front(), iv));
      });
  return loop.getResult(0);
}

mlir::Value gridFor(mlir::OpBuilder& b, mlir::Location loc, mlir::Value count, int64_t limit) {
  return b.create<mlir::arith::MinUIOp>(loc, count, indexConstant(b, loc, limit));
}

void forEachBlockUnit(mlir::OpBuilder& b, mlir::Location loc, mlir::gpu::LaunchOp launch,
                      mlir::Value count,
                      llvm::function_ref<void(mlir::OpBuilder&, mlir::Value unit)> body) {
  b.create<mlir::scf::ForOp>(
      loc, launch.getBlockIds().x, count, launch.getGridSize().x, mlir::ValueRange{},
      [&](mlir::OpBuilder& in, mlir::Location l, mlir::Value unit, mlir::ValueRange) {
        body(in, unit);
        in.create<mlir::scf::YieldOp>(l);
      });
}

void launchPerElement(mlir::OpBuilder& b, mlir::Location loc, mlir::Value total,
                      llvm::StringRef name,
                      llvm::function_ref<void(mlir::OpBuilder&, mlir::Value linear)> body) {
  ifThen(b, loc, lessThan(b, loc, indexConstant(b, loc, 0), total), [&](mlir::OpBuilder& guarded) {
    mlir::Value blocks =
        gridFor(guarded, loc, lowering::ceilDiv(guarded, loc, total, kBlockSize), kMaxGridX);
    launch(guarded, loc, {blocks, nullptr, nullptr}, {kBlockSize, 1}, {}, name,
           [&](mlir::OpBuilder& k, mlir::gpu::LaunchOp l) {
             mlir::Value block = indexConstant(k, loc, kBlockSize);
             mlir::Value first = k.create<mlir::arith::AddIOp>(
                 loc, k.create<mlir::arith::MulIOp>(loc, l.getBlockIds().x, block),
                 l.getThreadIds().x);
             mlir::Value stride = k.create<mlir::arith::MulIOp>(loc, l.getGridSize().x, block);
             k.create<mlir::scf::ForOp>(
                 loc, first, total, stride, mlir::ValueRange{},
                 [&](mlir::OpBuilder& in, mlir::Location l2, mlir::Value linear, mlir::ValueRange) {
                   body(in, linear);
                   in.create<mlir::scf::YieldOp>(l2);
                 });
           });
  });
}

llvm::SmallVector<mlir::Value> matrixIndex(llvm::ArrayRef<mlir::Value> prefix, mlir::Value x,
                                           mlir::Value y) {
  llvm::SmallVector<mlir::Value> index(prefix.begin(), prefix.end());
  index.append({x, y});
  return index;
}

void launchMatmulTiles(
    mlir::OpBuilder& b, tile::MatmulOp op, int64_t tileRows, int64_t tileColumns,
    std::array<int64_t, 2> block, mlir::TypeRange workgroup, llvm::StringRef name,
    llvm::function_ref<void(mlir::OpBuilder&, mlir::gpu::LaunchOp, const MatmulTile&)> body) {
  mlir::Location loc = op.getLoc();
  auto outputSizes = lowering::memrefSizes(b, loc, op.getOutput());
  const int64_t rankC = static_cast<int64_t>(outputSizes.size());
  const int64_t rankA = llvm::cast<mlir::MemRefType>(op.getLhs().getType()).getRank();
  const int64_t rankB = llvm::cast<mlir::MemRefType>(op.getRhs().getType()).getRank();
  MatmulTile tile;
  tile.m = outputSizes[rankC - 2];
  tile.n = outputSizes[rankC - 1];
  tile.k = lowering::memrefSizes(b, loc, op.getLhs())[rankA - (op.getTransposeA() ? 2 : 1)];
  auto batchSizes = llvm::ArrayRef<mlir::Value>(outputSizes).drop_back(2);
  mlir::Value batches = lowering::product(b, loc, batchSizes);
  mlir::Value zero = indexConstant(b, loc, 0);
  mlir::Value nonEmpty = b.create<mlir::arith::AndIOp>(
      loc, lessThan(b, loc, zero, batches),
      b.create<mlir::arith::AndIOp>(loc, lessThan(b, loc, zero, tile.m),
                                    lessThan(b, loc, zero, tile.n)));
  ifThen(b, loc, nonEmpty, [&](mlir::OpBuilder& guarded) {
    mlir::Value rowTiles = lowering::ceilDiv(guarded, loc, tile.m, tileRows);
    mlir::Value columnTiles = lowering::ceilDiv(guarded, loc, tile.n, tileColumns);
    launch(
        guarded, loc,
        {gridFor(guarded, loc, columnTiles, kMaxGridX), gridFor(guarded, loc, rowTiles, kMaxGridYZ),
         gridFor(guarded, loc, batches, kMaxGridYZ)},
        block, workgroup, name, [&](mlir::OpBuilder& launchBuilder, mlir::gpu::LaunchOp l) {
          // Batches from blockIdx.z in steps of gridDim.z, tiles of C from blockIdx.y/x in
          // steps of the grid (uniform in a block).
          auto batchLoop = launchBuilder.create<mlir::scf::ForOp>(loc, l.getBlockIds().z, batches,
                                                                  l.getGridSize().z);
          mlir::OpBuilder inBatch = mlir::OpBuilder::atBlockTerminator(batchLoop.getBody());
          auto rowLoop =
              inBatch.create<mlir::scf::ForOp>(loc, l.getBlockIds().y, rowTiles, l.getGridSize().y);
          mlir::OpBuilder inRow = mlir::OpBuilder::atBlockTerminator(rowLoop.getBody());
          auto columnLoop = inRow.create<mlir::scf::ForOp>(loc, l.getBlockIds().x, columnTiles,
                                                           l.getGridSize().x);
          mlir::OpBuilder kb = mlir::OpBuilder::atBlockTerminator(columnLoop.getBody());
          MatmulTile here = tile;
          here.cPrefix = lowering::delinearize(kb, loc, batchLoop.getInductionVar(), batchSizes);
          here.aPrefix = lowering::broadcastIndex(kb, loc, op.getLhs(), here.cPrefix, rankA - 2);
          here.bPrefix = lowering::broadcastIndex(kb, loc, op.getRhs(), here.cPrefix, rankB - 2);
          here.row0 = kb.create<mlir::arith::MulIOp>(loc, rowLoop.getInductionVar(),
                                                     indexConstant(kb, loc, tileRows));
          here.column0 = kb.create<mlir::arith::MulIOp>(loc, columnLoop.getInductionVar(),
                                                        indexConstant(kb, loc, tileColumns));
          body(kb, l, here);
        });
  });
}

}  // namespace tessera::device
