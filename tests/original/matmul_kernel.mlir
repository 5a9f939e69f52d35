// The original's launch-level matmuls (test/nvidia/sm120_matmul_kernel.mlir): f16 and bf16,
// 1-warp global and 4-warp shared staging, bias + relu with an f16 output, gelu (tanh form), silu.
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s
// RUN: tessera-jit compile %s --target host | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 | FileCheck %s --check-prefix=PTX
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 | FileCheck %s --check-prefix=PTX

module {
  // Baseline retained for kernel-only comparisons: one warp and direct global
  // fragment loads, with the same masks/K-loop/epilogue contract.
  llvm.func @tile_matmul_f32_direct(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr,
                                    %m: i64, %n: i64, %k: i64)
      attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">,
      warps = 1 : i64, staging = "global"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_matmul_f32(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr,
                             %m: i64, %n: i64, %k: i64)
      attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">,
      warps = 4 : i64, staging = "shared"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_matmul_bias_relu_f16(
      %a: !llvm.ptr, %b: !llvm.ptr, %bias: !llvm.ptr, %d: !llvm.ptr,
      %m: i64, %n: i64, %k: i64) attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %bias, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = true, activation = "relu", output = "f16">,
      warps = 4 : i64, staging = "shared"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_matmul_bf16(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr,
                              %m: i64, %n: i64, %k: i64)
      attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "bf16", b = "bf16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">,
      warps = 4 : i64, staging = "shared"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_matmul_gelu(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr,
                              %m: i64, %n: i64, %k: i64)
      attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "gelu", output = "f32">,
      warps = 1 : i64, staging = "global"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tile_matmul_silu(%a: !llvm.ptr, %b: !llvm.ptr, %d: !llvm.ptr,
                              %m: i64, %n: i64, %k: i64)
      attributes {nvvm.kernel} {
    tile.matmul_kernel %a, %b, %d, %m, %n, %k {
      mma = #tile.mma_desc<family = "mma_sync", m = 16, n = 8, k = 16, a = "f16", b = "f16", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "silu", output = "f32">,
      warps = 1 : i64, staging = "global"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }
}

// CHECK-LABEL: func.func @tile_matmul_f32_direct(
// CHECK-SAME: %arg0: memref<?x?xf16> {tessera.dims_from = array<i64: 3, 5>, tessera.launch_role = "tile.matmul_kernel A [M, K]"}
// CHECK-SAME: %arg1: memref<?x?xf16> {tessera.dims_from = array<i64: 4, 5>, tessera.launch_role = "tile.matmul_kernel B [N, K]"}
// CHECK-SAME: %arg2: memref<?x?xf32> {tessera.dims_from = array<i64: 3, 4>, tessera.launch_role = "tile.matmul_kernel D [M, N]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 {transpose_b} : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tile_matmul_f32(
// CHECK-SAME: %arg0: memref<?x?xf16> {tessera.dims_from = array<i64: 3, 5>, tessera.launch_role = "tile.matmul_kernel A [M, K]"}
// CHECK-SAME: %arg1: memref<?x?xf16> {tessera.dims_from = array<i64: 4, 5>, tessera.launch_role = "tile.matmul_kernel B [N, K]"}
// CHECK-SAME: %arg2: memref<?x?xf32> {tessera.dims_from = array<i64: 3, 4>, tessera.launch_role = "tile.matmul_kernel D [M, N]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 {transpose_b} : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tile_matmul_bias_relu_f16(
// CHECK-SAME: %arg0: memref<?x?xf16> {tessera.dims_from = array<i64: 4, 6>, tessera.launch_role = "tile.matmul_kernel A [M, K]"}
// CHECK-SAME: %arg1: memref<?x?xf16> {tessera.dims_from = array<i64: 5, 6>, tessera.launch_role = "tile.matmul_kernel B [N, K]"}
// CHECK-SAME: %arg2: memref<?xf32> {tessera.dims_from = array<i64: 5>, tessera.launch_role = "tile.matmul_kernel bias [N]"}
// CHECK-SAME: %arg3: memref<?x?xf16> {tessera.dims_from = array<i64: 4, 5>, tessera.launch_role = "tile.matmul_kernel D [M, N]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg3 bias(%arg2 : memref<?xf32>) activation(relu) {transpose_b} : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf16>
// CHECK-LABEL: func.func @tile_matmul_bf16(
// CHECK-SAME: %arg0: memref<?x?xbf16> {tessera.dims_from = array<i64: 3, 5>, tessera.launch_role = "tile.matmul_kernel A [M, K]"}
// CHECK-SAME: %arg1: memref<?x?xbf16> {tessera.dims_from = array<i64: 4, 5>, tessera.launch_role = "tile.matmul_kernel B [N, K]"}
// CHECK-SAME: %arg2: memref<?x?xf32> {tessera.dims_from = array<i64: 3, 4>, tessera.launch_role = "tile.matmul_kernel D [M, N]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 {transpose_b} : memref<?x?xbf16>, memref<?x?xbf16> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tile_matmul_gelu(
// CHECK-SAME: %arg0: memref<?x?xf16> {tessera.dims_from = array<i64: 3, 5>, tessera.launch_role = "tile.matmul_kernel A [M, K]"}
// CHECK-SAME: %arg1: memref<?x?xf16> {tessera.dims_from = array<i64: 4, 5>, tessera.launch_role = "tile.matmul_kernel B [N, K]"}
// CHECK-SAME: %arg2: memref<?x?xf32> {tessera.dims_from = array<i64: 3, 4>, tessera.launch_role = "tile.matmul_kernel D [M, N]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 activation(gelu_tanh) {transpose_b} : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tile_matmul_silu(
// CHECK-SAME: %arg0: memref<?x?xf16> {tessera.dims_from = array<i64: 3, 5>, tessera.launch_role = "tile.matmul_kernel A [M, K]"}
// CHECK-SAME: %arg1: memref<?x?xf16> {tessera.dims_from = array<i64: 4, 5>, tessera.launch_role = "tile.matmul_kernel B [N, K]"}
// CHECK-SAME: %arg2: memref<?x?xf32> {tessera.dims_from = array<i64: 3, 4>, tessera.launch_role = "tile.matmul_kernel D [M, N]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 activation(silu) {transpose_b} : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>

// HOST: compiled for host
// HOST: entry @tile_matmul_f32_direct 
// HOST: entry @tile_matmul_f32 
// HOST: entry @tile_matmul_bias_relu_f16 
// HOST: entry @tile_matmul_bf16 
// HOST: entry @tile_matmul_gelu 
// HOST: entry @tile_matmul_silu 

// PTX: gpu.module @tessera_kernels_tile_matmul_f32_direct_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_matmul_f32_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_matmul_bias_relu_f16_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_matmul_bf16_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_matmul_gelu_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tile_matmul_silu_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
