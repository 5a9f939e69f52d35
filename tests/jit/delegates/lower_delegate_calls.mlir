// tessera-lower-delegate-calls alone: nothing is registered, so every callee is refused where
// it is called (the trust boundary: a c_abi callee resolves only inside registered libraries,
// never against the process); kernel_calls inside gpu.modules and modules without delegates
// pass untouched. Resolution against registered libraries: tests/delegates/delegates_test.cc.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics --tessera-lower-delegate-calls
// RUN: tessera-opt %s --split-input-file --verify-diagnostics --tessera-lower-delegate-calls=target=nvptx
// RUN: not tessera-opt %s --split-input-file --tessera-lower-delegate-calls 2>/dev/null | FileCheck %s
// RUN: not tessera-opt %s --split-input-file --tessera-lower-delegate-calls=target=gpu 2>&1 | FileCheck %s --check-prefix=TARGET

// TARGET: error: tessera-lower-delegate-calls: target must be host or nvptx, not 'gpu'

func.func @system(%x: i32) {
  // expected-error @+1 {{'tessera_nvidia.kernel_call' op 'system' not found in registered libraries (searched: none registered)}}
  tessera_nvidia.kernel_call %x {callee = "system", arch = "host", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", signature = (i32) -> ()} : (i32) -> ()
  return
}

// -----

func.func @handwritten_kernel(%x: memref<?x1024xf32>, %y: memref<?x1024xf32>) {
  // expected-error @+1 {{'tessera_nvidia.kernel_call' op kernel 'row_softmax_f32' not found in registered kernel images (searched: none registered)}}
  tessera_nvidia.kernel_call %x, %y {callee = "row_softmax_f32", arch = "sm_90",
      binding = "cuda_kernel", provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", covers = "whole_region", grid = array<i64: 128>,
      block = array<i64: 256>} : (memref<?x1024xf32>, memref<?x1024xf32>) -> ()
  return
}

// -----

// No delegates: nothing changes and no delegate attributes are left on the module.
// CHECK-LABEL: module {
// CHECK-NOT: tessera_jit.delegate
// CHECK: func.func @plain
// CHECK-NEXT: return
func.func @plain() {
  return
}
