// The kernel-building blocks of the device lowering (tessera-lower-tile-to-gpu): named
// gpu.launch regions, fixed-tree block reductions and strided per-thread folds, and the
// per-op lowerings that live in their own files.
#ifndef TESSERA_DIALECT_CONVERSION_TILE_TO_GPU_GPUKERNELS_H_
#define TESSERA_DIALECT_CONVERSION_TILE_TO_GPU_GPUKERNELS_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "dialect/TileOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace tessera::device {

inline constexpr int64_t kBlockSize = 256;  // threads per block for map, reduce, softmax, ...
/// CUDA's grid limits. Kernels launch at most this many blocks and loop over the rest.
inline constexpr int64_t kMaxGridX = 2147483647;
inline constexpr int64_t kMaxGridYZ = 65535;
/// Threads per warp.
inline constexpr int64_t kWarp = 32;

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

/// `lhs < rhs` on indices.
mlir::Value lessThan(mlir::OpBuilder& b, mlir::Location loc, mlir::Value lhs, mlir::Value rhs);

/// Runs `body` under `scf.if condition`.
void ifThen(mlir::OpBuilder& b, mlir::Location loc, mlir::Value condition,
            llvm::function_ref<void(mlir::OpBuilder&)> body);

/// A memref type in workgroup (shared) memory.
mlir::MemRefType workgroupBuffer(mlir::OpBuilder& b, llvm::ArrayRef<int64_t> shape,
                                 mlir::Type element);

/// Emits `gpu.launch` with the given grid and block, workgroup buffers, and a body; the launch
/// is named so that outlining puts it into the kernel module as `name`.
mlir::gpu::LaunchOp launch(mlir::OpBuilder& b, mlir::Location loc, std::array<mlir::Value, 3> grid,
                           std::array<int64_t, 2> block, mlir::TypeRange workgroup,
                           llvm::StringRef name,
                           llvm::function_ref<void(mlir::OpBuilder&, mlir::gpu::LaunchOp)> body);

/// Reduces `value` (f32, one per thread) across the block with a fixed tree in `scratch`
/// (`kBlockSize` f32 in workgroup memory); every thread gets the result.
mlir::Value blockReduce(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                        mlir::Value scratch, mlir::Value thread, mlir::Value value);

/// Reduces one (first, second) pair per thread across the block with a fixed tree in the
/// workgroup buffers `firstScratch` and `secondScratch` (kBlockSize each); every thread gets the
/// result. `combine(mine, theirs)` folds the partner's pair into this thread's.
std::pair<mlir::Value, mlir::Value> blockReducePair(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value firstScratch, mlir::Value secondScratch,
    mlir::Value thread, mlir::Value first, mlir::Value second,
    llvm::function_ref<std::pair<mlir::Value, mlir::Value>(mlir::OpBuilder&, mlir::Value,
                                                           mlir::Value, mlir::Value, mlir::Value)>
        combine);

/// Folds `step` over i = thread, thread + stride, ... < count, from `init`: one thread's share
/// of a block-wide (or, with stride 32, warp-wide) reduction, in a fixed order.
mlir::Value foldStrided(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value thread, mlir::Value count, mlir::Value init,
    llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value, mlir::Value)> step,
    int64_t stride = kBlockSize);

/// min(count, limit): a grid axis for `count` units of work that the kernel loops over.
mlir::Value gridFor(mlir::OpBuilder& b, mlir::Location loc, mlir::Value count, int64_t limit);

/// Runs `body(builder, unit)` for unit = blockIdx.x, blockIdx.x + gridDim.x, ... < count: one
/// block per unit whatever the grid holds (uniform within a block, so barriers stay convergent).
void forEachBlockUnit(mlir::OpBuilder& b, mlir::Location loc, mlir::gpu::LaunchOp launch,
                      mlir::Value count,
                      llvm::function_ref<void(mlir::OpBuilder&, mlir::Value unit)> body);

/// A launch of ceil(total / kBlockSize) blocks (at most kMaxGridX, looping over the rest) of
/// kBlockSize threads, `body` running once per linear index < total (nothing when total is 0).
void launchPerElement(mlir::OpBuilder& b, mlir::Location loc, mlir::Value total,
                      llvm::StringRef name,
                      llvm::function_ref<void(mlir::OpBuilder&, mlir::Value linear)> body);

/// One output tile of a tile.matmul launch (launchMatmulTiles).
struct MatmulTile {
  mlir::Value m, n, k;                                       ///< the problem's extents
  llvm::SmallVector<mlir::Value> cPrefix, aPrefix, bPrefix;  ///< batch indices into C, A, B
  mlir::Value row0, column0;  ///< the tile's first row and column of C
};

/// `prefix` followed by `x`, `y`: an index into a (batched) matrix.
llvm::SmallVector<mlir::Value> matrixIndex(llvm::ArrayRef<mlir::Value> prefix, mlir::Value x,
                                           mlir::Value y);

/// A launch over tile.matmul's output in tiles of `tileRows` x `tileColumns` (columns on the
/// grid's x axis, rows on y, batches on z, each clamped to CUDA's limits with the blocks looping
/// over the rest); `body` runs once per tile, uniform within a block (barriers stay convergent).
/// Launches nothing for an empty output.
void launchMatmulTiles(
    mlir::OpBuilder& b, tile::MatmulOp op, int64_t tileRows, int64_t tileColumns,
    std::array<int64_t, 2> block, mlir::TypeRange workgroup, llvm::StringRef name,
    llvm::function_ref<void(mlir::OpBuilder&, mlir::gpu::LaunchOp, const MatmulTile&)> body);

/// `value` combined across the 32 lanes of a warp by a fixed xor butterfly (offsets 16, 8, 4,
/// 2, 1); every lane gets the same result (each step combines one pair, and combining is
/// commutative). Every lane of the warp must reach it.
mlir::Value warpReduce(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                       mlir::Value value);

/// A launch of blocks of kBlockSize / kWarp warps in which each warp runs `body(lane, unit)`
/// for unit = its global warp index, + the grid's warps, ... < units (uniform within a warp).
void launchPerWarp(
    mlir::OpBuilder& b, mlir::Location loc, mlir::Value units, llvm::StringRef name,
    llvm::function_ref<void(mlir::OpBuilder&, mlir::Value lane, mlir::Value unit)> body);

/// The kernel variants (KernelSchedules.h): GpuVariants.cpp. `baseline` emits the baseline
/// lowering at the builder's position (the vectorized map falls back to it at run time).
void lowerMapVectorized(mlir::OpBuilder& b, tile::MapOp op, KernelNamer& namer,
                        llvm::function_ref<void(mlir::OpBuilder&)> baseline);
void lowerReduceWarpPerRow(mlir::OpBuilder& b, tile::ReduceOp op, KernelNamer& namer);
void lowerSoftmaxWarpPerRow(mlir::OpBuilder& b, tile::SoftmaxOp op, KernelNamer& namer);
void lowerSoftmaxOnline(mlir::OpBuilder& b, tile::SoftmaxOp op, KernelNamer& namer);
void lowerNormWarpPerRow(mlir::OpBuilder& b, tile::NormOp op, KernelNamer& namer);

/// The tensor-core matmuls: GpuMmaMatmul.cpp. mma_async falls back to the mma_sync kernel at
/// run time for operands its copies cannot take.
void lowerMatmulMmaSync(mlir::OpBuilder& b, tile::MatmulOp op, KernelNamer& namer);
void lowerMatmulMmaAsync(mlir::OpBuilder& b, tile::MatmulOp op, KernelNamer& namer);

/// A per-element term of a row reduction: its f32 value at position `i` of the row.
using RowTerm = llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value i)>;

/// tile.norm's statistics of one row from `input` (s at position i) and `rowSum(term)` (the
/// row's Σ term, as every thread reducing it gets it): the mean (layer norm; null for rms)
/// and 1 / sqrt(statistic + eps). One definition for the block- and warp-per-row kernels.
std::pair<mlir::Value, mlir::Value> normRowStatistics(
    mlir::OpBuilder& b, mlir::Location loc, tile::NormOp op, mlir::Value length, RowTerm input,
    llvm::function_ref<mlir::Value(RowTerm)> rowSum);

/// tile.norm, tile.attention, tile.rope: GpuModelOps.cpp.
void lowerNorm(mlir::OpBuilder& b, tile::NormOp op, KernelNamer& namer);
void lowerAttention(mlir::OpBuilder& b, tile::AttentionOp op, KernelNamer& namer);

/// tile.attention_backward's baseline: one thread per element of dQ, dK and dV, a fixed order
/// (AttentionBackward.cpp).
void lowerAttentionBackward(mlir::OpBuilder& b, tile::AttentionBackwardOp op, KernelNamer& namer);
/// Its warp_per_row schedule: one warp per row of dQ and per row of dK and dV, dot products
/// by warp butterflies (AttentionBackward.cpp).
void lowerAttentionBackwardWarpPerRow(mlir::OpBuilder& b, tile::AttentionBackwardOp op,
                                      KernelNamer& namer);
void lowerRope(mlir::OpBuilder& b, tile::RopeOp op, KernelNamer& namer);

}  // namespace tessera::device

#endif  // TESSERA_DIALECT_CONVERSION_TILE_TO_GPU_GPUKERNELS_H_
