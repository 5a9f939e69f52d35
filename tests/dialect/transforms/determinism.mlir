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
func.func @two_offenders(%x: memref<4xf32>, %a: memref<4xf32>)
    attributes {tessera.deterministic = {seed = 42}} {
  tile.map ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%v: f32):
    // expected-error @+1 {{nondeterministic delegate 'inline_ptx' (determinism = "nondeterministic") in deterministic function @two_offenders}}
    %y = tessera_nvidia.inline_ptx %v {ptx = "add.rn.f32 $0, $1, $1;",
        constraints = "=f,f", arch = "sm_80+", accuracy = "tolerance_bounded",
        tolerance = 1.0e-5, determinism = "nondeterministic"} : (f32) -> f32
    tile.yield %y : f32
  }
  // expected-error @+1 {{nondeterministic delegate 'scatter_add' (determinism = "nondeterministic") in deterministic function @two_offenders}}
  tessera_nvidia.kernel_call %a {callee = "scatter_add", arch = "sm_90",
      binding = "cuda_kernel", provenance = "handwritten_kernel",
      accuracy = "tolerance_bounded", tolerance_rel = 1.0e-6,
      determinism = "nondeterministic", grid = array<i64: 1>, block = array<i64: 32>}
      : (memref<4xf32>) -> ()
  return
}

// -----

// Deterministic delegates in a deterministic function, and nondeterministic ones outside one,
// pass (determinism_compile.mlir: unless the whole compile is deterministic).
func.func @deterministic_ok(%a: memref<4xf32>) attributes {tessera.deterministic} {
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_90", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1>, block = array<i64: 32>}
      : (memref<4xf32>) -> ()
  return
}

func.func @not_declared(%a: memref<4xf32>) {
  tessera_nvidia.kernel_call %a {callee = "cublasGemmEx", arch = "sm_80+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-3, determinism = "nondeterministic"} : (memref<4xf32>) -> ()
  return
}

// -----
// The check follows func.call: the error is at the delegate, names the chain, and notes the
// first call of the deterministic function.

// expected-note @+1 {{@entry is declared 'tessera.deterministic' here}}
func.func @entry(%a: memref<4xf32>) attributes {tessera.deterministic} {
  // expected-note @+1 {{@entry makes the first call of the chain here}}
  func.call @middle(%a) : (memref<4xf32>) -> ()
  return
}

func.func @middle(%a: memref<4xf32>) {
  func.call @leaf(%a) : (memref<4xf32>) -> ()
  // A recursive call ends the search.
  func.call @middle(%a) : (memref<4xf32>) -> ()
  return
}

func.func @leaf(%a: memref<4xf32>) {
  // expected-error @+1 {{'tessera_nvidia.kernel_call' op nondeterministic delegate 'cublasGemmEx' (determinism = "nondeterministic") in @leaf, deterministic function @entry reaches it through the call chain @entry → @middle → @leaf; remedy: use a delegate declared determinism = "deterministic" or the compiled lowering, or remove 'tessera.deterministic' from @entry}}
  tessera_nvidia.kernel_call %a {callee = "cublasGemmEx", arch = "sm_80+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-3, determinism = "nondeterministic"} : (memref<4xf32>) -> ()
  return
}

// -----
// A raw kernel launched from a deterministic function declares its determinism.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @undeclared(%x: memref<4xf32>) kernel {
      gpu.return
    }
    gpu.func @racy(%x: memref<4xf32>) kernel
        attributes {tessera.determinism = "nondeterministic"} {
      gpu.return
    }
    gpu.func @declared(%x: memref<4xf32>) kernel
        attributes {tessera.determinism = "deterministic"} {
      gpu.return
    }
  }

  // expected-note @+1 {{@launches is declared 'tessera.deterministic' here}}
  func.func @launches(%x: memref<4xf32>) attributes {tessera.deterministic} {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'gpu.launch_func' op raw kernel @undeclared does not declare its determinism, and deterministic function @launches launches it; remedy: declare tessera.determinism = "deterministic" on the gpu.func if it gives the same bits every run (no float atomics, a fixed reduction order), or remove 'tessera.deterministic' from @launches}}
    gpu.launch_func @kernels::@undeclared blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4xf32>)
    // expected-error @+1 {{'gpu.launch_func' op raw kernel @racy declares tessera.determinism = "nondeterministic", and deterministic function @launches launches it; remedy: remove 'tessera.deterministic' from @launches}}
    gpu.launch_func @kernels::@racy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4xf32>)
    gpu.launch_func @kernels::@declared blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4xf32>)
    return
  }
}

// -----
// A kernel that declares itself deterministic must not hold a nondeterministic delegate.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-note @+1 {{@claims declares tessera.determinism = "deterministic" here}}
    gpu.func @claims(%x: f32) kernel attributes {tessera.determinism = "deterministic"} {
      // expected-error @+1 {{nondeterministic delegate 'inline_ptx' (determinism = "nondeterministic") in kernel @claims, which declares tessera.determinism = "deterministic"; remedy: use a delegate declared determinism = "deterministic" or the compiled lowering, or declare @claims tessera.determinism = "nondeterministic"}}
      %y = tessera_nvidia.inline_ptx %x {ptx = "add.rn.f32 $0, $1, $1;", constraints = "=f,f",
          arch = "sm_80+", accuracy = "reference_exact", determinism = "nondeterministic"}
          : (f32) -> f32
      gpu.return
    }
  }
}
