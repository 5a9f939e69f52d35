// The original's launch-level reductions (test/nvidia/sm120_reduce_kernel.mlir).
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s
// RUN: tessera-jit compile %s --target host | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 | FileCheck %s --check-prefix=PTX
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 | FileCheck %s --check-prefix=PTX

module {
  llvm.func @tessera_tile_reduce_sum_f32(
      %x: !llvm.ptr, %o: !llvm.ptr, %outer: i64, %axis_extent: i64, %inner: i64)
      attributes {nvvm.kernel} {
    tile.reduce_kernel %x, %o, %outer, %axis_extent, %inner {
      storage = "f32", accum = "f32", kind = "sum",
      axis = 1 : i64, keepdims = true, schedule = "serial",
      nan_mode = "propagate"
    } : !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tessera_tile_reduce_max_f16(
      %x: !llvm.ptr, %o: !llvm.ptr, %outer: i64, %axis_extent: i64, %inner: i64)
      attributes {nvvm.kernel} {
    tile.reduce_kernel %x, %o, %outer, %axis_extent, %inner {
      storage = "f16", accum = "f32", kind = "max",
      axis = 0 : i64, keepdims = false, schedule = "cooperative_128",
      nan_mode = "propagate"
    } : !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tessera_tile_reduce_min_bf16(
      %x: !llvm.ptr, %o: !llvm.ptr, %outer: i64, %axis_extent: i64, %inner: i64)
      attributes {nvvm.kernel} {
    tile.reduce_kernel %x, %o, %outer, %axis_extent, %inner {
      storage = "bf16", accum = "f32", kind = "min",
      axis = 2 : i64, keepdims = true, schedule = "serial",
      nan_mode = "propagate"
    } : !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }

  llvm.func @tessera_tile_reduce_mean_bf16_cooperative(
      %x: !llvm.ptr, %o: !llvm.ptr, %outer: i64, %axis_extent: i64, %inner: i64)
      attributes {nvvm.kernel} {
    tile.reduce_kernel %x, %o, %outer, %axis_extent, %inner {
      storage = "bf16", accum = "f32", kind = "mean",
      axis = 1 : i64, keepdims = false, schedule = "cooperative_128",
      nan_mode = "propagate"
    } : !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }
}

// CHECK-LABEL: func.func @tessera_tile_reduce_sum_f32(
// CHECK-SAME: %arg0: memref<?x?x?xf32> {tessera.dims_from = array<i64: 2, 3, 4>, tessera.launch_role = "tile.reduce_kernel X [outer, axis, inner]"}
// CHECK-SAME: %arg1: memref<?x?xf32> {tessera.dims_from = array<i64: 2, 4>, tessera.launch_role = "tile.reduce_kernel O [outer, inner]"}
// CHECK-NEXT: tile.reduce sum %arg0 -> %arg1 axis = 1 : memref<?x?x?xf32> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tessera_tile_reduce_max_f16(
// CHECK-SAME: %arg0: memref<?x?x?xf16> {tessera.dims_from = array<i64: 2, 3, 4>, tessera.launch_role = "tile.reduce_kernel X [outer, axis, inner]"}
// CHECK-SAME: %arg1: memref<?x?xf32> {tessera.dims_from = array<i64: 2, 4>, tessera.launch_role = "tile.reduce_kernel O [outer, inner]"}
// CHECK-NEXT: tile.reduce max %arg0 -> %arg1 axis = 1 : memref<?x?x?xf16> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tessera_tile_reduce_min_bf16(
// CHECK-SAME: %arg0: memref<?x?x?xbf16> {tessera.dims_from = array<i64: 2, 3, 4>, tessera.launch_role = "tile.reduce_kernel X [outer, axis, inner]"}
// CHECK-SAME: %arg1: memref<?x?xf32> {tessera.dims_from = array<i64: 2, 4>, tessera.launch_role = "tile.reduce_kernel O [outer, inner]"}
// CHECK-NEXT: tile.reduce min %arg0 -> %arg1 axis = 1 : memref<?x?x?xbf16> -> memref<?x?xf32>
// CHECK-LABEL: func.func @tessera_tile_reduce_mean_bf16_cooperative(
// CHECK-SAME: %arg0: memref<?x?x?xbf16> {tessera.dims_from = array<i64: 2, 3, 4>, tessera.launch_role = "tile.reduce_kernel X [outer, axis, inner]"}
// CHECK-SAME: %arg1: memref<?x?xf32> {tessera.dims_from = array<i64: 2, 4>, tessera.launch_role = "tile.reduce_kernel O [outer, inner]"}
// CHECK-NEXT: tile.reduce mean %arg0 -> %arg1 axis = 1 : memref<?x?x?xbf16> -> memref<?x?xf32>

// HOST: compiled for host
// HOST: entry @tessera_tile_reduce_sum_f32 
// HOST: entry @tessera_tile_reduce_max_f16 
// HOST: entry @tessera_tile_reduce_min_bf16 
// HOST: entry @tessera_tile_reduce_mean_bf16_cooperative 

// PTX: gpu.module @tessera_kernels_tessera_tile_reduce_sum_f32_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tessera_tile_reduce_max_f16_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tessera_tile_reduce_min_bf16_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tessera_tile_reduce_mean_bf16_cooperative_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
