// tessera-lower-tile-to-gpu: each Tile op becomes one gpu.launch with an explicit schedule.
//   map      one thread per element, 256 threads per block
//   reduce   one 256-thread block per output element; strided partial sums, then a fixed
//            shared-memory tree (deterministic)
//   softmax  one 256-thread block per row: block max, block sum of exp(x - max), write
//   matmul   16x16 output tiles, A and B tiles staged through shared memory, K in order
// An empty problem launches nothing (CUDA rejects a zero-sized grid).
#include <string>

#include "dialect/Passes.h"
#include "dialect/TileOps.h"
#include "dialect/transforms/TileSemantics.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera {

#define GEN_PASS_DEF_LOWERTILETOGPU
#include "dialect/Passes.h.inc"

namespace {

using lowering::memrefSizes;

constexpr int64_t kBlockSize = 256;  // threads per block for map, reduce, softmax
constexpr int64_t kTile = 16;        // matmul output tile edge (16x16 threads)
constexpr llvm::StringLiteral kKernelModule = "tessera_kernels";

mlir::Value indexConstant(mlir::OpBuilder& b, mlir::Location loc, int64_t value) {
  return b.create<mlir::arith::ConstantIndexOp>(loc, value);
}

mlir::Value ceilDiv(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value, int64_t divisor) {
  return b.create<mlir::arith::CeilDivUIOp>(loc, value, indexConstant(b, loc, divisor));
}

mlir::Value lessThan(mlir::OpBuilder& b, mlir::Location loc, mlir::Value lhs, mlir::Value rhs) {
  return b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ult, lhs, rhs);
}

mlir::MemRefType workgroupBuffer(mlir::OpBuilder& b, llvm::ArrayRef<int64_t> shape,
                                 mlir::Type element) {
  auto space = mlir::gpu::AddressSpaceAttr::get(b.getContext(),
                                                mlir::gpu::AddressSpace::Workgroup);
  return mlir::MemRefType::get(shape, element, mlir::MemRefLayoutAttrInterface(), space);
}

/// The row-major multi-index of `linear` in a box of `sizes` (last dimension fastest).
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder& b, mlir::Location loc,
                                           mlir::Value linear, mlir::ValueRange sizes) {
  llvm::SmallVector<mlir::Value> index(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      index[d] = linear;
      break;
    }
    index[d] = b.create<mlir::arith::RemUIOp>(loc, linear, sizes[d]);
    linear = b.create<mlir::arith::DivUIOp>(loc, linear, sizes[d]);
  }
  return index;
}

/// Runs `body` under `scf.if condition`.
void ifThen(mlir::OpBuilder& b, mlir::Location loc, mlir::Value condition,
            llvm::function_ref<void(mlir::OpBuilder&)> body) {
  b.create<mlir::scf::IfOp>(loc, condition, [&](mlir::OpBuilder& nested, mlir::Location l) {
    body(nested);
    nested.create<mlir::scf::YieldOp>(l);
  });
}

/// Names kernels `<function>_<op>_<n>`, unique within the function.
class KernelNamer {
 public:
  explicit KernelNamer(llvm::StringRef function) : function_(function.str()) {}
  std::string next(llvm::StringRef opName) {
    return function_ + "_" + opName.str() + "_" + std::to_string(count_++);
  }

 private:
  std::string function_;
  int count_ = 0;
};

/// Emits `gpu.launch` with the given grid and block, workgroup buffers, and a body; the launch
/// is named so that outlining puts it into `tessera_kernels` as `name`.
mlir::gpu::LaunchOp launch(
    mlir::OpBuilder& b, mlir::Location loc, std::array<mlir::Value, 2> grid,
    std::array<int64_t, 2> block, mlir::TypeRange workgroup, llvm::StringRef name,
    llvm::function_ref<void(mlir::OpBuilder&, mlir::gpu::LaunchOp)> body) {
  mlir::Value one = indexConstant(b, loc, 1);
  auto op = b.create<mlir::gpu::LaunchOp>(
      loc, grid[0], grid[1], one, indexConstant(b, loc, block[0]),
      indexConstant(b, loc, block[1]), one, /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/mlir::ValueRange{}, workgroup,
      /*privateAttributions=*/mlir::TypeRange{}, nullptr, nullptr, nullptr,
      mlir::FlatSymbolRefAttr::get(b.getContext(), kKernelModule),
      mlir::FlatSymbolRefAttr::get(b.getContext(), name));
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&op.getBody().front());
  body(b, op);
  b.create<mlir::gpu::TerminatorOp>(loc);
  return op;
}

/// Reduces `value` (f32, one per thread) across the block with a fixed tree in `scratch`
/// (`kBlockSize` f32 in workgroup memory); every thread gets the result.
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

/// Folds `step` over i = thread, thread + kBlockSize, ... < count, from `init`: one thread's
/// share of a block-wide reduction, in a fixed order.
mlir::Value foldStrided(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value thread, mlir::Value count,
    mlir::Value init,
    llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value, mlir::Value)> step) {
  auto loop = b.create<mlir::scf::ForOp>(
      loc, thread, count, indexConstant(b, loc, kBlockSize), mlir::ValueRange{init},
      [&](mlir::OpBuilder& nested, mlir::Location l, mlir::Value iv, mlir::ValueRange iters) {
        nested.create<mlir::scf::YieldOp>(l, step(nested, iters.front(), iv));
      });
  return loop.getResult(0);
}


void lowerMap(mlir::OpBuilder& b, tile::MapOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getOutputs().front());
  mlir::Value total = lowering::product(b, loc, sizes);
  mlir::Value zero = indexConstant(b, loc, 0);
  ifThen(b, loc, lessThan(b, loc, zero, total), [&](mlir::OpBuilder& guarded) {
    mlir::Value blocks = ceilDiv(guarded, loc, total, kBlockSize);
    launch(guarded, loc, {blocks, indexConstant(guarded, loc, 1)}, {kBlockSize, 1}, {},
           namer.next("map"), [&](mlir::OpBuilder& k, mlir::gpu::LaunchOp l) {
             mlir::Value base = k.create<mlir::arith::MulIOp>(
                 loc, l.getBlockIds().x, indexConstant(k, loc, kBlockSize));
             mlir::Value linear = k.create<mlir::arith::AddIOp>(loc, base, l.getThreadIds().x);
             ifThen(k, loc, lessThan(k, loc, linear, total), [&](mlir::OpBuilder& in) {
               auto index = delinearize(in, loc, linear, sizes);
               llvm::SmallVector<mlir::Value> elements;
               for (mlir::Value input : op.getInputs()) {
                 elements.push_back(llvm::isa<mlir::MemRefType>(input.getType())
                                        ? in.create<mlir::memref::LoadOp>(loc, input, index)
                                        : input);
               }
               auto results = lowering::inlineMapBody(in, op, elements);
               for (auto [value, output] : llvm::zip(results, op.getOutputs())) {
                 in.create<mlir::memref::StoreOp>(loc, value, output, index);
               }
             });
           });
  });
}

void lowerReduce(mlir::OpBuilder& b, tile::ReduceOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  const int64_t axis = op.getAxis();
  const tile::ReduceKind kind = op.getKind();
  auto inputSizes = memrefSizes(b, loc, op.getInput());
  mlir::Value count = inputSizes[axis];
  auto outerSizes = lowering::eraseAt(inputSizes, axis);
  mlir::Value outputs = lowering::product(b, loc, outerSizes);
  auto outputType = llvm::cast<mlir::MemRefType>(op.getOutput().getType());
  mlir::Value zero = indexConstant(b, loc, 0);
  ifThen(b, loc, lessThan(b, loc, zero, outputs), [&](mlir::OpBuilder& guarded) {
    launch(guarded, loc, {outputs, indexConstant(guarded, loc, 1)}, {kBlockSize, 1},
           {workgroupBuffer(guarded, {kBlockSize}, guarded.getF32Type())},
           namer.next("reduce"), [&](mlir::OpBuilder& k, mlir::gpu::LaunchOp l) {
             mlir::Value thread = l.getThreadIds().x;
             auto outer = delinearize(k, loc, l.getBlockIds().x, outerSizes);
             mlir::Value partial = foldStrided(
                 k, loc, thread, count, lowering::reductionIdentity(k, loc, kind),
                 [&](mlir::OpBuilder& in, mlir::Value accumulator, mlir::Value r) {
                   mlir::Value value =
                       lowering::loadAsF32(in, loc, op.getInput(), lowering::insertAt(outer, axis, r));
                   return lowering::reductionCombine(in, loc, kind, accumulator, value);
                 });
             mlir::Value total = blockReduce(k, loc, kind, l.getWorkgroupAttributions()[0],
                                             thread, partial);
             ifThen(k, loc,
                    k.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, thread,
                                                  indexConstant(k, loc, 0)),
                    [&](mlir::OpBuilder& in) {
                      mlir::Value result =
                          lowering::reductionFinalize(in, loc, kind, total, count);
                      result = lowering::convertFloat(in, loc, result,
                                                      outputType.getElementType());
                      llvm::SmallVector<mlir::Value> outIndex(outer.begin(), outer.end());
                      if (op.getKeepdims()) {
                        outIndex = lowering::insertAt(outer, axis, indexConstant(in, loc, 0));
                      }
                      in.create<mlir::memref::StoreOp>(loc, result, op.getOutput(), outIndex);
                    });
           });
  });
}

void lowerSoftmax(mlir::OpBuilder& b, tile::SoftmaxOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getInput());
  mlir::Value length = sizes.back();
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  mlir::Value rows = lowering::product(b, loc, rowSizes);
  auto outputType = llvm::cast<mlir::MemRefType>(op.getOutput().getType());
  mlir::Value zero = indexConstant(b, loc, 0);
  mlir::Value work = b.create<mlir::arith::MulIOp>(loc, rows, length);
  ifThen(b, loc, lessThan(b, loc, zero, work), [&](mlir::OpBuilder& guarded) {
    launch(guarded, loc, {rows, indexConstant(guarded, loc, 1)}, {kBlockSize, 1},
           {workgroupBuffer(guarded, {kBlockSize}, guarded.getF32Type())},
           namer.next("softmax"), [&](mlir::OpBuilder& k, mlir::gpu::LaunchOp l) {
             mlir::Value thread = l.getThreadIds().x;
             mlir::Value scratch = l.getWorkgroupAttributions()[0];
             auto row = delinearize(k, loc, l.getBlockIds().x, rowSizes);
             auto at = [&](mlir::Value i) { return lowering::insertAt(row, row.size(), i); };
             mlir::Value partialMax = foldStrided(
                 k, loc, thread, length,
                 lowering::reductionIdentity(k, loc, tile::ReduceKind::max),
                 [&](mlir::OpBuilder& in, mlir::Value accumulator, mlir::Value i) {
                   return lowering::reductionCombine(in, loc, tile::ReduceKind::max,
                                                     accumulator,
                                                     lowering::loadAsF32(in, loc, op.getInput(), at(i)));
                 });
             mlir::Value max =
                 blockReduce(k, loc, tile::ReduceKind::max, scratch, thread, partialMax);
             auto shiftedExp = [&](mlir::OpBuilder& in, mlir::Value i) -> mlir::Value {
               mlir::Value x = lowering::loadAsF32(in, loc, op.getInput(), at(i));
               return in.create<mlir::math::ExpOp>(loc,
                                                   in.create<mlir::arith::SubFOp>(loc, x, max));
             };
             mlir::Value partialSum = foldStrided(
                 k, loc, thread, length,
                 lowering::reductionIdentity(k, loc, tile::ReduceKind::sum),
                 [&](mlir::OpBuilder& in, mlir::Value accumulator, mlir::Value i) {
                   return lowering::reductionCombine(in, loc, tile::ReduceKind::sum,
                                                     accumulator, shiftedExp(in, i));
                 });
             mlir::Value sum =
                 blockReduce(k, loc, tile::ReduceKind::sum, scratch, thread, partialSum);
             k.create<mlir::scf::ForOp>(
                 loc, thread, length, indexConstant(k, loc, kBlockSize), mlir::ValueRange{},
                 [&](mlir::OpBuilder& in, mlir::Location l2, mlir::Value i, mlir::ValueRange) {
                   mlir::Value y = in.create<mlir::arith::DivFOp>(loc, shiftedExp(in, i), sum);
                   y = lowering::convertFloat(in, loc, y, outputType.getElementType());
                   in.create<mlir::memref::StoreOp>(loc, y, op.getOutput(), at(i));
                   in.create<mlir::scf::YieldOp>(l2);
                 });
           });
  });
}

/// Loads `memref[index]` prepared for accumulation when `inBounds`, else 0.
mlir::Value guardedMatmulLoad(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op,
                              mlir::Value inBounds, mlir::Value memref,
                              llvm::ArrayRef<mlir::Value> index) {
  mlir::Type accumulatorType = lowering::matmulAccumulatorType(op);
  auto ifOp = b.create<mlir::scf::IfOp>(
      loc, inBounds,
      [&](mlir::OpBuilder& then, mlir::Location l) {
        mlir::Value element = then.create<mlir::memref::LoadOp>(loc, memref, index);
        then.create<mlir::scf::YieldOp>(l, lowering::prepareMatmulInput(then, loc, op, element));
      },
      [&](mlir::OpBuilder& otherwise, mlir::Location l) {
        mlir::Value zero = otherwise.create<mlir::arith::ConstantOp>(
            loc, otherwise.getFloatAttr(accumulatorType, 0.0));
        otherwise.create<mlir::scf::YieldOp>(l, zero);
      });
  return ifOp.getResult(0);
}

void lowerMatmul(mlir::OpBuilder& b, tile::MatmulOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  auto outputSizes = memrefSizes(b, loc, op.getOutput());
  mlir::Value m = outputSizes[0];
  mlir::Value n = outputSizes[1];
  mlir::Value k = memrefSizes(b, loc, op.getLhs())[op.getTransposeA() ? 0 : 1];
  mlir::Type accumulatorType = lowering::matmulAccumulatorType(op);
  mlir::Value zero = indexConstant(b, loc, 0);
  mlir::Value nonEmpty = b.create<mlir::arith::AndIOp>(loc, lessThan(b, loc, zero, m),
                                                       lessThan(b, loc, zero, n));
  ifThen(b, loc, nonEmpty, [&](mlir::OpBuilder& guarded) {
    mlir::Type tileType = workgroupBuffer(guarded, {kTile, kTile}, accumulatorType);
    launch(
        guarded, loc, {ceilDiv(guarded, loc, n, kTile), ceilDiv(guarded, loc, m, kTile)},
        {kTile, kTile}, {tileType, tileType}, namer.next("matmul"),
        [&](mlir::OpBuilder& kb, mlir::gpu::LaunchOp l) {
          mlir::Value tileA = l.getWorkgroupAttributions()[0];
          mlir::Value tileB = l.getWorkgroupAttributions()[1];
          mlir::Value tx = l.getThreadIds().x;
          mlir::Value ty = l.getThreadIds().y;
          mlir::Value tileEdge = indexConstant(kb, loc, kTile);
          mlir::Value row = kb.create<mlir::arith::AddIOp>(
              loc, kb.create<mlir::arith::MulIOp>(loc, l.getBlockIds().y, tileEdge), ty);
          mlir::Value col = kb.create<mlir::arith::AddIOp>(
              loc, kb.create<mlir::arith::MulIOp>(loc, l.getBlockIds().x, tileEdge), tx);
          mlir::Value rowInBounds = lessThan(kb, loc, row, m);
          mlir::Value colInBounds = lessThan(kb, loc, col, n);
          mlir::Value init =
              kb.create<mlir::arith::ConstantOp>(loc, kb.getFloatAttr(accumulatorType, 0.0));
          auto kLoop = kb.create<mlir::scf::ForOp>(
              loc, indexConstant(kb, loc, 0), k, tileEdge, mlir::ValueRange{init},
              [&](mlir::OpBuilder& in, mlir::Location l2, mlir::Value k0,
                  mlir::ValueRange iters) {
                // Stage A[row, k0 + tx] and B[k0 + ty, col] (zero outside the matrices).
                mlir::Value ka = in.create<mlir::arith::AddIOp>(loc, k0, tx);
                mlir::Value kbIndex = in.create<mlir::arith::AddIOp>(loc, k0, ty);
                mlir::Value aOk =
                    in.create<mlir::arith::AndIOp>(loc, rowInBounds, lessThan(in, loc, ka, k));
                mlir::Value bOk = in.create<mlir::arith::AndIOp>(
                    loc, colInBounds, lessThan(in, loc, kbIndex, k));
                llvm::SmallVector<mlir::Value> aIndex{row, ka};
                if (op.getTransposeA()) aIndex = {ka, row};
                llvm::SmallVector<mlir::Value> bIndex{kbIndex, col};
                if (op.getTransposeB()) bIndex = {col, kbIndex};
                mlir::Value a = guardedMatmulLoad(in, loc, op, aOk, op.getLhs(), aIndex);
                mlir::Value bValue = guardedMatmulLoad(in, loc, op, bOk, op.getRhs(), bIndex);
                in.create<mlir::memref::StoreOp>(loc, a, tileA, mlir::ValueRange{ty, tx});
                in.create<mlir::memref::StoreOp>(loc, bValue, tileB, mlir::ValueRange{ty, tx});
                in.create<mlir::gpu::BarrierOp>(loc);
                auto inner = in.create<mlir::scf::ForOp>(
                    loc, indexConstant(in, loc, 0), tileEdge, indexConstant(in, loc, 1),
                    mlir::ValueRange{iters.front()},
                    [&](mlir::OpBuilder& dot, mlir::Location l3, mlir::Value kk,
                        mlir::ValueRange acc) {
                      mlir::Value x =
                          dot.create<mlir::memref::LoadOp>(loc, tileA, mlir::ValueRange{ty, kk});
                      mlir::Value y =
                          dot.create<mlir::memref::LoadOp>(loc, tileB, mlir::ValueRange{kk, tx});
                      mlir::Value p = dot.create<mlir::arith::MulFOp>(loc, x, y);
                      dot.create<mlir::scf::YieldOp>(
                          l3, mlir::ValueRange{
                                  dot.create<mlir::arith::AddFOp>(loc, acc.front(), p)});
                    });
                in.create<mlir::gpu::BarrierOp>(loc);
                in.create<mlir::scf::YieldOp>(l2, inner.getResults());
              });
          mlir::Value inBounds = kb.create<mlir::arith::AndIOp>(loc, rowInBounds, colInBounds);
          ifThen(kb, loc, inBounds, [&](mlir::OpBuilder& in) {
            mlir::Value bias;
            if (op.getBias()) {
              bias = in.create<mlir::memref::LoadOp>(loc, op.getBias(), mlir::ValueRange{col});
            }
            mlir::Value result =
                lowering::applyMatmulEpilogue(in, loc, op, kLoop.getResult(0), bias);
            in.create<mlir::memref::StoreOp>(loc, result, op.getOutput(),
                                             mlir::ValueRange{row, col});
          });
        });
  });
}

class LowerTileToGpu : public impl::LowerTileToGpuBase<LowerTileToGpu> {
 public:
  void runOnOperation() override {
    mlir::func::FuncOp function = getOperation();
    llvm::SmallVector<mlir::Operation*> tileOps;
    function.walk([&](mlir::Operation* op) {
      if (llvm::isa<tile::MapOp, tile::ReduceOp, tile::MatmulOp, tile::SoftmaxOp>(op)) {
        tileOps.push_back(op);
      }
    });
    KernelNamer namer(function.getName());
    for (mlir::Operation* op : tileOps) {
      mlir::OpBuilder b(op);
      llvm::TypeSwitch<mlir::Operation*>(op)
          .Case([&](tile::MapOp map) { lowerMap(b, map, namer); })
          .Case([&](tile::ReduceOp reduce) { lowerReduce(b, reduce, namer); })
          .Case([&](tile::MatmulOp matmul) { lowerMatmul(b, matmul, namer); })
          .Case([&](tile::SoftmaxOp softmax) { lowerSoftmax(b, softmax, namer); });
      op->erase();
    }
  }
};

}  // namespace
}  // namespace tessera
