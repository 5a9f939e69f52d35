// The loop-building blocks of the host lowering; see HostLoops.h.
#include "dialect/conversion/tile_to_loops/HostLoops.h"

#include <tuple>

#include "dialect/Passes.h"
#include "dialect/conversion/TileSemantics.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace tessera::host {
namespace {

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

}  // namespace

llvm::SmallVector<mlir::scf::ForOp> forEachIndex(
    mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange sizes,
    llvm::function_ref<void(mlir::OpBuilder&, mlir::ValueRange)> body) {
  LoopBounds bounds = unitBounds(b, loc, sizes.size());
  return mlir::scf::buildLoopNest(b, loc, bounds.lower, sizes, bounds.step,
                                  [&](mlir::OpBuilder& nested, mlir::Location,
                                      mlir::ValueRange ivs) { body(nested, ivs); })
      .loops;
}

void interleaveLoop(mlir::scf::ForOp loop, int count) {
  mlir::MLIRContext* context = loop.getContext();
  auto interleave = mlir::LLVM::LoopInterleaveAttr::get(
      context, mlir::IntegerAttr::get(mlir::IntegerType::get(context, 32), count));
  auto annotation = mlir::LLVM::LoopAnnotationAttr::get(
      context, /*disableNonforced=*/nullptr, /*vectorize=*/nullptr, interleave,
      /*unroll=*/nullptr, /*unrollAndJam=*/nullptr, /*licm=*/nullptr, /*distribute=*/nullptr,
      /*pipeline=*/nullptr, /*peeled=*/nullptr, /*unswitch=*/nullptr, /*mustProgress=*/nullptr,
      /*isVectorized=*/nullptr, /*startLoc=*/nullptr, /*endLoc=*/nullptr,
      /*parallelAccesses=*/{});
  loop->setAttr(kLoopAnnotationAttr, annotation);
}

void parallelForEachIndex(mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange sizes,
                          mlir::Value cost, ParallelLoops& parallel,
                          llvm::function_ref<void(mlir::OpBuilder&, mlir::ValueRange)> body) {
  if (sizes.empty()) {
    body(b, {});
    return;
  }
  mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<mlir::scf::ForOp>(
      loc, zero, sizes.front(), one, mlir::ValueRange{},
      [&](mlir::OpBuilder& nested, mlir::Location, mlir::Value iv, mlir::ValueRange) {
        forEachIndex(nested, loc, sizes.drop_front(),
                     [&](mlir::OpBuilder& inner, mlir::ValueRange rest) {
                       llvm::SmallVector<mlir::Value> ivs{iv};
                       ivs.append(rest.begin(), rest.end());
                       body(inner, ivs);
                     });
        nested.create<mlir::scf::YieldOp>(loc);
      });
  parallel.push_back({loop, cost});
}

void outlineParallelLoop(mlir::ModuleOp module, mlir::SymbolTable& symbols,
                         const ParallelLoop& parallel) {
  mlir::scf::ForOp loop = parallel.loop;
  mlir::Location loc = loop.getLoc();
  llvm::SetVector<mlir::Value> used;
  mlir::getUsedValuesDefinedAbove(loop.getRegion(), used);
  llvm::SmallVector<mlir::Value> constants, captures;
  for (mlir::Value value : used) {
    mlir::Operation* def = value.getDefiningOp();
    if (def != nullptr && def->hasTrait<mlir::OpTrait::ConstantLike>()) {
      constants.push_back(value);
    } else {
      captures.push_back(value);
    }
  }
  mlir::OpBuilder b(module.getContext());
  mlir::Type index = b.getIndexType();
  llvm::SmallVector<mlir::Type> inputs{index, index, index};
  for (mlir::Value capture : captures) inputs.push_back(capture.getType());
  auto parent = loop->getParentOfType<mlir::func::FuncOp>();
  if (!parent) return;  // not in a function (tessera-opt on a bare op): stays sequential
  b.setInsertionPointAfter(parent);
  auto function = b.create<mlir::func::FuncOp>(loc, (parent.getName() + "_parallel").str(),
                                               b.getFunctionType(inputs, {}));
  function.setPrivate();
  function->setAttr(kParallelBodyAttr, b.getUnitAttr());
  symbols.insert(function);  // renamed if the name is taken
  mlir::Block* entry = function.addEntryBlock();
  b.setInsertionPointToStart(entry);
  mlir::IRMapping mapping;
  for (mlir::Value constant : constants) {
    mapping.map(constant, b.clone(*constant.getDefiningOp())->getResult(0));
  }
  for (auto [capture, argument] : llvm::zip(captures, entry->getArguments().drop_front(3))) {
    mapping.map(capture, argument);
  }
  // Scratch buffers of a static size the body allocates on the stack: once per call of the
  // function (a chunk of iterations on one thread), not once per iteration.
  llvm::SmallPtrSet<mlir::Operation*, 4> hoisted;
  for (mlir::Operation& op : loop.getBody()->without_terminator()) {
    if (auto alloca = llvm::dyn_cast<mlir::memref::AllocaOp>(op);
        alloca && alloca->getNumOperands() == 0) {
      b.clone(op, mapping);
      hoisted.insert(&op);
    }
  }
  mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  auto outlined =
      b.create<mlir::scf::ForOp>(loc, entry->getArgument(0), entry->getArgument(1), one);
  mapping.map(loop.getInductionVar(), outlined.getInductionVar());
  b.setInsertionPoint(outlined.getBody()->getTerminator());
  for (mlir::Operation& op : loop.getBody()->without_terminator()) {
    if (!hoisted.contains(&op)) b.clone(op, mapping);
  }
  b.setInsertionPointAfter(outlined);
  b.create<mlir::func::ReturnOp>(loc);

  b.setInsertionPoint(loop);
  llvm::SmallVector<mlir::Value> operands{loop.getLowerBound(), loop.getUpperBound(),
                                          parallel.cost};
  operands.append(captures.begin(), captures.end());
  b.create<mlir::func::CallOp>(loc, function, operands);
  loop.erase();
}

mlir::VectorType laneType(mlir::Type element, int64_t lanes) {
  return mlir::VectorType::get({lanes}, element);
}

mlir::Value splat(mlir::OpBuilder& b, mlir::Location loc, mlir::Value scalar, int64_t lanes) {
  return b.create<mlir::vector::BroadcastOp>(loc, laneType(scalar.getType(), lanes), scalar);
}

mlir::Value allocateF32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value size) {
  constexpr int64_t kCacheLine = 64;
  return b.create<mlir::memref::AllocOp>(
      loc, mlir::MemRefType::get({mlir::ShapedType::kDynamic}, b.getF32Type()),
      mlir::ValueRange{size}, mlir::ValueRange{}, b.getI64IntegerAttr(kCacheLine));
}

llvm::SmallVector<mlir::Value> accumulateRows(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value begin, mlir::Value end,
    mlir::ValueRange accumulators, llvm::ArrayRef<lowering::KeyRange> ranges,
    llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value j)> chunk,
    llvm::function_ref<mlir::Value(mlir::OpBuilder&, size_t r, mlir::Value j)> weight) {
  using mlir::arith::CmpIPredicate;
  auto compare = [&](mlir::OpBuilder& at, CmpIPredicate predicate, mlir::Value x, mlir::Value y) {
    return at.create<mlir::arith::CmpIOp>(loc, predicate, x, y).getResult();
  };
  mlir::Value everyHolds = b.create<mlir::arith::ConstantOp>(loc, b.getBoolAttr(true));
  for (const lowering::KeyRange& range : ranges) {
    everyHolds = b.create<mlir::arith::AndIOp>(
        loc, everyHolds,
        b.create<mlir::arith::AndIOp>(loc, compare(b, CmpIPredicate::ule, range.first, begin),
                                      compare(b, CmpIPredicate::uge, range.end, end)));
  }
  auto rowLoop = [&](mlir::OpBuilder& lb, bool masked) {
    return lb.create<mlir::scf::ForOp>(
        loc, begin, end, lb.create<mlir::arith::ConstantIndexOp>(loc, 1), accumulators,
        [&](mlir::OpBuilder& e, mlir::Location, mlir::Value j, mlir::ValueRange acc) {
          mlir::Value row = chunk(e, j);
          const int64_t lanes = llvm::cast<mlir::VectorType>(row.getType()).getNumElements();
          llvm::SmallVector<mlir::Value> next;
          for (size_t r = 0; r < ranges.size(); ++r) {
            mlir::Value sum = e.create<mlir::arith::AddFOp>(
                loc, acc[r],
                e.create<mlir::arith::MulFOp>(loc, splat(e, loc, weight(e, r, j), lanes), row));
            if (masked) {
              mlir::Value holds = e.create<mlir::arith::AndIOp>(
                  loc, compare(e, CmpIPredicate::uge, j, ranges[r].first),
                  compare(e, CmpIPredicate::ult, j, ranges[r].end));
              sum = e.create<mlir::arith::SelectOp>(loc, holds, sum, acc[r]);
            }
            next.push_back(sum);
          }
          e.create<mlir::scf::YieldOp>(loc, next);
        });
  };
  auto paths = b.create<mlir::scf::IfOp>(
      loc, everyHolds,
      [&](mlir::OpBuilder& t, mlir::Location) {
        t.create<mlir::scf::YieldOp>(loc, rowLoop(t, false).getResults());
      },
      [&](mlir::OpBuilder& t, mlir::Location) {
        t.create<mlir::scf::YieldOp>(loc, rowLoop(t, true).getResults());
      });
  return llvm::SmallVector<mlir::Value>(paths.getResults());
}

mlir::Value loadLanes(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref,
                      mlir::ValueRange prefix, mlir::Value i, mlir::Value mask, int64_t lanes) {
  mlir::Type element = llvm::cast<mlir::MemRefType>(memref.getType()).getElementType();
  auto index = lowering::insertAt(prefix, prefix.size(), i);
  mlir::Value loaded;
  if (mask) {
    mlir::Value padding =
        splat(b, loc, b.create<mlir::arith::ConstantOp>(loc, b.getFloatAttr(element, 0.0)), lanes);
    loaded = b.create<mlir::vector::MaskedLoadOp>(loc, laneType(element, lanes), memref, index,
                                                  mask, padding);
  } else {
    loaded = b.create<mlir::vector::LoadOp>(loc, laneType(element, lanes), memref, index);
  }
  if (element.isF32()) return loaded;
  return b.create<mlir::arith::ExtFOp>(loc, laneType(b.getF32Type(), lanes), loaded);
}

namespace {

/// The full-vector part of a row of `count` elements, and the mask of the partial vector after
/// it.
struct LaneSplit {
  mlir::Value full;  ///< elements in whole vectors: count rounded down to kLanes
  mlir::Value mask;  ///< the lanes of the last partial vector (possibly none)
};

LaneSplit splitLanes(mlir::OpBuilder& b, mlir::Location loc, mlir::Value count) {
  mlir::Value lanes = lowering::indexConstant(b, loc, kLanes);
  mlir::Value full =
      b.create<mlir::arith::MulIOp>(loc, b.create<mlir::arith::DivUIOp>(loc, count, lanes), lanes);
  mlir::Value remaining = b.create<mlir::arith::SubIOp>(loc, count, full);
  mlir::Value mask = b.create<mlir::vector::CreateMaskOp>(
      loc, mlir::VectorType::get({kLanes}, b.getI1Type()), mlir::ValueRange{remaining});
  return {full, mask};
}

/// The lower and upper halves of a vector of `2 * width` lanes.
std::pair<mlir::Value, mlir::Value> halves(mlir::OpBuilder& b, mlir::Location loc,
                                           mlir::Value vector, int64_t width) {
  auto slice = [&](int64_t offset) -> mlir::Value {
    return b.create<mlir::vector::ExtractStridedSliceOp>(
        loc, vector, llvm::ArrayRef<int64_t>{offset}, llvm::ArrayRef<int64_t>{width},
        llvm::ArrayRef<int64_t>{1});
  };
  return {slice(0), slice(width)};
}

/// laneFold for max and min. arith.maximumf/minimumf propagate NaN and order -0 below +0, which
/// costs x86 three blends per vector on the loop's critical path. Here each step first pairs
/// the two halves of the loaded lanes (one compare-and-select, one unordered compare that
/// catches a NaN in either, one AND/OR of their bit patterns), then folds the pair into 16-lane
/// accumulators the same way: the extreme ignoring NaN, whether a NaN was seen, and the AND
/// (max) or OR (min) of every element's bits. After the fold, a NaN anywhere gives NaN, and a
/// zero result takes the sign IEEE maximum/minimum give it: for max every element is then
/// <= 0, and the result is -0 unless some element is +0 (a clear sign bit in the AND); for min
/// every element is >= 0, and it is -0 if some element is -0. The value is laneFold's with
/// maximumf/minimumf bit for bit (max and min do not depend on the order); a NaN result is the
/// canonical quiet NaN.
mlir::Value extremeLaneFold(mlir::OpBuilder& b, mlir::Location loc, mlir::Value count, bool max,
                            LaneLoad load) {
  using mlir::arith::CmpFPredicate;
  constexpr int64_t kHalf = kLanes / 2;
  const tile::ReduceKind kind = max ? tile::ReduceKind::max : tile::ReduceKind::min;
  const CmpFPredicate better = max ? CmpFPredicate::OGT : CmpFPredicate::OLT;
  mlir::VectorType bitsType = laneType(b.getI32Type(), kHalf);
  mlir::Value scalarIdentity = lowering::reductionIdentity(b, loc, kind);
  mlir::Value identity = splat(b, loc, scalarIdentity);
  auto bitsConstant = [&](int64_t value) -> mlir::Value {
    return b.create<mlir::arith::ConstantOp>(
        loc, mlir::DenseElementsAttr::get(bitsType, llvm::APInt(32, value, true)));
  };
  auto extreme = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::SelectOp>(loc, at.create<mlir::arith::CmpFOp>(loc, better, x, y),
                                            x, y);
  };
  auto signs = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    if (max) return at.create<mlir::arith::AndIOp>(loc, x, y);
    return at.create<mlir::arith::OrIOp>(loc, x, y);
  };
  auto step = [&](mlir::OpBuilder& at, mlir::Value values,
                  mlir::ValueRange accumulators) -> llvm::SmallVector<mlir::Value> {
    auto [low, high] = halves(at, loc, values, kHalf);
    // The NaN mask as all-ones i32 lanes (the compare's own result on x86), not i1 lanes,
    // which x86 would pack.
    mlir::Value nan = at.create<mlir::arith::ExtSIOp>(
        loc, bitsType, at.create<mlir::arith::CmpFOp>(loc, CmpFPredicate::UNO, low, high));
    mlir::Value pairSigns = signs(at, at.create<mlir::arith::BitcastOp>(loc, bitsType, low),
                                  at.create<mlir::arith::BitcastOp>(loc, bitsType, high));
    return {extreme(at, extreme(at, low, high), accumulators[0]),
            at.create<mlir::arith::OrIOp>(loc, accumulators[1], nan),
            signs(at, accumulators[2], pairSigns)};
  };
  LaneSplit split = splitLanes(b, loc, count);
  auto loop = b.create<mlir::scf::ForOp>(
      loc, lowering::indexConstant(b, loc, 0), split.full, lowering::indexConstant(b, loc, kLanes),
      mlir::ValueRange{splat(b, loc, scalarIdentity, kHalf), bitsConstant(0),
                       bitsConstant(max ? -1 : 0)},
      [&](mlir::OpBuilder& nested, mlir::Location, mlir::Value i, mlir::ValueRange accumulators) {
        nested.create<mlir::scf::YieldOp>(loc,
                                          step(nested, load(nested, i, nullptr), accumulators));
      });
  // The partial vector's inactive lanes hold the identity: not NaN, and a sign bit that
  // changes neither the AND nor the OR (-inf for max, +inf for min).
  mlir::Value tail =
      b.create<mlir::arith::SelectOp>(loc, split.mask, load(b, split.full, split.mask), identity);
  llvm::SmallVector<mlir::Value> lanes = step(b, tail, loop.getResults());
  mlir::Value folded = combineLanes(b, loc, kind, lanes[0]);
  mlir::Value i32Zero = b.create<mlir::arith::ConstantOp>(loc, b.getI32IntegerAttr(0));
  mlir::Value anyNan = b.create<mlir::arith::CmpIOp>(
      loc, mlir::arith::CmpIPredicate::ne,
      b.create<mlir::vector::ReductionOp>(loc, mlir::vector::CombiningKind::OR, lanes[1]), i32Zero);
  mlir::Value allSigns = b.create<mlir::vector::ReductionOp>(
      loc, max ? mlir::vector::CombiningKind::AND : mlir::vector::CombiningKind::OR, lanes[2]);
  mlir::Value negative =
      b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::slt, allSigns, i32Zero);
  auto f32 = [&](float value) -> mlir::Value {
    return b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(value));
  };
  mlir::Value zero = b.create<mlir::arith::CmpFOp>(loc, CmpFPredicate::OEQ, folded, f32(0.0f));
  mlir::Value signedZero = b.create<mlir::arith::SelectOp>(loc, negative, f32(-0.0f), f32(0.0f));
  mlir::Value result = b.create<mlir::arith::SelectOp>(loc, zero, signedZero, folded);
  mlir::Value nan = b.create<mlir::arith::ConstantOp>(
      loc, b.getFloatAttr(b.getF32Type(), llvm::APFloat::getQNaN(llvm::APFloat::IEEEsingle())));
  return b.create<mlir::arith::SelectOp>(loc, anyNan, nan, result);
}

}  // namespace

mlir::Value laneFold(mlir::OpBuilder& b, mlir::Location loc, mlir::Value count,
                     tile::ReduceKind kind, LaneLoad load) {
  if (kind == tile::ReduceKind::max || kind == tile::ReduceKind::min) {
    return extremeLaneFold(b, loc, count, kind == tile::ReduceKind::max, load);
  }
  mlir::Value identity = splat(b, loc, lowering::reductionIdentity(b, loc, kind));
  LaneSplit split = splitLanes(b, loc, count);
  auto loop = b.create<mlir::scf::ForOp>(
      loc, lowering::indexConstant(b, loc, 0), split.full, lowering::indexConstant(b, loc, kLanes),
      mlir::ValueRange{identity},
      [&](mlir::OpBuilder& nested, mlir::Location nestedLoc, mlir::Value i,
          mlir::ValueRange accumulators) {
        mlir::Value next = lowering::reductionCombine(nested, nestedLoc, kind, accumulators.front(),
                                                      load(nested, i, nullptr));
        nested.create<mlir::scf::YieldOp>(nestedLoc, next);
      });
  mlir::Value tail =
      b.create<mlir::arith::SelectOp>(loc, split.mask, load(b, split.full, split.mask), identity);
  return combineLanes(b, loc, kind,
                      lowering::reductionCombine(b, loc, kind, loop.getResult(0), tail));
}

mlir::Value combineLanes(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                         mlir::Value lanes) {
  const int64_t count = llvm::cast<mlir::VectorType>(lanes.getType()).getNumElements();
  for (int64_t width = count / 2; width >= 1; width /= 2) {
    auto [low, high] = halves(b, loc, lanes, width);
    lanes = lowering::reductionCombine(b, loc, kind, low, high);
  }
  return b.create<mlir::vector::ExtractOp>(loc, lanes, llvm::ArrayRef<int64_t>{0});
}

mlir::Value laneArgFold(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref,
                        mlir::ValueRange prefix, mlir::Value count, bool max) {
  using mlir::arith::CmpIPredicate;
  mlir::Type i64 = b.getI64Type();
  mlir::VectorType indexLanes = laneType(i64);
  llvm::SmallVector<int64_t> iota(kLanes);
  for (int64_t l = 0; l < kLanes; ++l) iota[l] = l;
  mlir::Value laneIds = b.create<mlir::arith::ConstantOp>(
      loc, mlir::DenseElementsAttr::get(indexLanes, llvm::ArrayRef<int64_t>(iota)));
  mlir::Value none = splat(b, loc, b.create<mlir::arith::ConstantOp>(loc, b.getI64IntegerAttr(-1)));
  mlir::Value zeroLanes =
      splat(b, loc, b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(0.0f)));
  mlir::Value zeroIds =
      splat(b, loc, b.create<mlir::arith::ConstantOp>(loc, b.getI64IntegerAttr(0)));
  // One step: lanes at element i replace the running (value, index) where they are better, or
  // where the lane holds nothing yet (index -1); `mask` limits a partial vector.
  auto step = [&](mlir::OpBuilder& at, mlir::Value i, mlir::Value mask, mlir::Value best,
                  mlir::Value bestIndex) -> std::pair<mlir::Value, mlir::Value> {
    mlir::Value values = loadLanes(at, loc, memref, prefix, i, mask);
    mlir::Value base = splat(at, loc, at.create<mlir::arith::IndexCastOp>(loc, i64, i));
    mlir::Value indices = at.create<mlir::arith::AddIOp>(loc, base, laneIds);
    mlir::Value empty = at.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::slt, bestIndex, zeroIds);
    mlir::Value take = at.create<mlir::arith::OrIOp>(
        loc, empty, lowering::replacesExtreme(at, loc, values, best, max));
    if (mask) take = at.create<mlir::arith::AndIOp>(loc, take, mask);
    return {at.create<mlir::arith::SelectOp>(loc, take, values, best),
            at.create<mlir::arith::SelectOp>(loc, take, indices, bestIndex)};
  };
  LaneSplit split = splitLanes(b, loc, count);
  auto loop = b.create<mlir::scf::ForOp>(
      loc, lowering::indexConstant(b, loc, 0), split.full, lowering::indexConstant(b, loc, kLanes),
      mlir::ValueRange{zeroLanes, none},
      [&](mlir::OpBuilder& nested, mlir::Location nestedLoc, mlir::Value i,
          mlir::ValueRange state) {
        auto [best, index] = step(nested, i, nullptr, state[0], state[1]);
        nested.create<mlir::scf::YieldOp>(nestedLoc, mlir::ValueRange{best, index});
      });
  auto [best, bestIndex] = step(b, split.full, split.mask, loop.getResult(0), loop.getResult(1));
  for (int64_t width = kLanes / 2; width >= 1; width /= 2) {
    auto [lowValue, highValue] = halves(b, loc, best, width);
    auto [lowIndex, highIndex] = halves(b, loc, bestIndex, width);
    std::tie(best, bestIndex) =
        lowering::argCombine(b, loc, lowValue, lowIndex, highValue, highIndex, max);
  }
  return b.create<mlir::vector::ExtractOp>(loc, bestIndex, llvm::ArrayRef<int64_t>{0});
}

mlir::Value innerProduct(mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange sizes) {
  return lowering::product(b, loc, sizes.empty() ? sizes : sizes.drop_front());
}

}  // namespace tessera::host
