// The original's launch-level RMSNorm and LayerNorm (test/nvidia/sm120_norm_kernel.mlir).
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s
// RUN: tessera-jit compile %s --target host | FileCheck %s --check-prefix=HOST
// RUN: tessera-jit compile %s --target nvptx --arch sm_90 | FileCheck %s --check-prefix=PTX
// RUN: tessera-jit compile %s --target nvptx --arch sm_120 | FileCheck %s --check-prefix=PTX

module {
  llvm.func @tessera_tile_rmsnorm_bf16(
      %x: !llvm.ptr, %o: !llvm.ptr, %rows: i64, %columns: i64)
      attributes {nvvm.kernel} {
    %epsilon = arith.constant 1.000000e-05 : f32
    tile.norm_kernel %x, %o, %rows, %columns, %epsilon {
      storage = "bf16", accum = "f32", kind = "rmsnorm",
      axis = -1 : i64, affine = false
    } : !llvm.ptr, !llvm.ptr, i64, i64, f32
    llvm.return
  }

  llvm.func @tessera_tile_layernorm_f16(
      %x: !llvm.ptr, %o: !llvm.ptr, %rows: i64, %columns: i64)
      attributes {nvvm.kernel} {
    %epsilon = arith.constant 1.000000e-05 : f32
    tile.norm_kernel %x, %o, %rows, %columns, %epsilon {
      storage = "f16", accum = "f32", kind = "layernorm",
      axis = -1 : i64, affine = false
    } : !llvm.ptr, !llvm.ptr, i64, i64, f32
    llvm.return
  }
}

// CHECK-LABEL: func.func @tessera_tile_rmsnorm_bf16(
// CHECK-SAME: %arg0: memref<?x?xbf16> {tessera.dims_from = array<i64: 2, 3>, tessera.launch_role = "tile.norm_kernel X [rows, columns]"}
// CHECK-SAME: %arg1: memref<?x?xbf16> {tessera.dims_from = array<i64: 2, 3>, tessera.launch_role = "tile.norm_kernel O [rows, columns]"}
// CHECK-NEXT: tile.norm rms %arg0 -> %arg1 eps(9.99999974E-6) : memref<?x?xbf16> -> memref<?x?xbf16>
// CHECK-LABEL: func.func @tessera_tile_layernorm_f16(
// CHECK-SAME: %arg0: memref<?x?xf16> {tessera.dims_from = array<i64: 2, 3>, tessera.launch_role = "tile.norm_kernel X [rows, columns]"}
// CHECK-SAME: %arg1: memref<?x?xf16> {tessera.dims_from = array<i64: 2, 3>, tessera.launch_role = "tile.norm_kernel O [rows, columns]"}
// CHECK-NEXT: tile.norm layer %arg0 -> %arg1 eps(9.99999974E-6) : memref<?x?xf16> -> memref<?x?xf16>

// HOST: compiled for host
// HOST: entry @tessera_tile_rmsnorm_bf16 
// HOST: entry @tessera_tile_layernorm_f16 

// PTX: gpu.module @tessera_kernels_tessera_tile_rmsnorm_bf16_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
// PTX: gpu.module @tessera_kernels_tessera_tile_layernorm_f16_{{[a-z]+}}_0: 1 kernel(s), {{[0-9]+}} bytes of PTX, {{[0-9]+}} bytes of cubin
