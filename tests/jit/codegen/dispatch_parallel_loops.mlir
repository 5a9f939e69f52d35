// tessera-dispatch-parallel-loops alone: a call of an outlined parallel body becomes
// tessera_rt_parallel_for over a task that unpacks the captures; a body that can fail a
// run-time check stays a direct, sequential call.
// RUN: tessera-opt %s --tessera-dispatch-parallel-loops | FileCheck %s

// CHECK: llvm.func @tessera_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
// CHECK: llvm.func internal @rows(%{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: f32) attributes {tessera_jit.parallel_body}
llvm.func @rows(%begin: i64, %end: i64, %cost: i64, %data: !llvm.ptr, %scale: f32) attributes {tessera_jit.parallel_body} {
  llvm.return
}

// The task: (captures, begin, end) → the body, cost 0, captures unpacked in order.
// CHECK: llvm.func internal @rows_task(%[[CAPTURES:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK-NEXT: %[[PACKED:.*]] = llvm.load %[[CAPTURES]] : !llvm.ptr -> !llvm.struct<(ptr, f32)>
// CHECK: %[[DATA:.*]] = llvm.extractvalue %[[PACKED]][0]
// CHECK: %[[SCALE:.*]] = llvm.extractvalue %[[PACKED]][1]
// CHECK: llvm.call @rows(%[[BEGIN]], %[[END]], %{{.*}}, %[[DATA]], %[[SCALE]])

// A body that may stop the invocation runs on the calling thread.
// CHECK: llvm.func internal @checked(
llvm.func @tessera_rt_check_failed(i64)
llvm.func @checked(%begin: i64, %end: i64, %cost: i64) attributes {tessera_jit.parallel_body} {
  %id = llvm.mlir.constant(0 : i64) : i64
  llvm.call @tessera_rt_check_failed(%id) : (i64) -> ()
  llvm.return
}

// CHECK-LABEL: llvm.func @run
llvm.func @run(%n: i64, %data: !llvm.ptr, %scale: f32) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %cost = llvm.mlir.constant(10 : i64) : i64
  // CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, f32)>
  // CHECK: llvm.store %{{.*}}, %[[SLOT]] : !llvm.struct<(ptr, f32)>, !llvm.ptr
  // CHECK: %[[TASK:.*]] = llvm.mlir.addressof @rows_task : !llvm.ptr
  // CHECK: llvm.call @tessera_rt_parallel_for(%[[TASK]], %[[SLOT]], %{{.*}}, %{{.*}}, %{{.*}})
  // CHECK-NOT: llvm.call @rows(
  llvm.call @rows(%zero, %n, %cost, %data, %scale) : (i64, i64, i64, !llvm.ptr, f32) -> ()
  // CHECK: llvm.call @checked(%{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64) -> ()
  // CHECK-NOT: @checked_task
  llvm.call @checked(%zero, %n, %cost) : (i64, i64, i64) -> ()
  llvm.return
}
