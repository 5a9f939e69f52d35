// RUN: tessera-opt %s -split-input-file -verify-diagnostics --tessera-lower-tile-to-gpu=arch=sm_75
// RUN: tessera-opt %s -split-input-file --tessera-lower-tile-to-gpu=arch=sm_90 | FileCheck %s

// A kernel variant the arch cannot run fails the pass, naming the gate; on sm_90 it lowers.
// CHECK-LABEL: func.func @mma
// CHECK: gpu.launch
func.func @mma(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{cannot be lowered with schedule 'mma_sync': mma.sync with f32 accumulators needs sm_80 or newer; this compile is for sm_75}}
  tile.matmul %a, %b -> %c {tessera_jit.schedule = "mma_sync"} : memref<64x64xbf16>, memref<64x64xbf16> -> memref<64x64xf32>
  return
}
