// The original's ROCm softmax fixture (gfx1151_tile_softmax_kernel.mlir): exp_mode = "accurate".
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s
// RUN: tessera-jit compile %s --target host | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 | FileCheck %s --check-prefix=PTX
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 | FileCheck %s --check-prefix=PTX

module {
  llvm.func @tessera_tile_softmax_f32(
      %x: !llvm.ptr, %o: !llvm.ptr, %rows: i64, %columns: i64) {
    tile.softmax_kernel %x, %o, %rows, %columns {
      storage = "f32", accum = "f32", axis = -1 : i64,
      exp_mode = "accurate", ftz = false
    } : !llvm.ptr, !llvm.ptr, i64, i64
    llvm.return
  }
}

// CHECK-LABEL: func.func @tessera_tile_softmax_f32(
// CHECK-SAME: %arg0: memref<?x?xf32> {tessera.dims_from = array<i64: 2, 3>, tessera.launch_role = "tile.softmax_kernel X [rows, columns]"}
// CHECK-SAME: %arg1: memref<?x?xf32> {tessera.dims_from = array<i64: 2, 3>, tessera.launch_role = "tile.softmax_kernel O [rows, columns]"}
// CHECK-NEXT: tile.softmax %arg0 -> %arg1 : memref<?x?xf32> -> memref<?x?xf32>

// HOST: compiled for host
// HOST: entry @tessera_tile_softmax_f32 

// PTX: gpu.module @tessera_kernels_tessera_tile_softmax_f32_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
