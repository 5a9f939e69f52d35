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
def Tile_Rank4 : MemRefRankOf<[F32, F16, BF16], [4]>;
def Tile_Rank4F32 : MemRefRankOf<[F32], [4]>;
def Tile_Rank3F32 : MemRefRankOf<[F32], [3]>;
def Tile_Vector : MemRefRankOf<[F32, F16, BF16], [1]>;
def Tile_FloatMemRefAnyRank : MemRefOf<[F32, F16, BF16]>;
// tile.matmul's operands: the float storage types, f64, the fp8 formats (e4m3, e5m2) and i8;
// its results, epilogue bias and residual: the float storage types, f64, and i32 (i8 products).
def Tile_MatmulOperand : Non0RankedMemRefOf<[F32, F16, BF16, F64, F8E4M3FN, F8E5M2, I8]>;
def Tile_MatmulResult : Non0RankedMemRefOf<[F32, F16, BF16, F64, I32]>;
def Tile_MatmulEpilogueInput : Non0RankedMemRefOf<[F32, F16, BF16, F64]>;
def Tile_MatmulBias : MemRefRankOf<[F32, F16, BF16, F64], [1]>;
def Tile_ReduceOutput : MemRefOf<[F32, F16, BF16, I32, I64]>;
def Tile_IndexVector : MemRefRankOf<[I32, I64], [1]>;
def Tile_MapInput : AnyTypeOf<[AnyMemRef, AnySignlessIntegerOrIndex, AnyFloat]>;

//===----------------------------------------------------------------------===//
// tile.map
//===----------------------------------------------------------------------===//

def Tile_MapOp : Tile_Op<"map", [AttrSizedOperandSegments, SingleBlock]> {
  let summary = "elementwise computation over same-shaped memrefs";
  let description = [{
    Applies the body to every element position. All outputs have the same shape; memref
    inputs broadcast to it by NumPy's rules (aligned at the last axis, each size 1 or the
    output's, missing leading axes), scalar inputs to every position. The body's block arguments are the element types of
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
    the output keeps `axis` with size 1. `argmax`/`argmin` write the index (i32 or i64) of the
    first maximum/minimum along the axis; a NaN counts as the extreme (the first NaN wins).

    ```mlir
    tile.reduce sum %x -> %y axis = 1 : memref<?x128xf32> -> memref<?xf32>
    ```
  }];
  let arguments = (ins Tile_ReduceKindAttr:$kind,
                       Arg<Tile_FloatMemRef, "input", [MemRead]>:$input,
                       Arg<Tile_ReduceOutput, "output", [MemWrite]>:$output,
                       I64Attr:$axis,
                       UnitAttr:$keepdims);
  let assemblyFormat = [{
    $kind $input `->` $output `axis` `=` $axis (`keepdims` $keepdims^)? attr-dict
    `:` type($input) `->` type($output)
  }];
  let extraClassDeclaration = [{
    /// True for argmax and argmin, which write indices.
    bool isArgReduction() {
      return getKind() == ::tessera::tile::ReduceKind::argmax ||
             getKind() == ::tessera::tile::ReduceKind::argmin;
    }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// tile.matmul
//===----------------------------------------------------------------------===//

def Tile_MatmulOp : Tile_Op<"matmul", [AttrSizedOperandSegments]> {
  let summary = "C[...,M,N] = act(op(A)[...,M,K] * op(B)[...,K,N] + bias[N]) + residual[...,M,N]";
  let description = [{
    Matrix product with optional transposes and an optional fused epilogue: a bias broadcast
    over rows, then an activation, then a residual of C's shape added; each in f32 before the
    one rounding to C's element type (bias and residual may be f32 or C's element type). The numeric policy fixes rounding and the accumulator
    (default `f32`). Dimensions before the last two are batch dimensions: A's and B's
    broadcast to C's by NumPy's rules, and the product and epilogue apply per batch.
    Operand types: f16, bf16 and f32 (accumulated in f32, or f16 under policy `f16`);
    f8E4M3FN and f8E5M2 (decoded exactly, accumulated in f32; C f32, f16 or bf16); f64
    (accumulated in f64, the epilogue in f64; C f64); i8 (products accumulated in i32 with
    two's-complement wrap-around; C i32, no epilogue).

    ```mlir
    tile.matmul %x, %w -> %h bias(%b : memref<256xf32>) activation(relu)
        : memref<?x784xf32>, memref<784x256xf32> -> memref<?x256xf32>
    ```
  }];
  let arguments = (ins Arg<Tile_MatmulOperand, "A", [MemRead]>:$lhs,
                       Arg<Tile_MatmulOperand, "B", [MemRead]>:$rhs,
                       Arg<Tile_MatmulResult, "C", [MemWrite]>:$output,
                       Arg<Optional<Tile_MatmulBias>, "bias", [MemRead]>:$bias,
                       Arg<Optional<Tile_MatmulEpilogueInput>, "residual", [MemRead]>:$residual,
                       UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b,
                       OptionalAttr<Tile_ActivationAttr>:$activation,
                       OptionalAttr<Tile_NumericPolicyAttr>:$numeric_policy,
                       OptionalAttr<StrAttr>:$delegate);
  let assemblyFormat = [{
    $lhs `,` $rhs `->` $output (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
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
    /// True when the op carries work beyond the product itself (bias, activation, residual);
    /// a `root_only` delegate must decline such an op.
    bool hasFusedEpilogue() {
      return getBias() != nullptr || getResidual() != nullptr ||
             getActivationOrNone() != ::tessera::tile::Activation::none;
    }
    /// True when C has batch dimensions (rank > 2).
    bool isBatched() {
      return ::llvm::cast<::mlir::MemRefType>(getOutput().getType()).getRank() > 2;
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

//===----------------------------------------------------------------------===//
// tile.norm
//===----------------------------------------------------------------------===//

def Tile_NormOp : Tile_Op<"norm", [AttrSizedOperandSegments]> {
  let summary = "layer or RMS normalization over the last axis, with an optional fused residual add";
  let description = [{
    With `s = input (+ residual)` in f32, per row of the last axis (length n):
    `layer`: `y = (s - mean(s)) * rsqrt(var(s) + eps) * weight + bias`;
    `rms`:   `y = s * rsqrt(mean(s^2) + eps) * weight + bias`.
    Statistics are f32 whatever the storage type; `weight` and `bias` are optional (1 and 0);
    `residual_out` receives `s` (the fused "add + norm" of decoder layers). `eps` defaults to 1e-5.

    ```mlir
    tile.norm rms %x residual(%r : memref<?x64xf16>) -> %y residual_out(%h : memref<?x64xf16>)
        weight(%w : memref<64xf16>) eps(1.0e-06) : memref<?x64xf16> -> memref<?x64xf16>
    ```
  }];
  let arguments = (ins Tile_NormKindAttr:$kind,
                       Arg<Tile_FloatMemRef, "input", [MemRead]>:$input,
                       Arg<Optional<Tile_FloatMemRef>, "residual", [MemRead]>:$residual,
                       Arg<Tile_FloatMemRef, "output", [MemWrite]>:$output,
                       Arg<Optional<Tile_FloatMemRef>, "input + residual", [MemWrite]>:$residual_out,
                       Arg<Optional<Tile_Vector>, "weight", [MemRead]>:$weight,
                       Arg<Optional<Tile_Vector>, "bias", [MemRead]>:$bias,
                       OptionalAttr<F32Attr>:$eps);
  let assemblyFormat = [{
    $kind $input (`residual` `(` $residual^ `:` type($residual) `)`)? `->` $output
    (`residual_out` `(` $residual_out^ `:` type($residual_out) `)`)?
    (`weight` `(` $weight^ `:` type($weight) `)`)? (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`eps` `(` $eps^ `)`)? attr-dict `:` type($input) `->` type($output)
  }];
  let extraClassDeclaration = [{
    /// The epsilon added to the variance (or mean square); 1e-5 when absent.
    float getEpsOrDefault() { return getEps() ? getEps()->convertToFloat() : 1.0e-5f; }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// tile.attention
//===----------------------------------------------------------------------===//

def Tile_AttentionOp : Tile_Op<"attention", [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention (forward), grouped-query, masked, for training";
  let description = [{
    `O[b, h, i, :] = Σ_j P[b, h, i, j] V[b, g, j, :]`, `P = softmax_j(s)` over the visible keys,
    with Q [B, H, Sq, D], K [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv], O [B, H, Sq, Dv], H a multiple
    of Hkv and g = h / (H / Hkv). The score of key j: `s = scale · Q·K` (`scale` defaults to
    1/sqrt(D)), plus `bias[b, h, i, j]` (f32 [B|1, H|1, Sq, Sk]), then soft-capped to
    `c · tanh(s / c)` with `softcap(c)`. Key j is visible to query i when j < L_b (the batch's
    key length: `key_lengths[b]` clamped to [0, Sk], else Sk), and, at the query's diagonal
    position p = i + L_b - Sq (`aligned(bottom_right)`, the default) or p = i
    (`aligned(top_left)`): with `causal`, j <= p; with `window(left, right)`, p - left <= j <=
    p + right (-1: unbounded on that side). `dropout(p, seed)` zeroes each weight P[b, h, i, j]
    with probability p — kept or not by a pure function of (seed, b, h, i, j) and the shapes
    (`dropout_rule(mix)` by default, `lcg` the original Tessera's) — and scales the kept ones by
    1/(1 - p); the softmax denominator sums the undropped weights. `lse(%l)` writes each row's
    log-sum-exp `m + ln Σ_j exp(s_j - m)` (f32 [B, H, Sq]). A query that sees no key gets zeros
    and lse -inf (`empty_rows(zeros)`, the default) or NaN in both (`empty_rows(nan)`). Computed
    with an online softmax in f32; memory does not grow with Sq * Sk.

    ```mlir
    tile.attention %q, %k, %v -> %o causal
        : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> -> memref<?x8x?x64xf16>
    tile.attention %q, %k, %v -> %o lse(%l : memref<?x8x?xf32>) causal window(4096, 0)
        softcap(5.000000e+01) dropout(1.000000e-01, 7)
        : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16> -> memref<?x8x?x64xbf16>
    ```
  }];
  let arguments = (ins Arg<Tile_Rank4, "Q", [MemRead]>:$query,
                       Arg<Tile_Rank4, "K", [MemRead]>:$key,
                       Arg<Tile_Rank4, "V", [MemRead]>:$value,
                       Arg<Tile_Rank4, "O", [MemWrite]>:$output,
                       Arg<Optional<Tile_IndexVector>, "key lengths", [MemRead]>:$key_lengths,
                       Arg<Optional<Tile_Rank4F32>, "additive score bias", [MemRead]>:$bias,
                       Arg<Optional<Tile_Rank3F32>, "row log-sum-exp", [MemWrite]>:$lse,
                       OptionalAttr<F32Attr>:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<I64Attr>:$window_left,
                       OptionalAttr<I64Attr>:$window_right,
                       OptionalAttr<Tile_AttentionAlignmentAttr>:$alignment,
                       OptionalAttr<F32Attr>:$softcap,
                       OptionalAttr<F32Attr>:$dropout,
                       OptionalAttr<I64Attr>:$dropout_seed,
                       OptionalAttr<Tile_DropoutRuleAttr>:$dropout_rule,
                       OptionalAttr<Tile_EmptyRowsAttr>:$empty_rows);
  let assemblyFormat = [{
    $query `,` $key `,` $value `->` $output
    (`key_lengths` `(` $key_lengths^ `:` type($key_lengths) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    (`scale` `(` $scale^ `)`)? (`causal` $causal^)?
    (`window` `(` $window_left^ `,` $window_right `)`)?
    (`aligned` `(` $alignment^ `)`)?
    (`softcap` `(` $softcap^ `)`)?
    (`dropout` `(` $dropout^ `,` $dropout_seed `)`)?
    (`dropout_rule` `(` $dropout_rule^ `)`)?
    (`empty_rows` `(` $empty_rows^ `)`)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($output)
  }];
  let extraClassDeclaration = [{
    ::tessera::tile::EmptyRows getEmptyRowsOrDefault() {
      return getEmptyRows().value_or(::tessera::tile::EmptyRows::zeros);
    }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// tile.attention_backward
//===----------------------------------------------------------------------===//

def Tile_AttentionBackwardOp : Tile_Op<"attention_backward", [AttrSizedOperandSegments]> {
  let summary = "the gradients of tile.attention, deterministic (no atomics, a fixed order)";
  let description = [{
    From the forward's dO, Q, K, V, its output O and its row log-sum-exp lse, and the forward's
    own settings (key_lengths, bias, scale, causal, window, alignment, softcap, dropout and its
    rule), writes dQ [B, H, Sq, D], dK [B, Hkv, Sk, D] and dV [B, Hkv, Sk, Dv] — dK and dV
    summed over the query heads of each KV head. With P = exp(s − lse) over the visible keys,
    Z the dropout factor (0 or 1/(1 − p), the forward's kept set), dP = Z · dO·V,
    D = dO·O and dS = P (dP − D) times the soft cap's derivative 1 − (s/c)²:
    dV = Σ Z P dO, dK = scale Σ dS Q, dQ = scale Σ dS K. Each output element is summed by one
    thread in a fixed order (dQ: keys ascending; dK, dV: the query heads of the KV head, then
    their queries, ascending): bit-identical run to run, for any thread count, and
    batch-invariant. Rows that see no key, or whose lse is not finite, contribute nothing.
    dQ, dK and dV must not alias the inputs or each other.

    ```mlir
    tile.attention_backward %do, %q, %k, %v, %o, %lse -> %dq, %dk, %dv causal
        : memref<?x8x?x64xf32>, memref<?x8x?x64xf32>, memref<?x2x?x64xf32>,
          memref<?x2x?x64xf32>, memref<?x8x?x64xf32>, memref<?x8x?xf32>
          -> memref<?x8x?x64xf32>, memref<?x2x?x64xf32>, memref<?x2x?x64xf32>
    ```
  }];
  let arguments = (ins Arg<Tile_Rank4, "dO", [MemRead]>:$grad_output,
                       Arg<Tile_Rank4, "Q", [MemRead]>:$query,
                       Arg<Tile_Rank4, "K", [MemRead]>:$key,
                       Arg<Tile_Rank4, "V", [MemRead]>:$value,
                       Arg<Tile_Rank4, "O", [MemRead]>:$output,
                       Arg<Tile_Rank3F32, "lse", [MemRead]>:$lse,
                       Arg<Tile_Rank4, "dQ", [MemWrite]>:$grad_query,
                       Arg<Tile_Rank4, "dK", [MemWrite]>:$grad_key,
                       Arg<Tile_Rank4, "dV", [MemWrite]>:$grad_value,
                       Arg<Optional<Tile_IndexVector>, "key lengths", [MemRead]>:$key_lengths,
                       Arg<Optional<Tile_Rank4F32>, "additive score bias", [MemRead]>:$bias,
                       OptionalAttr<F32Attr>:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<I64Attr>:$window_left,
                       OptionalAttr<I64Attr>:$window_right,
                       OptionalAttr<Tile_AttentionAlignmentAttr>:$alignment,
                       OptionalAttr<F32Attr>:$softcap,
                       OptionalAttr<F32Attr>:$dropout,
                       OptionalAttr<I64Attr>:$dropout_seed,
                       OptionalAttr<Tile_DropoutRuleAttr>:$dropout_rule);
  let assemblyFormat = [{
    $grad_output `,` $query `,` $key `,` $value `,` $output `,` $lse `->`
    $grad_query `,` $grad_key `,` $grad_value
    (`key_lengths` `(` $key_lengths^ `:` type($key_lengths) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`scale` `(` $scale^ `)`)? (`causal` $causal^)?
    (`window` `(` $window_left^ `,` $window_right `)`)?
    (`aligned` `(` $alignment^ `)`)?
    (`softcap` `(` $softcap^ `)`)?
    (`dropout` `(` $dropout^ `,` $dropout_seed `)`)?
    (`dropout_rule` `(` $dropout_rule^ `)`)? attr-dict
    `:` type($grad_output) `,` type($query) `,` type($key) `,` type($value) `,` type($output)
    `,` type($lse) `->` type($grad_query) `,` type($grad_key) `,` type($grad_value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// tile.rope
//===----------------------------------------------------------------------===//

def Tile_RopeOp : Tile_Op<"rope"> {
  let summary = "rotary position embedding over the last axis with cos/sin tables";
  let description = [{
    For x [..., S, D] and tables cos, sin [S, D/2], rotates each pair (x1, x2) of row s by the
    angle of entry (s, i): `y1 = x1 * cos - x2 * sin`, `y2 = x2 * cos + x1 * sin`, in f32. The
    pair is (i, i + D/2) with `half`, (2i, 2i + 1) with `interleaved`.

    ```mlir
    tile.rope half %q, %cos, %sin -> %qr
        : memref<?x8x?x64xf32>, memref<?x32xf32>, memref<?x32xf32> -> memref<?x8x?x64xf32>
    ```
  }];
  let arguments = (ins Tile_RopeLayoutAttr:$layout,
                       Arg<Tile_FloatMemRef, "input", [MemRead]>:$input,
                       Arg<Tile_Matrix, "cos", [MemRead]>:$cos,
                       Arg<Tile_Matrix, "sin", [MemRead]>:$sin,
                       Arg<Tile_FloatMemRef, "output", [MemWrite]>:$output);
  let assemblyFormat = [{
    $layout $input `,` $cos `,` $sin `->` $output attr-dict
    `:` type($input) `,` type($cos) `,` type($sin) `->` type($output)
  }];
  let hasVerifier = 1;
}

include "TileLaunchOps.td"

#endif  // TESSERA_DIALECT_TILEOPS_TD
