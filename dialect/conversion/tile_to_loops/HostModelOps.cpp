// The host lowering of the row-wise model ops: tile.norm (two or three passes over each row,
// statistics in kLanes lanes) and tile.rope (one pass). Rows run in parallel; each row's result
// depends only on that row. tile.attention is in HostAttention.cpp.
#include "dialect/conversion/TileSemantics.h"
#include "dialect/conversion/tile_to_loops/HostLoops.h"
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
  parallelForEachIndex(
      b, loc, rowSizes, cost, parallel, [&](mlir::OpBuilder& nested, mlir::ValueRange row) {
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
          mlir::Value squares =
              laneFold(nested, loc, length, tile::ReduceKind::sum,
                       [&](mlir::OpBuilder& in, mlir::Value i, mlir::Value mask) -> mlir::Value {
                         mlir::Value centered =
                             in.create<mlir::arith::SubFOp>(loc, load(in, i, mask), meanLanes);
                         return in.create<mlir::arith::MulFOp>(loc, centered, centered);
                       });
          statistic = nested.create<mlir::arith::DivFOp>(loc, squares, count);
        } else {
          mlir::Value squares =
              laneFold(nested, loc, length, tile::ReduceKind::sum,
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
                       lowering::normStore(in, loc, op, at, l[0],
                                           lowering::normInput(in, loc, op, at), mean, scale);
                     });
      });
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
                         forEachIndex(nested, loc, mlir::ValueRange{half},
                                      [&](mlir::OpBuilder& in, mlir::ValueRange i) {
                                        lowering::ropeRotate(in, loc, op, row, i[0], half);
                                      });
                       });
}

}  // namespace tessera::host
