// The PTX kernel tests/bridge/bridge_program.c registers, in the original bridge's norm ABI
// (X, O [rows, k] f32, i64 rows and k; a thread per row, 128 rows per block): an RMS norm.
// rms_norm_ptx.h holds its PTX: nvcc -ptx -arch=compute_75 -O2 rms_norm.cu, as a C string.
extern "C" __global__ void tessera_tile_norm_rms_f32(const float* x, float* out, long long rows,
                                                     long long k) {
  long long row = (long long)blockIdx.x * 128 + threadIdx.x;
  if (row >= rows) return;
  const float* in = x + row * k;
  float sum = 0.0f;
  for (long long j = 0; j < k; ++j) sum += in[j] * in[j];
  float scale = rsqrtf(sum / (float)k + 1e-6f);
  for (long long j = 0; j < k; ++j) out[row * k + j] = in[j] * scale;
}
