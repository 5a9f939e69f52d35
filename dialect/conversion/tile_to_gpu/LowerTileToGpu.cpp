// tessera-lower-tile-to-gpu: each Tile op becomes one gpu.launch with an explicit schedule.
//   map      one thread per element, 256 threads per block
//   reduce   one 256-thread block per output element; strided partial sums, then a fixed
//            shared-memory tree (deterministic)
//   softmax  one 256-thread block per row: block max, block sum of exp(x - max), write
//   matmul   16x16 output tiles, A and B tiles staged through shared memory, K in order;
//            batches on the grid's z axis
// Grids are clamped to CUDA's limits; each block loops over the units past them.
//   norm, attention, rope: GpuModelOps.cpp
// An op carrying `tessera_jit.schedule` (an arbiter's choice) is lowered by that kernel
// variant instead (KernelSchedules.h, GpuVariants.cpp).
// An empty problem launches nothing (CUDA rejects a zero-sized grid).
#include <string>

#include "dialect/Passes.h"
#include "dialect/TileOps.h"
#include "dialect/conversion/TileSemantics.h"
#include "dialect/conversion/tile_to_gpu/GpuKernels.h"
#include "dialect/conversion/tile_to_gpu/KernelSchedules.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace tessera {

#define GEN_PASS_DEF_LOWERTILETOGPU
#include "dialect/Passes.h.inc"

namespace {

using lowering::memrefSizes;

using device::blockReduce;
using device::foldStrided;
using device::ifThen;
using device::kBlockSize;
using device::KernelNamer;
using device::launch;
using device::lessThan;
using device::workgroupBuffer;
using lowering::delinearize;
using lowering::indexConstant;

constexpr int64_t kTile = 16;  // matmul output tile edge (16x16 threads)

void lowerMap(mlir::OpBuilder& b, tile::MapOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getOutputs().front());
  mlir::Value total = lowering::product(b, loc, sizes);
  device::launchPerElement(b, loc, total, namer.next("map"),
                           [&](mlir::OpBuilder& in, mlir::Value linear) {
                             auto index = delinearize(in, loc, linear, sizes);
                             llvm::SmallVector<mlir::Value> elements;
                             for (mlir::Value input : op.getInputs()) {
                               if (!llvm::isa<mlir::MemRefType>(input.getType())) {
                                 elements.push_back(input);
                                 continue;
                               }
                               elements.push_back(in.create<mlir::memref::LoadOp>(
                                   loc, input, lowering::broadcastIndex(in, loc, input, index)));
                             }
                             auto results = lowering::inlineMapBody(in, op, elements);
                             for (auto [value, output] : llvm::zip(results, op.getOutputs())) {
                               in.create<mlir::memref::StoreOp>(loc, value, output, index);
                             }
                           });
}

/// argmax/argmin in one block: each thread keeps the first extreme of its strided share
/// (value, i64 index; -1 for none), then a fixed tree combines them preferring lower indices.
mlir::Value blockArgReduce(mlir::OpBuilder& k, mlir::Location loc, tile::ReduceOp op,
                           mlir::gpu::LaunchOp l, llvm::ArrayRef<mlir::Value> outer,
                           mlir::Value count) {
  const bool max = op.getKind() == tile::ReduceKind::argmax;
  const int64_t axis = op.getAxis();
  mlir::Type i64 = k.getI64Type();
  mlir::Value thread = l.getThreadIds().x;
  mlir::Value values = l.getWorkgroupAttributions()[0];
  mlir::Value indices = l.getWorkgroupAttributions()[1];
  mlir::Value none = k.create<mlir::arith::ConstantOp>(loc, k.getI64IntegerAttr(-1));
  mlir::Value start = k.create<mlir::arith::ConstantOp>(loc, k.getF32FloatAttr(0.0f));
  auto fold = k.create<mlir::scf::ForOp>(
      loc, thread, count, indexConstant(k, loc, kBlockSize), mlir::ValueRange{start, none},
      [&](mlir::OpBuilder& in, mlir::Location, mlir::Value r, mlir::ValueRange state) {
        mlir::Value value =
            lowering::loadAsF32(in, loc, op.getInput(), lowering::insertAt(outer, axis, r));
        auto [best, index] =
            lowering::argCombine(in, loc, state[0], state[1], value,
                                 in.create<mlir::arith::IndexCastOp>(loc, i64, r), max);
        in.create<mlir::scf::YieldOp>(loc, mlir::ValueRange{best, index});
      });
  return device::blockReducePair(
             k, loc, values, indices, thread, fold.getResult(0), fold.getResult(1),
             [&](mlir::OpBuilder& in, mlir::Value best, mlir::Value index, mlir::Value other,
                 mlir::Value otherIndex) {
               return lowering::argCombine(in, loc, best, index, other, otherIndex, max);
             })
      .second;
}

void lowerReduce(mlir::OpBuilder& b, tile::ReduceOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  const int64_t axis = op.getAxis();
  const tile::ReduceKind kind = op.getKind();
  auto inputSizes = memrefSizes(b, loc, op.getInput());
  mlir::Value count = inputSizes[axis];
  auto outerSizes = lowering::eraseAt(inputSizes, axis);
  mlir::Value outputs = lowering::product(b, loc, outerSizes);
  mlir::Type outputElement =
      llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType();
  mlir::Value zero = indexConstant(b, loc, 0);
  llvm::SmallVector<mlir::Type> workgroup{workgroupBuffer(b, {kBlockSize}, b.getF32Type())};
  if (op.isArgReduction()) workgroup.push_back(workgroupBuffer(b, {kBlockSize}, b.getI64Type()));
  ifThen(b, loc, lessThan(b, loc, zero, outputs), [&](mlir::OpBuilder& guarded) {
    launch(
        guarded, loc, {device::gridFor(guarded, loc, outputs, device::kMaxGridX), nullptr, nullptr},
        {kBlockSize, 1}, workgroup, namer.next("reduce"),
        [&](mlir::OpBuilder& launchBuilder, mlir::gpu::LaunchOp l) {
          device::forEachBlockUnit(
              launchBuilder, loc, l, outputs, [&](mlir::OpBuilder& k, mlir::Value unit) {
                mlir::Value thread = l.getThreadIds().x;
                auto outer = delinearize(k, loc, unit, outerSizes);
                mlir::Value result;
                if (op.isArgReduction()) {
                  result = blockArgReduce(k, loc, op, l, outer, count);
                  if (!outputElement.isSignlessInteger(64)) {
                    result = k.create<mlir::arith::TruncIOp>(loc, outputElement, result);
                  }
                } else {
                  mlir::Value partial = foldStrided(
                      k, loc, thread, count, lowering::reductionIdentity(k, loc, kind),
                      [&](mlir::OpBuilder& in, mlir::Value accumulator, mlir::Value r) {
                        mlir::Value value = lowering::loadAsF32(in, loc, op.getInput(),
                                                                lowering::insertAt(outer, axis, r));
                        return lowering::reductionCombine(in, loc, kind, accumulator, value);
                      });
                  mlir::Value total =
                      blockReduce(k, loc, kind, l.getWorkgroupAttributions()[0], thread, partial);
                  result = lowering::convertFloat(
                      k, loc, lowering::reductionFinalize(k, loc, kind, total, count),
                      outputElement);
                }
                ifThen(k, loc,
                       k.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, thread,
                                                     indexConstant(k, loc, 0)),
                       [&](mlir::OpBuilder& in) {
                         llvm::SmallVector<mlir::Value> outIndex(outer.begin(), outer.end());
                         if (op.getKeepdims()) {
                           outIndex = lowering::insertAt(outer, axis, indexConstant(in, loc, 0));
                         }
                         in.create<mlir::memref::StoreOp>(loc, result, op.getOutput(), outIndex);
                       });
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
    launch(
        guarded, loc, {device::gridFor(guarded, loc, rows, device::kMaxGridX), nullptr, nullptr},
        {kBlockSize, 1}, {workgroupBuffer(guarded, {kBlockSize}, guarded.getF32Type())},
        namer.next("softmax"), [&](mlir::OpBuilder& launchBuilder, mlir::gpu::LaunchOp l) {
          device::forEachBlockUnit(
              launchBuilder, loc, l, rows, [&](mlir::OpBuilder& k, mlir::Value unit) {
                mlir::Value thread = l.getThreadIds().x;
                mlir::Value scratch = l.getWorkgroupAttributions()[0];
                auto row = delinearize(k, loc, unit, rowSizes);
                auto at = [&](mlir::Value i) { return lowering::insertAt(row, row.size(), i); };
                mlir::Value partialMax =
                    foldStrided(k, loc, thread, length,
                                lowering::reductionIdentity(k, loc, tile::ReduceKind::max),
                                [&](mlir::OpBuilder& in, mlir::Value accumulator, mlir::Value i) {
                                  return lowering::reductionCombine(
                                      in, loc, tile::ReduceKind::max, accumulator,
                                      lowering::loadAsF32(in, loc, op.getInput(), at(i)));
                                });
                mlir::Value max =
                    blockReduce(k, loc, tile::ReduceKind::max, scratch, thread, partialMax);
                auto shiftedExp = [&](mlir::OpBuilder& in, mlir::Value i) -> mlir::Value {
                  mlir::Value x = lowering::loadAsF32(in, loc, op.getInput(), at(i));
                  return in.create<mlir::math::ExpOp>(loc,
                                                      in.create<mlir::arith::SubFOp>(loc, x, max));
                };
                mlir::Value partialSum =
                    foldStrided(k, loc, thread, length,
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
  });
}

/// Loads `memref[index]` prepared for accumulation when `inBounds`, else 0.
mlir::Value guardedMatmulLoad(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op,
                              mlir::Value inBounds, mlir::Value memref,
                              llvm::ArrayRef<mlir::Value> index) {
  auto ifOp = b.create<mlir::scf::IfOp>(
      loc, inBounds,
      [&](mlir::OpBuilder& then, mlir::Location l) {
        mlir::Value element = then.create<mlir::memref::LoadOp>(loc, memref, index);
        then.create<mlir::scf::YieldOp>(l, lowering::prepareMatmulInput(then, loc, op, element));
      },
      [&](mlir::OpBuilder& otherwise, mlir::Location l) {
        otherwise.create<mlir::scf::YieldOp>(l, lowering::matmulZero(otherwise, loc, op));
      });
  return ifOp.getResult(0);
}

void lowerMatmul(mlir::OpBuilder& b, tile::MatmulOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  mlir::Type accumulatorType = lowering::matmulAccumulatorType(op);
  mlir::Type tileType = workgroupBuffer(b, {kTile, kTile}, accumulatorType);
  device::launchMatmulTiles(
      b, op, kTile, kTile, {kTile, kTile}, {tileType, tileType}, namer.next("matmul"),
      [&](mlir::OpBuilder& kb, mlir::gpu::LaunchOp l, const device::MatmulTile& t) {
        mlir::Value tileA = l.getWorkgroupAttributions()[0];
        mlir::Value tileB = l.getWorkgroupAttributions()[1];
        mlir::Value tx = l.getThreadIds().x;
        mlir::Value ty = l.getThreadIds().y;
        mlir::Value tileEdge = indexConstant(kb, loc, kTile);
        mlir::Value row = kb.create<mlir::arith::AddIOp>(loc, t.row0, ty);
        mlir::Value col = kb.create<mlir::arith::AddIOp>(loc, t.column0, tx);
        mlir::Value rowInBounds = lessThan(kb, loc, row, t.m);
        mlir::Value colInBounds = lessThan(kb, loc, col, t.n);
        mlir::Value init = lowering::matmulZero(kb, loc, op);
        auto kLoop = kb.create<mlir::scf::ForOp>(
            loc, indexConstant(kb, loc, 0), t.k, tileEdge, mlir::ValueRange{init},
            [&](mlir::OpBuilder& in, mlir::Location l2, mlir::Value k0, mlir::ValueRange iters) {
              // Stage A[row, k0 + tx] and B[k0 + ty, col] (zero outside the matrices).
              mlir::Value ka = in.create<mlir::arith::AddIOp>(loc, k0, tx);
              mlir::Value kbIndex = in.create<mlir::arith::AddIOp>(loc, k0, ty);
              mlir::Value aOk =
                  in.create<mlir::arith::AndIOp>(loc, rowInBounds, lessThan(in, loc, ka, t.k));
              mlir::Value bOk =
                  in.create<mlir::arith::AndIOp>(loc, colInBounds, lessThan(in, loc, kbIndex, t.k));
              auto aIndex = op.getTransposeA() ? device::matrixIndex(t.aPrefix, ka, row)
                                               : device::matrixIndex(t.aPrefix, row, ka);
              auto bIndex = op.getTransposeB() ? device::matrixIndex(t.bPrefix, col, kbIndex)
                                               : device::matrixIndex(t.bPrefix, kbIndex, col);
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
                    dot.create<mlir::scf::YieldOp>(l3, mlir::ValueRange{lowering::matmulMultiplyAdd(
                                                           dot, loc, op, acc.front(), x, y)});
                  });
              in.create<mlir::gpu::BarrierOp>(loc);
              in.create<mlir::scf::YieldOp>(l2, inner.getResults());
            });
        mlir::Value inBounds = kb.create<mlir::arith::AndIOp>(loc, rowInBounds, colInBounds);
        ifThen(kb, loc, inBounds, [&](mlir::OpBuilder& in) {
          lowering::storeMatmulResult(in, loc, op, kLoop.getResult(0),
                                      device::matrixIndex(t.cPrefix, row, col));
        });
      });
}

/// One lowering of one Tile op: `Lower` cast to the op's class.
using Lowering = void (*)(mlir::OpBuilder&, mlir::Operation*, KernelNamer&);

template <typename Op, void (*Lower)(mlir::OpBuilder&, Op, KernelNamer&)>
void lowerAs(mlir::OpBuilder& b, mlir::Operation* op, KernelNamer& namer) {
  Lower(b, llvm::cast<Op>(op), namer);
}

/// The vectorized map falls back to the baseline for the elements its vectors do not cover.
void lowerMapVectorizedWithTail(mlir::OpBuilder& b, mlir::Operation* op, KernelNamer& namer) {
  auto map = llvm::cast<tile::MapOp>(op);
  device::lowerMapVectorized(b, map, namer, [&](mlir::OpBuilder& in) { lowerMap(in, map, namer); });
}

/// Every (op, schedule) this pass lowers: the baseline (schedule "") and each kernel variant
/// (KernelSchedules.h). A schedule the table lacks for an op cannot reach here: scheduleDeclines
/// refuses it first.
struct ScheduleLowering {
  llvm::StringLiteral op;
  llvm::StringLiteral schedule;
  Lowering lower;
};

const ScheduleLowering kScheduleLowerings[] = {
    {"tile.map", "", lowerAs<tile::MapOp, lowerMap>},
    {"tile.map", device::kVectorized, lowerMapVectorizedWithTail},
    {"tile.reduce", "", lowerAs<tile::ReduceOp, lowerReduce>},
    {"tile.reduce", device::kWarpPerRow, lowerAs<tile::ReduceOp, device::lowerReduceWarpPerRow>},
    {"tile.matmul", "", lowerAs<tile::MatmulOp, lowerMatmul>},
    {"tile.matmul", device::kMmaSync, lowerAs<tile::MatmulOp, device::lowerMatmulMmaSync>},
    {"tile.matmul", device::kMmaAsync, lowerAs<tile::MatmulOp, device::lowerMatmulMmaAsync>},
    {"tile.softmax", "", lowerAs<tile::SoftmaxOp, lowerSoftmax>},
    {"tile.softmax", device::kWarpPerRow, lowerAs<tile::SoftmaxOp, device::lowerSoftmaxWarpPerRow>},
    {"tile.softmax", device::kOnline, lowerAs<tile::SoftmaxOp, device::lowerSoftmaxOnline>},
    {"tile.norm", "", lowerAs<tile::NormOp, device::lowerNorm>},
    {"tile.norm", device::kWarpPerRow, lowerAs<tile::NormOp, device::lowerNormWarpPerRow>},
    {"tile.attention", "", lowerAs<tile::AttentionOp, device::lowerAttention>},
    {"tile.attention_backward", "",
     lowerAs<tile::AttentionBackwardOp, device::lowerAttentionBackward>},
    {"tile.attention_backward", device::kWarpPerRow,
     lowerAs<tile::AttentionBackwardOp, device::lowerAttentionBackwardWarpPerRow>},
    {"tile.rope", "", lowerAs<tile::RopeOp, device::lowerRope>},
};

/// The lowering of `op` with `schedule`, or null when there is none.
Lowering loweringFor(mlir::Operation* op, llvm::StringRef schedule) {
  const llvm::StringRef name = op->getName().getStringRef();
  for (const ScheduleLowering& entry : kScheduleLowerings) {
    if (entry.op == name && entry.schedule == schedule) return entry.lower;
  }
  return nullptr;
}

class LowerTileToGpu : public impl::LowerTileToGpuBase<LowerTileToGpu> {
 public:
  using LowerTileToGpuBase::LowerTileToGpuBase;

  void runOnOperation() override {
    mlir::func::FuncOp function = getOperation();
    llvm::SmallVector<mlir::Operation*> tileOps;
    function.walk([&](mlir::Operation* op) {
      if (loweringFor(op, "") != nullptr) tileOps.push_back(op);
    });
    KernelNamer namer(function.getName());
    for (mlir::Operation* op : tileOps) {
      const llvm::StringRef schedule = device::scheduleOf(op);
      if (!schedule.empty()) {
        if (std::string declines = device::scheduleDeclines(op, schedule, arch);
            !declines.empty()) {
          op->emitOpError() << "cannot be lowered with schedule '" << schedule << "': " << declines;
          return signalPassFailure();
        }
      }
      Lowering lower = loweringFor(op, schedule);
      if (lower == nullptr) {
        op->emitOpError() << "has no device lowering with schedule '" << schedule << "'";
        return signalPassFailure();
      }
      mlir::OpBuilder b(op);
      lower(b, op, namer);
      op->erase();
    }
  }
};

}  // namespace
}  // namespace tessera
