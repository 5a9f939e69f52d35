// The host pipeline interleaves only the loops that ask (LLVM's own interleaving is off:
// jit/codegen/llvm_optimize.h): the streamed reduction over a leading axis asks for 2 on its
// hot loop, and the request reaches the latch branch that becomes LLVM IR's !llvm.loop.
// RUN: tessera-opt %s --tessera-lower-to-host | FileCheck %s

// CHECK: #llvm.loop_interleave<count = 2 : i32>
// CHECK-LABEL: llvm.func @column_sums
// CHECK: llvm.br {{.*}} {loop_annotation = #
// CHECK-NOT: llvm.loop_annotation =
func.func @column_sums(%x: memref<?x?xf32>, %sums: memref<?xf32>) {
  tile.reduce sum %x -> %sums axis = 0 : memref<?x?xf32> -> memref<?xf32>
  return
}
