/* A plain C program using only tessera_jit.h and libtessera_jit.so: compile saxpy for the host,
 * run it on arrays, check the result. Exit status 0 on success. */
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <string.h>

#include "tessera_jit.h"

static const char kSource[] =
    "func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {\n"
    "  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {\n"
    "  ^bb0(%a: f32, %xi: f32, %yi: f32):\n"
    "    %ax = arith.mulf %a, %xi : f32\n"
    "    %r = arith.addf %ax, %yi : f32\n"
    "    tile.yield %r : f32\n"
    "  }\n"
    "  return\n"
    "}\n";

static int check(tessera_jit_error_t* error, const char* what) {
  if (error == NULL) return 0;
  fprintf(stderr, "%s failed (code %d): %s\n", what, (int)tessera_jit_error_code(error),
          tessera_jit_error_message(error, NULL));
  tessera_jit_error_destroy(error);
  return 1;
}

static DLTensor vector(float* data, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

int main(void) {
  enum { kN = 100 };
  float x[kN], y[kN], out[kN];
  int64_t shape[1] = {kN};
  for (int i = 0; i < kN; ++i) {
    x[i] = (float)i;
    y[i] = 1.0f;
    out[i] = 0.0f;
  }
  tessera_jit_context_options_t context_options;
  tessera_jit_context_options_init(&context_options);
  context_options.default_target = "host";
  tessera_jit_context_t* context = NULL;
  if (check(tessera_jit_context_create(&context_options, &context), "context")) return 1;
  tessera_jit_module_t* module = NULL;
  if (check(tessera_jit_compile(context, kSource, sizeof(kSource) - 1, NULL, &module), "compile")) {
    return 1;
  }
  tessera_jit_function_t* saxpy = NULL;
  if (check(tessera_jit_module_get_function(module, "saxpy", 5, &saxpy), "lookup")) return 1;
  DLTensor tx = vector(x, shape), ty = vector(y, shape), tout = vector(out, shape);
  tessera_jit_arg_t args[4];
  args[0].kind = TESSERA_JIT_ARG_FLOAT;
  args[0].value.f = 2.0;
  args[1].kind = TESSERA_JIT_ARG_TENSOR;
  args[1].value.tensor = &tx;
  args[2].kind = TESSERA_JIT_ARG_TENSOR;
  args[2].value.tensor = &ty;
  args[3].kind = TESSERA_JIT_ARG_TENSOR;
  args[3].value.tensor = &tout;
  if (check(tessera_jit_function_invoke(saxpy, args, 4, NULL, NULL), "invoke")) return 1;
  for (int i = 0; i < kN; ++i) {
    if (out[i] != 2.0f * x[i] + 1.0f) {
      fprintf(stderr, "out[%d] = %f, expected %f\n", i, out[i], 2.0f * x[i] + 1.0f);
      return 1;
    }
  }
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
  printf("saxpy through the C API: ok\n");
  return 0;
}
