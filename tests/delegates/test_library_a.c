/* A tiny C library registered as a delegate by the tests (library "a"). */
#include <stdint.h>

void tessera_test_fill(float* x, int32_t n, float value) {
  for (int32_t i = 0; i < n; ++i) x[i] = value;
}

float tessera_test_sum(const float* x, int32_t n) {
  float sum = 0.0f;
  for (int32_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}
