// The loop-building blocks of the host lowering (tessera-lower-tile-to-loops): loop nests,
// parallel loops outlined into bodies the runtime's thread pool runs, and fixed-lane vector
// folds over a contiguous axis. Their orders never depend on the CPU or the thread count.
#ifndef TESSERA_DIALECT_CONVERSION_TILE_TO_LOOPS_HOSTLOOPS_H_
#define TESSERA_DIALECT_CONVERSION_TILE_TO_LOOPS_HOSTLOOPS_H_

#include <cstdint>

#include "dialect/TileOps.h"
#include "dialect/conversion/TileSemantics.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace tessera::host {

/// Runs `body(builder, ivs)` for every index of `sizes` (sequentially); returns the loops,
/// outermost first.
llvm::SmallVector<mlir::scf::ForOp> forEachIndex(
    mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange sizes,
    llvm::function_ref<void(mlir::OpBuilder&, mlir::ValueRange)> body);

/// Asks LLVM to interleave `count` iterations of `loop` once vectorised (an
/// `llvm.loop_annotation`). The host pipeline interleaves only the loops that ask: a hot loop
/// whose iterations are short and independent; elsewhere it costs compile time for nothing.
void interleaveLoop(mlir::scf::ForOp loop, int count);

/// A loop whose iterations are independent (each writes its own outputs), with the elements
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
                          llvm::function_ref<void(mlir::OpBuilder&, mlir::ValueRange)> body);

/// Moves `parallel.loop` (step 1, no results) into a private function `(begin, end, cost,
/// captures...)` marked kParallelBodyAttr and calls it over the loop's range. Constants are
/// cloned into the function; every other value the body uses from outside is passed. A
/// statically shaped `memref.alloca` at the top of the loop body moves to the function's entry:
/// one buffer per call (per chunk, on its thread), reused by each iteration, instead of stack
/// that grows with every iteration.
void outlineParallelLoop(mlir::ModuleOp module, mlir::SymbolTable& symbols,
                         const ParallelLoop& parallel);

/// The lanes of a fold over a contiguous axis: 32 f32 lanes are two AVX-512 or four AVX2
/// registers, enough independent chains to keep the adders busy; fixed for every CPU, so
/// results do not depend on the machine.
inline constexpr int64_t kLanes = 32;

/// vector<lanes x element>.
mlir::VectorType laneType(mlir::Type element, int64_t lanes = kLanes);

/// `scalar` in every one of `lanes` lanes.
mlir::Value splat(mlir::OpBuilder& b, mlir::Location loc, mlir::Value scalar,
                  int64_t lanes = kLanes);

/// The f32 lanes of elements [i, i + kLanes) of a row. `mask` is null for a full vector, else
/// the lanes that are in the row (the others hold anything: the fold replaces them).
using LaneLoad = llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value i, mlir::Value mask)>;

/// `memref[prefix..., i + lane]` for `lanes` lanes as f32 (a masked load reading zeros outside
/// `mask`, a vector<lanes x i1>; null: every lane).
mlir::Value loadLanes(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref,
                      mlir::ValueRange prefix, mlir::Value i, mlir::Value mask,
                      int64_t lanes = kLanes);

/// Folds the lanes `load` gives over i in [0, count) with `kind`: lane l accumulates
/// i = l, l + kLanes, ... in order from the identity (the last partial vector masked, its
/// inactive lanes contributing the identity), then the halves of the lane vector are combined
/// pairwise (lanes l and l + 16, then l and l + 8, ...). Returns the f32 total. max and min
/// give arith.maximumf/minimumf's value (NaN if any element is NaN, +0 above -0) from cheaper
/// compare-and-select steps plus NaN and sign tracking; a NaN result is the quiet NaN.
mlir::Value laneFold(mlir::OpBuilder& b, mlir::Location loc, mlir::Value count,
                     tile::ReduceKind kind, LaneLoad load);

/// `kind` over the lanes of `lanes` (f32, a power of two of them) in laneFold's fixed pairwise
/// tree: halves combined lane by lane until one is left.
mlir::Value combineLanes(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                         mlir::Value lanes);

/// The index (i64) of the first maximum (`max`) or minimum of `memref[prefix..., i]` over i in
/// [0, count), a NaN counting as the extreme; -1 when count is 0. Lanes as in laneFold, each
/// keeping its first extreme, then combined pairwise preferring the lower index on ties.
mlir::Value laneArgFold(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref,
                        mlir::ValueRange prefix, mlir::Value count, bool max);

/// A heap buffer of `size` f32 (memref<?xf32>), aligned to a cache line (64 bytes): the
/// scratch of a work unit, whose vector loads then never split a line by accident.
mlir::Value allocateF32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value size);

/// Rows of a block accumulated in registers: for j in [begin, end) ascending, accumulator r
/// (a vector of f32 lanes) += splat(weight(r, j)) · chunk(j), only where ranges[r] holds j.
/// When every range holds all of [begin, end) (checked at run time) the loop runs without the
/// per-row selects; otherwise a row's sum is kept unchanged for a j it does not hold (a masked
/// row's chunk never reaches the sum, even as 0 · inf). Returns the final accumulators.
llvm::SmallVector<mlir::Value> accumulateRows(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value begin, mlir::Value end,
    mlir::ValueRange accumulators, llvm::ArrayRef<lowering::KeyRange> ranges,
    llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value j)> chunk,
    llvm::function_ref<mlir::Value(mlir::OpBuilder&, size_t r, mlir::Value j)> weight);

/// The product of `sizes` without its first entry: the elements of one outer iteration.
mlir::Value innerProduct(mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange sizes);

// The per-op lowerings that live in their own files.

/// tile.matmul (batched, packed and register-tiled or row by row): HostMatmul.cpp.
void lowerMatmul(mlir::OpBuilder& b, tile::MatmulOp op, ParallelLoops& parallel,
                 int64_t vectorBits);

/// tile.norm, tile.rope: HostModelOps.cpp.
void lowerNorm(mlir::OpBuilder& b, tile::NormOp op, ParallelLoops& parallel);

/// tile.attention: blocks of query rows sharing each packed block of keys (HostAttention.cpp).
void lowerAttention(mlir::OpBuilder& b, tile::AttentionOp op, ParallelLoops& parallel);

/// tile.attention_backward: dQ by query rows, dK and dV by key rows, each row in f32 in a fixed
/// order (AttentionBackward.cpp).
void lowerAttentionBackward(mlir::OpBuilder& b, tile::AttentionBackwardOp op,
                            ParallelLoops& parallel);
void lowerRope(mlir::OpBuilder& b, tile::RopeOp op, ParallelLoops& parallel);

}  // namespace tessera::host

#endif  // TESSERA_DIALECT_CONVERSION_TILE_TO_LOOPS_HOSTLOOPS_H_
