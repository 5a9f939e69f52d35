// Element-level semantics of the Tile ops, shared by the host (loops) and device (gpu.launch)
// lowerings so that both compute the same thing: conversions, the TF32 rounding, the matmul
// epilogue activations, and the reduction combiners.
#ifndef TESSERA_DIALECT_CONVERSION_TILESEMANTICS_H_
#define TESSERA_DIALECT_CONVERSION_TILESEMANTICS_H_

#include <utility>

#include "dialect/TileOps.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace tessera::lowering {

/// Converts a float scalar to the float type `target` (extf, truncf, or nothing).
mlir::Value convertFloat(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value,
                         mlir::Type target);

/// Loads `memref[indices]` and converts it to f32 (the accumulation type of reductions).
mlir::Value loadAsF32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref,
                      mlir::ValueRange indices);

/// Rounds an f32 to TF32 (10 explicit mantissa bits), to nearest with ties away from zero —
/// what `cvt.rna.tf32.f32` and cuBLAS's TF32 mode do to GEMM inputs.
mlir::Value roundToTf32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value);

/// The type a matmul multiplies and accumulates in: i32 for i8 operands, f64 for f64, f16
/// under the `f16` policy, f32 otherwise (f16, bf16, f32 and the fp8 formats).
mlir::Type matmulAccumulatorType(tile::MatmulOp op);

/// Zero in the accumulator type.
mlir::Value matmulZero(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op);

/// An operand element converted for accumulation: sign-extended (i8), converted exactly to the
/// accumulator type and, under the `tf32` policy, rounded to TF32.
mlir::Value prepareMatmulInput(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op,
                               mlir::Value element);

/// `accumulator + x·y` in the accumulator's type (integers wrap around): the product rounded and
/// then the sum, or under `op`'s policy fma one rounding (a fused multiply-add).
mlir::Value matmulMultiplyAdd(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op,
                              mlir::Value accumulator, mlir::Value x, mlir::Value y);

/// Finishes element `cIndex` of C from its accumulated product: in f32 (f64 for f64 operands),
/// adds the bias (at the column), applies the activation, adds the residual (at `cIndex`), then
/// rounds once to C's element type and stores it. An i32 sum is stored as it is.
void storeMatmulResult(mlir::OpBuilder& b, mlir::Location loc, tile::MatmulOp op,
                       mlir::Value product, mlir::ValueRange cIndex);

/// The identity of `kind` in f32: 0 (sum, mean), 1 (prod), -inf (max), +inf (min); not for
/// argmax/argmin (argCombine).
mlir::Value reductionIdentity(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind);

/// `kind(accumulator, value)` in f32. max and min propagate NaN.
mlir::Value reductionCombine(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                             mlir::Value accumulator, mlir::Value value);

/// The final value of a reduction over `count` (index) elements: the accumulator, divided by the
/// count for mean.
mlir::Value reductionFinalize(mlir::OpBuilder& b, mlir::Location loc, tile::ReduceKind kind,
                              mlir::Value accumulator, mlir::Value count);

/// Whether `candidate` (at a higher index) replaces `best` as the running argmax (`max`) or
/// argmin: strictly better, or a NaN replacing a number. Scalars or vectors.
mlir::Value replacesExtreme(mlir::OpBuilder& b, mlir::Location loc, mlir::Value candidate,
                            mlir::Value best, bool max);

/// Combines two partial arg-reductions (value, i64 index; index -1 for none) into the one at
/// the first extreme: the second wins when it holds an index and the first holds none, it is
/// better, or it is as good (equal, or both NaN) at a lower index. Scalars or vectors.
std::pair<mlir::Value, mlir::Value> argCombine(mlir::OpBuilder& b, mlir::Location loc,
                                               mlir::Value firstValue, mlir::Value firstIndex,
                                               mlir::Value secondValue, mlir::Value secondIndex,
                                               bool max);

/// `value` as a constant of `type`: f32, or f32 lanes (a vector of f32).
mlir::Value f32Like(mlir::OpBuilder& b, mlir::Location loc, mlir::Type type, float value);

/// An f32 constant.
mlir::Value f32Constant(mlir::OpBuilder& b, mlir::Location loc, float value);

/// An index count as f32.
mlir::Value countAsF32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value count);

/// 1 / sqrt(value): a correctly rounded square root and division, the same on every target.
mlir::Value reciprocalSqrt(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value);

/// `index` with `last` appended.
llvm::SmallVector<mlir::Value> append(mlir::ValueRange index, mlir::Value last);

/// tile.norm: s = input (+ residual) at `index`, in f32.
mlir::Value normInput(mlir::OpBuilder& b, mlir::Location loc, tile::NormOp op,
                      mlir::ValueRange index);

/// tile.norm: 1 / sqrt(statistic + eps), statistic the variance (layer) or mean square (rms).
mlir::Value normScale(mlir::OpBuilder& b, mlir::Location loc, tile::NormOp op,
                      mlir::Value statistic);

/// tile.norm at `index` (position `l` of the last axis): stores s into residual_out (if any)
/// and y = (s − mean) · scale · weight + bias (rms: s · scale · weight + bias) into the output.
void normStore(mlir::OpBuilder& b, mlir::Location loc, tile::NormOp op, mlir::ValueRange index,
               mlir::Value l, mlir::Value s, mlir::Value mean, mlir::Value scale);

/// What tile.attention and tile.attention_backward share: the operands and attributes that
/// decide which keys a query sees and with what weight. Its accessors mirror the ops'.
class AttentionSpec {
 public:
  template <typename AttentionLikeOp>
  static AttentionSpec of(AttentionLikeOp op) {
    AttentionSpec spec;
    spec.key_lengths_ = op.getKeyLengths();
    spec.bias_ = op.getBias();
    spec.scale_ = op.getScale();
    spec.causal_ = op.getCausal();
    spec.alignment_ = op.getAlignment().value_or(tile::AttentionAlignment::bottom_right);
    spec.left_ = op.getWindowLeft() ? static_cast<int64_t>(*op.getWindowLeft()) : -1;
    spec.right_ = op.getWindowRight() ? static_cast<int64_t>(*op.getWindowRight()) : -1;
    spec.softcap_ = op.getSoftcap() ? op.getSoftcap()->convertToDouble() : 0.0;
    spec.dropout_ = op.getDropout() ? op.getDropout()->convertToDouble() : 0.0;
    spec.seed_ = op.getDropoutSeed().value_or(0);
    spec.rule_ = op.getDropoutRule().value_or(tile::DropoutRule::mix);
    return spec;
  }
  /// The forward's: also its lse output and what an empty row gets.
  static AttentionSpec of(tile::AttentionOp op) {
    AttentionSpec spec = of<tile::AttentionOp>(op);
    spec.lse_ = op.getLse();
    spec.empty_rows_ = op.getEmptyRowsOrDefault();
    return spec;
  }

  mlir::Value getKeyLengths() const { return key_lengths_; }
  mlir::Value getBias() const { return bias_; }
  mlir::Value getLse() const { return lse_; }
  std::optional<llvm::APFloat> getScale() const { return scale_; }
  bool getCausal() const { return causal_; }
  tile::AttentionAlignment getAlignmentOrDefault() const { return alignment_; }
  int64_t getWindowLeftOrUnbounded() const { return left_; }
  int64_t getWindowRightOrUnbounded() const { return right_; }
  double getSoftcapOrZero() const { return softcap_; }
  double getDropoutOrZero() const { return dropout_; }
  uint64_t getDropoutSeedOrZero() const { return seed_; }
  tile::DropoutRule getDropoutRuleOrDefault() const { return rule_; }
  tile::EmptyRows getEmptyRowsOrDefault() const { return empty_rows_; }

 private:
  mlir::Value key_lengths_, bias_, lse_;
  std::optional<llvm::APFloat> scale_;
  bool causal_ = false;
  tile::AttentionAlignment alignment_ = tile::AttentionAlignment::bottom_right;
  int64_t left_ = -1, right_ = -1;
  double softcap_ = 0, dropout_ = 0;
  uint64_t seed_ = 0;
  tile::DropoutRule rule_ = tile::DropoutRule::mix;
  tile::EmptyRows empty_rows_ = tile::EmptyRows::zeros;
};

/// tile.attention: the score scale, the attribute or 1/sqrt(D) (1 when D = 0).
mlir::Value attentionScale(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                           mlir::Value depth);

/// tile.attention: the keys (index) of batch `batch`: its key length clamped to [0, Sk], or Sk
/// without key_lengths.
mlir::Value batchKeys(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                      mlir::Value batch, mlir::Value keys);

/// tile.attention: the keys [first, end) (index) query `query` of batch `batch` sees: below the
/// batch's key length (clamped to [0, Sk]; Sk without key_lengths) and, around the query's
/// diagonal position p (i + length − Sq aligned at the bottom right, i at the top left), at most
/// p with `causal` and within [p − left, p + right] with a window. first == end: none.
struct KeyRange {
  mlir::Value first, end;
};
KeyRange visibleKeys(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                     mlir::Value batch, mlir::Value query, mlir::Value keys, mlir::Value queries);

/// tile.attention's bias at (batch, head, query, key), broadcast over batch and heads (f32).
mlir::Value attentionBias(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                          mlir::Value batch, mlir::Value head, mlir::Value query, mlir::Value key);

/// The score of a key from its dot product (f32 or f32 lanes): `dot · scale` (a scalar scale,
/// splat for lanes), plus `bias` (null: none; `dot`'s type), then soft-capped `c · tanh(s / c)`
/// (a -inf score stays -inf).
mlir::Value attentionScore(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                           mlir::Value dot, mlir::Value scale, mlir::Value bias);

/// Whether dropout keeps weight (b, h, i, j) (`position`, index values) of an attention with
/// sizes (B, H, Sq, Sk): the rule's 32-bit hash of the position ≥ p · 2^32 (i1).
mlir::Value dropoutKeeps(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                         mlir::ValueRange position, mlir::ValueRange sizes);

/// The weight a value row is accumulated with: `weight` without dropout, else
/// `weight / (1 − p)` where dropout keeps the position and 0 where it drops it.
mlir::Value droppedWeight(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                          mlir::Value weight, mlir::ValueRange position, mlir::ValueRange sizes);

/// An output element of a row: accumulator / sum, or for an empty row (`empty`, i1) 0 or NaN
/// (empty_rows(nan)).
mlir::Value attentionResult(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                            mlir::Value empty, mlir::Value accumulator, mlir::Value sum);

/// Stores the row's log-sum-exp `max + ln(sum)` at `row` of the op's lse output (nothing
/// without one): -inf for an empty row, or NaN with empty_rows(nan).
void storeAttentionLse(mlir::OpBuilder& b, mlir::Location loc, const AttentionSpec& op,
                       mlir::Value empty, mlir::Value max, mlir::Value sum, mlir::ValueRange row);

/// The online softmax's rescale of what was accumulated under maximum `max` once the maximum
/// is `newMax`: 1 while it stays (also -inf to -inf), else exp(max − newMax).
mlir::Value softmaxCorrection(mlir::OpBuilder& b, mlir::Location loc, mlir::Value max,
                              mlir::Value newMax);

/// The online softmax's weight of `score` under maximum `newMax` (same type: f32 or f32
/// lanes): 0 for a score of -inf whatever the maximum, else exp(score − newMax).
mlir::Value softmaxWeight(mlir::OpBuilder& b, mlir::Location loc, mlir::Value score,
                          mlir::Value newMax);

/// tile.rope: rotates feature pair `i` of `row` (every index but the last) of the input into the
/// output; `half` is D/2.
void ropeRotate(mlir::OpBuilder& b, mlir::Location loc, tile::RopeOp op, mlir::ValueRange row,
                mlir::Value i, mlir::Value half);

/// Clones the body of `map` at the builder's position with its arguments bound to `elements`;
/// returns the values it yields.
llvm::SmallVector<mlir::Value> inlineMapBody(mlir::OpBuilder& b, tile::MapOp map,
                                             mlir::ValueRange elements);

/// The sizes of a ranked memref as index values (constants where static).
llvm::SmallVector<mlir::Value> memrefSizes(mlir::OpBuilder& b, mlir::Location loc,
                                           mlir::Value memref);

/// An index constant.
mlir::Value indexConstant(mlir::OpBuilder& b, mlir::Location loc, int64_t value);

/// ceil(value / divisor) for a positive constant divisor.
mlir::Value ceilDiv(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value, int64_t divisor);

/// The row-major multi-index of `linear` (< the product of `sizes`) in a box of `sizes`.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder& b, mlir::Location loc,
                                           mlir::Value linear, mlir::ValueRange sizes);

/// The index into the first `dims` dimensions (all when negative) of memref `operand`, which
/// broadcast (NumPy's rules, aligned at the last of them) to `index` in the shape they broadcast
/// to: a dimension of size 1 reads position 0 (statically when its size is static, else by a
/// select).
llvm::SmallVector<mlir::Value> broadcastIndex(mlir::OpBuilder& b, mlir::Location loc,
                                              mlir::Value operand, mlir::ValueRange index,
                                              int64_t dims = -1);

/// The product of `sizes` (1 for none).
mlir::Value product(mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange sizes);

/// `values` with `inserted` placed at position `position`.
llvm::SmallVector<mlir::Value> insertAt(mlir::ValueRange values, int64_t position,
                                        mlir::Value inserted);

/// `values` without the entry at `position`.
llvm::SmallVector<mlir::Value> eraseAt(mlir::ValueRange values, int64_t position);

}  // namespace tessera::lowering

#endif  // TESSERA_DIALECT_CONVERSION_TILESEMANTICS_H_
