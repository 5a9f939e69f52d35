// tessera-lower-tile-to-loops: each Tile op becomes an scf loop nest over memref loads and
// stores (the host target). Reductions run sequentially in index order.
#include "dialect/Passes.h"
#include "dialect/TileOps.h"
#include "dialect/transforms/TileSemantics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

namespace tessera {

#define GEN_PASS_DEF_LOWERTILETOLOOPS
#include "dialect/Passes.h.inc"

namespace {

using lowering::memrefSizes;

/// Zeros and ones for a loop nest over `sizes`.
struct LoopBounds {
  llvm::SmallVector<mlir::Value> lower;
  llvm::SmallVector<mlir::Value> step;
};

LoopBounds unitBounds(mlir::OpBuilder& b, mlir::Location loc, size_t rank) {
  mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  return {llvm::SmallVector<mlir::Value>(rank, zero), llvm::SmallVector<mlir::Value>(rank, one)};
}

/// Runs `body(builder, ivs)` for every index of `sizes`.
void forEachIndex(mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange sizes,
                  llvm::function_ref<void(mlir::OpBuilder&, mlir::ValueRange)> body) {
  LoopBounds bounds = unitBounds(b, loc, sizes.size());
  mlir::scf::buildLoopNest(b, loc, bounds.lower, sizes, bounds.step,
                           [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ivs) {
                             body(nested, ivs);
                           });
}

/// Folds `step(builder, accumulator, i)` over i in [0, count) in order, from `init`.
mlir::Value foldRange(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value count, mlir::Value init,
    llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value, mlir::Value)> step) {
  mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<mlir::scf::ForOp>(
      loc, zero, count, one, mlir::ValueRange{init},
      [&](mlir::OpBuilder& nested, mlir::Location nestedLoc, mlir::Value iv,
          mlir::ValueRange iterArgs) {
        mlir::Value next = step(nested, iterArgs.front(), iv);
        nested.create<mlir::scf::YieldOp>(nestedLoc, next);
      });
  return loop.getResult(0);
}


void lowerMap(mlir::OpBuilder& b, tile::MapOp op) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getOutputs().front());
  forEachIndex(b, loc, sizes, [&](mlir::OpBuilder& nested, mlir::ValueRange ivs) {
    llvm::SmallVector<mlir::Value> elements;
    for (mlir::Value input : op.getInputs()) {
      if (llvm::isa<mlir::MemRefType>(input.getType())) {
        elements.push_back(nested.create<mlir::memref::LoadOp>(loc, input, ivs));
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

void lowerReduce(mlir::OpBuilder& b, tile::ReduceOp op) {
  mlir::Location loc = op.getLoc();
  const int64_t axis = op.getAxis();
  const tile::ReduceKind kind = op.getKind();
  auto inputSizes = memrefSizes(b, loc, op.getInput());
  mlir::Value count = inputSizes[axis];
  auto outerSizes = lowering::eraseAt(inputSizes, axis);
  auto outputType = llvm::cast<mlir::MemRefType>(op.getOutput().getType());
  forEachIndex(b, loc, outerSizes, [&](mlir::OpBuilder& nested, mlir::ValueRange ivs) {
    mlir::Value total = foldRange(
        nested, loc, count, lowering::reductionIdentity(nested, loc, kind),
        [&](mlir::OpBuilder& inner, mlir::Value accumulator, mlir::Value r) {
          mlir::Value value = lowering::loadAsF32(inner, loc, op.getInput(), lowering::insertAt(ivs, axis, r));
          return lowering::reductionCombine(inner, loc, kind, accumulator, value);
        });
    mlir::Value result = lowering::reductionFinalize(nested, loc, kind, total, count);
    result = lowering::convertFloat(nested, loc, result, outputType.getElementType());
    llvm::SmallVector<mlir::Value> outIndex(ivs.begin(), ivs.end());
    if (op.getKeepdims()) {
      outIndex = lowering::insertAt(ivs, axis, nested.create<mlir::arith::ConstantIndexOp>(loc, 0));
    }
    nested.create<mlir::memref::StoreOp>(loc, result, op.getOutput(), outIndex);
  });
}

// Row by row, K outer and N inner, into a row of accumulators: the inner loop runs over
// contiguous B and C elements (vectorisable), and every C element still sums its K products in
// ascending order from zero — the same order and rounding as a dot product per element.
void lowerMatmul(mlir::OpBuilder& b, tile::MatmulOp op) {
  mlir::Location loc = op.getLoc();
  auto outputSizes = memrefSizes(b, loc, op.getOutput());
  mlir::Value m = outputSizes[0];
  mlir::Value n = outputSizes[1];
  mlir::Value k = memrefSizes(b, loc, op.getLhs())[op.getTransposeA() ? 0 : 1];
  mlir::Type accumulatorType = lowering::matmulAccumulatorType(op);
  // Heap, not stack: N may be large.
  auto rowType = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, accumulatorType);
  mlir::Value row = b.create<mlir::memref::AllocOp>(loc, rowType, mlir::ValueRange{n});
  mlir::Value zero = b.create<mlir::arith::ConstantOp>(loc, b.getFloatAttr(accumulatorType, 0.0));
  forEachIndex(b, loc, mlir::ValueRange{m}, [&](mlir::OpBuilder& rows, mlir::ValueRange is) {
    mlir::Value i = is[0];
    forEachIndex(rows, loc, mlir::ValueRange{n}, [&](mlir::OpBuilder& in, mlir::ValueRange js) {
      in.create<mlir::memref::StoreOp>(loc, zero, row, js);
    });
    forEachIndex(rows, loc, mlir::ValueRange{k}, [&](mlir::OpBuilder& ks, mlir::ValueRange kk) {
      llvm::SmallVector<mlir::Value> aIndex{i, kk[0]};
      if (op.getTransposeA()) aIndex = {kk[0], i};
      mlir::Value a = lowering::prepareMatmulInput(
          ks, loc, op, ks.create<mlir::memref::LoadOp>(loc, op.getLhs(), aIndex));
      forEachIndex(ks, loc, mlir::ValueRange{n}, [&](mlir::OpBuilder& in, mlir::ValueRange js) {
        llvm::SmallVector<mlir::Value> bIndex{kk[0], js[0]};
        if (op.getTransposeB()) bIndex = {js[0], kk[0]};
        mlir::Value bValue = lowering::prepareMatmulInput(
            in, loc, op, in.create<mlir::memref::LoadOp>(loc, op.getRhs(), bIndex));
        mlir::Value product = in.create<mlir::arith::MulFOp>(loc, a, bValue);
        mlir::Value accumulator = in.create<mlir::memref::LoadOp>(loc, row, js);
        in.create<mlir::memref::StoreOp>(
            loc, in.create<mlir::arith::AddFOp>(loc, accumulator, product), row, js);
      });
    });
    forEachIndex(rows, loc, mlir::ValueRange{n}, [&](mlir::OpBuilder& in, mlir::ValueRange js) {
      mlir::Value bias;
      if (op.getBias()) bias = in.create<mlir::memref::LoadOp>(loc, op.getBias(), js);
      mlir::Value sum = in.create<mlir::memref::LoadOp>(loc, row, js);
      mlir::Value result = lowering::applyMatmulEpilogue(in, loc, op, sum, bias);
      in.create<mlir::memref::StoreOp>(loc, result, op.getOutput(), mlir::ValueRange{i, js[0]});
    });
  });
  b.create<mlir::memref::DeallocOp>(loc, row);
}

void lowerSoftmax(mlir::OpBuilder& b, tile::SoftmaxOp op) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getInput());
  mlir::Value length = sizes.back();
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  auto outputType = llvm::cast<mlir::MemRefType>(op.getOutput().getType());
  forEachIndex(b, loc, rowSizes, [&](mlir::OpBuilder& nested, mlir::ValueRange row) {
    auto at = [&](mlir::Value l) { return lowering::insertAt(row, row.size(), l); };
    mlir::Value max = foldRange(
        nested, loc, length, lowering::reductionIdentity(nested, loc, tile::ReduceKind::max),
        [&](mlir::OpBuilder& inner, mlir::Value accumulator, mlir::Value l) {
          return lowering::reductionCombine(inner, loc, tile::ReduceKind::max, accumulator,
                                            lowering::loadAsF32(inner, loc, op.getInput(), at(l)));
        });
    auto shiftedExp = [&](mlir::OpBuilder& inner, mlir::Value l) -> mlir::Value {
      mlir::Value x = lowering::loadAsF32(inner, loc, op.getInput(), at(l));
      return inner.create<mlir::math::ExpOp>(loc,
                                             inner.create<mlir::arith::SubFOp>(loc, x, max));
    };
    mlir::Value sum = foldRange(
        nested, loc, length, lowering::reductionIdentity(nested, loc, tile::ReduceKind::sum),
        [&](mlir::OpBuilder& inner, mlir::Value accumulator, mlir::Value l) {
          return lowering::reductionCombine(inner, loc, tile::ReduceKind::sum, accumulator,
                                            shiftedExp(inner, l));
        });
    forEachIndex(nested, loc, mlir::ValueRange{length},
                 [&](mlir::OpBuilder& inner, mlir::ValueRange l) {
                   mlir::Value y =
                       inner.create<mlir::arith::DivFOp>(loc, shiftedExp(inner, l[0]), sum);
                   y = lowering::convertFloat(inner, loc, y, outputType.getElementType());
                   inner.create<mlir::memref::StoreOp>(loc, y, op.getOutput(), at(l[0]));
                 });
  });
}

class LowerTileToLoops : public impl::LowerTileToLoopsBase<LowerTileToLoops> {
 public:
  void runOnOperation() override {
    llvm::SmallVector<mlir::Operation*> tileOps;
    getOperation().walk([&](mlir::Operation* op) {
      if (llvm::isa<tile::MapOp, tile::ReduceOp, tile::MatmulOp, tile::SoftmaxOp>(op)) {
        tileOps.push_back(op);
      }
    });
    for (mlir::Operation* op : tileOps) {
      mlir::OpBuilder b(op);
      // An op whose output has no elements does nothing: without this guard its outer loops
      // would still run over the non-empty dimensions (2^60 rows of zero columns).
      mlir::Value output = llvm::TypeSwitch<mlir::Operation*, mlir::Value>(op)
                               .Case([](tile::MapOp map) { return map.getOutputs().front(); })
                               .Case([](tile::ReduceOp reduce) { return reduce.getOutput(); })
                               .Case([](tile::MatmulOp matmul) { return matmul.getOutput(); })
                               .Case([](tile::SoftmaxOp softmax) { return softmax.getOutput(); });
      mlir::Location loc = op->getLoc();
      mlir::Value elements =
          lowering::product(b, loc, lowering::memrefSizes(b, loc, output));
      mlir::Value nonEmpty = b.create<mlir::arith::CmpIOp>(
          loc, mlir::arith::CmpIPredicate::ne, elements,
          b.create<mlir::arith::ConstantIndexOp>(loc, 0));
      auto guard = b.create<mlir::scf::IfOp>(loc, nonEmpty, /*withElseRegion=*/false);
      b.setInsertionPointToStart(&guard.getThenRegion().front());
      llvm::TypeSwitch<mlir::Operation*>(op)
          .Case([&](tile::MapOp map) { lowerMap(b, map); })
          .Case([&](tile::ReduceOp reduce) { lowerReduce(b, reduce); })
          .Case([&](tile::MatmulOp matmul) { lowerMatmul(b, matmul); })
          .Case([&](tile::SoftmaxOp softmax) { lowerSoftmax(b, softmax); });
      op->erase();
    }
  }
};

}  // namespace
}  // namespace tessera
