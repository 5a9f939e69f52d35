// The host matmul's microkernels (matmul_f32.h). Each register tile is written out with its
// instruction set's intrinsics in a function of that target (no file-wide -m flags, so nothing
// shared with the rest of the program is compiled for a CPU it may not have); each accumulator
// is a named register. Products and sums are separate instructions: the library is built with
// -ffp-contract=off and no FMA target.
#include "runtime/ukernels/matmul_f32.h"

#include <immintrin.h>

// acc = acc + a · b, for the named accumulators of one row (r) and its vectors.
#define TESSERA_UK_STEP(add, mul, acc, a, b) acc = add(acc, mul(a, b))

namespace {

/// out[j] += weight · row[j·stride] for j < n (contiguous rows vectorise, as wide as the
/// instruction set of the function it is inlined into).
__attribute__((always_inline)) inline void AccumulateRow(float* __restrict out,
                                                         const float* __restrict row,
                                                         int64_t stride, float weight, int64_t n) {
  if (stride == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = out[j] + weight * row[j];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = out[j] + weight * row[j * stride];
  }
}

/// The row kernel (matmul_f32.h), inlined into each instruction set's entry point.
__attribute__((always_inline)) inline void MatmulRow(const float* a, int64_t stride_ak,
                                                     const float* b, int64_t stride_k,
                                                     int64_t stride_n, int64_t k, int64_t n,
                                                     float* acc) {
  for (int64_t j = 0; j < n; ++j) acc[j] = 0.0f;
  for (int64_t kk = 0; kk < k; ++kk) {
    AccumulateRow(acc, b + kk * stride_k, stride_n, a[kk * stride_ak], n);
  }
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
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = a + r * stride_m;
    for (int64_t kk = 0; kk < k; ++kk) packed[kk * mr + r] = row[kk * stride_k];
  }
  for (int64_t r = rows; r < mr; ++r) {
    for (int64_t kk = 0; kk < k; ++kk) packed[kk * mr + r] = 0.0f;
  }
}

void tessera_uk_matmul_f32_tile_6x8_sse2(const float* a, int64_t stride_am, int64_t stride_ak,
                                         const float* b, int64_t stride_bk, int64_t k,
                                         float* tile) {
  __m128 c00 = _mm_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m128 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m128 b0 = _mm_loadu_ps(b), b1 = _mm_loadu_ps(b + 4);
#define TESSERA_UK_ROW(r)                                     \
  do {                                                        \
    const __m128 ar = _mm_set1_ps(a[(r) * stride_am]);        \
    TESSERA_UK_STEP(_mm_add_ps, _mm_mul_ps, c##r##0, ar, b0); \
    TESSERA_UK_STEP(_mm_add_ps, _mm_mul_ps, c##r##1, ar, b1); \
  } while (0)
    TESSERA_UK_ROW(0);
    TESSERA_UK_ROW(1);
    TESSERA_UK_ROW(2);
    TESSERA_UK_ROW(3);
    TESSERA_UK_ROW(4);
    TESSERA_UK_ROW(5);

#undef TESSERA_UK_ROW
    a += stride_ak;
    b += stride_bk;
  }
#define TESSERA_UK_STORE(r)                     \
  do {                                          \
    _mm_storeu_ps(tile + (r) * 8, c##r##0);     \
    _mm_storeu_ps(tile + (r) * 8 + 4, c##r##1); \
  } while (0)
  TESSERA_UK_STORE(0);
  TESSERA_UK_STORE(1);
  TESSERA_UK_STORE(2);
  TESSERA_UK_STORE(3);
  TESSERA_UK_STORE(4);
  TESSERA_UK_STORE(5);

#undef TESSERA_UK_STORE
}

__attribute__((target("avx"))) void tessera_uk_matmul_f32_tile_6x16_avx(
    const float* a, int64_t stride_am, int64_t stride_ak, const float* b, int64_t stride_bk,
    int64_t k, float* tile) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#define TESSERA_UK_ROW(r)                                           \
  do {                                                              \
    const __m256 ar = _mm256_broadcast_ss(a + (r) * stride_am);     \
    TESSERA_UK_STEP(_mm256_add_ps, _mm256_mul_ps, c##r##0, ar, b0); \
    TESSERA_UK_STEP(_mm256_add_ps, _mm256_mul_ps, c##r##1, ar, b1); \
  } while (0)
    TESSERA_UK_ROW(0);
    TESSERA_UK_ROW(1);
    TESSERA_UK_ROW(2);
    TESSERA_UK_ROW(3);
    TESSERA_UK_ROW(4);
    TESSERA_UK_ROW(5);

#undef TESSERA_UK_ROW
    a += stride_ak;
    b += stride_bk;
  }
#define TESSERA_UK_STORE(r)                         \
  do {                                              \
    _mm256_storeu_ps(tile + (r) * 16, c##r##0);     \
    _mm256_storeu_ps(tile + (r) * 16 + 8, c##r##1); \
  } while (0)
  TESSERA_UK_STORE(0);
  TESSERA_UK_STORE(1);
  TESSERA_UK_STORE(2);
  TESSERA_UK_STORE(3);
  TESSERA_UK_STORE(4);
  TESSERA_UK_STORE(5);

#undef TESSERA_UK_STORE
}

__attribute__((target("avx512f"))) void tessera_uk_matmul_f32_tile_6x64_avx512f(
    const float* a, int64_t stride_am, int64_t stride_ak, const float* b, int64_t stride_bk,
    int64_t k, float* tile) {
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c02 = c00, c03 = c00;
  __m512 c10 = c00, c11 = c00, c12 = c00, c13 = c00, c20 = c00, c21 = c00, c22 = c00, c23 = c00;
  __m512 c30 = c00, c31 = c00, c32 = c00, c33 = c00, c40 = c00, c41 = c00, c42 = c00, c43 = c00;
  __m512 c50 = c00, c51 = c00, c52 = c00, c53 = c00;
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
    const __m512 b2 = _mm512_loadu_ps(b + 32), b3 = _mm512_loadu_ps(b + 48);
#define TESSERA_UK_ROW(r)                                           \
  do {                                                              \
    const __m512 ar = _mm512_set1_ps(a[(r) * stride_am]);           \
    TESSERA_UK_STEP(_mm512_add_ps, _mm512_mul_ps, c##r##0, ar, b0); \
    TESSERA_UK_STEP(_mm512_add_ps, _mm512_mul_ps, c##r##1, ar, b1); \
    TESSERA_UK_STEP(_mm512_add_ps, _mm512_mul_ps, c##r##2, ar, b2); \
    TESSERA_UK_STEP(_mm512_add_ps, _mm512_mul_ps, c##r##3, ar, b3); \
  } while (0)
    TESSERA_UK_ROW(0);
    TESSERA_UK_ROW(1);
    TESSERA_UK_ROW(2);
    TESSERA_UK_ROW(3);
    TESSERA_UK_ROW(4);
    TESSERA_UK_ROW(5);

#undef TESSERA_UK_ROW
    a += stride_ak;
    b += stride_bk;
  }
#define TESSERA_UK_STORE(r)                          \
  do {                                               \
    _mm512_storeu_ps(tile + (r) * 64, c##r##0);      \
    _mm512_storeu_ps(tile + (r) * 64 + 16, c##r##1); \
    _mm512_storeu_ps(tile + (r) * 64 + 32, c##r##2); \
    _mm512_storeu_ps(tile + (r) * 64 + 48, c##r##3); \
  } while (0)
  TESSERA_UK_STORE(0);
  TESSERA_UK_STORE(1);
  TESSERA_UK_STORE(2);
  TESSERA_UK_STORE(3);
  TESSERA_UK_STORE(4);
  TESSERA_UK_STORE(5);

#undef TESSERA_UK_STORE
}

void tessera_uk_matmul_f32_row_sse2(const float* a, int64_t stride_ak, const float* b,
                                    int64_t stride_k, int64_t stride_n, int64_t k, int64_t n,
                                    float* acc) {
  MatmulRow(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

__attribute__((target("avx"))) void tessera_uk_matmul_f32_row_avx(const float* a, int64_t stride_ak,
                                                                  const float* b, int64_t stride_k,
                                                                  int64_t stride_n, int64_t k,
                                                                  int64_t n, float* acc) {
  MatmulRow(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

__attribute__((target("avx512f"))) void tessera_uk_matmul_f32_row_avx512f(
    const float* a, int64_t stride_ak, const float* b, int64_t stride_k, int64_t stride_n,
    int64_t k, int64_t n, float* acc) {
  MatmulRow(a, stride_ak, b, stride_k, stride_n, k, n, acc);
}

}  // extern "C"

namespace tessera::runtime {

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
  };
}

}  // namespace tessera::runtime

#undef TESSERA_UK_STEP
