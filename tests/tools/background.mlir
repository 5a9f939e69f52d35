// `tessera-jit explain --background`: the compile returns with the incumbent ("pending"), the
// background measurement lands the decision, and the text says how long each took. A second
// run finds the decision cached: nothing pending.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit explain %s --default-libraries --background --budget-ms 60000 | FileCheck %s --check-prefix=FIRST
// FIRST: compile returned in {{[0-9.]+}} ms with 1 decision(s) pending (their incumbents serve)
// FIRST: winner: compiled — incumbent while the decision is measured in the background (the compiled lowering)
// FIRST: decided: pending; timing: none
// FIRST: decisions landed {{[0-9.]+}} ms after the compile returned
// FIRST: winner: {{compiled|openblas}} —
// FIRST: decided: measured; timing: host steady_clock at 64x64x64
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit explain %s --default-libraries --background | FileCheck %s --check-prefix=AGAIN
// AGAIN: compile returned in {{[0-9.]+}} ms with 0 decision(s) pending
// AGAIN: decided: measured
// AGAIN-NOT: landed
// RUN: not tessera-jit explain %s --background --target nvptx 2>&1 | FileCheck %s --check-prefix=NVPTX
// NVPTX: --background decides host compiles only
// RUN: not tessera-jit compile %s --background 2>&1 | FileCheck %s --check-prefix=COMPILE
// COMPILE: --background is an option of explain
func.func @mm(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  tile.matmul %a, %b -> %c : memref<64x64xf32>, memref<64x64xf32> -> memref<64x64xf32>
  return
}
