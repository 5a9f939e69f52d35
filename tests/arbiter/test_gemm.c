/* CBLAS-compatible row-major SGEMMs registered as matmul providers by the arbiter tests:
 * tessera_test_sgemm computes exactly like the reference (f32 products, sequential sums);
 * tessera_test_sgemm_tf32 rounds A and B to TF32 (10 mantissa bits, to nearest) first — inside
 * a reference_exact budget for short sums, outside it once K is large; tessera_test_sgemm_slow
 * computes exactly like tessera_test_sgemm but does the whole product 16 times (a candidate
 * that loses every timing race by a wide margin, whatever the CPU);
 * tessera_test_sgemm_batch_variant sums K in reverse order once M reaches 256 (another
 * "kernel" for big batches, as vendor GEMMs have: run-to-run deterministic, not batch
 * invariant); tessera_test_sgemm_scaled returns the product scaled by 1 + 2^-14 (a relative
 * error of 6.1e-5: inside a declared rtol of 1e-4 for one op, outside it for two chained —
 * budgets that do not compose). Built twice (TESSERA_TEST_GEMM_BUILD)
 * so the tests can change the library's identity. */
#include <stdint.h>
#include <string.h>

#ifndef TESSERA_TEST_GEMM_BUILD
#define TESSERA_TEST_GEMM_BUILD "a"
#endif

const char* tessera_test_gemm_build(void) { return "test gemm build " TESSERA_TEST_GEMM_BUILD; }

static float Tf32(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  bits = (bits + 0x1000u) & 0xffffe000u; /* round to nearest (ties away) */
  memcpy(&value, &bits, sizeof(bits));
  return value;
}

static void Gemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc,
                 int tf32) {
  if (layout != 101) return; /* row-major only */
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int l = 0; l < k; ++l) {
        float x = trans_a == 112 ? a[l * lda + i] : a[i * lda + l];
        float y = trans_b == 112 ? b[j * ldb + l] : b[l * ldb + j];
        if (tf32) {
          x = Tf32(x);
          y = Tf32(y);
        }
        sum += x * y;
      }
      c[i * ldc + j] = alpha * sum + (beta == 0.0f ? 0.0f : beta * c[i * ldc + j]);
    }
  }
}

void tessera_test_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha,
                        const float* a, int lda, const float* b, int ldb, float beta, float* c,
                        int ldc) {
  Gemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 0);
}

void tessera_test_sgemm_tf32(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha,
                             const float* a, int lda, const float* b, int ldb, float beta, float* c,
                             int ldc) {
  Gemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1);
}

void tessera_test_sgemm_slow(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha,
                             const float* a, int lda, const float* b, int ldb, float beta, float* c,
                             int ldc) {
  for (int repeat = 0; repeat < 16; ++repeat) {
    Gemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 0);
  }
}

void tessera_test_sgemm_batch_variant(int layout, int trans_a, int trans_b, int m, int n, int k,
                                      float alpha, const float* a, int lda, const float* b, int ldb,
                                      float beta, float* c, int ldc) {
  if (layout != 101) return;
  if (m < 256) {
    Gemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 0);
    return;
  }
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int l = k - 1; l >= 0; --l) {
        float x = trans_a == 112 ? a[l * lda + i] : a[i * lda + l];
        float y = trans_b == 112 ? b[j * ldb + l] : b[l * ldb + j];
        sum += x * y;
      }
      c[i * ldc + j] = alpha * sum + (beta == 0.0f ? 0.0f : beta * c[i * ldc + j]);
    }
  }
}

void tessera_test_sgemm_scaled(int layout, int trans_a, int trans_b, int m, int n, int k,
                               float alpha, const float* a, int lda, const float* b, int ldb,
                               float beta, float* c, int ldc) {
  Gemm(layout, trans_a, trans_b, m, n, k, alpha * (1.0f + 1.0f / 16384.0f), a, lda, b, ldb, beta, c,
       ldc, 0);
}
