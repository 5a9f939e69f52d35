// tessera-expand-arith widens the fp8 formats with integer operations (LLVM has no fp8 type):
// exponent rebias for normal codes, an exact integer-to-float product for subnormals, the
// all-ones codes to NaN (E4M3FN) or to infinities and NaN (E5M2), then the sign. Every code's
// value is checked by the differential corpus (edge_f8*_every_code_decodes.json).
// RUN: tessera-opt %s --tessera-expand-arith | FileCheck %s

// CHECK-LABEL: func.func @e4m3
// CHECK-NOT: arith.extf
// CHECK-DAG: %[[NAN:.*]] = arith.constant 2143289344 : i32
// CHECK-DAG: %[[SUBSCALE:.*]] = arith.constant 0.001953125 : f32
// CHECK-DAG: %[[REBIAS:.*]] = arith.constant 960 : i32
// CHECK: %[[BYTE:.*]] = arith.bitcast %arg0 : f8E4M3FN to i8
// CHECK: %[[BITS:.*]] = arith.extui %[[BYTE]] : i8 to i32
// CHECK: %[[NORMAL:.*]] = arith.addi %{{.*}}, %[[REBIAS]] : i32
// CHECK: arith.mulf %{{.*}}, %[[SUBSCALE]] : f32
// CHECK: arith.select %{{.*}}, %[[NAN]], %{{.*}} : i32
// CHECK: %[[SIGNED:.*]] = arith.ori
// CHECK: %[[F32:.*]] = arith.bitcast %[[SIGNED]] : i32 to f32
// CHECK: return %[[F32]] : f32
func.func @e4m3(%x: f8E4M3FN) -> f32 {
  %y = arith.extf %x : f8E4M3FN to f32
  return %y : f32
}

// CHECK-LABEL: func.func @e5m2_vector_to_f16
// CHECK-NOT: arith.extf
// CHECK-DAG: arith.constant dense<2139095040> : vector<4xi32>
// CHECK-DAG: arith.constant dense<1.52587891E-5> : vector<4xf32>
// CHECK: arith.bitcast %arg0 : vector<4xf8E5M2> to vector<4xi8>
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi ugt
// CHECK: %[[F32:.*]] = arith.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
// CHECK: arith.truncf %[[F32]] : vector<4xf32> to vector<4xf16>
func.func @e5m2_vector_to_f16(%x: vector<4xf8E5M2>) -> vector<4xf16> {
  %y = arith.extf %x : vector<4xf8E5M2> to vector<4xf16>
  return %y : vector<4xf16>
}

// CHECK-LABEL: func.func @e4m3_to_f64
// CHECK: %[[F32:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.extf %[[F32]] : f32 to f64
func.func @e4m3_to_f64(%x: f8E4M3FN) -> f64 {
  %y = arith.extf %x : f8E4M3FN to f64
  return %y : f64
}
