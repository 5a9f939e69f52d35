/* A second build of the test library with different contents: a different identity. */
#include <stdint.h>

void tessera_test_fill(float* x, int32_t n, float value) {
  for (int32_t i = 0; i < n; ++i) x[i] = value + 0.0f * (float)i;
}

float tessera_test_sum(const float* x, int32_t n) {
  double sum = 0.0;
  for (int32_t i = 0; i < n; ++i) sum += x[i];
  return (float)sum;
}
