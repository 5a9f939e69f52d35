// RUN: tessera-opt %s -split-input-file -tessera-verify-determinism -verify-diagnostics

// A nondeterministic delegate in a deterministic function: the error names the function, the
// callee, the declared determinism and the remedy, at the op's location; a note points at the
// function.
// expected-note @+1 {{@gemm is declared 'tessera.deterministic' here}}
func.func @gemm(%a: memref<64x32xf32>, %b: memref<32x16xf32>, %c: memref<64x16xf32>)
    attributes {tessera.deterministic} {
  // expected-error @+1 {{'tessera_nvidia.kernel_call' op nondeterministic delegate 'cublasGemmEx' (determinism = "nondeterministic") in deterministic function @gemm; remedy: use a delegate declared determinism = "deterministic" or the compiled lowering, or remove 'tessera.deterministic' from @gemm}}
  tessera_nvidia.kernel_call %a, %b, %c {callee = "cublasGemmEx", arch = "sm_80+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-3, determinism = "nondeterministic"}
      : (memref<64x32xf32>, memref<32x16xf32>, memref<64x16xf32>) -> ()
  return
}

// -----

// Every offender is reported, not only the first; inline_ptx is named as such; a seed is fine.
// expected-note @+1 {{@two_offenders is declared 'tessera.deterministic' here}}
func.func @two_offenders(%x: f32, %a: memref<4xf32>) -> f32
    attributes {tessera.deterministic = {seed = 42}} {
  // expected-error @+1 {{nondeterministic delegate 'inline_ptx' (determinism = "nondeterministic") in deterministic function @two_offenders}}
  %y = tessera_nvidia.inline_ptx %x {ptx = "atom.global.add.f32 $0, [$1], $1;",
      constraints = "=f,f", arch = "sm_80+", accuracy = "tolerance_bounded", tolerance = 1.0e-5,
      determinism = "nondeterministic"} : (f32) -> f32
  // expected-error @+1 {{nondeterministic delegate 'scatter_add' (determinism = "nondeterministic") in deterministic function @two_offenders}}
  tessera_nvidia.kernel_call %a {callee = "scatter_add", arch = "sm_90",
      binding = "cuda_kernel", provenance = "handwritten_kernel",
      accuracy = "tolerance_bounded", tolerance_rel = 1.0e-6,
      determinism = "nondeterministic"} : (memref<4xf32>) -> ()
  return %y : f32
}

// -----

// Deterministic delegates in a deterministic function, and nondeterministic ones outside one,
// pass (determinism_compile.mlir: unless the whole compile is deterministic).
func.func @deterministic_ok(%a: memref<4xf32>) attributes {tessera.deterministic} {
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_90", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4xf32>) -> ()
  return
}

func.func @not_declared(%a: memref<4xf32>) {
  tessera_nvidia.kernel_call %a {callee = "cublasGemmEx", arch = "sm_80+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-3, determinism = "nondeterministic"} : (memref<4xf32>) -> ()
  return
}
