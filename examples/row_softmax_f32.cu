// The hand-written row softmax that delegates.mlir calls with binding = "cuda_kernel". Register
// it with `--kernel softmax_kernels=row_softmax_f32.cu` (the service compiles it in process
// with NVRTC for the compile's arch). One block of 256 threads per row: max-subtracted, with a
// fixed shared-memory reduction tree, so every run gives the same bits (it declares itself
// deterministic). Launch: grid = rows, block = 256.
extern "C" __global__ void row_softmax_f32(const float* x, float* y, int cols) {
  constexpr int kThreads = 256;
  __shared__ float scratch[kThreads];
  const int t = threadIdx.x;
  const float* in = x + static_cast<long long>(blockIdx.x) * cols;
  float* out = y + static_cast<long long>(blockIdx.x) * cols;

  float row_max = -__int_as_float(0x7f800000);  // -inf
  for (int c = t; c < cols; c += kThreads) row_max = fmaxf(row_max, in[c]);
  scratch[t] = row_max;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) scratch[t] = fmaxf(scratch[t], scratch[t + stride]);
    __syncthreads();
  }
  row_max = scratch[0];
  __syncthreads();

  float sum = 0.0f;
  for (int c = t; c < cols; c += kThreads) sum += expf(in[c] - row_max);
  scratch[t] = sum;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) scratch[t] += scratch[t + stride];
    __syncthreads();
  }
  const float total = scratch[0];
  for (int c = t; c < cols; c += kThreads) out[c] = expf(in[c] - row_max) / total;
}
