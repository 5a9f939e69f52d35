// The original's x86 fixture (tests/tessera-ir/phase2/tile_x86_base_e2e.mlir): plain llvm.func
// wrappers, `inner_is_one` (a hint checked against the dims).
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s
// RUN: tessera-jit compile %s --target host | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 | FileCheck %s --check-prefix=PTX
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 | FileCheck %s --check-prefix=PTX

module {
  llvm.func @softmax(%x: !llvm.ptr, %o: !llvm.ptr, %rows: i64, %k: i64) {
    tile.softmax_kernel %x, %o, %rows, %k {
      storage = "f32", accum = "f32", axis = -1 : i64,
      exp_mode = "accurate", ftz = false
    } : !llvm.ptr, !llvm.ptr, i64, i64
    llvm.return
  }
  llvm.func @reduce(%x: !llvm.ptr, %o: !llvm.ptr, %outer: i64,
                    %extent: i64, %inner: i64) {
    tile.reduce_kernel %x, %o, %outer, %extent, %inner {
      storage = "f32", accum = "f32", kind = "sum", axis = 1 : i64,
      keepdims = false, schedule = "serial", nan_mode = "propagate",
      inner_is_one = true
    } : !llvm.ptr, !llvm.ptr, i64, i64, i64
    llvm.return
  }
}

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %arg0: memref<?x?xf32> {tessera.dims_from = array<i64: 2, 3>, tessera.launch_role = "tile.softmax_kernel X [rows, columns]"}
// CHECK-SAME: %arg1: memref<?x?xf32> {tessera.dims_from = array<i64: 2, 3>, tessera.launch_role = "tile.softmax_kernel O [rows, columns]"}
// CHECK-NEXT: tile.softmax %arg0 -> %arg1 : memref<?x?xf32> -> memref<?x?xf32>
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME: %arg0: memref<?x?x1xf32> {tessera.dims_from = array<i64: 2, 3, 4>, tessera.launch_role = "tile.reduce_kernel X [outer, axis, inner]"}
// CHECK-SAME: %arg1: memref<?x1xf32> {tessera.dims_from = array<i64: 2, 4>, tessera.launch_role = "tile.reduce_kernel O [outer, inner]"}
// CHECK-NEXT: tile.reduce sum %arg0 -> %arg1 axis = 1 : memref<?x?x1xf32> -> memref<?x1xf32>

// HOST: compiled for host
// HOST: entry @softmax 
// HOST: entry @reduce 

// PTX: gpu.module @tessera_kernels_softmax_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_reduce_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
