// `tessera-jit explain --export-plan` writes the decisions as a plan; `--plan` replays it with
// nothing measured, and `--plan-strict` refuses a point the plan lacks. The text shows each
// point's determinism level and where it was measured.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit explain %s --default-libraries --budget-ms 40 --export-plan %t/plan.json | FileCheck %s --check-prefix=MEASURED
// MEASURED: determinism none
// MEASURED: timing: host steady_clock at {{[0-9]+x[0-9]+x[0-9]+}}{{.*}}; arbitration {{.*}} (candidates ran {{.*}} of a 40 ms budget)
// RUN: FileCheck %s --check-prefix=PLAN < %t/plan.json
// PLAN: "op": "tile.matmul"
// PLAN: "format": "tessera-jit-plan"
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit explain %s --default-libraries --plan %t/plan.json --plan-strict | FileCheck %s --check-prefix=PINNED
// PINNED: winner: {{compiled|openblas}} — pinned by the plan {{.*}}plan.json (decided: measured
// PINNED: decided: pinned; timing: none
//
// The batch_invariant level is another point: strict replay refuses it, naming it.
// RUN: not env TESSERA_JIT_CACHE_DIR=%t tessera-jit explain %s --default-libraries --batch-invariant --plan %t/plan.json --plan-strict 2>&1 | FileCheck %s --check-prefix=STRICT
// STRICT: replay.mlir:{{[0-9]+}}:3: error: strict replay: tile.matmul (shape 64x64x64, f32,f32->f32, plain, deterministic) in @mm
// RUN: env TESSERA_JIT_CACHE_DIR=%t tessera-jit explain %s --default-libraries --batch-invariant | FileCheck %s --check-prefix=LEVEL
// LEVEL: determinism batch_invariant
// LEVEL: - compiled {{.*}}batch invariance by construction
//
// Bad values are refused with the flag.
// RUN: not tessera-jit explain %s --budget-ms 0 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: --budget-ms needs milliseconds in [1, 3600000], found '0'
// RUN: not tessera-jit explain %s --plan %t/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: cannot read the plan file
// RUN: not tessera-jit explain %s --plan-strict 2>&1 | FileCheck %s --check-prefix=NOPLAN
// NOPLAN: --plan-strict needs --plan PLAN
func.func @mm(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  tile.matmul %a, %b -> %c : memref<64x64xf32>, memref<64x64xf32> -> memref<64x64xf32>
  return
}
