// The host pipeline sizes the matmul's register tile by the vector width of the CPU code is
// generated for (tessera-jit's --host-cpu; here the pipeline option, 0 = this machine's): the
// module calls the runtime's microkernel for that tile and instruction set.
// RUN: tessera-opt %s --tessera-lower-to-host='host-vector-bits=128' | FileCheck %s --check-prefix=V128
// RUN: tessera-opt %s --tessera-lower-to-host='host-vector-bits=256' | FileCheck %s --check-prefix=V256
// RUN: tessera-opt %s --tessera-lower-to-host='host-vector-bits=512' | FileCheck %s --check-prefix=V512

// V128-NOT: tile_6x16
// V128-NOT: tile_6x64
// V128: llvm.call @tessera_uk_matmul_f32_tile_6x8_sse2(
// V256-NOT: tile_6x8_
// V256-NOT: tile_6x64
// V256: llvm.call @tessera_uk_matmul_f32_tile_6x16_avx(
// V512-NOT: tile_6x8_
// V512-NOT: tile_6x16
// V512: llvm.call @tessera_uk_matmul_f32_tile_6x64_avx512f(
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}

// Policy fma: the fused microkernels of the same tile and instruction set.
// V128: llvm.call @tessera_uk_matmul_f32_row_sse2_fma(
// V128: llvm.call @tessera_uk_matmul_f32_tile_6x8_sse2_fma(
// V256: llvm.call @tessera_uk_matmul_f32_row_avx_fma(
// V256: llvm.call @tessera_uk_matmul_f32_tile_6x16_avx_fma(
// V512: llvm.call @tessera_uk_matmul_f32_row_avx512f_fma(
// V512: llvm.call @tessera_uk_matmul_f32_tile_6x64_avx512f_fma(
func.func @mm_fma(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c policy(fma) : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
