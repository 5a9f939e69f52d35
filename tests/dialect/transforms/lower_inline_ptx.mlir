// tessera-lower-inline-ptx alone: tessera_nvidia.inline_ptx becomes llvm.inline_asm with the
// same PTX text and constraints (one result as a value, several as a struct unpacked in order);
// has_side_effects carries over. PTX through the backend: tests/jit/inline_ptx.mlir.
// RUN: tessera-opt %s --tessera-lower-inline-ptx | FileCheck %s

// CHECK-LABEL: func.func @one
// CHECK-NEXT: %[[R:.*]] = llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f" %arg0 : (f32) -> f32
// CHECK-NEXT: return %[[R]] : f32
func.func @one(%v: f32) -> f32 {
  %e = tessera_nvidia.inline_ptx %v {ptx = "ex2.approx.ftz.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_75+", accuracy = "tolerance_bounded", tolerance_rel = 1.0e-6,
      determinism = "deterministic"} : (f32) -> f32
  return %e : f32
}

// CHECK-LABEL: func.func @two
// CHECK-NEXT: %[[S:.*]] = llvm.inline_asm "min.f32 $0, $2, $3; max.f32 $1, $2, $3;", "=f,=f,f,f" %arg0, %arg1 : (f32, f32) -> !llvm.struct<(f32, f32)>
// CHECK-NEXT: %[[LO:.*]] = llvm.extractvalue %[[S]][0]
// CHECK-NEXT: %[[HI:.*]] = llvm.extractvalue %[[S]][1]
// CHECK-NEXT: return %[[LO]], %[[HI]]
func.func @two(%u: f32, %w: f32) -> (f32, f32) {
  %l, %h = tessera_nvidia.inline_ptx %u, %w {ptx = "min.f32 $0, $2, $3; max.f32 $1, $2, $3;",
      constraints = "=f,=f,f,f", arch = "sm_75+", accuracy = "reference_exact",
      determinism = "deterministic"} : (f32, f32) -> (f32, f32)
  return %l, %h : f32, f32
}

// CHECK-LABEL: func.func @effect
// CHECK-NEXT: llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l" %arg0 : (i64) -> ()
func.func @effect(%address: i64) {
  tessera_nvidia.inline_ptx %address {ptx = "prefetch.global.L2 [$0];", constraints = "l",
      arch = "sm_75+", accuracy = "reference_exact", determinism = "deterministic",
      has_side_effects} : (i64) -> ()
  return
}
