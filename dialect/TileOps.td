// Operations of the `tile` dialect. Semantics and examples: docs/ir.md.
#ifndef TESSERA_DIALECT_TILEOPS_TD
#define TESSERA_DIALECT_TILEOPS_TD

include "TileDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Tile_Op<string mnemonic, list<Trait> traits = []> :
    Op<Tile_Dialect, mnemonic, traits>;

// Storage types the numeric Tile ops accept.
def Tile_FloatMemRef : Non0RankedMemRefOf<[F32, F16, BF16]>;
def Tile_Matrix : MemRefRankOf<[F32, F16, BF16], [2]>;
def Tile_Vector : MemRefRankOf<[F32, F16, BF16], [1]>;
def Tile_FloatMemRefAnyRank : MemRefOf<[F32, F16, BF16]>;
def Tile_MapInput : AnyTypeOf<[AnyMemRef, AnySignlessIntegerOrIndex, AnyFloat]>;

//===----------------------------------------------------------------------===//
// tile.map
//===----------------------------------------------------------------------===//

def Tile_MapOp : Tile_Op<"map", [AttrSizedOperandSegments, SingleBlock]> {
  let summary = "elementwise computation over same-shaped memrefs";
  let description = [{
    Applies the body to every element position. Memref inputs and all outputs have the same
    shape; scalar inputs are broadcast. The body's block arguments are the element types of
    the inputs (a scalar input contributes its own type), it may contain only `arith` and
    `math` operations, and it ends in `tile.yield` with one value per output.

    ```mlir
    tile.map ins(%x, %alpha : memref<?xf32>, f32) outs(%y : memref<?xf32>) {
    ^bb0(%a: f32, %s: f32):
      %0 = arith.mulf %a, %s : f32
      tile.yield %0 : f32
    }
    ```
  }];
  let arguments = (ins Arg<Variadic<Tile_MapInput>, "inputs", [MemRead]>:$inputs,
                       Arg<Variadic<AnyMemRef>, "outputs", [MemWrite]>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`ins` `(` $inputs^ `:` type($inputs) `)`)? `outs` `(` $outputs `:` type($outputs) `)`
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Tile_YieldOp : Tile_Op<"yield", [Pure, Terminator, HasParent<"MapOp">]> {
  let summary = "returns the per-element results of a tile.map body";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

//===----------------------------------------------------------------------===//
// tile.reduce
//===----------------------------------------------------------------------===//

def Tile_ReduceOp : Tile_Op<"reduce"> {
  let summary = "reduction along one axis with f32 accumulation in a fixed order";
  let description = [{
    `output = kind(input, axis)`. Accumulates in f32 in a fixed (deterministic) tree order and
    converts to the output element type. Without `keepdims` the output drops `axis`; with it,
    the output keeps `axis` with size 1.

    ```mlir
    tile.reduce sum %x -> %y axis = 1 : memref<?x128xf32> -> memref<?xf32>
    ```
  }];
  let arguments = (ins Tile_ReduceKindAttr:$kind,
                       Arg<Tile_FloatMemRef, "input", [MemRead]>:$input,
                       Arg<Tile_FloatMemRefAnyRank, "output", [MemWrite]>:$output,
                       I64Attr:$axis,
                       UnitAttr:$keepdims);
  let assemblyFormat = [{
    $kind $input `->` $output `axis` `=` $axis (`keepdims` $keepdims^)? attr-dict
    `:` type($input) `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// tile.matmul
//===----------------------------------------------------------------------===//

def Tile_MatmulOp : Tile_Op<"matmul"> {
  let summary = "C[M,N] = act(op(A)[M,K] * op(B)[K,N] + bias[N])";
  let description = [{
    Matrix product with optional transposes and an optional fused epilogue: a bias broadcast
    over rows, then an activation. The numeric policy fixes rounding and the accumulator
    (default `f32`).

    ```mlir
    tile.matmul %x, %w -> %h bias(%b : memref<256xf32>) activation(relu)
        : memref<?x784xf32>, memref<784x256xf32> -> memref<?x256xf32>
    ```
  }];
  let arguments = (ins Arg<Tile_Matrix, "A", [MemRead]>:$lhs,
                       Arg<Tile_Matrix, "B", [MemRead]>:$rhs,
                       Arg<Tile_Matrix, "C", [MemWrite]>:$output,
                       Arg<Optional<Tile_Vector>, "bias", [MemRead]>:$bias,
                       UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b,
                       OptionalAttr<Tile_ActivationAttr>:$activation,
                       OptionalAttr<Tile_NumericPolicyAttr>:$numeric_policy,
                       OptionalAttr<StrAttr>:$delegate);
  let assemblyFormat = [{
    $lhs `,` $rhs `->` $output (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`activation` `(` $activation^ `)`)? (`policy` `(` $numeric_policy^ `)`)? attr-dict
    `:` type($lhs) `,` type($rhs) `->` type($output)
  }];
  let extraClassDeclaration = [{
    /// The epilogue activation; `none` when the attribute is absent.
    ::tessera::tile::Activation getActivationOrNone() {
      return getActivation().value_or(::tessera::tile::Activation::none);
    }
    /// The numeric policy; `f32` when the attribute is absent.
    ::tessera::tile::NumericPolicy getNumericPolicyOrDefault() {
      return getNumericPolicy().value_or(::tessera::tile::NumericPolicy::f32);
    }
    /// True when the op carries work beyond the product itself (bias and/or activation); a
    /// `root_only` delegate must decline such an op.
    bool hasFusedEpilogue() {
      return getBias() != nullptr ||
             getActivationOrNone() != ::tessera::tile::Activation::none;
    }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// tile.softmax
//===----------------------------------------------------------------------===//

def Tile_SoftmaxOp : Tile_Op<"softmax"> {
  let summary = "numerically stable softmax along the last axis";
  let description = [{
    `y[..., i] = exp(x[..., i] - max(x[..., :])) / sum(exp(x[..., :] - max(x[..., :])))`,
    computed in f32 with a fixed reduction order.

    ```mlir
    tile.softmax %logits -> %probs : memref<?x10xf32> -> memref<?x10xf32>
    ```
  }];
  let arguments = (ins Arg<Tile_FloatMemRef, "input", [MemRead]>:$input,
                       Arg<Tile_FloatMemRef, "output", [MemWrite]>:$output);
  let assemblyFormat = "$input `->` $output attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

#endif  // TESSERA_DIALECT_TILEOPS_TD
