// RUN: tessera-opt %s -split-input-file -verify-diagnostics --tessera-lower-tile-to-gpu=arch=sm_90

// mma_async stages A and B with 16-byte copies of rows as stored: a transposed operand or one
// that is not dense row-major is refused by the schedule, naming why.
func.func @transposed(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{cannot be lowered with schedule 'mma_async': its copies stage A and B as stored: it needs neither transposed}}
  tile.matmul %a, %b -> %c {tessera_jit.schedule = "mma_async", transpose_b} : memref<64x64xf16>, memref<64x64xf16> -> memref<64x64xf32>
  return
}

// -----

func.func @strided(%a: memref<64x64xf16, strided<[80, 1]>>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{cannot be lowered with schedule 'mma_async': its copies address A and B as dense row-major memrefs}}
  tile.matmul %a, %b -> %c {tessera_jit.schedule = "mma_async"} : memref<64x64xf16, strided<[80, 1]>>, memref<64x64xf16> -> memref<64x64xf32>
  return
}

// -----

// Dense, not transposed: it lowers to the pipelined kernel and, beside it, mma_sync's.
func.func @dense(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  tile.matmul %a, %b -> %c {tessera_jit.schedule = "mma_async"} : memref<64x64xf16>, memref<64x64xf16> -> memref<64x64xf32>
  return
}
