// Every lowering stage can be shown with tessera-opt.
// RUN: tessera-opt %s --pass-pipeline='builtin.module(func.func(tessera-lower-tile-to-loops))' | FileCheck %s --check-prefix=LOOPS
// RUN: tessera-opt %s --pass-pipeline='builtin.module(func.func(tessera-lower-tile-to-gpu))' | FileCheck %s --check-prefix=GPU
// RUN: tessera-opt %s --tessera-lower-to-host | FileCheck %s --check-prefix=HOST
// RUN: tessera-opt %s --tessera-lower-to-nvvm='arch=sm_80' | FileCheck %s --check-prefix=NVVM

// LOOPS-LABEL: func.func @row_sums
// LOOPS: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// LOOPS: %[[SUM:.*]] = scf.for %[[COL:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// LOOPS: %[[X:.*]] = memref.load %{{.*}}[%[[ROW]], %[[COL]]] : memref<?x?xf32>
// LOOPS: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// LOOPS: scf.yield %[[NEXT]] : f32
// LOOPS: memref.store %[[SUM]], %{{.*}}[%[[ROW]]] : memref<?xf32>
// LOOPS-NOT: tile.

// GPU-LABEL: func.func @row_sums
// GPU: scf.if
// GPU: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}) module(@tessera_kernels) function(@row_sums_reduce_0) workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>)
// GPU: gpu.barrier
// GPU: gpu.terminator

// HOST: llvm.func @row_sums(
// HOST: llvm.func @_mlir_ciface_row_sums
// HOST-NOT: tile.
// HOST-NOT: scf.

// NVVM: llvm.func @row_sums(
// NVVM: gpu.launch_func @tessera_kernels::@row_sums_reduce_0
// NVVM: gpu.binary @tessera_kernels {{\[}}#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80">
func.func @row_sums(%x: memref<?x?xf32>, %y: memref<?xf32>) attributes {llvm.emit_c_interface} {
  tile.reduce sum %x -> %y axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}
