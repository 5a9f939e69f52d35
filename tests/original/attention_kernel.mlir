// The original's forward attention fixture (test/nvidia/sm120_attention_kernel.mlir: causal f16,
// bidirectional bf16), and a synthetic kernel with everything its contract has: an additive bias,
// the saved row_lse, a window, a soft cap and dropout (the original's LCG rule). Imported as
// tile.attention aligned at the top left, with empty rows NaN and O f32, as the original computes.
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s
// RUN: tessera-jit compile %s --target host | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 | FileCheck %s --check-prefix=PTX
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 | FileCheck %s --check-prefix=PTX

module {
  llvm.func @attention(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr,
                       %o: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64,
                       %sq: i64, %sk: i64, %d: i64, %dv: i64)
      attributes {nvvm.kernel} {
    tile.attention_kernel %q, %k, %v, %o, %b, %hq, %hkv, %sq, %sk, %d, %dv {
      storage = "f16", accum = "f32", scale = 0.35355338454246521 : f32,
      causal = true, bias = false, window_left = -1 : i64,
      window_right = -1 : i64, softcap = 0.000000e+00 : f32,
      dropout_p = 0.000000e+00 : f32, dropout_seed = 0 : i64
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
    llvm.return
  }

  llvm.func @attention_bf16(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr,
                            %o: !llvm.ptr, %b: i64, %hq: i64, %hkv: i64,
                            %sq: i64, %sk: i64, %d: i64, %dv: i64)
      attributes {nvvm.kernel} {
    tile.attention_kernel %q, %k, %v, %o, %b, %hq, %hkv, %sq, %sk, %d, %dv {
      storage = "bf16", accum = "f32", scale = 0.35355338454246521 : f32,
      causal = false, bias = false, window_left = -1 : i64,
      window_right = -1 : i64, softcap = 0.000000e+00 : f32,
      dropout_p = 0.000000e+00 : f32, dropout_seed = 0 : i64
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64
    llvm.return
  }

  llvm.func @attention_training_f32(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr,
                                    %bias: !llvm.ptr, %o: !llvm.ptr, %lse: !llvm.ptr,
                                    %b: i64, %hq: i64, %hkv: i64, %sq: i64, %sk: i64,
                                    %d: i64, %dv: i64) attributes {nvvm.kernel} {
    tile.attention_kernel %q, %k, %v, %bias, %o, %lse, %b, %hq, %hkv, %sq, %sk, %d, %dv {
      storage = "f32", accum = "f32", scale = 0.25 : f32,
      causal = true, bias = true, window_left = 3 : i64,
      window_right = -1 : i64, softcap = 2.500000e+00 : f32,
      dropout_p = 2.000000e-01 : f32, dropout_seed = 1234 : i64, lse_checkpoint = "saved"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64,
        i64, i64, i64
    llvm.return
  }
}

// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %arg0: memref<?x?x?x?xf16> {tessera.dims_from = array<i64: 4, 5, 7, 9>, tessera.launch_role = "tile.attention_kernel Q [B, Hq, Sq, D]"}
// CHECK-SAME: %arg3: memref<?x?x?x?xf32> {tessera.dims_from = array<i64: 4, 5, 7, 10>, tessera.launch_role = "tile.attention_kernel O [B, Hq, Sq, Dv]"}
// CHECK-NEXT: tile.attention %arg0, %arg1, %arg2 -> %arg3 scale(0.353553385) causal aligned(top_left) empty_rows(nan) : memref<?x?x?x?xf16>, memref<?x?x?x?xf16>, memref<?x?x?x?xf16> -> memref<?x?x?x?xf32>
// CHECK-LABEL: func.func @attention_bf16(
// CHECK-NEXT: tile.attention %arg0, %arg1, %arg2 -> %arg3 scale(0.353553385) empty_rows(nan)
// CHECK-LABEL: func.func @attention_training_f32(
// CHECK-SAME: %arg3: memref<?x?x?x?xf32> {tessera.dims_from = array<i64: 6, 7, 9, 10>, tessera.launch_role = "tile.attention_kernel bias [B, Hq, Sq, Sk]"}
// CHECK-SAME: %arg5: memref<?x?x?xf32> {tessera.dims_from = array<i64: 6, 7, 9>, tessera.launch_role = "tile.attention_kernel row_lse [B, Hq, Sq]"}
// CHECK-NEXT: tile.attention %arg0, %arg1, %arg2 -> %arg4 bias(%arg3 : memref<?x?x?x?xf32>) lse(%arg5 : memref<?x?x?xf32>) scale(2.500000e-01) causal window(3, -1) aligned(top_left) softcap(2.500000e+00) dropout(2.000000e-01, 1234) dropout_rule(lcg) empty_rows(nan)

// HOST: compiled for host
// HOST: entry @attention (11 arguments)
// HOST: entry @attention_bf16 (11 arguments)
// HOST: entry @attention_training_f32 (13 arguments)

// PTX: gpu.module @tessera_kernels_attention_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_attention_bf16_{{[a-z]+}}_0: 1 kernel(s)
// PTX: gpu.module @tessera_kernels_attention_training_f32_{{[a-z]+}}_0: 1 kernel(s)
