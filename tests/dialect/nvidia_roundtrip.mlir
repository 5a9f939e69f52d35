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
// CHECK: tessera_nvidia.kernel_call %{{.*}}, %{{.*}} {accuracy = "reference_exact", arch = "sm_90", binding = "cuda_kernel", block = array<i64: 256>, callee = "row_softmax_f32", covers = "whole_region", determinism = "deterministic", grid = array<i64: 128>, provenance = "handwritten_kernel"} : (memref<?x1024xf32>, memref<?x1024xf32>) -> ()
func.func @handwritten_kernel(%x: memref<?x1024xf32>, %y: memref<?x1024xf32>) {
  tessera_nvidia.kernel_call %x, %y {callee = "row_softmax_f32", arch = "sm_90",
      binding = "cuda_kernel", provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", covers = "whole_region", grid = array<i64: 128>,
      block = array<i64: 256>}
      : (memref<?x1024xf32>, memref<?x1024xf32>) -> ()
  return
}

// A c_abi callee outside the ABI catalogue declares its C signature.
// CHECK-LABEL: func.func @declared_signature
// CHECK: tessera_nvidia.kernel_call %{{.*}}, %{{.*}} {accuracy = "reference_exact", arch = "host", binding = "c_abi", callee = "my_fill", determinism = "deterministic", provenance = "handwritten_kernel", signature = (memref<?xf32>, i32) -> f32} : (memref<?xf32>, i32) -> f32
func.func @declared_signature(%x: memref<?xf32>, %n: i32) -> f32 {
  %r = tessera_nvidia.kernel_call %x, %n {callee = "my_fill", arch = "host", binding = "c_abi",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", signature = (memref<?xf32>, i32) -> f32}
      : (memref<?xf32>, i32) -> f32
  return %r : f32
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

// inline_ptx stands in device code: a tile.map body ...
// CHECK-LABEL: func.func @fast_exp2
// CHECK: %{{.*}} = tessera_nvidia.inline_ptx %{{.*}} {accuracy = "tolerance_bounded", arch = "sm_75+", constraints = "=f,f", determinism = "deterministic", ptx = "ex2.approx.ftz.f32 $0, $1;", tolerance_rel = 2.000000e-07 : f64} : (f32) -> f32
func.func @fast_exp2(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    %e = tessera_nvidia.inline_ptx %v {ptx = "ex2.approx.ftz.f32 $0, $1;",
        constraints = "=f,f", arch = "sm_75+", accuracy = "tolerance_bounded",
        tolerance_rel = 2.0e-7, determinism = "deterministic"} : (f32) -> f32
    tile.yield %e : f32
  }
  return
}

// ... or a raw gpu.func kernel, here with two results, a side effect, a clobber, a `$$` and a
// braced reference.
// CHECK-LABEL: gpu.func @side_effecting_ptx
// CHECK: tessera_nvidia.inline_ptx %{{.*}} {accuracy = "reference_exact", arch = "sm_90", constraints = "r,~{memory}", determinism = "deterministic", has_side_effects, ptx = "membar.gl; // $0"} : (i32) -> ()
// CHECK: %{{.*}}:2 = tessera_nvidia.inline_ptx %{{.*}}, %{{.*}} {accuracy = "reference_exact", arch = "sm_80+", constraints = "=r,=l,r,l", determinism = "deterministic", ptx = "mov.b32 $0, ${2}; mov.b64 $1, $3; // $$"} : (i32, i64) -> (i32, i64)
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @side_effecting_ptx(%flag: i32, %wide: i64) kernel
        attributes {tessera.determinism = "deterministic"} {
      tessera_nvidia.inline_ptx %flag {ptx = "membar.gl; // $0", constraints = "r,~{memory}",
          arch = "sm_90", accuracy = "reference_exact", determinism = "deterministic",
          has_side_effects} : (i32) -> ()
      %a, %b = tessera_nvidia.inline_ptx %flag, %wide {
          ptx = "mov.b32 $0, ${2}; mov.b64 $1, $3; // $$", constraints = "=r,=l,r,l",
          arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"}
          : (i32, i64) -> (i32, i64)
      gpu.return
    }
  }
}
