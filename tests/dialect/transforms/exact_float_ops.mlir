// RUN: tessera-opt %s --tessera-exact-float-ops | FileCheck %s
// Narrow results are rounded once, from an f64 or f32 value rounded to odd; isinf and
// isnormal become compares in the operand's own type.

// CHECK-LABEL: func.func @narrow_fma
// CHECK-NOT: math.fma
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK: %[[S:.*]] = arith.addf %[[P]], %{{.*}} : f64
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[R]]
func.func @narrow_fma(%a: bf16, %b: bf16, %c: bf16) -> bf16 {
  %r = math.fma %a, %b, %c : bf16
  return %r : bf16
}

// CHECK-LABEL: func.func @vector_fma
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<4xf64>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
func.func @vector_fma(%a: vector<4xf16>, %b: vector<4xf16>, %c: vector<4xf16>) -> vector<4xf16> {
  %r = math.fma %a, %b, %c : vector<4xf16>
  return %r : vector<4xf16>
}

// f32 fma is left to the target (one rounding already).
// CHECK-LABEL: func.func @f32_fma
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
func.func @f32_fma(%a: f32, %b: f32, %c: f32) -> f32 {
  %r = math.fma %a, %b, %c : f32
  return %r : f32
}

// CHECK-LABEL: func.func @int_to_bf16
// CHECK: arith.sitofp %{{.*}} : i32 to f64
// CHECK: arith.shrsi %{{.*}}, %{{.*}} : i64
// CHECK: arith.uitofp %{{.*}} : i64 to f64
// CHECK-NOT: arith.sitofp %{{.*}} to bf16
// CHECK-NOT: arith.uitofp %{{.*}} to bf16
// CHECK: return
func.func @int_to_bf16(%a: i32, %b: i64, %c: i64) -> (bf16, bf16, bf16) {
  %x = arith.sitofp %a : i32 to bf16
  %y = arith.sitofp %b : i64 to bf16
  %z = arith.uitofp %c : i64 to bf16
  return %x, %y, %z : bf16, bf16, bf16
}

// CHECK-LABEL: func.func @truncf_from_f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @truncf_from_f64(%a: f64) -> bf16 {
  %r = arith.truncf %a : f64 to bf16
  return %r : bf16
}

// CHECK-LABEL: func.func @classify
// CHECK-NOT: math.isinf
// CHECK-NOT: math.isnormal
// CHECK: %[[ABS:.*]] = math.absf %{{.*}} : f16
// CHECK: arith.cmpf oeq, %[[ABS]], %{{.*}} : f16
// CHECK-DAG: arith.cmpf olt, %{{.*}}, %{{.*}} : f16
// CHECK-DAG: arith.cmpf oge, %{{.*}}, %{{.*}} : f16
func.func @classify(%a: f16) -> (i1, i1) {
  %i = math.isinf %a : f16
  %n = math.isnormal %a : f16
  return %i, %n : i1, i1
}

// math.atan2 of constants, and of f32/f64 operand chains that fold to constants (log2(1.0) = 0),
// folds as libm computes it: atan2(0, 0) = 0, atan2(0, -1) = π. Upstream's folder gives NaN for
// (0, 0), and canonicalization would have folded log2 first.
// CHECK-LABEL: func.func @atan2_of_folded_zeros
// CHECK-NOT: math.atan2
// CHECK-DAG: arith.constant 0.000000e+00 : f32
// CHECK-DAG: arith.constant 3.14159274 : f32
func.func @atan2_of_folded_zeros() -> (f32, f32) {
  %one = arith.constant 1.0 : f32
  %zero = math.log2 %one : f32
  %a = math.atan2 %zero, %zero : f32
  %minus = arith.constant -1.0 : f32
  %b = math.atan2 %zero, %minus : f32
  return %a, %b : f32, f32
}

// Chains through other types are left to canonicalization (their folders may round otherwise).
// CHECK-LABEL: func.func @atan2_of_an_integer_chain
// CHECK: math.atan2
func.func @atan2_of_an_integer_chain() -> f32 {
  %i = arith.constant 0 : i32
  %z = arith.sitofp %i : i32 to f32
  %r = math.atan2 %z, %z : f32
  return %r : f32
}
