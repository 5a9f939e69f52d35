// Each kernel is a device image of its own (compiled and linked in parallel); `--emit cubin`
// links them into one cubin that holds every kernel.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit compile %s --target nvptx | FileCheck %s --check-prefix=SUMMARY
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit compile %s --target nvptx --emit cubin -o %t/all.cubin
// RUN: strings %t/all.cubin | FileCheck %s --check-prefix=CUBIN

// SUMMARY: gpu.module @tessera_kernels_mlp_matmul_0: 1 kernel(s)
// SUMMARY: gpu.module @tessera_kernels_mlp_softmax_1: 1 kernel(s)
// SUMMARY: gpu.module @tessera_kernels_mlp_reduce_2: 1 kernel(s)
// CUBIN-DAG: mlp_matmul_0
// CUBIN-DAG: mlp_softmax_1
// CUBIN-DAG: mlp_reduce_2
func.func @mlp(%x: memref<?x16xf32>, %w: memref<16x8xf32>, %h: memref<?x8xf32>,
               %p: memref<?x8xf32>, %top: memref<?xf32>) {
  tile.matmul %x, %w -> %h : memref<?x16xf32>, memref<16x8xf32> -> memref<?x8xf32>
  tile.softmax %h -> %p : memref<?x8xf32> -> memref<?x8xf32>
  tile.reduce max %p -> %top axis = 1 : memref<?x8xf32> -> memref<?xf32>
  return
}
