// The host matmul's microkernels (matmul_f32.h). Each register tile is written out with its
// instruction set's intrinsics in a function of that target (no file-wide -m flags, so nothing
// shared with the rest of the program is compiled for a CPU it may not have); each accumulator
// is a named register. The library is built with -ffp-contract=off: a product and a sum are
// separate instructions unless a kernel asks for a fused multiply-add by name (the `_fma`
// kernels, policy `fma`).
#include "runtime/ukernels/matmul_f32.h"

#include <immintrin.h>

#include <cmath>

// One k step of one accumulator, with the intrinsics of prefix `v` (_mm, _mm256, _mm512):
// acc + x·y, the product rounded and then the sum (policy f32), or fma(x, y, acc), one
// rounding (policy fma).
#define TESSERA_UK_MUL_ADD(v, acc, x, y) acc = v##_add_ps(acc, v##_mul_ps(x, y))
#define TESSERA_UK_FUSED(v, acc, x, y) acc = v##_fmadd_ps(x, y, acc)

// Row r of a tile of 2 (4) vectors: A's element broadcast, then a step per vector of B.
#define TESSERA_UK_ROW2(step, v, r)                  \
  do {                                               \
    const auto ar = v##_set1_ps(a[(r) * stride_am]); \
    step(v, c##r##0, ar, b0);                        \
    step(v, c##r##1, ar, b1);                        \
  } while (0)
#define TESSERA_UK_ROW4(step, v, r)                  \
  do {                                               \
    const auto ar = v##_set1_ps(a[(r) * stride_am]); \
    step(v, c##r##0, ar, b0);                        \
    step(v, c##r##1, ar, b1);                        \
    step(v, c##r##2, ar, b2);                        \
    step(v, c##r##3, ar, b3);                        \
  } while (0)
#define TESSERA_UK_ROWS(row, step, v) \
  row(step, v, 0);                    \
  row(step, v, 1);                    \
  row(step, v, 2);                    \
  row(step, v, 3);                    \
  row(step, v, 4);                    \
  row(step, v, 5)

// Row r of the tile stored: its vectors of `lanes` at tile + r·stride_tile.
#define TESSERA_UK_STORE2(v, r, lanes)                          \
  do {                                                          \
    v##_storeu_ps(tile + (r) * stride_tile, c##r##0);           \
    v##_storeu_ps(tile + (r) * stride_tile + (lanes), c##r##1); \
  } while (0)
#define TESSERA_UK_STORE4(v, r, lanes)                              \
  do {                                                              \
    v##_storeu_ps(tile + (r) * stride_tile, c##r##0);               \
    v##_storeu_ps(tile + (r) * stride_tile + (lanes), c##r##1);     \
    v##_storeu_ps(tile + (r) * stride_tile + 2 * (lanes), c##r##2); \
    v##_storeu_ps(tile + (r) * stride_tile + 3 * (lanes), c##r##3); \
  } while (0)
#define TESSERA_UK_STORES(store, v, lanes) \
  store(v, 0, lanes);                      \
  store(v, 1, lanes);                      \
  store(v, 2, lanes);                      \
  store(v, 3, lanes);                      \
  store(v, 4, lanes);                      \
  store(v, 5, lanes)

// The body of a 6-row tile of two vectors of type `vec` per row (6x8 SSE, 6x16 AVX), its k
// step `step`.
#define TESSERA_UK_TILE2(vec, v, lanes, step)                                        \
  vec c00 = v##_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00; \
  vec c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;              \
  for (int64_t kk = 0; kk < k; ++kk) {                                               \
    const vec b0 = v##_loadu_ps(b), b1 = v##_loadu_ps(b + (lanes));                  \
    TESSERA_UK_ROWS(TESSERA_UK_ROW2, step, v);                                       \
    a += stride_ak;                                                                  \
    b += stride_bk;                                                                  \
  }                                                                                  \
  TESSERA_UK_STORES(TESSERA_UK_STORE2, v, lanes)

// The body of the 6 x 64 AVX-512 tile (four vectors per row), its k step `step`.
#define TESSERA_UK_TILE4(step)                                                        \
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c02 = c00, c03 = c00;                  \
  __m512 c10 = c00, c11 = c00, c12 = c00, c13 = c00, c20 = c00, c21 = c00, c22 = c00; \
  __m512 c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00, c40 = c00, c41 = c00; \
  __m512 c42 = c00, c43 = c00, c50 = c00, c51 = c00, c52 = c00, c53 = c00;            \
  for (int64_t kk = 0; kk < k; ++kk) {                                                \
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);               \
    const __m512 b2 = _mm512_loadu_ps(b + 32), b3 = _mm512_loadu_ps(b + 48);          \
    TESSERA_UK_ROWS(TESSERA_UK_ROW4, step, _mm512);                                   \
    a += stride_ak;                                                                   \
    b += stride_bk;                                                                   \
  }                                                                                   \
  TESSERA_UK_STORES(TESSERA_UK_STORE4, _mm512, 16)

namespace {

/// Whether this CPU has FMA3 (checked once): the fused kernels of the SSE and AVX levels use it
/// where it is, and std::fma otherwise (the same bits, slower).
bool CpuHasFma() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("fma") != 0;
  }();
  return has;
}

/// acc + x·y with the rounding of the kernel's policy.
template <bool kFused>
__attribute__((always_inline)) inline float MultiplyAdd(float acc, float x, float y) {
  if constexpr (kFused) {
    return std::fma(x, y, acc);
  } else {
    return acc + x * y;
  }
}

/// out[j] = out[j] + weight · row[j·stride] for j < n, with the policy's rounding (contiguous
/// rows vectorise, as wide as the instruction set of the function it is inlined into).
template <bool kFused>
__attribute__((always_inline)) inline void AccumulateRow(float* __restrict out,
                                                         const float* __restrict row,
                                                         int64_t stride, float weight, int64_t n) {
  if (stride == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = MultiplyAdd<kFused>(out[j], weight, row[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = MultiplyAdd<kFused>(out[j], weight, row[j * stride]);
  }
}

/// The row kernel (matmul_f32.h), inlined into each instruction set's entry point.
template <bool kFused>
__attribute__((always_inline)) inline void MatmulRow(const float* a, int64_t stride_ak,
                                                     const float* b, int64_t stride_k,
                                                     int64_t stride_n, int64_t k, int64_t n,
                                                     float* acc) {
  for (int64_t j = 0; j < n; ++j) acc[j] = 0.0f;
  for (int64_t kk = 0; kk < k; ++kk) {
    AccumulateRow<kFused>(acc, b + kk * stride_k, stride_n, a[kk * stride_ak], n);
  }
}

__attribute__((target("fma"))) void FusedTile6x8(const float* a, int64_t stride_am,
                                                 int64_t stride_ak, const float* b,
                                                 int64_t stride_bk, int64_t k, float* tile,
                                                 int64_t stride_tile) {
  TESSERA_UK_TILE2(__m128, _mm, 4, TESSERA_UK_FUSED);
}

__attribute__((target("avx,fma"))) void FusedTile6x16(const float* a, int64_t stride_am,
                                                      int64_t stride_ak, const float* b,
                                                      int64_t stride_bk, int64_t k, float* tile,
                                                      int64_t stride_tile) {
  TESSERA_UK_TILE2(__m256, _mm256, 8, TESSERA_UK_FUSED);
}

/// The fused row kernel with FMA3 (AVX, 256-bit vectors: FMA3 implies them).
__attribute__((target("avx,fma"))) void FusedRowFma3(const float* a, int64_t stride_ak,
                                                     const float* b, int64_t stride_k,
                                                     int64_t stride_n, int64_t k, int64_t n,
                                                     float* acc) {
  MatmulRow<true>(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

}  // namespace

extern "C" {

void tessera_uk_matmul_f32_pack_b(const float* b, int64_t stride_k, int64_t stride_n, int64_t k,
                                  int64_t n, int64_t panel, int64_t nr, float* packed) {
  const int64_t first = panel * nr;
  const int64_t columns = n - first < nr ? n - first : nr;
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* row = b + kk * stride_k + first * stride_n;
    float* out = packed + (panel * k + kk) * nr;
    if (stride_n == 1) {
      for (int64_t c = 0; c < columns; ++c) out[c] = row[c];
    } else {
      for (int64_t c = 0; c < columns; ++c) out[c] = row[c * stride_n];
    }
    for (int64_t c = columns; c < nr; ++c) out[c] = 0.0f;
  }
}

void tessera_uk_matmul_f32_pack_a(const float* a, int64_t stride_m, int64_t stride_k, int64_t rows,
                                  int64_t k, int64_t mr, float* packed) {
  // Offsets from `a` only for elements that exist: an empty A may be a null pointer.
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t kk = 0; kk < k; ++kk) packed[kk * mr + r] = a[r * stride_m + kk * stride_k];
  }
  for (int64_t r = rows; r < mr; ++r) {
    for (int64_t kk = 0; kk < k; ++kk) packed[kk * mr + r] = 0.0f;
  }
}

void tessera_uk_matmul_f32_tile_6x8_sse2(const float* a, int64_t stride_am, int64_t stride_ak,
                                         const float* b, int64_t stride_bk, int64_t k, float* tile,
                                         int64_t stride_tile) {
  TESSERA_UK_TILE2(__m128, _mm, 4, TESSERA_UK_MUL_ADD);
}

__attribute__((target("avx"))) void tessera_uk_matmul_f32_tile_6x16_avx(
    const float* a, int64_t stride_am, int64_t stride_ak, const float* b, int64_t stride_bk,
    int64_t k, float* tile, int64_t stride_tile) {
  TESSERA_UK_TILE2(__m256, _mm256, 8, TESSERA_UK_MUL_ADD);
}

__attribute__((target("avx512f"))) void tessera_uk_matmul_f32_tile_6x64_avx512f(
    const float* a, int64_t stride_am, int64_t stride_ak, const float* b, int64_t stride_bk,
    int64_t k, float* tile, int64_t stride_tile) {
  TESSERA_UK_TILE4(TESSERA_UK_MUL_ADD);
}

void tessera_uk_matmul_f32_tile_6x8_sse2_fma(const float* a, int64_t stride_am, int64_t stride_ak,
                                             const float* b, int64_t stride_bk, int64_t k,
                                             float* tile, int64_t stride_tile) {
  if (CpuHasFma()) return FusedTile6x8(a, stride_am, stride_ak, b, stride_bk, k, tile, stride_tile);
  tessera::runtime::FusedTileWithoutFma3(a, stride_am, stride_ak, b, stride_bk, k, 8, tile,
                                         stride_tile);
}

void tessera_uk_matmul_f32_tile_6x16_avx_fma(const float* a, int64_t stride_am, int64_t stride_ak,
                                             const float* b, int64_t stride_bk, int64_t k,
                                             float* tile, int64_t stride_tile) {
  if (CpuHasFma())
    return FusedTile6x16(a, stride_am, stride_ak, b, stride_bk, k, tile, stride_tile);
  tessera::runtime::FusedTileWithoutFma3(a, stride_am, stride_ak, b, stride_bk, k, 16, tile,
                                         stride_tile);
}

__attribute__((target("avx512f,fma"))) void tessera_uk_matmul_f32_tile_6x64_avx512f_fma(
    const float* a, int64_t stride_am, int64_t stride_ak, const float* b, int64_t stride_bk,
    int64_t k, float* tile, int64_t stride_tile) {
  TESSERA_UK_TILE4(TESSERA_UK_FUSED);
}

void tessera_uk_matmul_f32_row_sse2(const float* a, int64_t stride_ak, const float* b,
                                    int64_t stride_k, int64_t stride_n, int64_t k, int64_t n,
                                    float* acc) {
  MatmulRow<false>(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

__attribute__((target("avx"))) void tessera_uk_matmul_f32_row_avx(const float* a, int64_t stride_ak,
                                                                  const float* b, int64_t stride_k,
                                                                  int64_t stride_n, int64_t k,
                                                                  int64_t n, float* acc) {
  MatmulRow<false>(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

__attribute__((target("avx512f"))) void tessera_uk_matmul_f32_row_avx512f(
    const float* a, int64_t stride_ak, const float* b, int64_t stride_k, int64_t stride_n,
    int64_t k, int64_t n, float* acc) {
  MatmulRow<false>(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

void tessera_uk_matmul_f32_row_sse2_fma(const float* a, int64_t stride_ak, const float* b,
                                        int64_t stride_k, int64_t stride_n, int64_t k, int64_t n,
                                        float* acc) {
  if (CpuHasFma()) return FusedRowFma3(a, stride_ak, b, stride_k, stride_n, k, n, acc);
  tessera::runtime::FusedRowWithoutFma3(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

void tessera_uk_matmul_f32_row_avx_fma(const float* a, int64_t stride_ak, const float* b,
                                       int64_t stride_k, int64_t stride_n, int64_t k, int64_t n,
                                       float* acc) {
  if (CpuHasFma()) return FusedRowFma3(a, stride_ak, b, stride_k, stride_n, k, n, acc);
  tessera::runtime::FusedRowWithoutFma3(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

__attribute__((target("avx512f,fma"))) void tessera_uk_matmul_f32_row_avx512f_fma(
    const float* a, int64_t stride_ak, const float* b, int64_t stride_k, int64_t stride_n,
    int64_t k, int64_t n, float* acc) {
  MatmulRow<true>(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

}  // extern "C"

namespace tessera::runtime {

void FusedTileWithoutFma3(const float* a, int64_t stride_am, int64_t stride_ak, const float* b,
                          int64_t stride_bk, int64_t k, int64_t columns, float* tile,
                          int64_t stride_tile) {
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = 0; c < columns; ++c) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) {
        acc = std::fma(a[r * stride_am + kk * stride_ak], b[kk * stride_bk + c], acc);
      }
      tile[r * stride_tile + c] = acc;
    }
  }
}

void FusedRowWithoutFma3(const float* a, int64_t stride_ak, const float* b, int64_t stride_k,
                         int64_t stride_n, int64_t k, int64_t n, float* acc) {
  MatmulRow<true>(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

RuntimeSymbolList MatmulUkernelSymbols() {
  return {
      {"tessera_uk_matmul_f32_pack_b", reinterpret_cast<void*>(&tessera_uk_matmul_f32_pack_b)},
      {"tessera_uk_matmul_f32_pack_a", reinterpret_cast<void*>(&tessera_uk_matmul_f32_pack_a)},
      {"tessera_uk_matmul_f32_tile_6x8_sse2",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_tile_6x8_sse2)},
      {"tessera_uk_matmul_f32_tile_6x16_avx",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_tile_6x16_avx)},
      {"tessera_uk_matmul_f32_tile_6x64_avx512f",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_tile_6x64_avx512f)},
      {"tessera_uk_matmul_f32_row_sse2", reinterpret_cast<void*>(&tessera_uk_matmul_f32_row_sse2)},
      {"tessera_uk_matmul_f32_row_avx", reinterpret_cast<void*>(&tessera_uk_matmul_f32_row_avx)},
      {"tessera_uk_matmul_f32_row_avx512f",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_row_avx512f)},
      {"tessera_uk_matmul_f32_tile_6x8_sse2_fma",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_tile_6x8_sse2_fma)},
      {"tessera_uk_matmul_f32_tile_6x16_avx_fma",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_tile_6x16_avx_fma)},
      {"tessera_uk_matmul_f32_tile_6x64_avx512f_fma",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_tile_6x64_avx512f_fma)},
      {"tessera_uk_matmul_f32_row_sse2_fma",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_row_sse2_fma)},
      {"tessera_uk_matmul_f32_row_avx_fma",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_row_avx_fma)},
      {"tessera_uk_matmul_f32_row_avx512f_fma",
       reinterpret_cast<void*>(&tessera_uk_matmul_f32_row_avx512f_fma)},
  };
}

}  // namespace tessera::runtime

#undef TESSERA_UK_TILE4
#undef TESSERA_UK_TILE2
#undef TESSERA_UK_STORES
#undef TESSERA_UK_STORE4
#undef TESSERA_UK_STORE2
#undef TESSERA_UK_ROWS
#undef TESSERA_UK_ROW4
#undef TESSERA_UK_ROW2
#undef TESSERA_UK_FUSED
#undef TESSERA_UK_MUL_ADD
