// The register tile writes C itself where C needs no epilogue (f32, no bias, residual or
// activation) and the tile is all the panel's own rows and columns; other tiles go through a
// scratch tile and the epilogue. The scratch tile and a packed A of up to 8192 elements are
// static stack buffers that the outlined parallel body allocates once, before its loop over
// row panels (not once per iteration: the stack would grow with M); a larger packed A is
// allocated and freed per panel (tests/jit/matmul_order_test checks the bits both ways).
// RUN: tessera-opt %s --tessera-lower-tile-to-loops='vector-bits=256' | FileCheck %s

// CHECK-LABEL: func.func private @mm_parallel_0(
// CHECK-SAME: %[[C:arg[0-9]+]]: memref<?x?xf32>
// CHECK-NEXT: %[[SCRATCH:.*]] = memref.alloca() {alignment = 64 : i64} : memref<96xf32>
// CHECK-NEXT: %[[STACK_A:.*]] = memref.alloca() {alignment = 64 : i64} : memref<8192xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloca
// CHECK: %[[STACK_LIMIT:.*]] = arith.constant 8192 : index
// CHECK: %[[ON_STACK:.*]] = arith.cmpi ule, %[[PACKED_SIZE:.*]], %[[STACK_LIMIT]] : index
// CHECK: %[[PACKED_A:.*]] = scf.if %[[ON_STACK]] -> (memref<?xf32>) {
// CHECK-NEXT: memref.cast %[[STACK_A]] : memref<8192xf32> to memref<?xf32>
// CHECK: } else {
// CHECK-NEXT: memref.alloc(%[[PACKED_SIZE]]) : memref<?xf32>
// A whole tile: into C at C's row stride; else into the scratch tile (row stride 16).
// CHECK: scf.if %{{.*}} {
// CHECK: func.call @tessera_uk_matmul_f32_tile_6x16_avx(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C_STRIDE:.*]]) :
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[NR:.*]] = arith.constant 16 : index
// CHECK-NEXT: func.call @tessera_uk_matmul_f32_tile_6x16_avx(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NR]]) :
// CHECK: memref.load %[[SCRATCH]]
// CHECK: %[[ON_HEAP:.*]] = arith.xori %[[ON_STACK]], %{{.*}} : i1
// CHECK-NEXT: scf.if %[[ON_HEAP]] {
// CHECK-NEXT: memref.dealloc %[[PACKED_A]] : memref<?xf32>
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}

// With a bias every tile goes through the epilogue: one call, into the scratch tile.
// CHECK-LABEL: func.func private @mm_bias_parallel_2(
// CHECK: %[[BIAS_SCRATCH:.*]] = memref.alloca() {alignment = 64 : i64} : memref<96xf32>
// CHECK: func.call @tessera_uk_matmul_f32_tile_6x16_avx(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c16{{.*}}) :
// CHECK-NOT: func.call @tessera_uk_matmul_f32_tile_6x16_avx
// CHECK: memref.load %[[BIAS_SCRATCH]]
// CHECK-LABEL: func.func private @mm_bias_parallel(
func.func @mm_bias(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>,
                   %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
