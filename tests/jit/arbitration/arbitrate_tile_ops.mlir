// tessera-arbitrate-tile-ops alone (no arbiter, no registry): a forced candidate runs as
// declared once the gates admit it, anything else stays compiled; a refused or unknown forced
// candidate fails the pass with the op's location.
// RUN: tessera-opt %s --tessera-arbitrate-tile-ops | FileCheck %s --check-prefix=COMPILED
// RUN: tessera-opt %s --tessera-arbitrate-tile-ops=forced=openblas | FileCheck %s --check-prefix=OPENBLAS
// RUN: not tessera-opt %s --tessera-arbitrate-tile-ops='target=nvptx arch=sm_90 forced=openblas' 2>&1 | FileCheck %s --check-prefix=GATE
// RUN: not tessera-opt %s --tessera-arbitrate-tile-ops=forced=nosuch 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tessera-opt %s --tessera-arbitrate-tile-ops=target=gpu 2>&1 | FileCheck %s --check-prefix=TARGET

// COMPILED-LABEL: func.func @mm
// COMPILED-NEXT: tile.matmul %arg0, %arg1 -> %arg2
// COMPILED-NOT: kernel_call

// OPENBLAS-LABEL: func.func @mm
// OPENBLAS-NOT: tile.matmul
// OPENBLAS: cf.assert %{{.*}}, "a matrix dimension of 2^31 or more does not fit the 32-bit sizes of cblas_sgemm"
// OPENBLAS: %[[ROW_MAJOR:.*]] = arith.constant 101 : i32
// OPENBLAS: tessera_nvidia.kernel_call %[[ROW_MAJOR]], {{.*}}, %arg0, {{.*}}, %arg1, {{.*}}, %arg2, {{.*}} {accuracy = "reference_exact", arch = "host", binding = "c_abi", callee = "cblas_sgemm", covers = "root_only", determinism = "deterministic", provenance = "vendor_library"}
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}

// Only tile.matmul has delegates: a reduction stays compiled either way.
// COMPILED-LABEL: func.func @sums
// COMPILED-NEXT: tile.reduce sum
// OPENBLAS-LABEL: func.func @sums
// OPENBLAS-NEXT: tile.reduce sum
func.func @sums(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}

// GATE: arbitrate_tile_ops.mlir:20:3: error: tile.matmul: the forced candidate 'openblas' (option `matmul_delegate`) is rejected by the applicability gate: it serves the host target and this compile is for nvptx
// UNKNOWN: arbitrate_tile_ops.mlir:20:3: error: tile.matmul: the forced candidate 'nosuch' (option `matmul_delegate`) is unknown
// TARGET: error: tessera-arbitrate-tile-ops: target must be host or nvptx, not 'gpu'
