// The `tessera` dialect: owns the discardable attributes Tessera puts on upstream ops, today
// `tessera.deterministic` on entry functions (the IR form of `@jit(deterministic=True)`).
#ifndef TESSERA_DIALECT_TESSERADIALECT_TD
#define TESSERA_DIALECT_TESSERADIALECT_TD

include "mlir/IR/DialectBase.td"

def Tessera_Dialect : Dialect {
  let name = "tessera";
  let cppNamespace = "::tessera";
  let summary = "Tessera guarantees attached to upstream operations";
  let description = [{
    Holds no operations. Verifies the `tessera.*` attributes placed on upstream operations:
    `tessera.deterministic` (a unit attribute, or `{seed = N}`) on a `func.func` entry function.
  }];
  let hasOperationAttrVerify = 1;
}

#endif  // TESSERA_DIALECT_TESSERADIALECT_TD
