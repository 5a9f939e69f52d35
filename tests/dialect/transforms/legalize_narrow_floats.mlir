// RUN: tessera-opt %s --tessera-legalize-narrow-floats --canonicalize | FileCheck %s
// Each bf16 result (and each f16/bf16 math function's) is rounded to its type before it is used: the truncf/extf pair between two
// operations survives canonicalization (upstream's pair, both marked fastmath<contract>, folds);
// the widening extf carries no fast-math flag.

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: bf16)
// CHECK-DAG: %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-DAG: %[[BW:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NOT: fastmath

// CHECK: %[[P:.*]] = arith.mulf %[[AW]], %[[BW]] : f32
// CHECK: %[[PN:.*]] = arith.truncf %[[P]] {{.*}}: f32 to bf16
// CHECK: %[[PW:.*]] = arith.extf %[[PN]] : bf16 to f32
// CHECK-NOT: fastmath
// CHECK: %[[S:.*]] = arith.addf %[[PW]], %{{.*}} : f32
// CHECK: %[[SN:.*]] = arith.truncf %[[S]] {{.*}}: f32 to bf16
// CHECK: return %[[SN]] : bf16
func.func @chain(%a: bf16, %b: bf16, %c: bf16) -> bf16 {
  %p = arith.mulf %a, %b : bf16
  %s = arith.addf %p, %c : bf16
  return %s : bf16
}

// CHECK-LABEL: func.func @vector_chain
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NEXT: arith.truncf %{{.*}} {{.*}}: vector<8xf32> to vector<8xbf16>
// CHECK-NEXT: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK: arith.subf %{{.*}}, %{{.*}} : vector<8xf32>
func.func @vector_chain(%a: vector<8xbf16>, %b: vector<8xbf16>) -> vector<8xbf16> {
  %p = arith.mulf %a, %b : vector<8xbf16>
  %d = arith.subf %p, %a : vector<8xbf16>
  return %d : vector<8xbf16>
}

// An f16 function of an f16 function: exp2 overflows f16, so cos sees inf (NaN), not the f32
// value; the rounding between them survives.
// CHECK-LABEL: func.func @f16_math_chain
// CHECK: %[[E:.*]] = math.exp2 %{{.*}} : f32
// CHECK: %[[EN:.*]] = arith.truncf %[[E]] {{.*}}: f32 to f16
// CHECK: %[[EW:.*]] = arith.extf %[[EN]] : f16 to f32
// CHECK: math.cos %[[EW]] : f32
func.func @f16_math_chain(%a: f16) -> f16 {
  %x = math.exp2 %a : f16
  %y = math.cos %x : f16
  return %y : f16
}

// f16 arithmetic is left to the target (every target rounds it per operation).
// CHECK-LABEL: func.func @f16_arith
// CHECK: arith.addf %{{.*}}, %{{.*}} : f16
func.func @f16_arith(%a: f16, %b: f16) -> f16 {
  %s = arith.addf %a, %b : f16
  return %s : f16
}
