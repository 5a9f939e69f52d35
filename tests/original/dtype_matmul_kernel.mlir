// The original's dtype fixture (test/nvidia/sm120_dtype_matmul_kernel.mlir: its f64, tf32, e4m3
// and s8 rows), an e5m2 row with the fused epilogue fp8 admits (bias, relu, residual; f32
// output), and a synthetic matmul with every epilogue stage: bias, gelu (the tanh form),
// residual, f16 output; A column-major.
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s
// RUN: tessera-jit compile %s --target host | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 | FileCheck %s --check-prefix=PTX
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 | FileCheck %s --check-prefix=PTX

module {
  llvm.func @tile_f64(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr,
                      %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 8, n = 8, k = 4, a = "f64", b = "f64", acc = "f64", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "none", output = "f64">,
      warps = 1 : i64, staging = "global"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_tf32(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr,
                       %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 8, a = "tf32", b = "tf32", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">,
      warps = 1 : i64, staging = "global"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_e4m3(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr,
                       %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 32, a = "e4m3", b = "e4m3", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">,
      warps = 1 : i64, staging = "global"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_s8(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr,
                     %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 32, a = "s8", b = "s8", acc = "s32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "none", output = "i32">,
      warps = 1 : i64, staging = "global"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_e5m2_bias_relu_residual(%a: !llvm.ptr, %b: !llvm.ptr, %bias: !llvm.ptr,
                                          %residual: !llvm.ptr, %d: !llvm.ptr,
                                          %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %bias, %residual, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 32, a = "e5m2", b = "e5m2", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = true, activation = "relu", output = "f32">,
      residual = true, epilogue_order = "matmul_bias_activation_residual",
      warps = 1 : i64, staging = "global"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_bias_gelu_residual_f16(%a: !llvm.ptr, %b: !llvm.ptr, %bias: !llvm.ptr,
                                         %residual: !llvm.ptr, %d: !llvm.ptr,
                                         %m: i64, %n: i64, %k: i64) attributes {gpu.kernel} {
    tile.matmul_kernel %a, %b, %bias, %residual, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "col_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = true, activation = "gelu", output = "f16">,
      residual = true, epilogue_order = "matmul_bias_activation_residual",
      warps = 4 : i64, staging = "shared"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }
}

// CHECK-LABEL: func.func @tile_f64(
// CHECK-SAME: %arg0: memref<?x?xf64> {tessera.dims_from = array<i64: 3, 5>, tessera.launch_role = "tile.matmul_kernel A [M, K]"}
// CHECK-SAME: %arg2: memref<?x?xf64> {tessera.dims_from = array<i64: 3, 4>, tessera.launch_role = "tile.matmul_kernel D [M, N]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 {transpose_b} : memref<?x?xf64>, memref<?x?xf64> -> memref<?x?xf64>
// CHECK-LABEL: func.func @tile_tf32(
// CHECK-SAME: %arg0: memref<?x?xf32> {tessera.dims_from = array<i64: 3, 5>, tessera.launch_role = "tile.matmul_kernel A [M, K]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 policy(tf32) {transpose_b} : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tile_e4m3(
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 {transpose_b} : memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tile_s8(
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 {transpose_b} : memref<?x?xi8>, memref<?x?xi8> -> memref<?x?xi32>
// CHECK-LABEL: func.func @tile_e5m2_bias_relu_residual(
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg4 bias(%arg2 : memref<?xf32>) residual(%arg3 : memref<?x?xf32>) activation(relu) {transpose_b} : memref<?x?xf8E5M2>, memref<?x?xf8E5M2> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tile_bias_gelu_residual_f16(
// CHECK-SAME: %arg0: memref<?x?xf16> {tessera.dims_from = array<i64: 7, 5>, tessera.launch_role = "tile.matmul_kernel A [K, M]"}
// CHECK-SAME: %arg3: memref<?x?xf32> {tessera.dims_from = array<i64: 5, 6>, tessera.launch_role = "tile.matmul_kernel residual [M, N]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg4 bias(%arg2 : memref<?xf32>) residual(%arg3 : memref<?x?xf32>) activation(gelu_tanh) {transpose_a, transpose_b}

// HOST: compiled for host
// HOST: entry @tile_f64 (6 arguments)
// HOST: entry @tile_tf32 (6 arguments)
// HOST: entry @tile_e4m3 (6 arguments)
// HOST: entry @tile_s8 (6 arguments)
// HOST: entry @tile_e5m2_bias_relu_residual (8 arguments)
// HOST: entry @tile_bias_gelu_residual_f16 (8 arguments)

// PTX: gpu.module @tessera_kernels_tile_f64_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_tf32_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_e4m3_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_s8_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_e5m2_bias_relu_residual_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_bias_gelu_residual_f16_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
