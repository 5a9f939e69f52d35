/* A plain C program on the C API: compile examples/mlp.mlir for the host target, run it on
 * random inputs, and check it against a C reference (matmul + bias + relu -> matmul + bias ->
 * softmax -> max -> mean). Exit status 0 when every output agrees.
 *
 *   run_mlp [path/to/mlp.mlir] [batch]
 */
#include <dlpack/dlpack.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera_jit.h"

enum { kIn = 784, kHidden = 256, kOut = 10 };

static int check(tessera_jit_error_t* error, const char* what) {
  if (error == NULL) return 0;
  fprintf(stderr, "%s failed (code %d): %s\n", what, (int)tessera_jit_error_code(error),
          tessera_jit_error_message(error, NULL));
  tessera_jit_error_destroy(error);
  return 1;
}

static char* read_file(const char* path, size_t* size) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) return NULL;
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  char* text = malloc((size_t)length + 1);
  *size = fread(text, 1, (size_t)length, file);
  text[*size] = '\0';
  fclose(file);
  return text;
}

/* A host float32 tensor. */
typedef struct {
  float* data;
  int64_t shape[2];
  DLTensor view;
} tensor_t;

static void tensor_init(tensor_t* t, int ndim, int64_t d0, int64_t d1, unsigned* seed) {
  int64_t count = (ndim > 0 ? d0 : 1) * (ndim > 1 ? d1 : 1);
  t->data = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
  for (int64_t i = 0; i < count; ++i) {
    *seed = *seed * 1103515245u + 12345u;
    t->data[i] = ((float)((*seed >> 8) & 0xFFFF) / 65535.0f - 0.5f) * 0.2f;
  }
  t->shape[0] = d0;
  t->shape[1] = d1;
  memset(&t->view, 0, sizeof(t->view));
  t->view.data = t->data;
  t->view.device.device_type = kDLCPU;
  t->view.ndim = ndim;
  t->view.dtype.code = kDLFloat;
  t->view.dtype.bits = 32;
  t->view.dtype.lanes = 1;
  t->view.shape = t->shape;
}

static int near(float a, float b) { return fabsf(a - b) <= 1e-5f + 1e-4f * fabsf(b); }

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "examples/mlp.mlir";
  const int64_t batch = argc > 2 ? atoi(argv[2]) : 8;
  size_t size = 0;
  char* source = read_file(path, &size);
  if (source == NULL) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }

  tessera_jit_context_options_t context_options;
  tessera_jit_context_options_init(&context_options);
  context_options.default_target = "host";
  tessera_jit_context_t* context = NULL;
  tessera_jit_module_t* module = NULL;
  tessera_jit_function_t* mlp = NULL;
  if (check(tessera_jit_context_create(&context_options, &context), "context") ||
      check(tessera_jit_compile(context, source, size, NULL, &module), "compile") ||
      check(tessera_jit_module_get_function(module, "mlp", 3, &mlp), "lookup")) {
    return 1;
  }

  unsigned seed = 7;
  tensor_t t[10];
  tensor_init(&t[0], 2, batch, kIn, &seed);     /* x */
  tensor_init(&t[1], 2, kIn, kHidden, &seed);   /* w1 */
  tensor_init(&t[2], 1, kHidden, 0, &seed);     /* b1 */
  tensor_init(&t[3], 2, kHidden, kOut, &seed);  /* w2 */
  tensor_init(&t[4], 1, kOut, 0, &seed);        /* b2 */
  tensor_init(&t[5], 2, batch, kHidden, &seed); /* hidden */
  tensor_init(&t[6], 2, batch, kOut, &seed);    /* logits */
  tensor_init(&t[7], 2, batch, kOut, &seed);    /* probs */
  tensor_init(&t[8], 1, batch, 0, &seed);       /* top */
  tensor_init(&t[9], 0, 0, 0, &seed);           /* confidence */
  tessera_jit_arg_t args[10];
  for (int i = 0; i < 10; ++i) {
    args[i].kind = TESSERA_JIT_ARG_TENSOR;
    args[i].value.tensor = &t[i].view;
  }
  if (check(tessera_jit_function_invoke(mlp, args, 10, NULL, NULL), "invoke")) return 1;

  /* The reference, in double then rounded. */
  int errors = 0;
  double confidence = 0.0;
  for (int64_t r = 0; r < batch; ++r) {
    double hidden[kHidden], logits[kOut], max = -INFINITY, sum = 0.0, top = 0.0;
    for (int j = 0; j < kHidden; ++j) {
      double acc = 0.0;
      for (int k = 0; k < kIn; ++k)
        acc += (double)t[0].data[r * kIn + k] * t[1].data[k * kHidden + j];
      hidden[j] = fmax((float)acc + t[2].data[j], 0.0);
      errors += !near(t[5].data[r * kHidden + j], (float)hidden[j]);
    }
    for (int j = 0; j < kOut; ++j) {
      double acc = 0.0;
      for (int k = 0; k < kHidden; ++k)
        acc += (double)t[5].data[r * kHidden + k] * t[3].data[k * kOut + j];
      logits[j] = (float)acc + t[4].data[j];
      max = fmax(max, logits[j]);
    }
    for (int j = 0; j < kOut; ++j) sum += exp(logits[j] - max);
    for (int j = 0; j < kOut; ++j) {
      double p = exp(logits[j] - max) / sum;
      errors += !near(t[7].data[r * kOut + j], (float)p);
      top = fmax(top, p);
    }
    errors += !near(t[8].data[r], (float)top);
    confidence += top / (double)batch;
  }
  errors += !near(t[9].data[0], (float)confidence);
  printf("mlp through the C API on the host target: batch %lld, mean confidence %.6f, %s\n",
         (long long)batch, t[9].data[0], errors == 0 ? "matches the C reference" : "MISMATCH");
  for (int i = 0; i < 10; ++i) free(t[i].data);
  free(source);
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
  return errors == 0 ? 0 : 1;
}
