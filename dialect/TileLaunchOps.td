// The original Tessera project's launch-level Tile form, under its names and syntax: one op per
// kernel, its operands the kernel's pointer ABI (`!llvm.ptr`) followed by its i64 dimensions,
// its contract in attributes. These ops are an import format: `tessera-import-launch-kernels`
// rewrites each into this project's Tile ops before anything else runs (docs/original-ir.md).
// The verifiers follow the original's rules, in its order and with its messages.
#ifndef TESSERA_DIALECT_TILELAUNCHOPS_TD
#define TESSERA_DIALECT_TILELAUNCHOPS_TD

include "TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"

class Tile_Attr<string name, string attrMnemonic> : AttrDef<Tile_Dialect, name> {
  let mnemonic = attrMnemonic;
}

// `true` or `false`, as the original spells the epilogue's bias flag.
def Tile_BoolParameter : AttrParameter<"bool", "a boolean written true or false"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<bool> {
    if (::mlir::succeeded($_parser.parseOptionalKeyword("true"))) return true;
    if (::mlir::succeeded($_parser.parseOptionalKeyword("false"))) return false;
    return $_parser.emitError($_parser.getCurrentLocation(), "expected true or false");
  }() }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
}

def Tile_MmaDescAttr : Tile_Attr<"MmaDesc", "mma_desc"> {
  let summary = "the original's cooperative-matrix instruction descriptor";
  let description = [{
    The instruction a launch-level matmul was planned for: its family, tile shape, operand and
    accumulator types and operand layouts. This project takes the operand types and layouts as
    the matmul's contract; the family and tile shape are hints (it chooses its own kernel).
  }];
  let parameters = (ins StringRefParameter<"">:$family, "int64_t":$m, "int64_t":$n,
                        "int64_t":$k, StringRefParameter<"">:$aType,
                        StringRefParameter<"">:$bType, StringRefParameter<"">:$accType,
                        StringRefParameter<"">:$aLayout, StringRefParameter<"">:$bLayout,
                        "int64_t":$kBlocks);
  let assemblyFormat =
      "`<` `family` `=` $family `,` `m` `=` $m `,` `n` `=` $n `,` `k` `=` $k `,` "
      "`a` `=` $aType `,` `b` `=` $bType `,` `acc` `=` $accType `,` "
      "`a_layout` `=` $aLayout `,` `b_layout` `=` $bLayout `,` "
      "`k_blocks` `=` $kBlocks `>`";
  let genVerifyDecl = 1;
}

def Tile_EpilogueAttr : Tile_Attr<"Epilogue", "epilogue"> {
  let summary = "the original's matmul epilogue: bias flag, activation, output type";
  let parameters = (ins Tile_BoolParameter:$bias, StringRefParameter<"">:$activation,
                        StringRefParameter<"">:$outputType);
  let assemblyFormat = "`<` `bias` `=` $bias `,` `activation` `=` $activation `,` "
                       "`output` `=` $outputType `>`";
  let genVerifyDecl = 1;
}

// Every launch-level op: a variadic operand list and the original's generic assembly.
class Tile_LaunchOp<string mnemonic, string summaryText> : Op<Tile_Dialect, mnemonic> {
  let summary = summaryText;
  let arguments = (ins Variadic<AnyType>:$inputs);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def Tile_MatmulKernelOp : Tile_LaunchOp<"matmul_kernel",
    "launch-level matmul: A, B, [bias], [residual], D, M, N, K"> {
  let extraClassDeclaration = [{
    /// True for the packed block-scaled formats (nvfp4, fp4_e2m1, e2m3, e3m2).
    bool isBlockScaled();
    /// True when the op carries `residual = true` (a residual operand after the bias).
    bool hasResidual();
  }];
}
def Tile_ReduceKernelOp : Tile_LaunchOp<"reduce_kernel",
    "launch-level reduction over the middle of [outer, axis, inner]: X, O, outer, axis, inner">;
def Tile_SoftmaxKernelOp : Tile_LaunchOp<"softmax_kernel",
    "launch-level row softmax: X, O, rows, columns">;
def Tile_NormKernelOp : Tile_LaunchOp<"norm_kernel",
    "launch-level RMSNorm or LayerNorm without affine: X, O, rows, columns, epsilon">;
def Tile_AttentionKernelOp : Tile_LaunchOp<"attention_kernel",
    "launch-level attention: Q, K, V, [bias], O, [row_lse], B, Hq, Hkv, Sq, Sk, D, Dv">;
def Tile_AttentionBackwardKernelOp : Tile_LaunchOp<"attention_backward_kernel",
    "launch-level attention backward: dO, Q, K, V, [bias], [row_lse], dQ, dK, dV, dims">;

#endif  // TESSERA_DIALECT_TILELAUNCHOPS_TD
