// tessera-lower-runtime-checks alone: allocations checked for size and NULL, integer division
// that cannot trap, cf.assert turned into a call of tessera_rt_check_failed, messages kept on
// the module; code inside gpu.modules untouched.
// RUN: tessera-opt %s --tessera-lower-runtime-checks | FileCheck %s

// CHECK: module attributes {tessera_jit.runtime_checks = ["{{.*}}lower_runtime_checks.mlir:{{[0-9]+}}:{{[0-9]+}}: 'memref.alloc' of more than 17179869184 bytes, or with a negative size", "{{.*}}: 'memref.alloc' failed: out of memory", "{{.*}}: the index is in bounds"]}
// CHECK: func.func private @tessera_rt_check_failed(i64)

// CHECK-LABEL: func.func @alloc_and_divide
func.func @alloc_and_divide(%n: index, %x: i32, %y: i32) -> i32 {
  // CHECK: %[[LIMIT:.*]] = arith.constant 17179869184 : index
  // CHECK: arith.divui %[[LIMIT]]
  // CHECK: scf.if
  // CHECK-NEXT: %[[ID0:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: func.call @tessera_rt_check_failed(%[[ID0]]) : (i64) -> ()
  // CHECK: %[[ALLOC:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
  // CHECK: memref.extract_aligned_pointer_as_index %[[ALLOC]]
  // CHECK: scf.if
  // CHECK-NEXT: %[[ID1:.*]] = arith.constant 1 : i64
  // CHECK-NEXT: func.call @tessera_rt_check_failed(%[[ID1]])
  %m = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %m : memref<?xf32>
  // A zero divisor, or INT_MIN / -1, divides by 1 instead.
  // CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[Y:.*]], %c0_i32 : i32
  // CHECK: %[[MIN:.*]] = arith.cmpi eq, %[[X:.*]], %c-2147483648_i32 : i32
  // CHECK: %[[NEG:.*]] = arith.cmpi eq, %[[Y]], %c-1_i32 : i32
  // CHECK: %[[OVERFLOW:.*]] = arith.andi %[[MIN]], %[[NEG]] : i1
  // CHECK: %[[BAD:.*]] = arith.ori %[[ZERO]], %[[OVERFLOW]] : i1
  // CHECK: %[[SAFE:.*]] = arith.select %[[BAD]], %c1_i32, %[[Y]] : i32
  // CHECK: arith.divsi %[[X]], %[[SAFE]] : i32
  %q = arith.divsi %x, %y : i32
  return %q : i32
}

// CHECK-LABEL: func.func @assert
func.func @assert(%ok: i1) {
  // CHECK-NOT: cf.assert
  // CHECK: %[[FAILED:.*]] = arith.xori %{{.*}}, %true
  // CHECK: scf.if %[[FAILED]] {
  // CHECK-NEXT: %[[ID2:.*]] = arith.constant 2 : i64
  // CHECK-NEXT: func.call @tessera_rt_check_failed(%[[ID2]])
  cf.assert %ok, "the index is in bounds"
  return
}

// Device code is left alone: it cannot call the host's runtime.
// CHECK: gpu.module @kernels
// CHECK: arith.divsi %{{.*}}, %{{.*}} : i32
// CHECK-NOT: tessera_rt_check_failed
gpu.module @kernels {
  gpu.func @k(%x: i32, %y: i32) kernel {
    %q = arith.divsi %x, %y : i32
    gpu.return
  }
}
