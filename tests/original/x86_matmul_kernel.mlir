// The original's x86 f32 matmul (tile_x86_base_invalid.mlir: its x86 base lowering refuses
// matmuls; this project compiles it).
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s
// RUN: tessera-jit compile %s --target host | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 | FileCheck %s --check-prefix=PTX
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 | FileCheck %s --check-prefix=PTX

module {
  llvm.func @matmul(%a: !llvm.ptr, %b: !llvm.ptr, %o: !llvm.ptr,
                    %m: i64, %n: i64, %k: i64) {
    tile.matmul_kernel %a, %b, %o, %m, %n, %k {
      mma = #tile.mma_desc<family = "auto", m = 16, n = 16, k = 16, a = "f32", b = "f32", acc = "f32", a_layout = "row_major", b_layout = "col_major", k_blocks = 1>,
      epilogue = #tile.epilogue<bias = false, activation = "none", output = "f32">,
      warps = 1 : i64, staging = "global"
    } : !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }
}

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %arg0: memref<?x?xf32> {tessera.dims_from = array<i64: 3, 5>, tessera.launch_role = "tile.matmul_kernel A [M, K]"}
// CHECK-SAME: %arg1: memref<?x?xf32> {tessera.dims_from = array<i64: 4, 5>, tessera.launch_role = "tile.matmul_kernel B [N, K]"}
// CHECK-SAME: %arg2: memref<?x?xf32> {tessera.dims_from = array<i64: 3, 4>, tessera.launch_role = "tile.matmul_kernel D [M, N]"}
// CHECK-NEXT: tile.matmul %arg0, %arg1 -> %arg2 {transpose_b} : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>

// HOST: compiled for host
// HOST: entry @matmul 

// PTX: gpu.module @tessera_kernels_matmul_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
