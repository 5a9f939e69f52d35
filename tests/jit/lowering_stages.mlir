// Every lowering stage can be shown with tessera-opt.
// RUN: tessera-opt %s --tessera-lower-tile-to-loops | FileCheck %s --check-prefix=LOOPS
// RUN: tessera-opt %s --pass-pipeline='builtin.module(func.func(tessera-lower-tile-to-gpu))' | FileCheck %s --check-prefix=GPU
// RUN: tessera-opt %s --tessera-lower-to-host | FileCheck %s --check-prefix=HOST
// RUN: tessera-opt %s --tessera-lower-to-nvvm='arch=sm_80' | FileCheck %s --check-prefix=NVVM

// LOOPS-LABEL: func.func @row_sums
// LOOPS: call @row_sums_parallel({{.*}}) : (index, index, index, {{.*}}memref<?x?xf32>, memref<?xf32>) -> ()
// LOOPS: func.func private @row_sums_parallel(%[[BEGIN:[^:]*]]: index, %[[END:[^:]*]]: index, {{.*}}%[[X:[^:]*]]: memref<?x?xf32>, %[[Y:[^:]*]]: memref<?xf32>) attributes {tessera_jit.parallel_body}
// LOOPS: scf.for %[[ROW:.*]] = %[[BEGIN]] to %[[END]] step %{{.*}} {
// LOOPS: %[[LANES:.*]] = scf.for %[[COL:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<32xf32>) {
// LOOPS: %[[CHUNK:.*]] = vector.load %[[X]][%[[ROW]], %[[COL]]] : memref<?x?xf32>, vector<32xf32>
// LOOPS: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[CHUNK]] : vector<32xf32>
// LOOPS: scf.yield %[[NEXT]] : vector<32xf32>
// LOOPS: vector.maskedload %[[X]]
// LOOPS: vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
// LOOPS: vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [1], strides = [1]} : vector<2xf32> to vector<1xf32>
// LOOPS: memref.store %{{.*}}, %[[Y]][%[[ROW]]] : memref<?xf32>
// LOOPS-NOT: tile.

// GPU-LABEL: func.func @row_sums
// GPU: scf.if
// GPU: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}) module(@tessera_kernels_row_sums_reduce_0) function(@row_sums_reduce_0) workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>)
// GPU: gpu.barrier
// GPU: gpu.terminator

// HOST: llvm.func @row_sums(
// HOST: llvm.call @tessera_rt_parallel_for(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// HOST: llvm.func @_mlir_ciface_row_sums
// HOST-NOT: tile.
// HOST-NOT: scf.

// NVVM: llvm.func @row_sums(
// NVVM: gpu.launch_func @tessera_kernels_row_sums_reduce_0::@row_sums_reduce_0
// NVVM: gpu.binary @tessera_kernels_row_sums_reduce_0 {{\[}}#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80">
func.func @row_sums(%x: memref<?x?xf32>, %y: memref<?xf32>) attributes {llvm.emit_c_interface} {
  tile.reduce sum %x -> %y axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}
