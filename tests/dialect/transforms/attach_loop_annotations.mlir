// A loop annotation on an scf.for reaches LLVM IR as the loop's !llvm.loop metadata once
// tessera-attach-loop-annotations has made it the latch branch's own; without the pass the
// translation drops it (the host pipeline runs the pass: tests/jit/host_interleave.mlir).
// RUN: tessera-opt %s --convert-scf-to-cf --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts --tessera-attach-loop-annotations | FileCheck %s
// RUN: tessera-opt %s --convert-scf-to-cf --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts --tessera-attach-loop-annotations | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: tessera-opt %s --convert-scf-to-cf --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=DROPPED

// CHECK-LABEL: llvm.func @bump
// CHECK: llvm.br ^{{.*}} {loop_annotation = #
// CHECK-NOT: llvm.loop_annotation
// IR: br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// IR: ![[LOOP]] = distinct !{![[LOOP]], ![[COUNT:[0-9]+]]}
// IR: ![[COUNT]] = !{!"llvm.loop.interleave.count", i32 4}
// DROPPED-NOT: !llvm.loop
func.func @bump(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %m[%i] : memref<?xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %m[%i] : memref<?xf32>
  } {llvm.loop_annotation = #llvm.loop_annotation<interleave = #llvm.loop_interleave<count = 4 : i32>>}
  return
}

