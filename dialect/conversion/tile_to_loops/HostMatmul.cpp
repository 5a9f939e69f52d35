// The host lowering of tile.matmul: per batch, a packed, register-tiled kernel (f32
// accumulation) or a row kernel, both summing each element's K products in ascending order.
// Accumulating in f32, the register tile — and for f32 operands the packing and the row
// kernel — are calls of the runtime's microkernels (runtime/ukernels/matmul_f32.h), compiled
// once with the project: a module's own code is its loops, conversions and epilogue.
// Over 600 lines: one lowering — the tiled and row kernels, batching and the run-time choices
// between them share one description of the problem (MatmulProblem) and its helpers.
#include <optional>
#include <string>

#include "dialect/conversion/TileSemantics.h"
#include "dialect/conversion/tile_to_loops/HostLoops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera::host {
namespace {

using lowering::ceilDiv;
using lowering::indexConstant;
using lowering::memrefSizes;

/// Where a memref's elements are: its aligned address (bytes, as an index), offset and strides
/// (elements) — what a microkernel is handed.
struct MemrefLayout {
  mlir::Value aligned, offset;
  llvm::SmallVector<mlir::Value> strides;

  static MemrefLayout of(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref) {
    auto metadata = b.create<mlir::memref::ExtractStridedMetadataOp>(loc, memref);
    mlir::Value aligned = b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
    return {aligned, metadata.getOffset(), llvm::SmallVector<mlir::Value>(metadata.getStrides())};
  }

  /// The address of the f32 element at `index` (an !llvm.ptr).
  mlir::Value address(mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange index) const {
    mlir::Value element = offset;
    for (auto [i, stride] : llvm::zip_equal(index, strides)) {
      element = b.create<mlir::arith::AddIOp>(loc, element,
                                              b.create<mlir::arith::MulIOp>(loc, i, stride));
    }
    mlir::Value bytes = b.create<mlir::arith::AddIOp>(
        loc, aligned,
        b.create<mlir::arith::MulIOp>(loc, element, indexConstant(b, loc, sizeof(float))));
    mlir::Value integer = b.create<mlir::arith::IndexCastOp>(loc, b.getI64Type(), bytes);
    return b.create<mlir::LLVM::IntToPtrOp>(loc, mlir::LLVM::LLVMPointerType::get(b.getContext()),
                                            integer, mlir::LLVM::DereferenceableAttr());
  }
};

/// The i1 `value` negated.
mlir::Value negate(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value) {
  return b.create<mlir::arith::XOrIOp>(loc, value,
                                       b.create<mlir::arith::ConstantOp>(loc, b.getBoolAttr(true)));
}

/// Calls the runtime's microkernel `name` (declared on first use in the module of `op`, the
/// matmul being lowered: loop bodies under construction have no parent yet) with `args`.
void callUkernel(mlir::OpBuilder& b, tile::MatmulOp op, llvm::StringRef name,
                 mlir::ValueRange args) {
  mlir::Location loc = op.getLoc();
  auto module = op->getParentOfType<mlir::ModuleOp>();
  if (!module.lookupSymbol<mlir::func::FuncOp>(name)) {
    mlir::OpBuilder top(module.getBodyRegion());
    auto declaration = top.create<mlir::func::FuncOp>(
        loc, name, b.getFunctionType(mlir::TypeRange(args), mlir::TypeRange()));
    declaration.setPrivate();
  }
  b.create<mlir::func::CallOp>(loc, name, mlir::TypeRange(), args);
}

/// One matrix product of a (possibly batched) tile.matmul: its sizes, and the batch indices of
/// A, B and C that prefix every element index (empty without batch dimensions).
struct MatmulProblem {
  mutable tile::MatmulOp op;  // mutable: MLIR op handles have non-const accessors
  mlir::Value m, n, k;
  llvm::SmallVector<mlir::Value> aPrefix, bPrefix, cPrefix;
  /// Set when A and B are f32 taken as they are (no conversion, no TF32 rounding): the
  /// microkernels then read them directly.
  std::optional<MemrefLayout> aLayout, bLayout;
  /// With the layouts: the row kernel's microkernel for the CPU the code is for.
  std::string rowUkernel;

  /// op(A)[i][kk]'s address and the strides of i and kk (transposes honoured).
  mlir::Value addressA(mlir::OpBuilder& b, mlir::Value i, mlir::Value kk) const {
    return address(b, *aLayout, aPrefix, op.getTransposeA() ? kk : i, op.getTransposeA() ? i : kk);
  }
  mlir::Value strideA(bool ofK) const { return stride(*aLayout, op.getTransposeA() == ofK); }
  /// op(B)[kk][j]'s address and the strides of kk and j.
  mlir::Value addressB(mlir::OpBuilder& b, mlir::Value kk, mlir::Value j) const {
    return address(b, *bLayout, bPrefix, op.getTransposeB() ? j : kk, op.getTransposeB() ? kk : j);
  }
  mlir::Value strideB(bool ofK) const { return stride(*bLayout, op.getTransposeB() != ofK); }

  /// op(A)[i][kk] and op(B)[kk][j], transposes honoured.
  mlir::Value loadA(mlir::OpBuilder& b, mlir::Value i, mlir::Value kk) const {
    return load(b, op.getLhs(), aPrefix, op.getTransposeA() ? kk : i, op.getTransposeA() ? i : kk);
  }
  mlir::Value loadB(mlir::OpBuilder& b, mlir::Value kk, mlir::Value j) const {
    return load(b, op.getRhs(), bPrefix, op.getTransposeB() ? j : kk, op.getTransposeB() ? kk : j);
  }
  /// C[i][j]'s address (C f32, `layout` its layout).
  mlir::Value addressC(mlir::OpBuilder& b, const MemrefLayout& layout, mlir::Value i,
                       mlir::Value j) const {
    return address(b, layout, cPrefix, i, j);
  }
  /// Finishes C[i, j] from its accumulated product (the epilogue, then the store).
  void storeC(mlir::OpBuilder& b, mlir::Value product, mlir::Value i, mlir::Value j) const {
    llvm::SmallVector<mlir::Value> index(cPrefix.begin(), cPrefix.end());
    index.append({i, j});
    lowering::storeMatmulResult(b, op.getLoc(), op, product, index);
  }

 private:
  /// The stride of the stored row index (`row`) or column index of a 2-D (batched) operand.
  static mlir::Value stride(const MemrefLayout& layout, bool row) {
    return layout.strides[layout.strides.size() - (row ? 2 : 1)];
  }
  mlir::Value address(mlir::OpBuilder& b, const MemrefLayout& layout,
                      const llvm::SmallVector<mlir::Value>& prefix, mlir::Value row,
                      mlir::Value column) const {
    llvm::SmallVector<mlir::Value> index(prefix.begin(), prefix.end());
    index.append({row, column});
    return layout.address(b, op.getLoc(), index);
  }
  mlir::Value load(mlir::OpBuilder& b, mlir::Value memref,
                   const llvm::SmallVector<mlir::Value>& prefix, mlir::Value row,
                   mlir::Value column) const {
    llvm::SmallVector<mlir::Value> index(prefix.begin(), prefix.end());
    index.append({row, column});
    return b.create<mlir::memref::LoadOp>(op.getLoc(), memref, index);
  }
};

/// `problem` at batch `linear` of C's `batchSizes` (row-major), its batch prefixes set: A's and
/// B's batch dimensions broadcast to C's.
MatmulProblem inBatch(mlir::OpBuilder& b, const MatmulProblem& problem,
                      llvm::ArrayRef<mlir::Value> batchSizes, mlir::Value linear) {
  mlir::Location loc = problem.op.getLoc();
  auto rank = [](mlir::Value memref) {
    return llvm::cast<mlir::MemRefType>(memref.getType()).getRank();
  };
  MatmulProblem batch = problem;
  batch.cPrefix = lowering::delinearize(b, loc, linear, batchSizes);
  batch.aPrefix = lowering::broadcastIndex(b, loc, problem.op.getLhs(), batch.cPrefix,
                                           rank(problem.op.getLhs()) - 2);
  batch.bPrefix = lowering::broadcastIndex(b, loc, problem.op.getRhs(), batch.cPrefix,
                                           rank(problem.op.getRhs()) - 2);
  return batch;
}

/// The row kernel's accumulation in generated loops (operands that need converting, or
/// accumulators other than f32): `row` = op(A)[i, :] · op(B) in the accumulator type, K
/// ascending from `zero`.
void lowerRowByLoops(mlir::OpBuilder& rows, mlir::Location loc, const MatmulProblem& problem,
                     mlir::Value i, mlir::Value zero, mlir::Value row) {
  tile::MatmulOp op = problem.op;
  mlir::Value n = problem.n, k = problem.k;
  forEachIndex(rows, loc, mlir::ValueRange{n}, [&](mlir::OpBuilder& in, mlir::ValueRange js) {
    in.create<mlir::memref::StoreOp>(loc, zero, row, js);
  });
  forEachIndex(rows, loc, mlir::ValueRange{k}, [&](mlir::OpBuilder& ks, mlir::ValueRange kk) {
    mlir::Value a = lowering::prepareMatmulInput(ks, loc, op, problem.loadA(ks, i, kk[0]));
    forEachIndex(ks, loc, mlir::ValueRange{n}, [&](mlir::OpBuilder& in, mlir::ValueRange js) {
      mlir::Value bValue =
          lowering::prepareMatmulInput(in, loc, op, problem.loadB(in, kk[0], js[0]));
      mlir::Value accumulator = in.create<mlir::memref::LoadOp>(loc, row, js);
      in.create<mlir::memref::StoreOp>(
          loc, lowering::matmulMultiplyAdd(in, loc, op, accumulator, a, bValue), row, js);
    });
  });
}

// Row by row, K outer and N inner, into a row of accumulators: the inner loop runs over
// contiguous B and C elements (vectorisable), and every C element still sums its K products in
// ascending order from zero — the same order and rounding as a dot product per element (f32
// operands: the runtime's row microkernel; others: generated loops); then the epilogue. Used
// for the f16, f64 and i32 accumulators (the register tile below accumulates in f32), for fewer
// rows than the register tile has, and when the tile's packed copy of B cannot be allocated. With
// batch dimensions, the rows of every batch form one parallel loop (a batch of single rows —
// decoding — still runs on every thread).
void lowerMatmulByRows(mlir::OpBuilder& b, const MatmulProblem& unbatched,
                       llvm::ArrayRef<mlir::Value> batchSizes, ParallelLoops& parallel) {
  tile::MatmulOp op = unbatched.op;
  mlir::Location loc = op.getLoc();
  mlir::Value m = unbatched.m, n = unbatched.n, k = unbatched.k;
  mlir::Type accumulatorType = lowering::matmulAccumulatorType(op);
  // Heap, not stack: N may be large. One row per iteration (rows run in parallel).
  auto rowType = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, accumulatorType);
  mlir::Value zero = lowering::matmulZero(b, loc, op);
  mlir::Value cost = b.create<mlir::arith::MulIOp>(loc, n, k);
  mlir::Value rowsOfAll =
      b.create<mlir::arith::MulIOp>(loc, lowering::product(b, loc, batchSizes), m);
  parallelForEachIndex(
      b, loc, mlir::ValueRange{rowsOfAll}, cost, parallel,
      [&](mlir::OpBuilder& rows, mlir::ValueRange is) {
        mlir::Value i = is[0];
        MatmulProblem problem = unbatched;
        if (!batchSizes.empty()) {
          i = rows.create<mlir::arith::RemUIOp>(loc, is[0], m);
          problem = inBatch(rows, unbatched, batchSizes,
                            rows.create<mlir::arith::DivUIOp>(loc, is[0], m));
        }
        mlir::Value row = rows.create<mlir::memref::AllocOp>(loc, rowType, mlir::ValueRange{n});
        if (problem.aLayout) {
          mlir::Value first = indexConstant(rows, loc, 0);
          callUkernel(rows, op, problem.rowUkernel,
                      {problem.addressA(rows, i, first), problem.strideA(/*ofK=*/true),
                       problem.addressB(rows, first, first), problem.strideB(/*ofK=*/true),
                       problem.strideB(/*ofK=*/false), k, n,
                       MemrefLayout::of(rows, loc, row).address(rows, loc, first)});
        } else {
          lowerRowByLoops(rows, loc, problem, i, zero, row);
        }
        forEachIndex(rows, loc, mlir::ValueRange{n}, [&](mlir::OpBuilder& in, mlir::ValueRange js) {
          problem.storeC(in, in.create<mlir::memref::LoadOp>(loc, row, js), i, js[0]);
        });
        rows.create<mlir::memref::DeallocOp>(loc, row);
      });
}

/// The register tile of the matmul for a vector width: MR rows of NR = `vectors` vectors, and
/// the runtime's microkernel that computes it. AVX-512: 6 x 64 (24 accumulators of 32
/// registers; 4 B vectors and 6 broadcasts per k — measured faster than 12 x 32 on Zen 4); AVX
/// and SSE: 6 x 2 vectors (12 of 16). The rest hold B's vectors, A's broadcast and the products.
struct RegisterTile {
  int64_t lanes;                                       // f32 per vector
  int64_t rows;                                        // MR
  int64_t vectors;                                     // NR / lanes
  std::string ukernel;                                 // runtime/ukernels/matmul_f32.h
  std::string rowUkernel;                              // the row kernel, same instruction set
  int64_t columns() const { return lanes * vectors; }  // NR
};

/// The most columns (K) of a row-major f32 A whose rows register tiles read where they are,
/// unpacked, and the most elements (K · N) of an f32 B they read so: 16 KiB, resident in L1
/// while every row panel reads it. Measured on Zen 3 (docs/performance.md, host matmul).
constexpr int64_t kDirectAColumns = 256;
constexpr int64_t kDirectBElements = 4096;
/// The elements of a row panel's packed A (K · MR) kept on the stack, not the heap: 32 KiB.
constexpr int64_t kStackPackedA = 8192;

/// The register tile for `vectorBits`; `fused`: the policy-fma microkernels (`…_fma`).
RegisterTile registerTile(int64_t vectorBits, bool fused) {
  RegisterTile tile =
      vectorBits >= 512   ? RegisterTile{16, 6, 4, "tessera_uk_matmul_f32_tile_6x64_avx512f",
                                         "tessera_uk_matmul_f32_row_avx512f"}
      : vectorBits >= 256 ? RegisterTile{8, 6, 2, "tessera_uk_matmul_f32_tile_6x16_avx",
                                         "tessera_uk_matmul_f32_row_avx"}
                          : RegisterTile{4, 6, 2, "tessera_uk_matmul_f32_tile_6x8_sse2",
                                         "tessera_uk_matmul_f32_row_sse2"};
  if (fused) {
    tile.ukernel = tile.ukernel + "_fma";
    tile.rowUkernel = tile.rowUkernel + "_fma";
  }
  return tile;
}

/// A register-tiled matmul (accumulating in f32):
/// 1. unless `directB`, B is packed once into panels of NR columns, panel p holding B'[k][p·NR +
///    c] at (p·K + k)·NR + c, zero past N (B' = B converted for accumulation: f16/bf16 to f32,
///    TF32 rounding; transposed when asked) — in parallel over panels;
/// 2. in parallel over panels of MR rows of C, for each panel of NR columns, the register tile's
///    microkernel accumulates an MR × NR tile over the whole of K — acc += a·b, K ascending from
///    zero, the same order as one dot product per element — into a scratch tile, from which the
///    epilogue (bias, activation, conversion) writes the valid part of C; where C is f32 with no
///    epilogue, a tile of the panel's own MR rows and NR columns is written into C directly.
///    The scratch tile, and packed A up to kStackPackedA elements, are on the stack (once per
///    parallel chunk).
/// With `directA` (f32 A whose rows are contiguous and short: a small problem, see lowerMatmul)
/// the tile reads A's rows where they are, the last row panel's tile ending at row M (M ≥ MR
/// here), its first rows, which the panel before computed too, left out of its epilogue;
/// otherwise each row panel of A is packed k-major (A'[r][k] at k·MR + r, zero past M). With
/// `directB` (f32 B whose columns are contiguous, N ≥ NR, small) the tile reads NR columns of
/// B's rows where they are, the last column panel's ending at column N in the same way. f32
/// operands are packed by the runtime's packing microkernels, others by generated loops that
/// convert them. `packB` and `multiply` select the steps (a B shared by every batch is packed
/// once).
void lowerMatmulTiled(mlir::OpBuilder& b, const MatmulProblem& problem, ParallelLoops& parallel,
                      RegisterTile tile, mlir::Value packedB, mlir::Value directA,
                      mlir::Value directB, bool packB, bool multiply) {
  tile::MatmulOp op = problem.op;
  mlir::Location loc = op.getLoc();
  mlir::Value m = problem.m, n = problem.n, k = problem.k;
  const int64_t mr = tile.rows;
  const int64_t nr = tile.columns();
  mlir::Type f32 = b.getF32Type();
  auto buffer = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, f32);
  mlir::Value zeroF32 = b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(0.0f));
  auto constant = [&](mlir::OpBuilder& at, int64_t value) { return indexConstant(at, loc, value); };
  auto mul = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::MulIOp>(loc, x, y);
  };
  auto add = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::AddIOp>(loc, x, y);
  };
  auto sub = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::SubIOp>(loc, x, y);
  };
  auto width = [&](mlir::OpBuilder& at, mlir::Value total, mlir::Value first, int64_t most) {
    return at.create<mlir::arith::MinUIOp>(loc, constant(at, most), sub(at, total, first))
        .getResult();
  };
  // The first of the `most` rows (columns) a tile reads where they are, for the panel starting
  // at `first` of `total` (≥ most): the panel's own, or for the last one those ending at `total`.
  auto inPlaceStart = [&](mlir::OpBuilder& at, mlir::Value total, mlir::Value first,
                          int64_t most) -> mlir::Value {
    return at.create<mlir::arith::MinUIOp>(loc, first, sub(at, total, constant(at, most)));
  };
  // The address of element `at` of a scratch buffer (allocated in a loop body).
  auto bufferAddress = [&](mlir::OpBuilder& at, mlir::Value memref, mlir::Value element) {
    return MemrefLayout::of(at, loc, memref).address(at, loc, element);
  };
  // Packed B's, read once here for every panel.
  const MemrefLayout packedBLayout = MemrefLayout::of(b, loc, packedB);

  // 1. Pack B (not when the tiles read it where it is).
  mlir::Value panels = ceilDiv(b, loc, n, nr);
  if (packB) {
    mlir::Value cost = mul(b, k, constant(b, nr));
    mlir::OpBuilder packing = b;
    if (problem.bLayout) {
      mlir::Value packed = negate(b, loc, directB);
      packing =
          b.create<mlir::scf::IfOp>(loc, packed, /*withElseRegion=*/false).getThenBodyBuilder();
    }
    parallelForEachIndex(
        packing, loc, mlir::ValueRange{panels}, cost, parallel,
        [&](mlir::OpBuilder& at, mlir::ValueRange p) {
          if (problem.bLayout) {
            mlir::Value origin = constant(at, 0);
            callUkernel(at, op, "tessera_uk_matmul_f32_pack_b",
                        {problem.addressB(at, origin, origin), problem.strideB(/*ofK=*/true),
                         problem.strideB(/*ofK=*/false), k, n, p[0], constant(at, nr),
                         packedBLayout.address(at, loc, origin)});
            return;
          }
          mlir::Value first = mul(at, p[0], constant(at, nr));
          mlir::Value columns = width(at, n, first, nr);
          forEachIndex(at, loc, mlir::ValueRange{k}, [&](mlir::OpBuilder& in, mlir::ValueRange kk) {
            mlir::Value row = mul(in, add(in, mul(in, p[0], k), kk[0]), constant(in, nr));
            forEachIndex(
                in, loc, mlir::ValueRange{columns}, [&](mlir::OpBuilder& c, mlir::ValueRange j) {
                  mlir::Value column = add(c, first, j[0]);
                  mlir::Value value =
                      lowering::prepareMatmulInput(c, loc, op, problem.loadB(c, kk[0], column));
                  c.create<mlir::memref::StoreOp>(loc, value, packedB, add(c, row, j[0]));
                });
            mlir::Value padding = sub(in, constant(in, nr), columns);
            forEachIndex(in, loc, mlir::ValueRange{padding},
                         [&](mlir::OpBuilder& c, mlir::ValueRange j) {
                           c.create<mlir::memref::StoreOp>(loc, zeroF32, packedB,
                                                           add(c, add(c, row, columns), j[0]));
                         });
          });
        });
  }

  if (!multiply) return;
  // Where C needs no epilogue (f32, no bias, residual or activation), a tile of the panel's own
  // rows and columns is written by the register tile itself, into C.
  std::optional<MemrefLayout> cLayout;
  if (!op.hasFusedEpilogue() &&
      llvm::cast<mlir::MemRefType>(op.getOutput().getType()).getElementType().isF32()) {
    cLayout = MemrefLayout::of(b, loc, op.getOutput());
  }
  auto equals = [&](mlir::OpBuilder& at, mlir::Value x, int64_t value) -> mlir::Value {
    return at.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, x,
                                          constant(at, value));
  };
  auto both = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::AndIOp>(loc, x, y);
  };
  // 2. Row panels of C.
  mlir::Value rowPanels = ceilDiv(b, loc, m, mr);
  parallelForEachIndex(
      b, loc, mlir::ValueRange{rowPanels}, mul(b, mul(b, n, k), constant(b, mr)), parallel,
      [&](mlir::OpBuilder& at, mlir::ValueRange panel) {
        // The panel's scratch tile and (up to kStackPackedA elements) packed A: statically
        // shaped stack buffers at the top of the loop body, which the outlined parallel body
        // allocates once per chunk (outlineParallelLoop).
        mlir::IntegerAttr cacheLine = at.getI64IntegerAttr(64);
        mlir::Value scratch = at.create<mlir::memref::AllocaOp>(
            loc, mlir::MemRefType::get({mr * nr}, f32), cacheLine);
        mlir::Value stackA = at.create<mlir::memref::AllocaOp>(
            loc, mlir::MemRefType::get({kStackPackedA}, f32), cacheLine);
        mlir::Value firstRow = mul(at, panel[0], constant(at, mr));
        mlir::Value rows = width(at, m, firstRow, mr);
        mlir::Value origin = constant(at, 0);
        // The tile's A — its address and strides, and how many of its rows the epilogue skips:
        // A's rows where they are (directA), or a packed copy, zero past M, on the heap when K
        // makes it larger than the stack buffer.
        mlir::Value packedSize = at.create<mlir::arith::SelectOp>(loc, directA, constant(at, 1),
                                                                  mul(at, k, constant(at, mr)));
        mlir::Value onStack = at.create<mlir::arith::CmpIOp>(
            loc, mlir::arith::CmpIPredicate::ule, packedSize, constant(at, kStackPackedA));
        auto allocation = at.create<mlir::scf::IfOp>(loc, mlir::TypeRange{buffer}, onStack,
                                                     /*withElseRegion=*/true);
        {
          mlir::OpBuilder stack = allocation.getThenBodyBuilder();
          stack.create<mlir::scf::YieldOp>(
              loc, stack.create<mlir::memref::CastOp>(loc, buffer, stackA).getResult());
          mlir::OpBuilder heap = allocation.getElseBodyBuilder();
          heap.create<mlir::scf::YieldOp>(
              loc, heap.create<mlir::memref::AllocOp>(loc, buffer, mlir::ValueRange{packedSize})
                       .getResult());
        }
        mlir::Value packedA = allocation.getResult(0);
        mlir::Value aAddress = bufferAddress(at, packedA, origin);
        mlir::Value aStrideM = constant(at, 1), aStrideK = constant(at, mr), skippedRows = origin;
        if (problem.aLayout) {
          mlir::Value tileRow = inPlaceStart(at, m, firstRow, mr);
          auto select = [&](mlir::Value inPlace, mlir::Value packed) -> mlir::Value {
            return at.create<mlir::arith::SelectOp>(loc, directA, inPlace, packed);
          };
          aAddress = select(problem.addressA(at, tileRow, origin), aAddress);
          aStrideM = select(problem.strideA(/*ofK=*/false), aStrideM);
          aStrideK = select(problem.strideA(/*ofK=*/true), aStrideK);
          skippedRows = select(sub(at, firstRow, tileRow), skippedRows);
          mlir::OpBuilder packing =
              at.create<mlir::scf::IfOp>(loc, negate(at, loc, directA), /*withElseRegion=*/false)
                  .getThenBodyBuilder();
          callUkernel(packing, op, "tessera_uk_matmul_f32_pack_a",
                      {problem.addressA(packing, firstRow, origin), problem.strideA(/*ofK=*/false),
                       problem.strideA(/*ofK=*/true), rows, k, constant(packing, mr),
                       bufferAddress(packing, packedA, origin)});
        } else {
          forEachIndex(
              at, loc, mlir::ValueRange{rows}, [&](mlir::OpBuilder& in, mlir::ValueRange r) {
                mlir::Value i = add(in, firstRow, r[0]);
                forEachIndex(
                    in, loc, mlir::ValueRange{k}, [&](mlir::OpBuilder& c, mlir::ValueRange kk) {
                      mlir::Value value =
                          lowering::prepareMatmulInput(c, loc, op, problem.loadA(c, i, kk[0]));
                      c.create<mlir::memref::StoreOp>(loc, value, packedA,
                                                      add(c, mul(c, kk[0], constant(c, mr)), r[0]));
                    });
              });
          mlir::Value missing = sub(at, constant(at, mr), rows);
          forEachIndex(at, loc, mlir::ValueRange{missing, k},
                       [&](mlir::OpBuilder& in, mlir::ValueRange rk) {
                         mlir::Value r = add(in, rows, rk[0]);
                         in.create<mlir::memref::StoreOp>(
                             loc, zeroF32, packedA, add(in, mul(in, rk[1], constant(in, mr)), r));
                       });
        }
        mlir::Value scratchAddress = bufferAddress(at, scratch, origin);
        mlir::Value wholeRows = both(at, equals(at, rows, mr), equals(at, skippedRows, 0));
        forEachIndex(
            at, loc, mlir::ValueRange{panels}, [&](mlir::OpBuilder& in, mlir::ValueRange p) {
              mlir::Value firstColumn = mul(in, p[0], constant(in, nr));
              mlir::Value columns = width(in, n, firstColumn, nr);
              // The tile's B: the packed panel, or NR columns of B's rows (directB).
              mlir::Value bAddress =
                  packedBLayout.address(in, loc, mul(in, mul(in, p[0], k), constant(in, nr)));
              mlir::Value bStrideK = constant(in, nr);
              mlir::Value skippedColumns = constant(in, 0);
              if (problem.bLayout) {
                mlir::Value tileColumn = inPlaceStart(in, n, firstColumn, nr);
                auto select = [&](mlir::Value inPlace, mlir::Value packed) -> mlir::Value {
                  return in.create<mlir::arith::SelectOp>(loc, directB, inPlace, packed);
                };
                bAddress = select(problem.addressB(in, constant(in, 0), tileColumn), bAddress);
                bStrideK = select(problem.strideB(/*ofK=*/true), bStrideK);
                skippedColumns = select(sub(in, firstColumn, tileColumn), skippedColumns);
              }
              // The register tile over the whole of K, into a scratch tile whose valid part the
              // epilogue finishes — or straight into C.
              auto intoScratch = [&](mlir::OpBuilder& into) {
                callUkernel(into, op, tile.ukernel,
                            {aAddress, aStrideM, aStrideK, bAddress, bStrideK, k, scratchAddress,
                             constant(into, nr)});
                forEachIndex(
                    into, loc, mlir::ValueRange{rows, columns},
                    [&](mlir::OpBuilder& e, mlir::ValueRange rc) {
                      mlir::Value element =
                          add(e, mul(e, add(e, skippedRows, rc[0]), constant(e, nr)),
                              add(e, skippedColumns, rc[1]));
                      mlir::Value sum = e.create<mlir::memref::LoadOp>(loc, scratch, element);
                      problem.storeC(e, sum, add(e, firstRow, rc[0]), add(e, firstColumn, rc[1]));
                    });
              };
              if (!cLayout) return intoScratch(in);
              auto whole = in.create<mlir::scf::IfOp>(
                  loc,
                  both(in, wholeRows,
                       both(in, equals(in, columns, nr), equals(in, skippedColumns, 0))),
                  /*withElseRegion=*/true);
              mlir::OpBuilder direct = whole.getThenBodyBuilder();
              callUkernel(direct, op, tile.ukernel,
                          {aAddress, aStrideM, aStrideK, bAddress, bStrideK, k,
                           problem.addressC(direct, *cLayout, firstRow, firstColumn),
                           cLayout->strides[cLayout->strides.size() - 2]});
              mlir::OpBuilder partial = whole.getElseBodyBuilder();
              intoScratch(partial);
            });
        mlir::OpBuilder release =
            at.create<mlir::scf::IfOp>(loc, negate(at, loc, onStack), /*withElseRegion=*/false)
                .getThenBodyBuilder();
        release.create<mlir::memref::DeallocOp>(loc, packedA);
      });
}

}  // namespace

/// The tiled kernel when it pays and its packed copy of B could be allocated; else the row
/// kernel (the same result, bit for bit). Below MR rows of C (a batch of one) the padded
/// register tile would do up to MR times the work, and a failed allocation of packed B (as
/// large as B in f32) must not crash the caller. The tiled kernel runs the batches one after the
/// other, each product in parallel, and packs a B without batch dimensions of its own once for
/// all of them; the row kernel runs the rows of all batches in one parallel loop.
void lowerMatmul(mlir::OpBuilder& b, tile::MatmulOp op, ParallelLoops& parallel,
                 int64_t vectorBits) {
  mlir::Location loc = op.getLoc();
  auto outputSizes = memrefSizes(b, loc, op.getOutput());
  const int64_t rankC = static_cast<int64_t>(outputSizes.size());
  const int64_t rankA = llvm::cast<mlir::MemRefType>(op.getLhs().getType()).getRank();
  const int64_t rankB = llvm::cast<mlir::MemRefType>(op.getRhs().getType()).getRank();
  MatmulProblem problem{op};
  problem.m = outputSizes[rankC - 2];
  problem.n = outputSizes[rankC - 1];
  problem.k = memrefSizes(b, loc, op.getLhs())[rankA - (op.getTransposeA() ? 2 : 1)];
  auto batchSizes = llvm::ArrayRef<mlir::Value>(outputSizes).drop_back(2);
  // Runs `body` for every batch of C, one after another, with `problem`'s prefixes set.
  auto forEachBatch = [&](mlir::OpBuilder& at,
                          llvm::function_ref<void(mlir::OpBuilder&, const MatmulProblem&)> body) {
    if (batchSizes.empty()) return body(at, problem);
    forEachIndex(at, loc, mlir::ValueRange{lowering::product(at, loc, batchSizes)},
                 [&](mlir::OpBuilder& in, mlir::ValueRange linear) {
                   body(in, inBatch(in, problem, batchSizes, linear[0]));
                 });
  };
  if (!lowering::matmulAccumulatorType(op).isF32()) {
    return lowerMatmulByRows(b, problem, batchSizes, parallel);
  }
  auto elementOf = [](mlir::Value memref) {
    return llvm::cast<mlir::MemRefType>(memref.getType()).getElementType();
  };
  const tile::NumericPolicy policy = op.getNumericPolicyOrDefault();
  const RegisterTile tile = registerTile(vectorBits, policy == tile::NumericPolicy::fma);
  if (elementOf(op.getLhs()).isF32() && elementOf(op.getRhs()).isF32() &&
      policy != tile::NumericPolicy::tf32) {
    problem.aLayout = MemrefLayout::of(b, loc, op.getLhs());
    problem.bLayout = MemrefLayout::of(b, loc, op.getRhs());
    problem.rowUkernel = tile.rowUkernel;
  }
  mlir::Value m = problem.m, n = problem.n, k = problem.k;
  mlir::Value one = indexConstant(b, loc, 1);
  mlir::Value enoughRows = b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::uge, m,
                                                         indexConstant(b, loc, tile.rows));
  mlir::Value packedSize = b.create<mlir::arith::MulIOp>(
      loc,
      b.create<mlir::arith::MulIOp>(loc, ceilDiv(b, loc, n, tile.columns()),
                                    indexConstant(b, loc, tile.columns())),
      b.create<mlir::arith::MaxUIOp>(loc, k, one));
  // Small f32 problems: the tiles read A's rows where they are when they are contiguous and
  // short, and B when its columns are contiguous and span a tile — no packed copies (their
  // allocation and pass over the operand cost more than they save while it is cache-resident;
  // long rows of A, read six at a time at a stride of a whole row, would compete for the same
  // cache sets).
  auto constantBool = [&](bool value) -> mlir::Value {
    return b.create<mlir::arith::ConstantOp>(loc, b.getBoolAttr(value));
  };
  auto holds = [&](mlir::arith::CmpIPredicate predicate, mlir::Value x, int64_t bound) {
    return b.create<mlir::arith::CmpIOp>(loc, predicate, x, indexConstant(b, loc, bound));
  };
  auto both = [&](mlir::Value x, mlir::Value y) -> mlir::Value {
    return b.create<mlir::arith::AndIOp>(loc, x, y);
  };
  using mlir::arith::CmpIPredicate;
  mlir::Value directA = constantBool(false), directB = constantBool(false);
  if (problem.aLayout) {
    directA = both(holds(CmpIPredicate::eq, problem.strideA(/*ofK=*/true), 1),
                   holds(CmpIPredicate::ule, k, kDirectAColumns));
    directB = both(holds(CmpIPredicate::eq, problem.strideB(/*ofK=*/false), 1),
                   both(holds(CmpIPredicate::uge, n, tile.columns()),
                        holds(CmpIPredicate::ule, b.create<mlir::arith::MulIOp>(loc, k, n),
                              kDirectBElements)));
  }
  mlir::Value packs = b.create<mlir::arith::AndIOp>(loc, enoughRows, negate(b, loc, directB));
  mlir::Value size = b.create<mlir::arith::SelectOp>(loc, packs, packedSize, one);
  auto buffer = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, b.getF32Type());
  mlir::Value packedB = b.create<mlir::memref::AllocOp>(loc, buffer, mlir::ValueRange{size});
  mlir::Value address = b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, packedB);
  mlir::Value allocated = b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ne,
                                                        address, indexConstant(b, loc, 0));
  auto choice = b.create<mlir::scf::IfOp>(
      loc, b.create<mlir::arith::AndIOp>(loc, enoughRows, allocated), /*withElseRegion=*/true);
  mlir::OpBuilder tiled = choice.getThenBodyBuilder();
  const bool sharedB = rankB == 2;
  if (sharedB) {
    lowerMatmulTiled(tiled, problem, parallel, tile, packedB, directA, directB, /*packB=*/true,
                     /*multiply=*/false);
  }
  forEachBatch(tiled, [&](mlir::OpBuilder& at, const MatmulProblem& batch) {
    lowerMatmulTiled(at, batch, parallel, tile, packedB, directA, directB, /*packB=*/!sharedB,
                     /*multiply=*/true);
  });
  mlir::OpBuilder rows = choice.getElseBodyBuilder();
  lowerMatmulByRows(rows, problem, batchSizes, parallel);
  b.create<mlir::memref::DeallocOp>(loc, packedB);
}

}  // namespace tessera::host
