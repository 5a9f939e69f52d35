// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s

// Seed syntax: operands, the attribute dictionary, `:` and a functional type.
// CHECK-LABEL: func.func @vendor_gemm
// CHECK: tessera_nvidia.kernel_call %{{.*}}, %{{.*}}, %{{.*}} {accuracy = "tolerance_bounded", arch = "sm_80+", binding = "c_abi", callee = "cublasSgemm_v2", covers = "root_only", determinism = "deterministic", provenance = "vendor_library", tolerance = 1.000000e-04 : f64} : (memref<64x32xf32>, memref<32x16xf32>, memref<64x16xf32>) -> ()
func.func @vendor_gemm(%a: memref<64x32xf32>, %b: memref<32x16xf32>, %c: memref<64x16xf32>) {
  tessera_nvidia.kernel_call %a, %b, %c {callee = "cublasSgemm_v2", arch = "sm_80+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-4, determinism = "deterministic", covers = "root_only"}
      : (memref<64x32xf32>, memref<32x16xf32>, memref<64x16xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @handwritten_kernel
// CHECK: tessera_nvidia.kernel_call %{{.*}}, %{{.*}} {accuracy = "reference_exact", arch = "sm_90", binding = "cuda_kernel", callee = "row_softmax_f32", covers = "whole_region", determinism = "deterministic", provenance = "handwritten_kernel"} : (memref<?x1024xf32>, memref<?x1024xf32>) -> ()
func.func @handwritten_kernel(%x: memref<?x1024xf32>, %y: memref<?x1024xf32>) {
  tessera_nvidia.kernel_call %x, %y {callee = "row_softmax_f32", arch = "sm_90",
      binding = "cuda_kernel", provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", covers = "whole_region"}
      : (memref<?x1024xf32>, memref<?x1024xf32>) -> ()
  return
}

// Both bounds, a nondeterministic declaration (fine outside a deterministic function), no
// operands and a scalar result.
// CHECK-LABEL: func.func @both_bounds
// CHECK: %{{.*}} = tessera_nvidia.kernel_call {accuracy = "tolerance_bounded", arch = "sm_75+", binding = "c_abi", callee = "cublasGetVersion_v2", determinism = "nondeterministic", provenance = "vendor_library", tolerance = 1.000000e-03 : f64, tolerance_rel = 1.000000e-05 : f64} : () -> i32
func.func @both_bounds() -> i32 {
  %v = tessera_nvidia.kernel_call {callee = "cublasGetVersion_v2", arch = "sm_75+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-3, tolerance_rel = 1.0e-5, determinism = "nondeterministic"} : () -> i32
  return %v : i32
}

// CHECK-LABEL: func.func @fast_exp2
// CHECK: %{{.*}} = tessera_nvidia.inline_ptx %{{.*}} {accuracy = "tolerance_bounded", arch = "sm_75+", constraints = "=f,f", determinism = "deterministic", ptx = "ex2.approx.ftz.f32 $0, $1;", tolerance_rel = 2.000000e-07 : f64} : (f32) -> f32
func.func @fast_exp2(%x: f32) -> f32 {
  %y = tessera_nvidia.inline_ptx %x {ptx = "ex2.approx.ftz.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_75+", accuracy = "tolerance_bounded", tolerance_rel = 2.0e-7,
      determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}

// CHECK-LABEL: func.func @side_effecting_ptx
// CHECK: tessera_nvidia.inline_ptx %{{.*}} {accuracy = "reference_exact", arch = "sm_90", constraints = "r,~{memory}", determinism = "deterministic", has_side_effects, ptx = "membar.gl; // $0"} : (i32) -> ()
func.func @side_effecting_ptx(%flag: i32) {
  tessera_nvidia.inline_ptx %flag {ptx = "membar.gl; // $0", constraints = "r,~{memory}",
      arch = "sm_90", accuracy = "reference_exact", determinism = "deterministic",
      has_side_effects} : (i32) -> ()
  return
}
