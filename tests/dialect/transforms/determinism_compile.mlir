// A deterministic compile (all-functions=true) treats every function as deterministic and
// reports every offender, each at its own location; the pass fails before anything could run.
// RUN: not tessera-opt %s -tessera-verify-determinism="all-functions=true" 2>&1 | FileCheck %s
// Without the requirement the same module passes.
// RUN: tessera-opt %s -tessera-verify-determinism | FileCheck %s --check-prefix=PLAIN

// CHECK: determinism_compile.mlir:[[# @LINE + 4]]:3: error: 'tessera_nvidia.kernel_call' op nondeterministic delegate 'cublasGemmEx' (determinism = "nondeterministic") in deterministic function @not_declared; remedy: use a delegate declared determinism = "deterministic" or the compiled lowering, or compile without the deterministic requirement
// CHECK: determinism_compile.mlir:[[# @LINE + 2]]:1: note: @not_declared is deterministic because the whole compile is
// PLAIN-LABEL: func.func @not_declared
func.func @not_declared(%a: memref<4xf32>) {
  tessera_nvidia.kernel_call %a {callee = "cublasGemmEx", arch = "sm_80+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-3, determinism = "nondeterministic"} : (memref<4xf32>) -> ()
  return
}

// CHECK: determinism_compile.mlir:[[# @LINE + 5]]:10: error: 'tessera_nvidia.inline_ptx' op nondeterministic delegate 'inline_ptx' (determinism = "nondeterministic") in deterministic function @second
// PLAIN-LABEL: func.func @second
func.func @second(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    %r = tessera_nvidia.inline_ptx %v {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
        arch = "sm_80+", accuracy = "reference_exact", determinism = "nondeterministic"}
        : (f32) -> f32
    tile.yield %r : f32
  }
  return
}

// In a deterministic compile every raw kernel declares its determinism, where it is defined.
// CHECK: determinism_compile.mlir:[[# @LINE + 3]]:5: error: 'gpu.func' op raw kernel @undeclared does not declare its determinism, and the whole compile is deterministic; remedy: declare tessera.determinism = "deterministic" on the gpu.func if it gives the same bits every run (no float atomics, a fixed reduction order), or compile without the deterministic requirement
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @undeclared() kernel {
      gpu.return
    }
    gpu.func @declared() kernel attributes {tessera.determinism = "deterministic"} {
      gpu.return
    }
  }
}
