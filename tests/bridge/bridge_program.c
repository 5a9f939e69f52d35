/* A program written against the original Tessera's launch bridge: it uses only the original's
 * signatures (tessera_nvidia_ptx_register / _invoke / _benchmark / ...), registers launch-level
 * Tile IR in the original's form and runs a matmul (bias + relu), a softmax and a reduce on
 * ragged shapes, checking each against a double-precision reference, then the return codes of
 * bad calls. It runs on the GPU when there is one; without one, each launch returns 2 unless
 * TESSERA_NVIDIA_BRIDGE_HOST=1 (then Tile IR runs on the host).
 *
 * Exit status: 0 all checks passed, 2 no GPU (and no opt-in), 1 a check failed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera_nvidia_ptx_launch.h"
#include "tests/bridge/rms_norm_ptx.h"

static const char* kMatmul =
    "llvm.func @tile_matmul_bias_relu(%a: !llvm.ptr, %b: !llvm.ptr, %bias: !llvm.ptr,\n"
    "    %d: !llvm.ptr, %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {\n"
    "  tile.matmul_kernel %a, %b, %bias, %d, %m, %n, %k {\n"
    "    mma = #tile.mma_desc<family = \"auto\", m = 16, n = 8, k = 8, a = \"f32\", b = \"f32\",\n"
    "      acc = \"f32\", a_layout = \"row_major\", b_layout = \"col_major\", k_blocks = 1>,\n"
    "    epilogue = #tile.epilogue<bias = true, activation = \"relu\", output = \"f32\">,\n"
    "    warps = 1 : i64, staging = \"global\"\n"
    "  } : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64\n"
    "  llvm.return\n"
    "}\n";

static const char* kSoftmax =
    "llvm.func @tessera_tile_softmax_f32(%x: !llvm.ptr, %o: !llvm.ptr, %rows: i64,\n"
    "    %columns: i64) attributes {nvvm.kernel} {\n"
    "  tile.softmax_kernel %x, %o, %rows, %columns {\n"
    "    storage = \"f32\", accum = \"f32\", axis = -1 : i64, exp_mode = \"approx_exp2\",\n"
    "    ftz = false\n"
    "  } : !llvm.ptr, !llvm.ptr, i64, i64\n"
    "  llvm.return\n"
    "}\n";

static const char* kReduce =
    "llvm.func @tessera_tile_reduce_mean_f32(%x: !llvm.ptr, %o: !llvm.ptr, %outer: i64,\n"
    "    %axis_extent: i64, %inner: i64) attributes {nvvm.kernel} {\n"
    "  tile.reduce_kernel %x, %o, %outer, %axis_extent, %inner {\n"
    "    storage = \"f32\", accum = \"f32\", kind = \"mean\", axis = 1 : i64,\n"
    "    keepdims = false, schedule = \"serial\", nan_mode = \"propagate\"\n"
    "  } : !llvm.ptr, !llvm.ptr, i64, i64, i64\n"
    "  llvm.return\n"
    "}\n";

static int failures = 0;
static int checks = 0;

static void expect(int ok, const char* what) {
  ++checks;
  if (!ok) {
    ++failures;
    fprintf(stderr, "FAILED: %s\n", what);
  }
}

static float uniform(unsigned* state) {
  *state = *state * 1103515245u + 12345u;
  return (float)((*state >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

/* |got - want| <= tolerance * (1 + |want|) for every element. */
static int close_all(const float* got, const double* want, size_t n, double tolerance) {
  for (size_t i = 0; i < n; ++i) {
    if (!(fabs((double)got[i] - want[i]) <= tolerance * (1.0 + fabs(want[i])))) {
      fprintf(stderr, "  element %zu: got %.9g, want %.9g\n", i, got[i], want[i]);
      return 0;
    }
  }
  return 1;
}

/* Returns the launch's code; 2 ends the program (no GPU). */
static int matmul(int64_t m, int64_t n, int64_t k) {
  unsigned seed = 7u;
  float* a = malloc(sizeof(float) * m * k);
  float* b = malloc(sizeof(float) * n * k); /* [N, K]: the original's column-major B */
  float* bias = malloc(sizeof(float) * n);
  float* d = malloc(sizeof(float) * m * n);
  double* want = malloc(sizeof(double) * m * n);
  for (int64_t i = 0; i < m * k; ++i) a[i] = uniform(&seed);
  for (int64_t i = 0; i < n * k; ++i) b[i] = uniform(&seed);
  for (int64_t i = 0; i < n; ++i) bias[i] = uniform(&seed);
  for (int64_t i = 0; i < m * n; ++i) d[i] = NAN;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      double sum = bias[c];
      for (int64_t j = 0; j < k; ++j) sum += (double)a[r * k + j] * b[c * k + j];
      want[r * n + c] = sum > 0 ? sum : 0;
    }
  }
  void* buffers[] = {a, b, bias, d};
  int64_t dims[] = {m, n, k};
  int code = tessera_nvidia_ptx_invoke("tile_matmul_bias_relu", buffers, 4, dims, 3);
  if (code == 0) expect(close_all(d, want, (size_t)(m * n), 1e-5 * (double)k), "matmul values");
  free(a), free(b), free(bias), free(d), free(want);
  return code;
}

static int softmax(int64_t rows, int64_t columns) {
  unsigned seed = 11u;
  float* x = malloc(sizeof(float) * rows * columns);
  float* o = malloc(sizeof(float) * rows * columns);
  double* want = malloc(sizeof(double) * rows * columns);
  for (int64_t i = 0; i < rows * columns; ++i) x[i] = 4.0f * uniform(&seed), o[i] = NAN;
  for (int64_t r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int64_t c = 0; c < columns; ++c) max = fmax(max, x[r * columns + c]);
    for (int64_t c = 0; c < columns; ++c) sum += exp(x[r * columns + c] - max);
    for (int64_t c = 0; c < columns; ++c)
      want[r * columns + c] = exp(x[r * columns + c] - max) / sum;
  }
  void* buffers[] = {x, o};
  int64_t dims[] = {rows, columns};
  int code = tessera_nvidia_ptx_invoke("tessera_tile_softmax_f32", buffers, 2, dims, 2);
  if (code == 0) expect(close_all(o, want, (size_t)(rows * columns), 1e-5), "softmax values");
  float latency = -1;
  if (code == 0) {
    expect(tessera_nvidia_ptx_benchmark("tessera_tile_softmax_f32", buffers, 2, dims, 2, 1, 3,
                                        &latency) == 0 &&
               latency >= 0,
           "softmax benchmark");
  }
  free(x), free(o), free(want);
  return code;
}

static int reduce(int64_t outer, int64_t axis, int64_t inner) {
  unsigned seed = 13u;
  float* x = malloc(sizeof(float) * outer * axis * inner);
  float* o = malloc(sizeof(float) * outer * inner);
  double* want = malloc(sizeof(double) * outer * inner);
  for (int64_t i = 0; i < outer * axis * inner; ++i) x[i] = uniform(&seed);
  for (int64_t p = 0; p < outer; ++p) {
    for (int64_t q = 0; q < inner; ++q) {
      double sum = 0;
      for (int64_t j = 0; j < axis; ++j) sum += x[(p * axis + j) * inner + q];
      want[p * inner + q] = sum / (double)axis;
      o[p * inner + q] = NAN;
    }
  }
  void* buffers[] = {x, o};
  int64_t dims[] = {outer, axis, inner};
  int code = tessera_nvidia_ptx_invoke("tessera_tile_reduce_mean_f32", buffers, 2, dims, 3);
  if (code == 0) expect(close_all(o, want, (size_t)(outer * inner), 1e-5), "reduce values");
  free(x), free(o), free(want);
  return code;
}

/* Registered PTX (tests/bridge/rms_norm.cu) launched with the original's geometry for its name:
 * on a GPU it runs and reports its resources; without one it is 2, opt-in or not. */
static void registered_ptx(int gpu) {
  enum { kRows = 300, kColumns = 37 };
  static float x[kRows * kColumns], o[kRows * kColumns];
  static double want[kRows * kColumns];
  unsigned seed = 5u;
  for (int i = 0; i < kRows * kColumns; ++i) x[i] = 3.0f * uniform(&seed), o[i] = NAN;
  for (int r = 0; r < kRows; ++r) {
    double sum = 0;
    for (int c = 0; c < kColumns; ++c) sum += (double)x[r * kColumns + c] * x[r * kColumns + c];
    const double scale = 1.0 / sqrt(sum / kColumns + 1e-6);
    for (int c = 0; c < kColumns; ++c) want[r * kColumns + c] = x[r * kColumns + c] * scale;
  }
  const char* name = "tessera_tile_norm_rms_f32";
  expect(tessera_nvidia_ptx_register(name, kRmsNormPtx) == 0, "register PTX");
  void* buffers[] = {x, o};
  int64_t dims[] = {kRows, kColumns};
  const int code = tessera_nvidia_ptx_invoke(name, buffers, 2, dims, 2);
  int registers = 0, shared = 0, local = 0, blocks = 0;
  const int resources =
      tessera_nvidia_ptx_resources(name, 128, 0, &registers, &shared, &local, &blocks);
  if (!gpu) {
    expect(code == 2, "registered PTX without a GPU is 2");
    expect(resources == 2, "PTX resources without a GPU are 2");
    return;
  }
  expect(code == 0, "registered PTX runs");
  if (code == 0) expect(close_all(o, want, kRows * kColumns, 1e-5), "registered PTX values");
  float latency = -1;
  expect(
      tessera_nvidia_ptx_benchmark(name, buffers, 2, dims, 2, 1, 3, &latency) == 0 && latency >= 0,
      "registered PTX benchmark");
  expect(resources == 0 && registers > 0 && blocks > 0, "registered PTX resources");
  expect(tessera_nvidia_ptx_invoke(name, buffers, 1, dims, 2) == 5, "PTX: one buffer too few is 5");
  int64_t zero[] = {kRows, 0};
  expect(tessera_nvidia_ptx_invoke(name, buffers, 2, zero, 2) == 5, "PTX: a zero dim is 5");
  /* PTX under a name the original's table does not know, and PTX the driver cannot load. */
  expect(tessera_nvidia_ptx_register("my_kernel", kRmsNormPtx) == 0, "register unknown PTX");
  expect(tessera_nvidia_ptx_invoke("my_kernel", buffers, 2, dims, 2) == 3,
         "PTX without its entry name is 3");
  expect(tessera_nvidia_ptx_register("tessera_tile_softmax_bf16",
                                     ".version 9.0\n.target sm_75\n"
                                     "garbage\n") == 0,
         "register broken PTX");
  expect(tessera_nvidia_ptx_invoke("tessera_tile_softmax_bf16", buffers, 2, dims, 2) == 3,
         "PTX the driver cannot load is 3");
}

int main(void) {
  expect(tessera_nvidia_ptx_register("tile_matmul_bias_relu", kMatmul) == 0, "register matmul");
  expect(tessera_nvidia_ptx_register("tessera_tile_softmax_f32", kSoftmax) == 0,
         "register softmax");
  expect(tessera_nvidia_ptx_register("tessera_tile_reduce_mean_f32", kReduce) == 0,
         "register reduce");
  expect(tessera_nvidia_ptx_register(NULL, kReduce) == 1, "register NULL name is 1");
  expect(tessera_nvidia_ptx_register("x", NULL) == 1, "register NULL text is 1");

  const int first = matmul(37, 19, 45);
  if (first == 2) {
    printf(
        "bridge: no GPU (2), as the original returns; TESSERA_NVIDIA_BRIDGE_HOST=1 runs "
        "Tile IR on the host\n");
    return failures == 0 ? 2 : 1;
  }
  expect(first == 0, "matmul 37x19x45 runs");
  expect(matmul(1, 1, 1) == 0, "matmul 1x1x1 runs");
  expect(softmax(5, 133) == 0, "softmax 5x133 runs");
  expect(softmax(1, 1) == 0, "softmax 1x1 runs");
  expect(reduce(3, 17, 5) == 0, "reduce 3x17x5 runs");
  expect(reduce(1, 1, 1) == 0, "reduce 1x1x1 runs");

  /* The original's codes for bad calls, each before a buffer is touched. */
  float x[4] = {0}, o[4] = {0};
  void* buffers[] = {x, o};
  int64_t dims[] = {2, 2};
  int64_t zero[] = {2, 0};
  int64_t huge[] = {2, (int64_t)1 << 31};
  int64_t negative[] = {-2, 2};
  expect(tessera_nvidia_ptx_invoke("nope", buffers, 2, dims, 2) == 4, "unregistered is 4");
  expect(tessera_nvidia_ptx_invoke(NULL, buffers, 2, dims, 2) == 5, "NULL name is 5");
  expect(tessera_nvidia_ptx_invoke("tessera_tile_softmax_f32", NULL, 2, dims, 2) == 5,
         "NULL buffers is 5");
  expect(tessera_nvidia_ptx_invoke("tessera_tile_softmax_f32", buffers, 2, NULL, 2) == 5,
         "NULL dims is 5");
  expect(tessera_nvidia_ptx_invoke("tessera_tile_softmax_f32", buffers, 1, dims, 2) == 5,
         "one buffer too few is 5");
  expect(tessera_nvidia_ptx_invoke("tessera_tile_softmax_f32", buffers, 2, dims, 3) == 5,
         "one dim too many is 5");
  expect(tessera_nvidia_ptx_invoke("tessera_tile_softmax_f32", buffers, 2, zero, 2) == 5,
         "a zero dim is 5");
  expect(tessera_nvidia_ptx_invoke("tessera_tile_softmax_f32", buffers, 2, huge, 2) == 5,
         "a dim of 2^31 is 5");
  expect(tessera_nvidia_ptx_invoke("tessera_tile_softmax_f32", buffers, 2, negative, 2) == 5,
         "a negative dim is 5");
  void* null_buffers[] = {x, NULL};
  expect(tessera_nvidia_ptx_invoke("tessera_tile_softmax_f32", null_buffers, 2, dims, 2) == 5,
         "a NULL buffer is 5");
  float latency = 0;
  expect(tessera_nvidia_ptx_benchmark("tessera_tile_softmax_f32", buffers, 2, dims, 2, 0, 0,
                                      &latency) == 5,
         "zero repetitions is 5");
  expect(tessera_nvidia_ptx_benchmark("tessera_tile_softmax_f32", buffers, 2, dims, 2, 0, 1,
                                      NULL) == 5,
         "NULL latency is 5");
  expect(tessera_nvidia_ptx_register("broken", "llvm.func @broken( {") == 0, "register broken");
  expect(tessera_nvidia_ptx_invoke("broken", buffers, 2, dims, 2) == 3,
         "text that does not compile is 3");
  size_t total = 0, free_bytes = 0;
  expect(tessera_nvidia_ptx_device_memory(NULL, &free_bytes) == 5, "device_memory NULL is 5");
  const int memory = tessera_nvidia_ptx_device_memory(&total, &free_bytes);
  expect(memory == 0 || memory == 2, "device_memory is 0 with a GPU, 2 without");
  registered_ptx(memory == 0);

  printf("bridge: %d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
