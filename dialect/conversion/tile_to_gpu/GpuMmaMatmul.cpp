// The tensor-core matmul variants of tessera-lower-tile-to-gpu (KernelSchedules.h). Both use
// 64x64 output tiles per 128-thread block (2x2 warps of 32x32), K in stages of 16 (tf32: 8;
// longer stages spill on sm_80 to sm_89) in shared memory (rows padded: 16-byte aligned, and
// an ldmatrix phase's 8 rows in distinct banks), 16-bit fragments read with ldmatrix
// (.trans for B), mma.sync.m16n8k16 (f16/bf16 -> f32) or m16n8k8 (tf32 -> f32), and the fused
// epilogue on the accumulators. They differ in how a stage reaches shared memory:
//   mma_sync   each thread loads its elements and stores them (zero outside the matrices);
//              a barrier; the stage's mma.syncs; a barrier
//   mma_async  a kMmaStages-deep pipeline of 16-byte cp.async copies (zero-filled outside
//              the matrices): the copies of stage s + 2 are in flight while stage s
//              multiplies. The launch site checks at run time that A and B are 16-byte
//              aligned with rows of a multiple of 16 bytes, else the mma_sync kernel runs.
// Each output element accumulates over K in one order, the same in both (the same mma.sync
// sequence on the same values: mma_async rounds its raw TF32 copies in shared memory as
// mma_sync does when it stages, and pads with +0 as it does), so the two agree bit for bit;
// no atomics.
//
// Why NVVM ops (nvvm.ldmatrix, nvvm.mma.sync, nvvm.cp.async.shared.global) and not NVGPU's
// (nvgpu.ldmatrix, nvgpu.mma.sync, nvgpu.device_async_copy): NVGPU's ops lower to these same
// NVVM ops (convert-nvgpu-to-nvvm), so emitting NVVM here spares the kernel pipeline one more
// conversion and its pattern set on every compile, and keeps every instruction the bitwise
// agreement above depends on — the fragment layout, the TF32 rounding before staging, the
// zero-filled copy sizes at the matrix edges — written out in this file rather than implied by
// another dialect's lowering. The addressing stays on memrefs (elementAddress).
#include <array>
#include <cassert>
#include <string>

#include "dialect/conversion/TileSemantics.h"
#include "dialect/conversion/tile_to_gpu/GpuKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace tessera::device {
namespace {

using lowering::indexConstant;

constexpr int64_t kMmaBlockTile = 64;                // C tile edge per block
constexpr int64_t kMmaWarpTile = 32;                 // C tile edge per warp (2x2 warps)
constexpr int64_t kMmaThreads = 128;                 // 4 warps
constexpr int64_t kMmaRowTiles = kMmaWarpTile / 16;  // m16 tiles per warp
constexpr int64_t kMmaColTiles = kMmaWarpTile / 8;   // n8 tiles per warp
constexpr int64_t kMmaStages = 3;                    // mma_async: stages in shared memory
constexpr int64_t kCopyBytes = 16;                   // mma_async: one cp.async

/// How one mma.sync multiplies: the instruction's K, the type staged in shared memory and how a
/// fragment register packs it.
struct MmaForm {
  int64_t k = 16;
  int64_t stageK = 16;  ///< K per shared-memory stage (more spills on sm_80 to sm_89)
  mlir::NVVM::MMATypes type = mlir::NVVM::MMATypes::f16;
  mlir::Type staged;  ///< f16, bf16, or f32 holding a TF32 value

  bool halves() const { return type != mlir::NVVM::MMATypes::tf32; }
  /// The staged tiles' shapes (after the stage index for mma_async), rows padded so that they
  /// stay 16-byte aligned (cp.async, ldmatrix) and the rows one access reads fall in distinct
  /// banks: A [64][stageK + 16 bytes] (48-byte rows), B [stageK][64 + 8 elements] (144-byte
  /// rows for ldmatrix; 288-byte rows for TF32's element loads at rows inGroup, columns group).
  llvm::SmallVector<int64_t> tileA() const { return {kMmaBlockTile, stageK + (halves() ? 8 : 4)}; }
  llvm::SmallVector<int64_t> tileB() const { return {stageK, kMmaBlockTile + 8}; }
};

MmaForm mmaFormOf(mlir::OpBuilder& b, tile::MatmulOp op) {
  mlir::Type element = llvm::cast<mlir::MemRefType>(op.getLhs().getType()).getElementType();
  if (element.isF16()) return {16, 16, mlir::NVVM::MMATypes::f16, element};
  if (element.isBF16()) return {16, 16, mlir::NVVM::MMATypes::bf16, element};
  return {8, 8, mlir::NVVM::MMATypes::tf32, b.getF32Type()};
}

mlir::Value i32Constant(mlir::OpBuilder& b, mlir::Location loc, int32_t value) {
  return b.create<mlir::arith::ConstantOp>(loc, b.getI32IntegerAttr(value));
}

mlir::Value addIndex(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x, mlir::Value y) {
  return b.create<mlir::arith::AddIOp>(loc, x, y);
}

mlir::Value addOffset(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x, int64_t y) {
  return y == 0 ? x : addIndex(b, loc, x, indexConstant(b, loc, y));
}

mlir::Value mulConstant(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x, int64_t y) {
  return b.create<mlir::arith::MulIOp>(loc, x, indexConstant(b, loc, y));
}

/// Where a thread of a 128-thread block sits among the 2x2 warps of the block tile.
struct MmaThread {
  mlir::Value thread;      ///< 0 .. 127
  mlir::Value group;       ///< lane / 4: the fragment row (A, C) or column (B)
  mlir::Value inGroup;     ///< lane % 4
  mlir::Value warpRow;     ///< the warp's first row in the block tile
  mlir::Value warpColumn;  ///< its first column
  /// The row this lane addresses for an ldmatrix .x4 (lanes 8q .. 8q + 7 give matrix q's
  /// 8 rows): 8·(q % 2) + lane % 8, and 8·(q / 2) for the other axis.
  mlir::Value matrixRow;
  mlir::Value matrixHalf;
};

MmaThread mmaThreadOf(mlir::OpBuilder& b, mlir::Location loc, mlir::Value thread) {
  auto c = [&](int64_t value) { return indexConstant(b, loc, value); };
  mlir::Value lane = b.create<mlir::arith::RemUIOp>(loc, thread, c(kWarp));
  mlir::Value warp = b.create<mlir::arith::DivUIOp>(loc, thread, c(kWarp));
  MmaThread w;
  w.thread = thread;
  w.group = b.create<mlir::arith::DivUIOp>(loc, lane, c(4));
  w.inGroup = b.create<mlir::arith::RemUIOp>(loc, lane, c(4));
  w.warpRow = mulConstant(b, loc, b.create<mlir::arith::DivUIOp>(loc, warp, c(2)), kMmaWarpTile);
  w.warpColumn = mulConstant(b, loc, b.create<mlir::arith::RemUIOp>(loc, warp, c(2)), kMmaWarpTile);
  mlir::Value matrix = b.create<mlir::arith::DivUIOp>(loc, lane, c(8));
  w.matrixRow =
      addIndex(b, loc, mulConstant(b, loc, b.create<mlir::arith::RemUIOp>(loc, matrix, c(2)), 8),
               b.create<mlir::arith::RemUIOp>(loc, lane, c(8)));
  w.matrixHalf = mulConstant(b, loc, b.create<mlir::arith::DivUIOp>(loc, matrix, c(2)), 8);
  return w;
}

/// The byte address of element `indices` of `memref` (identity layout: the schedule declines
/// others), as i64.
mlir::Value elementAddress(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref,
                           mlir::ValueRange indices) {
  auto type = llvm::cast<mlir::MemRefType>(memref.getType());
  assert(type.getLayout().isIdentity() && "mma_async addresses dense row-major memrefs");
  mlir::Value linear = indices[0];
  for (int64_t d = 1; d < type.getRank(); ++d) {
    mlir::Value size = type.isDynamicDim(d)
                           ? b.create<mlir::memref::DimOp>(loc, memref, d).getResult()
                           : indexConstant(b, loc, type.getDimSize(d));
    linear = addIndex(b, loc, b.create<mlir::arith::MulIOp>(loc, linear, size), indices[d]);
  }
  const int64_t bytes = type.getElementTypeBitWidth() / 8;
  mlir::Value base = b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  return b.create<mlir::arith::IndexCastOp>(
      loc, b.getI64Type(), addIndex(b, loc, base, mulConstant(b, loc, linear, bytes)));
}

/// Four 8x8 matrices of 16-bit elements by one ldmatrix .x4 (`transpose`: .trans) from the
/// staged tile `shared` at [stage..., x, y], this lane's row address; the four registers.
llvm::SmallVector<mlir::Value> loadMatrices(mlir::OpBuilder& b, mlir::Location loc,
                                            mlir::Value shared, mlir::ValueRange stage,
                                            mlir::Value x, mlir::Value y, bool transpose) {
  mlir::MLIRContext* context = b.getContext();
  llvm::SmallVector<mlir::Value> index(stage.begin(), stage.end());
  index.push_back(x);
  index.push_back(y);
  mlir::Value address = b.create<mlir::LLVM::IntToPtrOp>(
      loc, mlir::LLVM::LLVMPointerType::get(context, 3), elementAddress(b, loc, shared, index));
  mlir::Type i32 = b.getI32Type();
  auto result = mlir::LLVM::LLVMStructType::getLiteral(context, {i32, i32, i32, i32});
  auto load = mlir::NVVM::LdMatrixOp::create(
      b, loc, result, address, b.getI32IntegerAttr(4),
      mlir::NVVM::MMALayoutAttr::get(
          context, transpose ? mlir::NVVM::MMALayout::col : mlir::NVVM::MMALayout::row),
      mlir::NVVM::LdStMatrixShapeAttr::get(context, 8, 8),
      mlir::NVVM::LdStMatrixEltTypeAttr::get(context, mlir::NVVM::LdStMatrixEltType::B16));
  llvm::SmallVector<mlir::Value> registers;
  for (int64_t i = 0; i < 4; ++i) {
    registers.push_back(b.create<mlir::LLVM::ExtractValueOp>(loc, load, i));
  }
  return registers;
}

/// Element [stage..., x, y] of a staged tile in shared memory.
mlir::Value loadStaged(mlir::OpBuilder& b, mlir::Location loc, mlir::Value shared,
                       mlir::ValueRange stage, mlir::Value x, mlir::Value y) {
  llvm::SmallVector<mlir::Value> index(stage.begin(), stage.end());
  index.push_back(x);
  index.push_back(y);
  return b.create<mlir::memref::LoadOp>(loc, shared, index);
}

/// One mma.sync K step (form.k wide, at kk in the stage) of the warp's 32x32 tile over the
/// staged A [stage..., row, k] and B [stage..., k, column] (TF32 values already rounded);
/// returns the accumulators. 16-bit fragments come from ldmatrix: A's 16x16 per row tile by
/// one .x4 (matrices rows 0-7 / 8-15 × k 0-7 / 8-15: registers a0..a3), B's 16x8 column tiles
/// two by one .x4 .trans (k 0-7 / 8-15 × two n tiles: b0, b1 of each); TF32 fragments are read
/// element by element.
llvm::SmallVector<mlir::Value> mmaStep(mlir::OpBuilder& b, mlir::Location loc, const MmaForm& form,
                                       const MmaThread& w, mlir::Value sharedA, mlir::Value sharedB,
                                       mlir::ValueRange stage, mlir::Value kk,
                                       mlir::ValueRange accumulators) {
  mlir::Type f32 = b.getF32Type();
  auto tf32Register = [&](mlir::Value value) -> mlir::Value {
    return b.create<mlir::arith::BitcastOp>(loc, b.getI32Type(), value);
  };
  mlir::Value quadK = addIndex(b, loc, w.inGroup, kk);  // tf32
  // The B fragments (b0, b1) of n tiles nt and nt + 1. Written per row tile; LLVM keeps one
  // load of each (nothing writes shared memory in between).
  auto fragmentsB = [&](int64_t nt) {
    llvm::SmallVector<llvm::SmallVector<mlir::Value>> pair(2);
    if (form.halves()) {
      mlir::Value column = addIndex(b, loc, addOffset(b, loc, w.warpColumn, nt * 8), w.matrixHalf);
      llvm::SmallVector<mlir::Value> registers = loadMatrices(
          b, loc, sharedB, stage, addIndex(b, loc, kk, w.matrixRow), column, /*transpose=*/true);
      pair[0] = {registers[0], registers[1]};
      pair[1] = {registers[2], registers[3]};
      return pair;
    }
    for (int64_t t = 0; t < 2; ++t) {
      // b0, b1: rows inGroup, inGroup + 4 of column warpColumn + (nt + t)*8 + group.
      mlir::Value column = addIndex(b, loc, addOffset(b, loc, w.warpColumn, (nt + t) * 8), w.group);
      for (int64_t r = 0; r < 2; ++r) {
        pair[t].push_back(tf32Register(
            loadStaged(b, loc, sharedB, stage, addOffset(b, loc, quadK, r * 4), column)));
      }
    }
    return pair;
  };
  llvm::SmallVector<mlir::Value> next(accumulators.begin(), accumulators.end());
  for (int64_t mt = 0; mt < kMmaRowTiles; ++mt) {
    // The A fragment of rows warpRow + mt*16 + {group, group + 8}.
    llvm::SmallVector<mlir::Value> fragmentA;
    if (form.halves()) {
      fragmentA = loadMatrices(b, loc, sharedA, stage,
                               addIndex(b, loc, addOffset(b, loc, w.warpRow, mt * 16), w.matrixRow),
                               addIndex(b, loc, kk, w.matrixHalf), /*transpose=*/false);
    } else {
      for (int64_t r = 0; r < 4; ++r) {
        // a0..a3: rows group, group + 8; columns inGroup, inGroup + 4.
        mlir::Value row =
            addIndex(b, loc, addOffset(b, loc, w.warpRow, mt * 16 + (r % 2) * 8), w.group);
        fragmentA.push_back(tf32Register(
            loadStaged(b, loc, sharedA, stage, row, addOffset(b, loc, quadK, (r / 2) * 4))));
      }
    }
    llvm::SmallVector<llvm::SmallVector<mlir::Value>> pair;
    for (int64_t nt = 0; nt < kMmaColTiles; ++nt) {
      if (nt % 2 == 0) pair = fragmentsB(nt);
      llvm::SmallVector<mlir::Value> a = fragmentA;
      llvm::SmallVector<mlir::Value> fragmentB = pair[nt % 2];
      if (form.type == mlir::NVVM::MMATypes::f16) {
        // f16 fragments are <2 x half> registers.
        auto halves = mlir::VectorType::get({2}, b.getF16Type());
        for (mlir::Value& reg : a) reg = b.create<mlir::LLVM::BitcastOp>(loc, halves, reg);
        for (mlir::Value& reg : fragmentB) {
          reg = b.create<mlir::LLVM::BitcastOp>(loc, halves, reg);
        }
      }
      const int64_t first = (mt * kMmaColTiles + nt) * 4;
      llvm::SmallVector<mlir::Value> fragmentC(next.begin() + first, next.begin() + first + 4);
      auto result = mlir::LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
      auto mma = b.create<mlir::NVVM::MmaOp>(
          loc, result, a, fragmentB, fragmentC, llvm::ArrayRef<int64_t>{16, 8, form.k},
          std::nullopt, std::nullopt, std::array<mlir::NVVM::MMATypes, 2>{form.type, form.type},
          std::array<mlir::NVVM::MMALayout, 2>{mlir::NVVM::MMALayout::row,
                                               mlir::NVVM::MMALayout::col});
      for (int64_t i = 0; i < 4; ++i) {
        next[first + i] = b.create<mlir::LLVM::ExtractValueOp>(loc, mma, i);
      }
    }
  }
  return next;
}

/// The epilogue on the accumulators: c0, c1 at row group, columns 2*inGroup + {0, 1}; c2, c3
/// at row group + 8; each stored (through bias and activation) when inside C.
void storeAccumulators(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op,
                       const MatmulTile& t, const MmaThread& w, mlir::ValueRange accumulators) {
  for (int64_t mt = 0; mt < kMmaRowTiles; ++mt) {
    for (int64_t nt = 0; nt < kMmaColTiles; ++nt) {
      for (int64_t i = 0; i < 4; ++i) {
        mlir::Value row = addIndex(
            b, loc, addIndex(b, loc, t.row0, addOffset(b, loc, w.warpRow, mt * 16 + (i / 2) * 8)),
            w.group);
        mlir::Value column = addOffset(b, loc,
                                       addIndex(b, loc, addIndex(b, loc, t.column0, w.warpColumn),
                                                mulConstant(b, loc, w.inGroup, 2)),
                                       nt * 8 + i % 2);
        mlir::Value inBounds = b.create<mlir::arith::AndIOp>(loc, lessThan(b, loc, row, t.m),
                                                             lessThan(b, loc, column, t.n));
        mlir::Value value = accumulators[(mt * kMmaColTiles + nt) * 4 + i];
        ifThen(b, loc, inBounds, [&](mlir::OpBuilder& in) {
          lowering::storeMatmulResult(in, loc, op, value, matrixIndex(t.cPrefix, row, column));
        });
      }
    }
  }
}

llvm::SmallVector<mlir::Value> zeroAccumulators(mlir::OpBuilder& b, mlir::Location loc) {
  return llvm::SmallVector<mlir::Value>(kMmaRowTiles * kMmaColTiles * 4,
                                        lowering::f32Constant(b, loc, 0.0f));
}

/// One 16-byte cp.async of global `source[sourceIndex]` into shared `staged[stagedIndex]`;
/// outside the matrix (`inside` false) it reads nothing and zero-fills.
void copyAsync(mlir::OpBuilder& b, mlir::Location loc, mlir::Value staged,
               mlir::ValueRange stagedIndex, mlir::Value source, mlir::ValueRange sourceIndex,
               mlir::Value inside) {
  mlir::MLIRContext* context = b.getContext();
  mlir::Value destination = elementAddress(b, loc, staged, stagedIndex);
  // Outside, the matrix's first element stands in: a valid address, of which no byte is read.
  mlir::Value first = b.create<mlir::arith::IndexCastOp>(
      loc, b.getI64Type(), b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, source));
  mlir::Value from = b.create<mlir::arith::SelectOp>(
      loc, inside, elementAddress(b, loc, source, sourceIndex), first);
  mlir::Value bytes = b.create<mlir::arith::SelectOp>(loc, inside, i32Constant(b, loc, kCopyBytes),
                                                      i32Constant(b, loc, 0));
  // The kernel's memrefs hold generic pointers: back to one, then cast to the global space.
  mlir::Value sharedPointer = b.create<mlir::LLVM::IntToPtrOp>(
      loc, mlir::LLVM::LLVMPointerType::get(context, 3), destination);
  mlir::Value globalPointer = b.create<mlir::LLVM::AddrSpaceCastOp>(
      loc, mlir::LLVM::LLVMPointerType::get(context, 1),
      b.create<mlir::LLVM::IntToPtrOp>(loc, mlir::LLVM::LLVMPointerType::get(context), from));
  mlir::NVVM::CpAsyncOp::create(b, loc, sharedPointer, globalPointer, kCopyBytes,
                                mlir::NVVM::LoadCacheModifierKind::CG, bytes);
}

/// Rounds the `count` f32 values at `staged[index]` (along its last dimension; one 16-byte
/// aligned copy) to TF32 in place, as mma_sync's staging does on load.
void roundCopiedTf32(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op, mlir::Value staged,
                     mlir::ValueRange index, int64_t count) {
  auto type = mlir::VectorType::get({count}, b.getF32Type());
  mlir::Value copied =
      b.create<mlir::vector::LoadOp>(loc, type, staged, index,
                                     /*nontemporal=*/false, llvm::MaybeAlign(kCopyBytes));
  llvm::SmallVector<mlir::Value> rounded;
  for (int64_t i = 0; i < count; ++i) {
    rounded.push_back(lowering::prepareMatmulInput(
        b, loc, op, b.create<mlir::vector::ExtractOp>(loc, copied, i)));
  }
  b.create<mlir::vector::StoreOp>(loc, b.create<mlir::vector::FromElementsOp>(loc, type, rounded),
                                  staged, index, /*nontemporal=*/false,
                                  llvm::MaybeAlign(kCopyBytes));
}

/// Whether `value` (an index) is a multiple of `divisor`.
mlir::Value isMultiple(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value, int64_t divisor) {
  mlir::Value rest = b.create<mlir::arith::RemUIOp>(loc, value, indexConstant(b, loc, divisor));
  return b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, rest,
                                       indexConstant(b, loc, 0));
}

}  // namespace

void lowerMatmulMmaSync(mlir::OpBuilder& b, tile::MatmulOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  const MmaForm form = mmaFormOf(b, op);
  mlir::Type tileA = workgroupBuffer(b, form.tileA(), form.staged);
  mlir::Type tileB = workgroupBuffer(b, form.tileB(), form.staged);
  launchMatmulTiles(
      b, op, kMmaBlockTile, kMmaBlockTile, {kMmaThreads, 1}, {tileA, tileB},
      namer.next("matmul_mma_sync"),
      [&](mlir::OpBuilder& kb, mlir::gpu::LaunchOp l, const MatmulTile& t) {
        auto c = [&](mlir::OpBuilder& in, int64_t value) { return indexConstant(in, loc, value); };
        mlir::Value sharedA = l.getWorkgroupAttributions()[0];
        mlir::Value sharedB = l.getWorkgroupAttributions()[1];
        const MmaThread w = mmaThreadOf(kb, loc, l.getThreadIds().x);
        mlir::Value zeroStaged =
            kb.create<mlir::arith::ConstantOp>(loc, kb.getZeroAttr(form.staged));
        // A[row, k] / B[k, column] as staged, zero outside the matrices.
        auto stagedLoad = [&](mlir::OpBuilder& in, mlir::Value matrix, bool transpose,
                              llvm::ArrayRef<mlir::Value> prefix, mlir::Value outer,
                              mlir::Value outerLimit, mlir::Value kIndex, bool kFirst) {
          mlir::Value ok = in.create<mlir::arith::AndIOp>(loc, lessThan(in, loc, outer, outerLimit),
                                                          lessThan(in, loc, kIndex, t.k));
          // Stored order: A is [row, k] (transposed: [k, row]); B is [k, column] (transposed:
          // [column, k]).
          const bool kLeads = kFirst != transpose;
          auto index =
              kLeads ? matrixIndex(prefix, kIndex, outer) : matrixIndex(prefix, outer, kIndex);
          auto ifOp = in.create<mlir::scf::IfOp>(
              loc, ok,
              [&](mlir::OpBuilder& then, mlir::Location l2) {
                mlir::Value element = then.create<mlir::memref::LoadOp>(loc, matrix, index);
                if (form.type == mlir::NVVM::MMATypes::tf32) {
                  element = lowering::prepareMatmulInput(then, loc, op, element);
                }
                then.create<mlir::scf::YieldOp>(l2, element);
              },
              [&](mlir::OpBuilder& otherwise, mlir::Location l2) {
                otherwise.create<mlir::scf::YieldOp>(l2, zeroStaged);
              });
          return ifOp.getResult(0);
        };
        auto kLoop = kb.create<mlir::scf::ForOp>(
            loc, c(kb, 0), t.k, c(kb, form.stageK), zeroAccumulators(kb, loc),
            [&](mlir::OpBuilder& in, mlir::Location l2, mlir::Value k0, mlir::ValueRange acc) {
              // Stage A[row0 .. +64, k0 .. +stageK] and B[k0 .. +stageK, column0 .. +64]: each
              // thread stageK / 2 elements of each.
              // Loops rather than unrolled here: their addresses stay inside the K loop
              // (LICM runs before LLVM unrolls them), which keeps registers for accumulators.
              auto stage = in.create<mlir::scf::ForOp>(
                  loc, c(in, 0), c(in, kMmaBlockTile * form.stageK / kMmaThreads), c(in, 1));
              {
                mlir::OpBuilder s = mlir::OpBuilder::atBlockTerminator(stage.getBody());
                mlir::Value linear = addIndex(
                    s, loc, w.thread, mulConstant(s, loc, stage.getInductionVar(), kMmaThreads));
                mlir::Value aRow = s.create<mlir::arith::DivUIOp>(loc, linear, c(s, form.stageK));
                mlir::Value aK = s.create<mlir::arith::RemUIOp>(loc, linear, c(s, form.stageK));
                mlir::Value a = stagedLoad(s, op.getLhs(), op.getTransposeA(), t.aPrefix,
                                           addIndex(s, loc, t.row0, aRow), t.m,
                                           addIndex(s, loc, k0, aK), /*kFirst=*/false);
                s.create<mlir::memref::StoreOp>(loc, a, sharedA, mlir::ValueRange{aRow, aK});
                mlir::Value bK = s.create<mlir::arith::DivUIOp>(loc, linear, c(s, kMmaBlockTile));
                mlir::Value bColumn =
                    s.create<mlir::arith::RemUIOp>(loc, linear, c(s, kMmaBlockTile));
                mlir::Value bValue = stagedLoad(s, op.getRhs(), op.getTransposeB(), t.bPrefix,
                                                addIndex(s, loc, t.column0, bColumn), t.n,
                                                addIndex(s, loc, k0, bK), /*kFirst=*/true);
                s.create<mlir::memref::StoreOp>(loc, bValue, sharedB,
                                                mlir::ValueRange{bK, bColumn});
              }
              in.create<mlir::gpu::BarrierOp>(loc);
              auto steps = in.create<mlir::scf::ForOp>(loc, c(in, 0), c(in, form.stageK),
                                                       c(in, form.k), acc);
              {
                mlir::OpBuilder s = mlir::OpBuilder::atBlockEnd(steps.getBody());
                s.create<mlir::scf::YieldOp>(
                    loc, mmaStep(s, loc, form, w, sharedA, sharedB, {}, steps.getInductionVar(),
                                 steps.getRegionIterArgs()));
              }
              in.create<mlir::gpu::BarrierOp>(loc);
              in.create<mlir::scf::YieldOp>(l2, steps.getResults());
            });
        storeAccumulators(kb, loc, op, t, w, kLoop.getResults());
      });
}

void lowerMatmulMmaAsync(mlir::OpBuilder& b, tile::MatmulOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  const MmaForm form = mmaFormOf(b, op);
  const int64_t elementBytes = form.staged.getIntOrFloatBitWidth() / 8;
  const int64_t perCopy = kCopyBytes / elementBytes;  // elements per cp.async: 8 or 4
  // One copy per thread per stage of each tile (64 x stageK of A, stageK x 64 of B: a stage
  // is 32 bytes of K in every form).
  const int64_t aCopiesPerRow = form.stageK / perCopy;
  const int64_t bCopiesPerRow = kMmaBlockTile / perCopy;
  assert(kMmaBlockTile * aCopiesPerRow == kMmaThreads &&
         form.stageK * bCopiesPerRow == kMmaThreads && "one 16-byte copy per thread and tile");
  // At run time: A and B 16-byte aligned and rows of whole copies (K, N multiples of
  // perCopy; A and B are not transposed, the schedule declines that), so every copy lies
  // wholly inside a matrix or wholly outside; else the mma_sync kernel runs.
  auto lhsType = llvm::cast<mlir::MemRefType>(op.getLhs().getType());
  auto rhsType = llvm::cast<mlir::MemRefType>(op.getRhs().getType());
  mlir::Value kSize = b.create<mlir::memref::DimOp>(loc, op.getLhs(), lhsType.getRank() - 1);
  mlir::Value nSize = b.create<mlir::memref::DimOp>(loc, op.getRhs(), rhsType.getRank() - 1);
  mlir::Value fits = b.create<mlir::arith::AndIOp>(loc, isMultiple(b, loc, kSize, perCopy),
                                                   isMultiple(b, loc, nSize, perCopy));
  for (mlir::Value matrix : {op.getLhs(), op.getRhs()}) {
    fits = b.create<mlir::arith::AndIOp>(
        loc, fits,
        isMultiple(b, loc, b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, matrix),
                   kCopyBytes));
  }
  const std::string name = namer.next("matmul_mma_async");
  b.create<mlir::scf::IfOp>(
      loc, fits,
      [&](mlir::OpBuilder& then, mlir::Location l) {
        auto staged = [&](llvm::SmallVector<int64_t> tile) {
          tile.insert(tile.begin(), kMmaStages);
          return workgroupBuffer(then, tile, form.staged);
        };
        mlir::Type tileA = staged(form.tileA());
        mlir::Type tileB = staged(form.tileB());
        launchMatmulTiles(
            then, op, kMmaBlockTile, kMmaBlockTile, {kMmaThreads, 1}, {tileA, tileB}, name,
            [&](mlir::OpBuilder& kb, mlir::gpu::LaunchOp launchOp, const MatmulTile& t) {
              auto c = [&](mlir::OpBuilder& in, int64_t value) {
                return indexConstant(in, loc, value);
              };
              mlir::Value sharedA = launchOp.getWorkgroupAttributions()[0];
              mlir::Value sharedB = launchOp.getWorkgroupAttributions()[1];
              const MmaThread w = mmaThreadOf(kb, loc, launchOp.getThreadIds().x);
              // This thread's copy in each stage: A row aRow, K aK..+perCopy; B K row bK,
              // columns bColumn..+perCopy.
              mlir::Value aRow =
                  kb.create<mlir::arith::DivUIOp>(loc, w.thread, c(kb, aCopiesPerRow));
              mlir::Value aK = mulConstant(
                  kb, loc, kb.create<mlir::arith::RemUIOp>(loc, w.thread, c(kb, aCopiesPerRow)),
                  perCopy);
              mlir::Value bK = kb.create<mlir::arith::DivUIOp>(loc, w.thread, c(kb, bCopiesPerRow));
              mlir::Value bColumn = mulConstant(
                  kb, loc, kb.create<mlir::arith::RemUIOp>(loc, w.thread, c(kb, bCopiesPerRow)),
                  perCopy);
              mlir::Value stages = lowering::ceilDiv(kb, loc, t.k, form.stageK);
              // Starts the copies of stage `index` (< stages) into buffer index % kMmaStages.
              auto issue = [&](mlir::OpBuilder& in, mlir::Value index) {
                mlir::Value buffer = in.create<mlir::arith::RemUIOp>(loc, index, c(in, kMmaStages));
                mlir::Value k0 = mulConstant(in, loc, index, form.stageK);
                mlir::Value row = addIndex(in, loc, t.row0, aRow);
                mlir::Value ka = addIndex(in, loc, k0, aK);
                copyAsync(in, loc, sharedA, {buffer, aRow, aK}, op.getLhs(),
                          matrixIndex(t.aPrefix, row, ka),
                          in.create<mlir::arith::AndIOp>(loc, lessThan(in, loc, row, t.m),
                                                         lessThan(in, loc, ka, t.k)));
                mlir::Value kbIndex = addIndex(in, loc, k0, bK);
                mlir::Value column = addIndex(in, loc, t.column0, bColumn);
                copyAsync(in, loc, sharedB, {buffer, bK, bColumn}, op.getRhs(),
                          matrixIndex(t.bPrefix, kbIndex, column),
                          in.create<mlir::arith::AndIOp>(loc, lessThan(in, loc, kbIndex, t.k),
                                                         lessThan(in, loc, column, t.n)));
              };
              // A block whose grid was clamped loops on to another tile: no copy of this one
              // may land while a slower warp still multiplies the last stage of the previous.
              kb.create<mlir::gpu::BarrierOp>(loc);
              // The prologue: stages 0 .. kMmaStages - 2 in flight, one commit group each
              // (empty past the last stage, so that every thread counts groups alike).
              for (int64_t s = 0; s + 1 < kMmaStages; ++s) {
                ifThen(kb, loc, lessThan(kb, loc, c(kb, s), stages),
                       [&](mlir::OpBuilder& in) { issue(in, c(in, s)); });
                mlir::NVVM::CpAsyncCommitGroupOp::create(kb, loc);
              }
              auto kLoop = kb.create<mlir::scf::ForOp>(
                  loc, c(kb, 0), stages, c(kb, 1), zeroAccumulators(kb, loc),
                  [&](mlir::OpBuilder& in, mlir::Location l2, mlir::Value index,
                      mlir::ValueRange acc) {
                    // Stage `index` has landed (at most kMmaStages - 2 newer groups pending),
                    // for every thread after the barrier, which also ends every warp's reads
                    // of the buffer the next copies overwrite (stage index - 1's).
                    mlir::NVVM::CpAsyncWaitGroupOp::create(in, loc, kMmaStages - 2);
                    mlir::Value buffer =
                        in.create<mlir::arith::RemUIOp>(loc, index, c(in, kMmaStages));
                    if (form.type == mlir::NVVM::MMATypes::tf32) {
                      // The copies are raw f32: each thread rounds the two it made (landed
                      // for it after the wait) before the barrier shows them to the block.
                      roundCopiedTf32(in, loc, op, sharedA, {buffer, aRow, aK}, perCopy);
                      roundCopiedTf32(in, loc, op, sharedB, {buffer, bK, bColumn}, perCopy);
                    }
                    in.create<mlir::gpu::BarrierOp>(loc);
                    mlir::Value ahead = addOffset(in, loc, index, kMmaStages - 1);
                    ifThen(in, loc, lessThan(in, loc, ahead, stages),
                           [&](mlir::OpBuilder& then2) { issue(then2, ahead); });
                    mlir::NVVM::CpAsyncCommitGroupOp::create(in, loc);
                    auto steps = in.create<mlir::scf::ForOp>(loc, c(in, 0), c(in, form.stageK),
                                                             c(in, form.k), acc);
                    {
                      mlir::OpBuilder s = mlir::OpBuilder::atBlockEnd(steps.getBody());
                      s.create<mlir::scf::YieldOp>(
                          loc, mmaStep(s, loc, form, w, sharedA, sharedB, {buffer},
                                       steps.getInductionVar(), steps.getRegionIterArgs()));
                    }
                    in.create<mlir::scf::YieldOp>(l2, steps.getResults());
                  });
              // No copy outlives the kernel's use of shared memory (the trailing groups are
              // empty; this keeps it so if the prologue changes).
              mlir::NVVM::CpAsyncWaitGroupOp::create(kb, loc, 0);
              storeAccumulators(kb, loc, op, t, w, kLoop.getResults());
            });
        then.create<mlir::scf::YieldOp>(l);
      },
      [&](mlir::OpBuilder& otherwise, mlir::Location l) {
        lowerMatmulMmaSync(otherwise, op, namer);
        otherwise.create<mlir::scf::YieldOp>(l);
      });
}

}  // namespace tessera::device
