// The CLI registers delegates, prints their identities, and serves tile.matmul with OpenBLAS.
// RUN: tessera-jit delegates --default-libraries --target host | FileCheck %s --check-prefix=LIST
// LIST: openblas
// LIST-NEXT: kind: library
// LIST: soname: libopenblas.so.0
// LIST-NEXT: version: OpenBLAS
// LIST-NEXT: sha256: {{[0-9a-f]+}}
// RUN: tessera-jit delegates | FileCheck %s --check-prefix=NONE
// NONE: no delegates registered

// RUN: tessera-jit run %s --entry mm --size 24 --runs 1 --target host --default-libraries --matmul-delegate openblas | FileCheck %s --check-prefix=EXEC
// EXEC: delegate: openblas (library, host pointers) libopenblas.so.0
// EXEC: entry @mm: 3 argument(s)
// EXEC: time: median

// The same request on the MLP example is refused: openblas covers root_only and its matmuls
// carry epilogues.
// RUN: not tessera-jit run %examples/mlp.mlir --entry mlp --target host --default-libraries --matmul-delegate openblas 2>&1 | FileCheck %s --check-prefix=DECLINE
// DECLINE: the forced candidate 'openblas' (option `matmul_delegate`) is rejected by the applicability gate: it covers root_only and the op has a fused epilogue

// Without the library, forcing it names the gate that refused it.
// RUN: not tessera-jit compile %s --matmul-delegate openblas 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: delegates.mlir:25:3: error: tile.matmul: the forced candidate 'openblas' (option `matmul_delegate`) is rejected by the availability gate: library 'openblas' is not registered
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
