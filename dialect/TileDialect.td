// The `tile` dialect and its enumerations: launch-level kernels with precise semantics, each one
// arbitration point (one kernel launch or one delegate call).
#ifndef TESSERA_DIALECT_TILEDIALECT_TD
#define TESSERA_DIALECT_TILEDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::tessera::tile";
  let summary = "Tessera Tile operations: map, reduce, matmul, softmax, norm, attention, rope";
  let description = [{
    Tile ops read their input memrefs and write their output memrefs (destination-passing
    style); they return no values. Each op is one arbitration point: it becomes one compiled
    kernel launch or one delegate call. See docs/ir.md.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect"];
  // #tile.mma_desc and #tile.epilogue of the original's launch-level form (TileLaunchOps.td).
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Adds #tile.mma_desc and #tile.epilogue (defined in TileLaunchOps.cpp).
    void registerLaunchAttributes();
  }];
}

def Tile_ReduceKindAttr : I32EnumAttr<"ReduceKind", "tile.reduce combiner", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>,
    I32EnumAttrCase<"min", 3>,
    I32EnumAttrCase<"prod", 4>,
    I32EnumAttrCase<"argmax", 5>,
    I32EnumAttrCase<"argmin", 6>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

def Tile_ActivationAttr : I32EnumAttr<"Activation", "tile.matmul epilogue activation", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"relu", 1>,
    I32EnumAttrCase<"gelu", 2>,
    I32EnumAttrCase<"silu", 3>,
    I32EnumAttrCase<"gelu_tanh", 4>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

// How a matmul rounds and accumulates. `f32`: inputs exact, f32 accumulator, each product
// rounded and then added (the default); `tf32`: f32 inputs rounded to TF32 before the products,
// f32 accumulator (cuBLAS TF32 mode); `f16`: f16 accumulator (f16 storage only); `fma`: inputs
// exact, f32 accumulator, each product added with one rounding (a fused multiply-add).
def Tile_NumericPolicyAttr : I32EnumAttr<"NumericPolicy", "tile.matmul numeric policy", [
    I32EnumAttrCase<"f32", 0>,
    I32EnumAttrCase<"tf32", 1>,
    I32EnumAttrCase<"f16", 2>,
    I32EnumAttrCase<"fma", 3>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

// tile.attention: where the causal diagonal and the window sit when Sq != L (the batch's keys):
// `bottom_right` (query i at key position i + L - Sq, FlashAttention's) or `top_left` (at i).
def Tile_AttentionAlignmentAttr : I32EnumAttr<"AttentionAlignment",
                                              "tile.attention diagonal alignment", [
    I32EnumAttrCase<"bottom_right", 0>,
    I32EnumAttrCase<"top_left", 1>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

// tile.attention: what a query that sees no key gets: zeros (and lse -inf) or NaN (and lse NaN,
// the original Tessera's).
def Tile_EmptyRowsAttr : I32EnumAttr<"EmptyRows", "tile.attention fully masked rows", [
    I32EnumAttrCase<"zeros", 0>,
    I32EnumAttrCase<"nan", 1>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

// tile.attention dropout's keep rule, a pure function of (seed, b, h, query, key): `mix` (a
// SplitMix64 finalizer of the position) or `lcg` (the original Tessera's 32-bit LCG step).
def Tile_DropoutRuleAttr : I32EnumAttr<"DropoutRule", "tile.attention dropout rule", [
    I32EnumAttrCase<"mix", 0>,
    I32EnumAttrCase<"lcg", 1>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

// tile.norm: `layer` normalizes by mean and variance, `rms` by the root mean square.
def Tile_NormKindAttr : I32EnumAttr<"NormKind", "tile.norm statistic", [
    I32EnumAttrCase<"layer", 0>,
    I32EnumAttrCase<"rms", 1>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

// tile.rope: which elements of the last axis form a rotated pair. `half`: i and i + D/2
// (GPT-NeoX, Llama); `interleaved`: 2i and 2i + 1 (GPT-J).
def Tile_RopeLayoutAttr : I32EnumAttr<"RopeLayout", "tile.rope pair layout", [
    I32EnumAttrCase<"half", 0>,
    I32EnumAttrCase<"interleaved", 1>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

#endif  // TESSERA_DIALECT_TILEDIALECT_TD
