// Small f32 matmuls read A and B where they are: the host lowering decides at run time — A's
// rows when contiguous and K <= 256, B's rows when its columns are contiguous, N >= NR and
// K·N <= 4096 — and skips the packing it then does not need (tests/jit/matmul_order_test
// checks that both ways give the same bits).
// RUN: tessera-opt %s --tessera-lower-tile-to-loops='vector-bits=256' | FileCheck %s

// CHECK-LABEL: func.func @mm(
// CHECK: %[[K_BOUND:.*]] = arith.constant 256 : index
// CHECK: arith.cmpi ule, %{{.*}}, %[[K_BOUND]] : index
// CHECK: %[[KN_BOUND:.*]] = arith.constant 4096 : index
// CHECK: arith.cmpi ule, %{{.*}}, %[[KN_BOUND]] : index
// Packed B's size (one element when B is read in place), then its packing, skipped likewise.
// CHECK: arith.xori %[[DIRECT_B:[0-9]+]], %{{.*}} : i1
// CHECK: %[[PACK_B:.*]] = arith.xori %[[DIRECT_B]], %{{.*}} : i1
// CHECK-NEXT: scf.if %[[PACK_B]] {
// CHECK: func.call @mm_parallel(
// The row panels: A's address and strides chosen by directA, pack_a only without it.
// CHECK-LABEL: func.func private @mm_parallel_0(
// CHECK-SAME: %[[DIRECT_A:arg[0-9]+]]: i1
// CHECK: arith.select %[[DIRECT_A]], %{{.*}}, %{{.*}} : !llvm.ptr
// CHECK: %[[PACK_A:.*]] = arith.xori %[[DIRECT_A]], %{{.*}} : i1
// CHECK-NEXT: scf.if %[[PACK_A]] {
// CHECK: func.call @tessera_uk_matmul_f32_pack_a(
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr
// CHECK: func.call @tessera_uk_matmul_f32_tile_6x16_avx(
// CHECK-LABEL: func.func private @mm_parallel(
// CHECK: func.call @tessera_uk_matmul_f32_pack_b(
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
