// What the import keeps besides the op: this project's contract attributes on the wrapper
// (tessera.deterministic, tessera.accuracy) and a launch op's tessera.candidate; the original's
// hints (nvvm.kernel, warps, tessera.tile_m, ...) are dropped. A deterministic wrapper stays
// deterministic, so the determinism check sees it.
// RUN: tessera-opt %s --tessera-import-launch-kernels | FileCheck %s

module attributes {tessera.target = "sm_120"} {
  llvm.func @softmax(%x: !llvm.ptr, %o: !llvm.ptr, %rows: i64, %columns: i64)
      attributes {nvvm.kernel, tessera.deterministic, tessera.accuracy = {atol = 1.0e-3 : f64, rtol = 1.0e-5 : f64}} {
    tile.softmax_kernel %x, %o, %rows, %columns {
      storage = "f32", accum = "f32", axis = -1 : i64, exp_mode = "accurate", ftz = false,
      tessera.candidate = "compiled"
    } : !llvm.ptr, !llvm.ptr, i64, i64
    llvm.return
  }
}

// CHECK: module attributes {tessera.target = "sm_120"}
// CHECK: func.func @softmax(
// CHECK-SAME: attributes {tessera.accuracy = {atol = 1.000000e-03 : f64, rtol = 1.000000e-05 : f64}, tessera.deterministic}
// CHECK-NEXT: tile.softmax %arg0 -> %arg1 {tessera.candidate = "compiled"}
