// Passes over Tessera IR.
#ifndef TESSERA_DIALECT_PASSES_TD
#define TESSERA_DIALECT_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyDeterminism : Pass<"tessera-verify-determinism", "::mlir::ModuleOp"> {
  let summary = "reject nondeterministic delegates inside deterministic functions";
  let description = [{
    Inside a function marked `tessera.deterministic` (or in every function, with
    `all-functions`, which is what a deterministic compile requests), any
    `tessera_nvidia.kernel_call` or `tessera_nvidia.inline_ptx` declaring
    `determinism = "nondeterministic"` is an error. Every offender is reported (function, op
    location, callee, declared determinism, remedy), not only the first, and the pass fails
    before anything could be dispatched.
  }];
  let options = [
    Option<"allFunctions", "all-functions", "bool", /*default=*/"false",
           "treat every function as deterministic (a deterministic compile)">,
  ];
}

#endif  // TESSERA_DIALECT_PASSES_TD
