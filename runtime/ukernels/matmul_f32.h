// The host matmul's microkernels (ukernels), compiled once with the project — each register-tile
// variant for its instruction set — and linked into every host module that multiplies f32, as
// IREE links its ukernels: a module's own code is only its loops, its epilogue and these calls.
// The host lowering (dialect/conversion/tile_to_loops/HostMatmul.cpp) names them; their
// results are the generated code's, bit for bit: every C element sums its K products in
// ascending order from zero — under policy f32 each product rounded to f32 and then added (no
// fused multiply-add; this library is built with -ffp-contract=off), under policy fma (the
// kernels named `_fma`) each product added with one rounding, fma(a, b, acc).
#ifndef TESSERA_RUNTIME_UKERNELS_MATMUL_F32_H_
#define TESSERA_RUNTIME_UKERNELS_MATMUL_F32_H_

#include <cstdint>

#include "runtime/host_executable.h"

extern "C" {

/// Packs panel `panel` of B (k × n, element [kk][j] at b[kk·stride_k + j·stride_n]) into the
/// panels of `packed`: its nr columns from panel·nr at packed[(panel·k + kk)·nr + c], zero past
/// column n.
void tessera_uk_matmul_f32_pack_b(const float* b, int64_t stride_k, int64_t stride_n, int64_t k,
                                  int64_t n, int64_t panel, int64_t nr, float* packed);

/// Packs `rows` (≤ mr) rows of A (element [i][kk] at a[i·stride_m + kk·stride_k]) k-major:
/// packed[kk·mr + r], zero for rows r ≥ `rows`.
void tessera_uk_matmul_f32_pack_a(const float* a, int64_t stride_m, int64_t stride_k, int64_t rows,
                                  int64_t k, int64_t mr, float* packed);

/// The register tiles: tile[r·stride_tile + c] = Σ_{kk < k, ascending} a[r·stride_am +
/// kk·stride_ak] · b[kk·stride_bk + c], for the 6 rows and NR columns of the name. A is packed
/// k-major (stride_am 1, stride_ak 6) or read where it is (its row and K strides); B is a packed
/// panel (stride_bk NR) or NR contiguous columns of B's rows (stride_bk its row stride); the tile
/// is a scratch tile (stride_tile NR) or, needing no epilogue, C itself (its row stride). 6x8: SSE2
/// (every x86-64), 6x16: AVX, 6x64: AVX-512F — called only by code generated for a CPU that has
/// it. The `_fma` tiles fuse each step; those of the SSE2 and AVX levels use FMA3 where the CPU
/// has it and std::fma otherwise (the same bits).
#define TESSERA_UK_TILE(name)                                                     \
  void name(const float* a, int64_t stride_am, int64_t stride_ak, const float* b, \
            int64_t stride_bk, int64_t k, float* tile, int64_t stride_tile)
TESSERA_UK_TILE(tessera_uk_matmul_f32_tile_6x8_sse2);
TESSERA_UK_TILE(tessera_uk_matmul_f32_tile_6x16_avx);
TESSERA_UK_TILE(tessera_uk_matmul_f32_tile_6x64_avx512f);
TESSERA_UK_TILE(tessera_uk_matmul_f32_tile_6x8_sse2_fma);
TESSERA_UK_TILE(tessera_uk_matmul_f32_tile_6x16_avx_fma);
TESSERA_UK_TILE(tessera_uk_matmul_f32_tile_6x64_avx512f_fma);
#undef TESSERA_UK_TILE

/// One row of C before its epilogue: acc[j] = Σ_{kk < k, ascending} a[kk·stride_ak] ·
/// b[kk·stride_k + j·stride_n] for j < n (the row kernel: fewer rows than a register tile has,
/// or no memory for packed B), vectorised over j for the instruction set of its name (the same
/// CPUs as the tiles'; `_fma`: fused steps, as the tiles').
#define TESSERA_UK_ROW(name)                                                                       \
  void name(const float* a, int64_t stride_ak, const float* b, int64_t stride_k, int64_t stride_n, \
            int64_t k, int64_t n, float* acc)
TESSERA_UK_ROW(tessera_uk_matmul_f32_row_sse2);
TESSERA_UK_ROW(tessera_uk_matmul_f32_row_avx);
TESSERA_UK_ROW(tessera_uk_matmul_f32_row_avx512f);
TESSERA_UK_ROW(tessera_uk_matmul_f32_row_sse2_fma);
TESSERA_UK_ROW(tessera_uk_matmul_f32_row_avx_fma);
TESSERA_UK_ROW(tessera_uk_matmul_f32_row_avx512f_fma);
#undef TESSERA_UK_ROW
}

namespace tessera::runtime {

/// The ukernels' names and addresses, for the host code loader.
RuntimeSymbolList MatmulUkernelSymbols();

/// What the `_fma` tiles (of `columns` = NR) and row kernels of the SSE2 and AVX levels run on a
/// CPU without FMA3: std::fma, element by element — the same bits, slower. Declared here so the
/// tests run them on CPUs that have FMA3 too.
void FusedTileWithoutFma3(const float* a, int64_t stride_am, int64_t stride_ak, const float* b,
                          int64_t stride_bk, int64_t k, int64_t columns, float* tile,
                          int64_t stride_tile);
void FusedRowWithoutFma3(const float* a, int64_t stride_ak, const float* b, int64_t stride_k,
                         int64_t stride_n, int64_t k, int64_t n, float* acc);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_UKERNELS_MATMUL_F32_H_
