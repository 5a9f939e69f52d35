// The original's ROCm reduce fixture (gfx1151_tile_reduce_kernel.mlir).
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s
// RUN: tessera-jit compile %s --target host | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 | FileCheck %s --check-prefix=PTX
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 | FileCheck %s --check-prefix=PTX

module {
  llvm.func @tessera_tile_reduce_sum_f32(%x: !llvm.ptr, %o: !llvm.ptr,
                                         %outer: i64, %axis_extent: i64,
                                         %inner: i64) {
    tile.reduce_kernel %x, %o, %outer, %axis_extent, %inner {
      storage = "f32", accum = "f32", kind = "sum", axis = 1 : i64,
      keepdims = false, schedule = "serial", nan_mode = "propagate"
    } : !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }
}

// CHECK-LABEL: func.func @tessera_tile_reduce_sum_f32(
// CHECK-SAME: %arg0: memref<?x?x?xf32> {tessera.dims_from = array<i64: 2, 3, 4>, tessera.launch_role = "tile.reduce_kernel X [outer, axis, inner]"}
// CHECK-SAME: %arg1: memref<?x?xf32> {tessera.dims_from = array<i64: 2, 4>, tessera.launch_role = "tile.reduce_kernel O [outer, inner]"}
// CHECK-NEXT: tile.reduce sum %arg0 -> %arg1 axis = 1 : memref<?x?x?xf32> -> memref<?x?xf32>

// HOST: compiled for host
// HOST: entry @tessera_tile_reduce_sum_f32 

// PTX: gpu.module @tessera_kernels_tessera_tile_reduce_sum_f32_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
