// tessera-lower-tile-to-loops: each Tile op becomes an scf loop nest over memref loads and
// stores (the host target). A reduction over the innermost axis runs in kLanes vector lanes
// (lane l folds elements l, l + kLanes, ... in order; the lanes are then combined pairwise in a
// fixed tree); a reduction over another axis streams the input row by row into blocks of
// column accumulators, so each output folds its elements in index order; a matmul sums each
// element's products in ascending K order (packed and register-tiled, or row by row). No
// order depends on the CPU's vector width, the shape of the other axes or the thread count.
#include "dialect/Passes.h"
#include "dialect/TileOps.h"
#include "dialect/transforms/TileSemantics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

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

/// Loops whose iterations are independent (each writes its own outputs), with the elements
/// one iteration touches, to be outlined once the op is lowered.
struct ParallelLoop {
  mlir::scf::ForOp loop;
  mlir::Value cost;
};
using ParallelLoops = llvm::SmallVector<ParallelLoop>;

/// forEachIndex whose outermost loop (over sizes[0]) runs in parallel: `cost` is the elements
/// one of its iterations touches. With no sizes the body runs once, sequentially.
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

/// Moves `loop` (step 1, no results) into a private function `(begin, end, cost, captures...)`
/// marked kParallelBodyAttr and calls it over the loop's range. Constants are cloned into the
/// function; every other value the body uses from outside is passed.
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
  mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  auto outlined = b.create<mlir::scf::ForOp>(loc, entry->getArgument(0), entry->getArgument(1), one);
  mapping.map(loop.getInductionVar(), outlined.getInductionVar());
  b.setInsertionPoint(outlined.getBody()->getTerminator());
  for (mlir::Operation& op : loop.getBody()->without_terminator()) b.clone(op, mapping);
  b.setInsertionPointAfter(outlined);
  b.create<mlir::func::ReturnOp>(loc);

  b.setInsertionPoint(loop);
  llvm::SmallVector<mlir::Value> operands{loop.getLowerBound(), loop.getUpperBound(),
                                          parallel.cost};
  operands.append(captures.begin(), captures.end());
  b.create<mlir::func::CallOp>(loc, function, operands);
  loop.erase();
}

/// The lanes of a reduction over a contiguous axis: 32 f32 lanes are two AVX-512 or four AVX2
/// registers, enough independent chains to keep the adders busy; fixed for every CPU, so
/// results do not depend on the machine.
constexpr int64_t kLanes = 32;

mlir::VectorType laneType(mlir::Type element) {
  return mlir::VectorType::get({kLanes}, element);
}

mlir::Value splat(mlir::OpBuilder& b, mlir::Location loc, mlir::Value scalar) {
  return b.create<mlir::vector::BroadcastOp>(loc, laneType(scalar.getType()), scalar);
}

/// `value` (a vector of the memref's element type) converted to f32 lanes.
mlir::Value lanesAsF32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value) {
  if (llvm::cast<mlir::VectorType>(value.getType()).getElementType().isF32()) return value;
  return b.create<mlir::arith::ExtFOp>(loc, laneType(b.getF32Type()), value);
}

using LaneTransform = llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value)>;

/// Folds `transform(input[prefix..., i])` over i in [0, count) — the innermost, contiguous
/// axis — with `kind`: lane l accumulates i = l, l + kLanes, ... in order from the identity
/// (the last partial vector through a masked load whose inactive lanes contribute the
/// identity), then the halves of the lane vector are combined pairwise (lanes l and l + 16,
/// then l and l + 8, ...). Returns the f32 total.
mlir::Value laneFold(mlir::OpBuilder& b, mlir::Location loc, mlir::Value input,
                     mlir::ValueRange prefix, mlir::Value count, tile::ReduceKind kind,
                     LaneTransform transform) {
  mlir::Type element = llvm::cast<mlir::MemRefType>(input.getType()).getElementType();
  mlir::Value identity = splat(b, loc, lowering::reductionIdentity(b, loc, kind));
  mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  mlir::Value lanes = b.create<mlir::arith::ConstantIndexOp>(loc, kLanes);
  mlir::Value full = b.create<mlir::arith::MulIOp>(
      loc, b.create<mlir::arith::DivUIOp>(loc, count, lanes), lanes);
  auto at = [&](mlir::Value i) { return lowering::insertAt(prefix, prefix.size(), i); };
  auto loop = b.create<mlir::scf::ForOp>(
      loc, zero, full, lanes, mlir::ValueRange{identity},
      [&](mlir::OpBuilder& nested, mlir::Location nestedLoc, mlir::Value i,
          mlir::ValueRange accumulators) {
        mlir::Value chunk =
            nested.create<mlir::vector::LoadOp>(nestedLoc, laneType(element), input, at(i));
        mlir::Value next = lowering::reductionCombine(
            nested, nestedLoc, kind, accumulators.front(),
            transform(nested, lanesAsF32(nested, nestedLoc, chunk)));
        nested.create<mlir::scf::YieldOp>(nestedLoc, next);
      });
  mlir::Value remaining = b.create<mlir::arith::SubIOp>(loc, count, full);
  mlir::Value mask = b.create<mlir::vector::CreateMaskOp>(
      loc, mlir::VectorType::get({kLanes}, b.getI1Type()), mlir::ValueRange{remaining});
  mlir::Value padding = splat(
      b, loc, b.create<mlir::arith::ConstantOp>(loc, b.getFloatAttr(element, 0.0)));
  mlir::Value tail = b.create<mlir::vector::MaskedLoadOp>(loc, laneType(element), input,
                                                          at(full), mask, padding);
  tail = b.create<mlir::arith::SelectOp>(loc, mask, transform(b, lanesAsF32(b, loc, tail)),
                                         identity);
  mlir::Value total = lowering::reductionCombine(b, loc, kind, loop.getResult(0), tail);
  for (int64_t width = kLanes / 2; width >= 1; width /= 2) {
    mlir::Value low = b.create<mlir::vector::ExtractStridedSliceOp>(
        loc, total, llvm::ArrayRef<int64_t>{0}, llvm::ArrayRef<int64_t>{width},
        llvm::ArrayRef<int64_t>{1});
    mlir::Value high = b.create<mlir::vector::ExtractStridedSliceOp>(
        loc, total, llvm::ArrayRef<int64_t>{width}, llvm::ArrayRef<int64_t>{width},
        llvm::ArrayRef<int64_t>{1});
    total = lowering::reductionCombine(b, loc, kind, low, high);
  }
  return b.create<mlir::vector::ExtractOp>(loc, total, llvm::ArrayRef<int64_t>{0});
}

mlir::Value unchanged(mlir::OpBuilder&, mlir::Value lanes) { return lanes; }


/// The product of `sizes` without its first entry: the elements of one outer iteration.
mlir::Value innerProduct(mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange sizes) {
  return lowering::product(b, loc, sizes.empty() ? sizes : sizes.drop_front());
}

/// The multi-index of `linear` over `sizes` (row-major).
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder& b, mlir::Location loc,
                                           mlir::Value linear, llvm::ArrayRef<mlir::Value> sizes) {
  llvm::SmallVector<mlir::Value> index(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    index[d] = b.create<mlir::arith::RemUIOp>(loc, linear, sizes[d]);
    linear = b.create<mlir::arith::DivUIOp>(loc, linear, sizes[d]);
  }
  return index;
}

void lowerMap(mlir::OpBuilder& b, tile::MapOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getOutputs().front());
  parallelForEachIndex(b, loc, sizes, innerProduct(b, loc, sizes), parallel,
                       [&](mlir::OpBuilder& nested, mlir::ValueRange ivs) {
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

mlir::Value indexConstant(mlir::OpBuilder& b, mlir::Location loc, int64_t value) {
  return b.create<mlir::arith::ConstantIndexOp>(loc, value);
}

/// ceil(value / divisor) for a positive constant divisor.
mlir::Value ceilDiv(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value, int64_t divisor) {
  return b.create<mlir::arith::DivUIOp>(
      loc, b.create<mlir::arith::AddIOp>(loc, value, indexConstant(b, loc, divisor - 1)),
      indexConstant(b, loc, divisor));
}

/// The columns one iteration of a streamed reduction accumulates: a quarter of the last axis
/// (so four iterations can run in parallel), rounded up to 64 and kept within [256, 4096] —
/// at most 16 KiB of f32 accumulators, which stay in L1 while the rows stream past in
/// segments of at least 1 KiB. Chosen at run time: each output's order does not depend on it.
mlir::Value columnBlock(mlir::OpBuilder& b, mlir::Location loc, mlir::Value columns) {
  mlir::Value rounded = b.create<mlir::arith::MulIOp>(
      loc, ceilDiv(b, loc, ceilDiv(b, loc, columns, 4), 64), indexConstant(b, loc, 64));
  return b.create<mlir::arith::MinUIOp>(
      loc, indexConstant(b, loc, 4096),
      b.create<mlir::arith::MaxUIOp>(loc, indexConstant(b, loc, 256), rounded));
}

void lowerReduce(mlir::OpBuilder& b, tile::ReduceOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  const int64_t axis = op.getAxis();
  const tile::ReduceKind kind = op.getKind();
  auto inputSizes = memrefSizes(b, loc, op.getInput());
  const int64_t rank = static_cast<int64_t>(inputSizes.size());
  mlir::Value count = inputSizes[axis];
  auto outputType = llvm::cast<mlir::MemRefType>(op.getOutput().getType());
  mlir::Value zeroIndex = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  auto store = [&](mlir::OpBuilder& in, mlir::Value total, llvm::ArrayRef<mlir::Value> outer,
                   llvm::ArrayRef<mlir::Value> inner) {
    mlir::Value result = lowering::reductionFinalize(in, loc, kind, total, count);
    result = lowering::convertFloat(in, loc, result, outputType.getElementType());
    llvm::SmallVector<mlir::Value> index(outer.begin(), outer.end());
    if (op.getKeepdims()) index.push_back(zeroIndex);
    index.append(inner.begin(), inner.end());
    in.create<mlir::memref::StoreOp>(loc, result, op.getOutput(), index);
  };
  if (axis == rank - 1) {
    auto outerSizes = lowering::eraseAt(inputSizes, axis);
    mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, innerProduct(b, loc, outerSizes), count);
    parallelForEachIndex(b, loc, outerSizes, cost, parallel,
                         [&](mlir::OpBuilder& nested, mlir::ValueRange ivs) {
      mlir::Value total = laneFold(nested, loc, op.getInput(), ivs, count, kind, unchanged);
      store(nested, total, llvm::to_vector(ivs), {});
    });
    return;
  }
  // Stream the rows of the reduced axis into a block of accumulators: every input element is
  // read once, in memory order, and the innermost loop is contiguous. One parallel iteration
  // per (outer index, inner index but the last, block of last-axis columns).
  auto outerSizes = llvm::ArrayRef<mlir::Value>(inputSizes).take_front(axis);
  auto innerSizes = llvm::ArrayRef<mlir::Value>(inputSizes).drop_front(axis + 1);
  mlir::Value columns = innerSizes.back();
  mlir::Value block = columnBlock(b, loc, columns);
  mlir::Value oneIndex = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  mlir::Value blocks = b.create<mlir::arith::DivUIOp>(
      loc, b.create<mlir::arith::AddIOp>(
               loc, columns, b.create<mlir::arith::SubIOp>(loc, block, oneIndex)),
      block);
  llvm::SmallVector<mlir::Value> iterationSizes(outerSizes.begin(), outerSizes.end());
  iterationSizes.append(innerSizes.begin(), innerSizes.end() - 1);
  iterationSizes.push_back(blocks);
  mlir::Value iterations = lowering::product(b, loc, iterationSizes);
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, count, block);
  mlir::Value identity = lowering::reductionIdentity(b, loc, kind);
  auto accumulatorType = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, b.getF32Type());
  parallelForEachIndex(b, loc, mlir::ValueRange{iterations}, cost, parallel,
                       [&](mlir::OpBuilder& nested, mlir::ValueRange linear) {
    auto position = delinearize(nested, loc, linear[0], iterationSizes);
    auto outer = llvm::ArrayRef<mlir::Value>(position).take_front(axis);
    auto prefix = llvm::ArrayRef<mlir::Value>(position).slice(axis, innerSizes.size() - 1);
    mlir::Value first = nested.create<mlir::arith::MulIOp>(loc, position.back(), block);
    mlir::Value width = nested.create<mlir::arith::MinUIOp>(
        loc, block, nested.create<mlir::arith::SubIOp>(loc, columns, first));
    mlir::Value accumulators =
        nested.create<mlir::memref::AllocOp>(loc, accumulatorType, mlir::ValueRange{width});
    auto inner = [&](mlir::OpBuilder& in, mlir::Value j) {
      llvm::SmallVector<mlir::Value> index(prefix.begin(), prefix.end());
      index.push_back(in.create<mlir::arith::AddIOp>(loc, first, j));
      return index;
    };
    forEachIndex(nested, loc, mlir::ValueRange{width}, [&](mlir::OpBuilder& in, mlir::ValueRange j) {
      in.create<mlir::memref::StoreOp>(loc, identity, accumulators, j);
    });
    forEachIndex(nested, loc, mlir::ValueRange{count},
                 [&](mlir::OpBuilder& rows, mlir::ValueRange r) {
      forEachIndex(rows, loc, mlir::ValueRange{width}, [&](mlir::OpBuilder& in, mlir::ValueRange j) {
        llvm::SmallVector<mlir::Value> index(outer.begin(), outer.end());
        index.push_back(r[0]);
        auto columnIndex = inner(in, j[0]);
        index.append(columnIndex.begin(), columnIndex.end());
        mlir::Value value = lowering::loadAsF32(in, loc, op.getInput(), index);
        mlir::Value accumulator = in.create<mlir::memref::LoadOp>(loc, accumulators, j);
        in.create<mlir::memref::StoreOp>(
            loc, lowering::reductionCombine(in, loc, kind, accumulator, value), accumulators, j);
      });
    });
    forEachIndex(nested, loc, mlir::ValueRange{width}, [&](mlir::OpBuilder& in, mlir::ValueRange j) {
      mlir::Value total = in.create<mlir::memref::LoadOp>(loc, accumulators, j);
      store(in, total, outer, inner(in, j[0]));
    });
    nested.create<mlir::memref::DeallocOp>(loc, accumulators);
  });
}

// Row by row, K outer and N inner, into a row of accumulators: the inner loop runs over
// contiguous B and C elements (vectorisable), and every C element still sums its K products in
// ascending order from zero — the same order and rounding as a dot product per element. Used
// for the f16 accumulation policy (the register tile below accumulates in f32), for fewer rows
// than the register tile has, and when the tile's packed copy of B cannot be allocated.
void lowerMatmulByRows(mlir::OpBuilder& b, tile::MatmulOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  auto outputSizes = memrefSizes(b, loc, op.getOutput());
  mlir::Value m = outputSizes[0];
  mlir::Value n = outputSizes[1];
  mlir::Value k = memrefSizes(b, loc, op.getLhs())[op.getTransposeA() ? 0 : 1];
  mlir::Type accumulatorType = lowering::matmulAccumulatorType(op);
  // Heap, not stack: N may be large. One row per iteration (rows run in parallel).
  auto rowType = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, accumulatorType);
  mlir::Value zero = b.create<mlir::arith::ConstantOp>(loc, b.getFloatAttr(accumulatorType, 0.0));
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, n, k);
  parallelForEachIndex(b, loc, mlir::ValueRange{m}, cost, parallel,
                       [&](mlir::OpBuilder& rows, mlir::ValueRange is) {
    mlir::Value i = is[0];
    mlir::Value row = rows.create<mlir::memref::AllocOp>(loc, rowType, mlir::ValueRange{n});
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
    rows.create<mlir::memref::DeallocOp>(loc, row);
  });
}

/// The register tile of the matmul for a vector width: MR rows of NR = `vectors` vectors.
/// AVX-512: 6 x 64 (24 accumulators of 32 registers; 4 B vectors and 6 broadcasts per k —
/// measured faster than 12 x 32 on Zen 4); AVX2 and SSE: 6 x 2 vectors (12 of 16). The rest
/// hold B's vectors, A's broadcast and the products.
struct RegisterTile {
  int64_t lanes;    // f32 per vector
  int64_t rows;     // MR
  int64_t vectors;  // NR / lanes
  int64_t columns() const { return lanes * vectors; }  // NR
};

RegisterTile registerTile(int64_t vectorBits) {
  if (vectorBits >= 512) return {16, 6, 4};
  if (vectorBits >= 256) return {8, 6, 2};
  return {4, 6, 2};
}

/// A packed, register-tiled matmul (accumulating in f32):
/// 1. B is packed once into panels of NR columns, panel p holding B'[k][p·NR + c] at
///    (p·K + k)·NR + c, zero past N (B' = B converted for accumulation: f16/bf16 to f32, TF32
///    rounding; transposed when asked) — in parallel over panels;
/// 2. in parallel over panels of MR rows of C: A's rows are packed k-major (A'[r][k] at k·MR + r,
///    zero past M); for each B panel an MR × NR tile of vector accumulators runs over the whole
///    of K — acc += a·b, K ascending from zero, the same order as one dot product per element —
///    then goes to a scratch tile, from which the epilogue (bias, activation, conversion) writes
///    the valid part of C.
void lowerMatmulTiled(mlir::OpBuilder& b, tile::MatmulOp op, ParallelLoops& parallel,
                      RegisterTile tile, mlir::Value packedB) {
  mlir::Location loc = op.getLoc();
  auto outputSizes = memrefSizes(b, loc, op.getOutput());
  mlir::Value m = outputSizes[0];
  mlir::Value n = outputSizes[1];
  mlir::Value k = memrefSizes(b, loc, op.getLhs())[op.getTransposeA() ? 0 : 1];
  const int64_t mr = tile.rows;
  const int64_t nr = tile.columns();
  mlir::Type f32 = b.getF32Type();
  auto buffer = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, f32);
  auto vectorType = mlir::VectorType::get({tile.lanes}, f32);
  mlir::Value zeroF32 = b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(0.0f));
  auto constant = [&](mlir::OpBuilder& at, int64_t value) { return indexConstant(at, loc, value); };
  auto mul = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::MulIOp>(loc, x, y);
  };
  auto add = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::AddIOp>(loc, x, y);
  };
  auto width = [&](mlir::OpBuilder& at, mlir::Value total, mlir::Value first, int64_t most) {
    return at.create<mlir::arith::MinUIOp>(loc, constant(at, most),
                                           at.create<mlir::arith::SubIOp>(loc, total, first))
        .getResult();
  };

  // 1. Pack B.
  mlir::Value panels = ceilDiv(b, loc, n, nr);
  parallelForEachIndex(b, loc, mlir::ValueRange{panels}, mul(b, k, constant(b, nr)), parallel,
                       [&](mlir::OpBuilder& at, mlir::ValueRange p) {
    mlir::Value first = mul(at, p[0], constant(at, nr));
    mlir::Value columns = width(at, n, first, nr);
    forEachIndex(at, loc, mlir::ValueRange{k}, [&](mlir::OpBuilder& in, mlir::ValueRange kk) {
      mlir::Value row = mul(in, add(in, mul(in, p[0], k), kk[0]), constant(in, nr));
      forEachIndex(in, loc, mlir::ValueRange{columns}, [&](mlir::OpBuilder& c, mlir::ValueRange j) {
        mlir::Value column = add(c, first, j[0]);
        llvm::SmallVector<mlir::Value> index{kk[0], column};
        if (op.getTransposeB()) index = {column, kk[0]};
        mlir::Value value = lowering::prepareMatmulInput(
            c, loc, op, c.create<mlir::memref::LoadOp>(loc, op.getRhs(), index));
        c.create<mlir::memref::StoreOp>(loc, value, packedB, add(c, row, j[0]));
      });
      mlir::Value padding = in.create<mlir::arith::SubIOp>(loc, constant(in, nr), columns);
      forEachIndex(in, loc, mlir::ValueRange{padding}, [&](mlir::OpBuilder& c, mlir::ValueRange j) {
        c.create<mlir::memref::StoreOp>(loc, zeroF32, packedB,
                                        add(c, add(c, row, columns), j[0]));
      });
    });
  });

  // 2. Row panels of C.
  mlir::Value rowPanels = ceilDiv(b, loc, m, mr);
  parallelForEachIndex(b, loc, mlir::ValueRange{rowPanels}, mul(b, mul(b, n, k), constant(b, mr)),
                       parallel, [&](mlir::OpBuilder& at, mlir::ValueRange panel) {
    mlir::Value firstRow = mul(at, panel[0], constant(at, mr));
    mlir::Value rows = width(at, m, firstRow, mr);
    mlir::Value packedA = at.create<mlir::memref::AllocOp>(
        loc, buffer, mlir::ValueRange{mul(at, k, constant(at, mr))});
    mlir::Value scratch = at.create<mlir::memref::AllocOp>(
        loc, buffer, mlir::ValueRange{constant(at, mr * nr)});
    forEachIndex(at, loc, mlir::ValueRange{rows}, [&](mlir::OpBuilder& in, mlir::ValueRange r) {
      mlir::Value i = add(in, firstRow, r[0]);
      forEachIndex(in, loc, mlir::ValueRange{k}, [&](mlir::OpBuilder& c, mlir::ValueRange kk) {
        llvm::SmallVector<mlir::Value> index{i, kk[0]};
        if (op.getTransposeA()) index = {kk[0], i};
        mlir::Value value = lowering::prepareMatmulInput(
            c, loc, op, c.create<mlir::memref::LoadOp>(loc, op.getLhs(), index));
        c.create<mlir::memref::StoreOp>(loc, value, packedA,
                                        add(c, mul(c, kk[0], constant(c, mr)), r[0]));
      });
    });
    mlir::Value missing = at.create<mlir::arith::SubIOp>(loc, constant(at, mr), rows);
    forEachIndex(at, loc, mlir::ValueRange{missing, k},
                 [&](mlir::OpBuilder& in, mlir::ValueRange rk) {
      mlir::Value r = add(in, rows, rk[0]);
      in.create<mlir::memref::StoreOp>(loc, zeroF32, packedA,
                                       add(in, mul(in, rk[1], constant(in, mr)), r));
    });
    forEachIndex(at, loc, mlir::ValueRange{panels}, [&](mlir::OpBuilder& in, mlir::ValueRange p) {
      // The register tile over the whole of K.
      mlir::Value zeroVector = in.create<mlir::arith::ConstantOp>(
          loc, mlir::DenseElementsAttr::get(vectorType, in.getF32FloatAttr(0.0f)));
      llvm::SmallVector<mlir::Value> init(mr * tile.vectors, zeroVector);
      mlir::Value panelBase = mul(in, mul(in, p[0], k), constant(in, nr));
      auto loop = in.create<mlir::scf::ForOp>(
          loc, constant(in, 0), k, constant(in, 1), init,
          [&](mlir::OpBuilder& kb, mlir::Location, mlir::Value kk, mlir::ValueRange acc) {
            mlir::Value bRow = add(kb, panelBase, mul(kb, kk, constant(kb, nr)));
            llvm::SmallVector<mlir::Value> bVectors;
            for (int64_t v = 0; v < tile.vectors; ++v) {
              bVectors.push_back(kb.create<mlir::vector::LoadOp>(
                  loc, vectorType, packedB,
                  mlir::ValueRange{add(kb, bRow, constant(kb, v * tile.lanes))}));
            }
            mlir::Value aRow = mul(kb, kk, constant(kb, mr));
            llvm::SmallVector<mlir::Value> next;
            for (int64_t r = 0; r < mr; ++r) {
              mlir::Value a = kb.create<mlir::memref::LoadOp>(
                  loc, packedA, mlir::ValueRange{add(kb, aRow, constant(kb, r))});
              mlir::Value aVector = kb.create<mlir::vector::BroadcastOp>(loc, vectorType, a);
              for (int64_t v = 0; v < tile.vectors; ++v) {
                mlir::Value product = kb.create<mlir::arith::MulFOp>(loc, aVector, bVectors[v]);
                next.push_back(
                    kb.create<mlir::arith::AddFOp>(loc, acc[r * tile.vectors + v], product));
              }
            }
            kb.create<mlir::scf::YieldOp>(loc, next);
          });
      for (int64_t r = 0; r < mr; ++r) {
        for (int64_t v = 0; v < tile.vectors; ++v) {
          in.create<mlir::vector::StoreOp>(
              loc, loop.getResult(r * tile.vectors + v), scratch,
              mlir::ValueRange{constant(in, r * nr + v * tile.lanes)});
        }
      }
      // The epilogue on the valid part of the tile.
      mlir::Value firstColumn = mul(in, p[0], constant(in, nr));
      mlir::Value columns = width(in, n, firstColumn, nr);
      forEachIndex(in, loc, mlir::ValueRange{rows, columns},
                   [&](mlir::OpBuilder& e, mlir::ValueRange rc) {
        mlir::Value sum = e.create<mlir::memref::LoadOp>(
            loc, scratch, mlir::ValueRange{add(e, mul(e, rc[0], constant(e, nr)), rc[1])});
        mlir::Value column = add(e, firstColumn, rc[1]);
        mlir::Value bias;
        if (op.getBias()) bias = e.create<mlir::memref::LoadOp>(loc, op.getBias(), column);
        mlir::Value result = lowering::applyMatmulEpilogue(e, loc, op, sum, bias);
        e.create<mlir::memref::StoreOp>(loc, result, op.getOutput(),
                                        mlir::ValueRange{add(e, firstRow, rc[0]), column});
      });
    });
    at.create<mlir::memref::DeallocOp>(loc, scratch);
    at.create<mlir::memref::DeallocOp>(loc, packedA);
  });
}

/// The tiled kernel when it pays and its packed copy of B could be allocated; else the row
/// kernel (the same result, bit for bit). Below MR rows of C (a batch of one) the padded
/// register tile would do up to MR times the work, and a failed allocation of packed B (as
/// large as B in f32) must not crash the caller.
void lowerMatmul(mlir::OpBuilder& b, tile::MatmulOp op, ParallelLoops& parallel,
                 int64_t vectorBits) {
  if (!lowering::matmulAccumulatorType(op).isF32()) return lowerMatmulByRows(b, op, parallel);
  const RegisterTile tile = registerTile(vectorBits);
  mlir::Location loc = op.getLoc();
  mlir::Value m = memrefSizes(b, loc, op.getOutput())[0];
  mlir::Value n = memrefSizes(b, loc, op.getOutput())[1];
  mlir::Value k = memrefSizes(b, loc, op.getLhs())[op.getTransposeA() ? 0 : 1];
  mlir::Value one = indexConstant(b, loc, 1);
  mlir::Value enoughRows = b.create<mlir::arith::CmpIOp>(
      loc, mlir::arith::CmpIPredicate::uge, m, indexConstant(b, loc, tile.rows));
  mlir::Value packedSize = b.create<mlir::arith::MulIOp>(
      loc,
      b.create<mlir::arith::MulIOp>(loc, ceilDiv(b, loc, n, tile.columns()),
                                    indexConstant(b, loc, tile.columns())),
      b.create<mlir::arith::MaxUIOp>(loc, k, one));
  mlir::Value size = b.create<mlir::arith::SelectOp>(loc, enoughRows, packedSize, one);
  auto buffer = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, b.getF32Type());
  mlir::Value packedB = b.create<mlir::memref::AllocOp>(loc, buffer, mlir::ValueRange{size});
  mlir::Value address =
      b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, packedB);
  mlir::Value allocated = b.create<mlir::arith::CmpIOp>(
      loc, mlir::arith::CmpIPredicate::ne, address, indexConstant(b, loc, 0));
  auto choice = b.create<mlir::scf::IfOp>(
      loc, b.create<mlir::arith::AndIOp>(loc, enoughRows, allocated), /*withElseRegion=*/true);
  mlir::OpBuilder tiled = choice.getThenBodyBuilder();
  lowerMatmulTiled(tiled, op, parallel, tile, packedB);
  mlir::OpBuilder rows = choice.getElseBodyBuilder();
  lowerMatmulByRows(rows, op, parallel);
  b.create<mlir::memref::DeallocOp>(loc, packedB);
}

void lowerSoftmax(mlir::OpBuilder& b, tile::SoftmaxOp op, ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  auto sizes = memrefSizes(b, loc, op.getInput());
  mlir::Value length = sizes.back();
  auto rowSizes = llvm::ArrayRef<mlir::Value>(sizes).drop_back();
  auto outputType = llvm::cast<mlir::MemRefType>(op.getOutput().getType());
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, innerProduct(b, loc, rowSizes), length);
  parallelForEachIndex(b, loc, rowSizes, cost, parallel,
                       [&](mlir::OpBuilder& nested, mlir::ValueRange row) {
    auto at = [&](mlir::Value l) { return lowering::insertAt(row, row.size(), l); };
    mlir::Value max = laneFold(nested, loc, op.getInput(), row, length, tile::ReduceKind::max,
                               unchanged);
    mlir::Value maxLanes = splat(nested, loc, max);
    mlir::Value sum = laneFold(
        nested, loc, op.getInput(), row, length, tile::ReduceKind::sum,
        [&](mlir::OpBuilder& inner, mlir::Value lanes) -> mlir::Value {
          return inner.create<mlir::math::ExpOp>(
              loc, inner.create<mlir::arith::SubFOp>(loc, lanes, maxLanes));
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

class LowerTileToLoops : public impl::LowerTileToLoopsBase<LowerTileToLoops> {
 public:
  using LowerTileToLoopsBase::LowerTileToLoopsBase;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::SymbolTable symbols(module);
    llvm::SmallVector<mlir::Operation*> tileOps;
    module.walk([&](mlir::Operation* op) {
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
      ParallelLoops parallel;
      llvm::TypeSwitch<mlir::Operation*>(op)
          .Case([&](tile::MapOp map) { lowerMap(b, map, parallel); })
          .Case([&](tile::ReduceOp reduce) { lowerReduce(b, reduce, parallel); })
          .Case([&](tile::MatmulOp matmul) { lowerMatmul(b, matmul, parallel, vectorBits); })
          .Case([&](tile::SoftmaxOp softmax) { lowerSoftmax(b, softmax, parallel); });
      op->erase();
      for (const ParallelLoop& loop : parallel) outlineParallelLoop(module, symbols, loop);
    }
  }
};

}  // namespace
}  // namespace tessera
