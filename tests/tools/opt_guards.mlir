// tessera-opt refuses what the C API refuses, with the same located messages and exit code 1,
// instead of crashing: nesting past 256 levels (the parser's stack), dense arrays of index
// (llvm/llvm-project#179045), and an nvvm.mma.sync shape its verifier sizes vectors from.
// RUN: python3 -c "print('(' * 18000)" > %t.deep.mlir
// RUN: not tessera-opt %t.deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: deep.mlir:1:257: error: the IR nests deeper than 256 levels

// RUN: printf 'func.func @f() attributes {grid = array<i64>, block = array<index} {\n  return\n}\n' > %t.index.mlir
// RUN: not tessera-opt %t.index.mlir 2>&1 | FileCheck %s --check-prefix=INDEX
// INDEX: index.mlir:1:55: error: dense arrays of index
// `-` ends the keyword: `array<index-1>` crashes the parser the same way.
// RUN: printf 'func.func @f() attributes {a = array<index- 1>} {\n  return\n}\n' > %t.index_minus.mlir
// RUN: not tessera-opt %t.index_minus.mlir 2>&1 | FileCheck %s --check-prefix=INDEX-MINUS
// INDEX-MINUS: index_minus.mlir:1:32: error: dense arrays of index

// RUN: not tessera-opt %s 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not tessera-opt --split-input-file %s 2>&1 | FileCheck %s --check-prefix=MMA
// The C API's compile (through the CLI) refuses the same kernel.
// RUN: not tessera-jit compile %s --target nvptx --emit ptx 2>&1 | FileCheck %s --check-prefix=MMA
// MMA: opt_guards.mlir:[[@LINE+5]]:10: error: 'nvvm.mma.sync' attribute 'shape' has k = -2147483648
// MMA-NOT: LLVM ERROR

gpu.module @k {
  gpu.func @f(%a: vector<2xf16>, %c: vector<2xf16>) kernel {
    %d = nvvm.mma.sync A[%a, %a, %a, %a] B[%a, %a] C[%c, %c]
      {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
       shape = #nvvm.shape<m = 16, n = 8, k = -2147483648>}
      : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> !llvm.struct<(vector<2xf16>, vector<2xf16>)>
    gpu.return
  }
}

// -----

func.func @fine() {
  return
}
