// tessera-expm1-log1p-to-libm alone: math.expm1 and math.log1p become calls of libm's expm1,
// expm1f, log1p, log1pf (MathToLLVM would compute them as exp(x) - 1 and log(1 + x), losing
// every bit near 0); other math ops stay.
// RUN: tessera-opt %s --tessera-expm1-log1p-to-libm | FileCheck %s

// CHECK-DAG: func.func private @expm1(f64) -> f64 attributes {llvm.readnone}
// CHECK-DAG: func.func private @log1p(f64) -> f64 attributes {llvm.readnone}
// CHECK-DAG: func.func private @expm1f(f32) -> f32 attributes {llvm.readnone}
// CHECK-DAG: func.func private @log1pf(f32) -> f32 attributes {llvm.readnone}

// CHECK-LABEL: func.func @f
// CHECK-NEXT: %[[A:.*]] = call @expm1(%arg0) : (f64) -> f64
// CHECK-NEXT: %[[B:.*]] = call @log1p(%arg0) : (f64) -> f64
// CHECK-NEXT: %[[C:.*]] = call @expm1f(%arg1) : (f32) -> f32
// CHECK-NEXT: %[[D:.*]] = call @log1pf(%arg1) : (f32) -> f32
// CHECK-NEXT: %[[E:.*]] = math.exp %arg0 : f64
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
func.func @f(%x: f64, %y: f32) -> (f64, f64, f32, f32, f64) {
  %a = math.expm1 %x : f64
  %b = math.log1p %x : f64
  %c = math.expm1 %y : f32
  %d = math.log1p %y : f32
  %e = math.exp %x : f64
  return %a, %b, %c, %d, %e : f64, f64, f32, f32, f64
}
