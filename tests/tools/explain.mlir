// `tessera-jit explain` prints the arbiter's decision for every Tile op: each candidate with
// the gate that removed it or its timing and error, the winner and why.
// (A budget no machine exhausts: this test is about the text, not the budget.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit explain %s --default-libraries --budget-ms 60000 | FileCheck %s
// CHECK: tile.matmul at {{.*}}explain.mlir:[[@LINE+22]]:3 in @layer
// CHECK: shape 128x128x256 (bucket 128x128x256), f32,f32->f32, plain
// CHECK: timing: host steady_clock at 128x128x256
// CHECK: - compiled [generated, deterministic, reference_exact atol 0.001 rtol 1e-05]: median {{.*}} samples); error {{.*}} of budget
// CHECK: - openblas [hand-tuned, deterministic, reference_exact atol 0.001 rtol 1e-05]: median
// CHECK: cblas_sgemm in openblas (library, host pointers) libopenblas.so.0 OpenBLAS
// CHECK: - cublas {{.*}}removed by applicability: it serves the nvptx target
// CHECK: tile.matmul at {{.*}}explain.mlir:[[@LINE+16]]:3 in @layer
// CHECK: winner: compiled — the only candidate left
// CHECK: - openblas {{.*}}removed by applicability: it covers root_only and the op has a fused epilogue
//
// The record was kept in the decision cache beside the compile cache, and --json exports it.
// RUN: ls %t/decisions/*/*.json | count 1
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit explain %s --default-libraries --json | FileCheck %s --check-prefix=JSON
// JSON: "timing_source": "host steady_clock"
// JSON: "winner": "{{compiled|openblas}}"
//
// Forcing a candidate that does not exist fails, naming the op.
// RUN: not tessera-jit explain %s --default-libraries --matmul-delegate mkl 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: tile.matmul: the forced candidate 'mkl' (option `matmul_delegate`) is unknown; candidates: compiled, openblas, cublas
func.func @layer(%x: memref<128x256xf32>, %w: memref<256x128xf32>, %h: memref<128x128xf32>,
                 %b: memref<128xf32>, %y: memref<128x128xf32>) {
  tile.matmul %x, %w -> %h : memref<128x256xf32>, memref<256x128xf32> -> memref<128x128xf32>
  tile.matmul %x, %w -> %y bias(%b : memref<128xf32>) activation(relu)
      : memref<128x256xf32>, memref<256x128xf32> -> memref<128x128xf32>
  return
}
