// tessera-approximate-math alone: f32 exp, tanh and log1p (scalar or vector) become fma
// polynomials with no libm call left; functions it does not approximate (sin) and f64 keep
// their math op. Accuracy: tests/jit/math_accuracy_test.cc.
// RUN: tessera-opt %s --tessera-approximate-math | FileCheck %s

// CHECK-LABEL: func.func @approximated
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.log1p
// CHECK: math.roundeven %{{.*}} : f32
// CHECK: math.fma %{{.*}} : f32
// CHECK: math.fma %{{.*}} : vector<8xf32>
// CHECK: math.copysign %{{.*}}, %arg1 : vector<8xf32>
// CHECK: return
func.func @approximated(%x: f32, %v: vector<8xf32>) -> (f32, vector<8xf32>, f32) {
  %e = math.exp %x : f32
  %t = math.tanh %v : vector<8xf32>
  %l = math.log1p %x : f32
  return %e, %t, %l : f32, vector<8xf32>, f32
}

// CHECK-LABEL: func.func @kept
// CHECK-NEXT: %[[SIN:.*]] = math.sin %arg0 : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %arg1 : f64
// CHECK-NEXT: return %[[SIN]], %[[EXP]]
func.func @kept(%x: f32, %d: f64) -> (f32, f64) {
  %s = math.sin %x : f32
  %e = math.exp %d : f64
  return %s, %e : f32, f64
}
