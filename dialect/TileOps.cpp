// The `tile` dialect: registration and the verifiers of its ops.
// Over 600 lines: the verifiers of every tile op, sharing one set of type, shape and attribute
// checks.
#include "dialect/TileOps.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include "dialect/TileDialect.cpp.inc"
#include "dialect/TileEnums.cpp.inc"

#define GET_OP_CLASSES
#include "dialect/TileOps.cpp.inc"

namespace tessera::tile {
namespace {

/// Prints a static size, or `?` for a dynamic one.
std::string dimToString(int64_t dim) {
  return mlir::ShapedType::isDynamic(dim) ? std::string("?") : std::to_string(dim);
}

/// Two sizes agree when they are equal or either is only known at run time.
bool dimsCompatible(int64_t a, int64_t b) {
  return mlir::ShapedType::isDynamic(a) || mlir::ShapedType::isDynamic(b) || a == b;
}

/// Checks that `type` (named `name`) has the same shape as `reference` (named `referenceName`),
/// as far as it is known statically.
mlir::LogicalResult verifySameShape(mlir::Operation* op, llvm::StringRef name,
                                    mlir::MemRefType type, llvm::StringRef referenceName,
                                    mlir::MemRefType reference) {
  if (type.getRank() != reference.getRank()) {
    return op->emitOpError() << "expected " << name << " (" << type << ") to have rank "
                             << reference.getRank() << " like " << referenceName << " ("
                             << reference << ")";
  }
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!dimsCompatible(type.getDimSize(d), reference.getDimSize(d))) {
      return op->emitOpError() << "expected dimension " << d << " of " << name << " (" << type
                               << ") to be " << reference.getDimSize(d) << " like " << referenceName
                               << " (" << reference << ")";
    }
  }
  return mlir::success();
}

/// Checks that `type` (named `name`) broadcasts to `reference` (named `referenceName`) by
/// NumPy's rules, as far as is known statically: rank at most the reference's, and each size
/// (aligned at the last axis) 1 or the reference's.
mlir::LogicalResult verifyBroadcast(mlir::Operation* op, llvm::StringRef name,
                                    llvm::ArrayRef<int64_t> shape, llvm::StringRef typeText,
                                    llvm::StringRef referenceName,
                                    llvm::ArrayRef<int64_t> reference,
                                    llvm::StringRef referenceText) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t referenceRank = static_cast<int64_t>(reference.size());
  if (rank > referenceRank) {
    return op->emitOpError() << "expected " << name << " (" << typeText << ") to have rank at most "
                             << referenceRank << " like " << referenceName << " (" << referenceText
                             << "); it broadcasts to that shape";
  }
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t size = shape[d];
    const int64_t target = reference[d + referenceRank - rank];
    if (mlir::ShapedType::isDynamic(size) || mlir::ShapedType::isDynamic(target) || size == 1 ||
        size == target) {
      continue;
    }
    return op->emitOpError() << "expected dimension " << d << " of " << name << " (" << typeText
                             << ") to be 1 or " << target << ", to broadcast to "
                             << "dimension " << d + referenceRank - rank << " of " << referenceName
                             << " (" << referenceText << ")";
  }
  return mlir::success();
}

/// A number as printf's %g writes it ("-1", "inf", "1e-05").
std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%g", value);
  return text;
}

std::string typeToString(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << type << "'";
  return text;
}

/// A dimension of a memref value's type.
int64_t dimOf(mlir::Value memref, int64_t d) {
  return llvm::cast<mlir::MemRefType>(memref.getType()).getDimSize(d);
}

/// Checks that dimension `dim` of `value` (named `name`) can equal `expected` (`what`).
mlir::LogicalResult verifyDim(mlir::Operation* op, llvm::StringRef name, mlir::Value value,
                              int64_t dim, int64_t expected, llvm::StringRef what) {
  const int64_t size = dimOf(value, dim);
  if (dimsCompatible(size, expected)) return mlir::success();
  return op->emitOpError() << "expected dimension " << dim << " of " << name << " ("
                           << value.getType() << ") to be " << expected << " (" << what
                           << "), found " << size;
}

/// What may appear in a tile.map body: pure scalar arithmetic, and inline PTX (verified by
/// its own op; by name, so the Tile dialect does not depend on the NVIDIA one).
bool isAllowedInMapBody(mlir::Operation& op) {
  if (op.getName().getStringRef() == "tessera_nvidia.inline_ptx") return true;
  mlir::Dialect* dialect = op.getDialect();
  if (!dialect) return false;
  return llvm::isa<mlir::arith::ArithDialect, mlir::math::MathDialect>(dialect) &&
         mlir::isMemoryEffectFree(&op);
}

}  // namespace

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/TileOps.cpp.inc"
      >();
  registerLaunchAttributes();
}

//===----------------------------------------------------------------------===//
// MapOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult MapOp::verify() {
  if (getOutputs().empty()) return emitOpError() << "expected at least one output";
  // Every output has the shape of the first; memref inputs broadcast to it.
  auto reference = llvm::cast<mlir::MemRefType>(getOutputs().front().getType());
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    auto type = llvm::dyn_cast<mlir::MemRefType>(input.getType());
    if (!type) continue;  // Scalars are broadcast.
    if (mlir::failed(verifyBroadcast(*this, "input #" + std::to_string(index), type.getShape(),
                                     typeToString(type), "output #0", reference.getShape(),
                                     typeToString(reference)))) {
      return mlir::failure();
    }
  }
  for (auto [index, output] : llvm::enumerate(getOutputs().drop_front())) {
    auto type = llvm::cast<mlir::MemRefType>(output.getType());
    if (mlir::failed(verifySameShape(*this, "output #" + std::to_string(index + 1), type,
                                     "output #0", reference))) {
      return mlir::failure();
    }
  }
  return mlir::success();
}

mlir::LogicalResult MapOp::verifyRegions() {
  mlir::Block& body = getBody().front();
  if (body.getNumArguments() != getInputs().size()) {
    return emitOpError() << "expected the body to take " << getInputs().size()
                         << " argument(s), one per input, found " << body.getNumArguments();
  }
  for (auto [index, pair] : llvm::enumerate(llvm::zip(getInputs(), body.getArguments()))) {
    auto [input, argument] = pair;
    mlir::Type expected = mlir::getElementTypeOrSelf(input.getType());
    if (argument.getType() != expected) {
      return emitOpError() << "expected body argument #" << index << " to have type " << expected
                           << " (the element type of input #" << index << "), found "
                           << argument.getType();
    }
  }
  auto yield = body.empty() ? nullptr : llvm::dyn_cast<YieldOp>(body.back());
  if (!yield) return emitOpError() << "expected the body to end with 'tile.yield'";
  for (mlir::Operation& op : body.without_terminator()) {
    if (!isAllowedInMapBody(op)) {
      return op.emitOpError() << "is not allowed in a 'tile.map' body; expected pure "
                                 "operations of the arith or math dialect, or "
                                 "'tessera_nvidia.inline_ptx'";
    }
  }
  if (yield.getValues().size() != getOutputs().size()) {
    return yield.emitOpError() << "expected " << getOutputs().size()
                               << " value(s), one per output of the enclosing 'tile.map', "
                                  "found "
                               << yield.getValues().size();
  }
  for (auto [index, pair] : llvm::enumerate(llvm::zip(getOutputs(), yield.getValues()))) {
    auto [output, value] = pair;
    mlir::Type expected = mlir::getElementTypeOrSelf(output.getType());
    if (value.getType() != expected) {
      return yield.emitOpError() << "expected value #" << index << " to have type " << expected
                                 << " (the element type of output #" << index << "), found "
                                 << value.getType();
    }
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult ReduceOp::verify() {
  auto inputType = llvm::cast<mlir::MemRefType>(getInput().getType());
  auto outputType = llvm::cast<mlir::MemRefType>(getOutput().getType());
  const int64_t rank = inputType.getRank();
  const int64_t axis = getAxis();
  if (axis < 0 || axis >= rank) {
    return emitOpError() << "expected axis in [0, " << rank << ") for an input of rank " << rank
                         << ", found " << axis;
  }
  mlir::Type outputElement = outputType.getElementType();
  if (isArgReduction() && !outputElement.isSignlessInteger(32) &&
      !outputElement.isSignlessInteger(64)) {
    return emitOpError() << "expected an i32 or i64 output for '" << stringifyReduceKind(getKind())
                         << "' (it writes indices), found " << outputElement;
  }
  if (!isArgReduction() && !llvm::isa<mlir::FloatType>(outputElement)) {
    return emitOpError() << "expected a float output for '" << stringifyReduceKind(getKind())
                         << "', found " << outputElement << " (only argmax and argmin write "
                         << "indices)";
  }
  const bool keepdims = getKeepdims();
  const int64_t expectedRank = keepdims ? rank : rank - 1;
  if (outputType.getRank() != expectedRank) {
    return emitOpError() << "expected output rank " << expectedRank << " (input rank " << rank
                         << (keepdims ? " with keepdims" : " without axis ")
                         << (keepdims ? std::string() : std::to_string(axis)) << "), found "
                         << outputType.getRank();
  }
  for (int64_t in = 0, out = 0; in < rank; ++in) {
    if (in == axis) {
      if (keepdims) {
        int64_t size = outputType.getDimSize(out++);
        if (!mlir::ShapedType::isDynamic(size) && size != 1) {
          return emitOpError() << "expected output dimension " << axis
                               << " to be 1 (the reduced axis with keepdims), found " << size;
        }
      }
      continue;
    }
    int64_t size = outputType.getDimSize(out);
    if (!dimsCompatible(size, inputType.getDimSize(in))) {
      return emitOpError() << "expected output dimension " << out << " to be "
                           << dimToString(inputType.getDimSize(in)) << " (input dimension " << in
                           << "), found " << size;
    }
    ++out;
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult MatmulOp::verify() {
  auto a = llvm::cast<mlir::MemRefType>(getLhs().getType());
  auto b = llvm::cast<mlir::MemRefType>(getRhs().getType());
  auto c = llvm::cast<mlir::MemRefType>(getOutput().getType());
  for (auto [name, type] : {std::pair{"A", a}, std::pair{"B", b}, std::pair{"C", c}}) {
    if (type.getRank() < 2) {
      return emitOpError() << "expected " << name << " (" << type
                           << ") to have rank 2 or more: [batch..., rows, columns]";
    }
  }
  // C is written while A and B are still read (other tiles, other threads), as in BLAS.
  for (auto [name, input] : {std::pair{"A", getLhs()}, std::pair{"B", getRhs()}}) {
    if (getOutput() == input) {
      return emitOpError() << "expected C to be a buffer of its own: it is " << name
                           << " too (a matmul is not computed in place)";
    }
  }
  if (a.getElementType() != b.getElementType()) {
    return emitOpError() << "expected A and B to have the same element type, found "
                         << a.getElementType() << " and " << b.getElementType();
  }
  // What the operand type fixes: the accumulator, C's type, the epilogue.
  const mlir::Type operand = a.getElementType(), result = c.getElementType();
  const bool integer = operand.isInteger(8);
  const bool wide = operand.isF64();
  const bool fp8 = llvm::isa<mlir::Float8E4M3FNType, mlir::Float8E5M2Type>(operand);
  if (integer != result.isInteger(32)) {
    return emitOpError() << "expected C to have element type i32 exactly when A and B are i8 "
                            "(i32 accumulation), found "
                         << operand << " operands and a " << result << " C";
  }
  if (wide != result.isF64()) {
    return emitOpError() << "expected C to have element type f64 exactly when A and B are f64 "
                            "(f64 accumulation), found "
                         << operand << " operands and a " << result << " C";
  }
  if (integer && hasFusedEpilogue()) {
    return emitOpError() << "an i8 matmul writes its i32 sums as they are: it takes no bias, "
                            "residual or activation";
  }
  if ((integer || wide || fp8) && getNumericPolicy()) {
    return emitOpError() << "a numeric policy applies to f16, bf16 and f32 operands; " << operand
                         << " operands accumulate in "
                         << (integer ? "i32"
                             : wide  ? "f64"
                                     : "f32")
                         << " (drop `policy(...)`)";
  }
  const int64_t rankA = a.getRank(), rankB = b.getRank(), rankC = c.getRank();
  if (rankC != std::max(rankA, rankB)) {
    return emitOpError() << "expected C to have rank " << std::max(rankA, rankB)
                         << " (the larger of A's and B's), found " << rankC;
  }
  // Batch dimensions of A and B broadcast to C's.
  auto batch = [](mlir::MemRefType type) { return type.getShape().drop_back(2); };
  std::string cText = typeToString(c);
  if (mlir::failed(verifyBroadcast(*this, "the batch of A", batch(a), typeToString(a),
                                   "the batch of C", batch(c), cText)) ||
      mlir::failed(verifyBroadcast(*this, "the batch of B", batch(b), typeToString(b),
                                   "the batch of C", batch(c), cText))) {
    return mlir::failure();
  }
  const int64_t m = a.getDimSize(rankA - (getTransposeA() ? 1 : 2));
  const int64_t kA = a.getDimSize(rankA - (getTransposeA() ? 2 : 1));
  const int64_t kB = b.getDimSize(rankB - (getTransposeB() ? 1 : 2));
  const int64_t n = b.getDimSize(rankB - (getTransposeB() ? 2 : 1));
  if (!dimsCompatible(kA, kB)) {
    return emitOpError() << "expected K of A (" << kA << ") to equal K of B (" << kB << ")";
  }
  if (!dimsCompatible(c.getDimSize(rankC - 2), m)) {
    return emitOpError() << "expected M of C (" << c.getDimSize(rankC - 2) << ") to equal M of A ("
                         << m << ")";
  }
  if (!dimsCompatible(c.getDimSize(rankC - 1), n)) {
    return emitOpError() << "expected N of C (" << c.getDimSize(rankC - 1) << ") to equal N of B ("
                         << n << ")";
  }
  if (mlir::Value bias = getBias()) {
    auto biasType = llvm::cast<mlir::MemRefType>(bias.getType());
    if (!dimsCompatible(biasType.getDimSize(0), n)) {
      return emitOpError() << "expected the bias length (" << biasType.getDimSize(0)
                           << ") to equal N (" << n << ")";
    }
    if (biasType.getElementType() != c.getElementType() && !biasType.getElementType().isF32()) {
      return emitOpError() << "expected the bias element type (" << biasType.getElementType()
                           << ") to be f32 or the element type of C (" << c.getElementType() << ")";
    }
  }
  if (mlir::Value residual = getResidual()) {
    auto residualType = llvm::cast<mlir::MemRefType>(residual.getType());
    if (residualType.getRank() != rankC) {
      return emitOpError() << "expected the residual (" << residualType << ") to have rank "
                           << rankC << " like C (" << c << ")";
    }
    for (int64_t d = 0; d < rankC; ++d) {
      if (!dimsCompatible(residualType.getDimSize(d), c.getDimSize(d))) {
        return emitOpError() << "expected dimension " << d << " of the residual (" << residualType
                             << ") to be " << dimToString(c.getDimSize(d)) << " like C (" << c
                             << ")";
      }
    }
    if (residualType.getElementType() != c.getElementType() &&
        !residualType.getElementType().isF32()) {
      return emitOpError() << "expected the residual element type ("
                           << residualType.getElementType()
                           << ") to be f32 or the element type of C (" << c.getElementType() << ")";
    }
  }
  switch (getNumericPolicyOrDefault()) {
    case NumericPolicy::f32:
    case NumericPolicy::fma:
      break;
    case NumericPolicy::tf32:
      if (!a.getElementType().isF32()) {
        return emitOpError() << "numeric policy 'tf32' requires f32 inputs, found "
                             << a.getElementType();
      }
      break;
    case NumericPolicy::f16:
      if (!a.getElementType().isF16()) {
        return emitOpError() << "numeric policy 'f16' requires f16 inputs, found "
                             << a.getElementType();
      }
      break;
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult SoftmaxOp::verify() {
  auto input = llvm::cast<mlir::MemRefType>(getInput().getType());
  auto output = llvm::cast<mlir::MemRefType>(getOutput().getType());
  if (input.getElementType() != output.getElementType()) {
    return emitOpError() << "expected the output element type (" << output.getElementType()
                         << ") to equal the input element type (" << input.getElementType() << ")";
  }
  return verifySameShape(*this, "the output", output, "the input", input);
}

//===----------------------------------------------------------------------===//
// NormOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult NormOp::verify() {
  auto input = llvm::cast<mlir::MemRefType>(getInput().getType());
  if (mlir::failed(verifySameShape(*this, "the output",
                                   llvm::cast<mlir::MemRefType>(getOutput().getType()), "the input",
                                   input))) {
    return mlir::failure();
  }
  if (mlir::Value residual = getResidual()) {
    if (mlir::failed(verifySameShape(*this, "the residual",
                                     llvm::cast<mlir::MemRefType>(residual.getType()), "the input",
                                     input))) {
      return mlir::failure();
    }
  }
  if (mlir::Value sum = getResidualOut()) {
    if (!getResidual()) {
      return emitOpError() << "expected a residual input with 'residual_out' (it receives "
                              "input + residual)";
    }
    if (mlir::failed(verifySameShape(*this, "residual_out",
                                     llvm::cast<mlir::MemRefType>(sum.getType()), "the input",
                                     input))) {
      return mlir::failure();
    }
  }
  const int64_t length = input.getDimSize(input.getRank() - 1);
  for (auto [name, vector] : {std::pair{"weight", getWeight()}, std::pair{"bias", getBias()}}) {
    if (!vector) continue;
    const int64_t size = dimOf(vector, 0);
    if (!dimsCompatible(size, length)) {
      return emitOpError() << "expected the " << name << " length (" << size
                           << ") to equal the last dimension of the input (" << length << ")";
    }
  }
  const float eps = getEpsOrDefault();
  if (!(eps >= 0.0f) || eps == std::numeric_limits<float>::infinity()) {
    return emitOpError() << "expected eps to be finite and non-negative, found "
                         << formatNumber(eps);
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

namespace {

/// One size rule of the attention ops: dimension `dim` of `name` equals `referenceDim` of
/// `reference` (`what`).
struct AttentionRule {
  const char* name;
  mlir::Value value;
  int64_t dim;
  mlir::Value reference;
  int64_t referenceDim;
  const char* what;
};

mlir::LogicalResult verifyAttentionRules(mlir::Operation* op, llvm::ArrayRef<AttentionRule> rules) {
  for (const AttentionRule& rule : rules) {
    if (mlir::failed(verifyDim(op, rule.name, rule.value, rule.dim,
                               dimOf(rule.reference, rule.referenceDim), rule.what))) {
      return mlir::failure();
    }
  }
  return mlir::success();
}

/// What tile.attention and tile.attention_backward share: Q [B, H, Sq, D], K [B, Hkv, Sk, D],
/// V [B, Hkv, Sk, Dv], grouped heads, key lengths, the bias, scale, window, alignment, soft cap
/// and dropout.
template <typename AttentionLikeOp>
mlir::LogicalResult verifyAttentionSettings(AttentionLikeOp op) {
  mlir::Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  const AttentionRule rules[] = {
      {"K", k, 0, q, 0, "B, the batch of Q"}, {"K", k, 3, q, 3, "D, the head size of Q"},
      {"V", v, 0, q, 0, "B, the batch of Q"}, {"V", v, 1, k, 1, "Hkv, the heads of K"},
      {"V", v, 2, k, 2, "Sk, the keys of K"},
  };
  if (mlir::failed(verifyAttentionRules(op, rules))) return mlir::failure();
  const int64_t heads = dimOf(q, 1), kvHeads = dimOf(k, 1);
  if (!mlir::ShapedType::isDynamic(heads) && !mlir::ShapedType::isDynamic(kvHeads) &&
      (kvHeads == 0 ? heads != 0 : heads % kvHeads != 0)) {
    return op.emitOpError() << "expected the heads of Q (" << heads
                            << ") to be a multiple of the heads of K and V (" << kvHeads
                            << ") (grouped-query attention)";
  }
  if (mlir::Value lengths = op.getKeyLengths()) {
    if (mlir::failed(verifyDim(op, "key_lengths", lengths, 0, dimOf(q, 0), "B, the batch of Q"))) {
      return mlir::failure();
    }
  }
  if (op.getScale() && !std::isfinite(op.getScale()->convertToFloat())) {
    return op.emitOpError() << "expected a finite scale, found "
                            << formatNumber(op.getScale()->convertToDouble());
  }
  if (mlir::Value bias = op.getBias()) {
    // [B|1, H|1, Sq, Sk]: broadcast over the batch and the heads.
    const std::pair<int64_t, const char*> broadcast[] = {{dimOf(q, 0), "B, the batch of Q"},
                                                         {dimOf(q, 1), "H, the heads of Q"}};
    for (int64_t d = 0; d < 2; ++d) {
      const int64_t size = dimOf(bias, d);
      if (size != 1 && !dimsCompatible(size, broadcast[d].first)) {
        return op.emitOpError() << "expected dimension " << d << " of the bias (" << bias.getType()
                                << ") to be 1 or " << broadcast[d].first << " ("
                                << broadcast[d].second << "), found " << size;
      }
    }
    if (mlir::failed(verifyDim(op, "the bias", bias, 2, dimOf(q, 2), "Sq, the queries of Q")) ||
        mlir::failed(verifyDim(op, "the bias", bias, 3, dimOf(k, 2), "Sk, the keys of K"))) {
      return mlir::failure();
    }
  }
  if (op.getWindowLeft().has_value() != op.getWindowRight().has_value()) {
    return op.emitOpError() << "expected both sides of the window, window(left, right)";
  }
  for (auto [side, value] :
       {std::pair{"left", op.getWindowLeft()}, std::pair{"right", op.getWindowRight()}}) {
    // I64Attr accessors return the bits as uint64_t.
    if (value && static_cast<int64_t>(*value) < -1) {
      return op.emitOpError() << "expected the window's " << side
                              << " extent to be -1 (unbounded) or at least 0, found "
                              << static_cast<int64_t>(*value);
    }
  }
  if (op.getAlignment() && !op.getCausal() && !op.getWindowLeft()) {
    return op.emitOpError() << "aligned(...) places the causal diagonal and the window; it "
                               "needs `causal` or `window(left, right)`";
  }
  if (op.getSoftcap()) {
    const double cap = op.getSoftcap()->convertToDouble();
    if (!std::isfinite(cap) || cap < 0) {
      return op.emitOpError() << "expected softcap(c) with a finite c >= 0 (0: no capping), "
                                 "found "
                              << formatNumber(cap);
    }
  }
  if (op.getDropout().has_value() != op.getDropoutSeed().has_value()) {
    return op.emitOpError() << "expected dropout(p, seed) with both its probability and its seed";
  }
  if (op.getDropout()) {
    const double p = op.getDropout()->convertToDouble();
    if (!(p >= 0.0 && p < 1.0)) {
      return op.emitOpError() << "expected a dropout probability in [0, 1), found "
                              << formatNumber(p);
    }
  }
  if (op.getDropoutRule() && !op.getDropout()) {
    return op.emitOpError() << "dropout_rule(...) needs dropout(p, seed)";
  }
  return mlir::success();
}

}  // namespace

mlir::LogicalResult AttentionOp::verify() {
  mlir::Value q = getQuery(), v = getValue(), o = getOutput();
  // O [B, H, Sq, Dv], lse [B, H, Sq].
  const AttentionRule rules[] = {
      {"O", o, 0, q, 0, "B, the batch of Q"},
      {"O", o, 1, q, 1, "H, the heads of Q"},
      {"O", o, 2, q, 2, "Sq, the queries of Q"},
      {"O", o, 3, v, 3, "Dv, the head size of V"},
  };
  if (mlir::failed(verifyAttentionSettings(*this)) ||
      mlir::failed(verifyAttentionRules(*this, rules))) {
    return mlir::failure();
  }
  if (mlir::Value lse = getLse()) {
    const AttentionRule lseRules[] = {
        {"lse", lse, 0, q, 0, "B, the batch of Q"},
        {"lse", lse, 1, q, 1, "H, the heads of Q"},
        {"lse", lse, 2, q, 2, "Sq, the queries of Q"},
    };
    return verifyAttentionRules(*this, lseRules);
  }
  return mlir::success();
}

mlir::LogicalResult AttentionBackwardOp::verify() {
  mlir::Value q = getQuery(), k = getKey(), v = getValue(), o = getOutput();
  mlir::Value dO = getGradOutput(), lse = getLse();
  // O and dO [B, H, Sq, Dv], lse [B, H, Sq], dQ like Q, dK like K, dV like V.
  const AttentionRule rules[] = {
      {"O", o, 0, q, 0, "B, the batch of Q"},
      {"O", o, 1, q, 1, "H, the heads of Q"},
      {"O", o, 2, q, 2, "Sq, the queries of Q"},
      {"O", o, 3, v, 3, "Dv, the head size of V"},
      {"dO", dO, 0, o, 0, "B, like O"},
      {"dO", dO, 1, o, 1, "H, like O"},
      {"dO", dO, 2, o, 2, "Sq, like O"},
      {"dO", dO, 3, o, 3, "Dv, like O"},
      {"lse", lse, 0, q, 0, "B, the batch of Q"},
      {"lse", lse, 1, q, 1, "H, the heads of Q"},
      {"lse", lse, 2, q, 2, "Sq, the queries of Q"},
  };
  if (mlir::failed(verifyAttentionSettings(*this)) ||
      mlir::failed(verifyAttentionRules(*this, rules))) {
    return mlir::failure();
  }
  // The gradients are written while the inputs are still read (other rows, other threads).
  const mlir::Value written[] = {getGradQuery(), getGradKey(), getGradValue()};
  for (auto [i, gradient] : llvm::enumerate(written)) {
    int uses = 0;
    for (mlir::Value operand : getOperation()->getOperands()) uses += operand == gradient;
    if (uses > 1) {
      return emitOpError() << "expected d" << "QKV"[i]
                           << " to be a buffer of its own: it is passed as another operand too "
                              "(the gradients must not alias the inputs or each other)";
    }
  }
  struct Gradient {
    const char* name;
    mlir::Value gradient;
    const char* of;
    mlir::Value value;
  };
  const Gradient gradients[] = {
      {"dQ", getGradQuery(), "Q", q}, {"dK", getGradKey(), "K", k}, {"dV", getGradValue(), "V", v}};
  for (const Gradient& g : gradients) {
    if (mlir::failed(verifySameShape(*this, g.name,
                                     llvm::cast<mlir::MemRefType>(g.gradient.getType()), g.of,
                                     llvm::cast<mlir::MemRefType>(g.value.getType())))) {
      return mlir::failure();
    }
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// RopeOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult RopeOp::verify() {
  auto input = llvm::cast<mlir::MemRefType>(getInput().getType());
  if (input.getRank() < 2) {
    return emitOpError() << "expected the input (" << input
                         << ") to have rank 2 or more: [..., positions, features]";
  }
  if (mlir::failed(verifySameShape(*this, "the output",
                                   llvm::cast<mlir::MemRefType>(getOutput().getType()), "the input",
                                   input))) {
    return mlir::failure();
  }
  if (mlir::failed(
          verifySameShape(*this, "the sin table", llvm::cast<mlir::MemRefType>(getSin().getType()),
                          "the cos table", llvm::cast<mlir::MemRefType>(getCos().getType())))) {
    return mlir::failure();
  }
  const int64_t rank = input.getRank();
  const int64_t features = input.getDimSize(rank - 1);
  if (!mlir::ShapedType::isDynamic(features) && features % 2 != 0) {
    return emitOpError() << "expected an even last dimension (pairs of features), found "
                         << features;
  }
  if (mlir::failed(verifyDim(*this, "the cos table", getCos(), 0, input.getDimSize(rank - 2),
                             "the positions of the input"))) {
    return mlir::failure();
  }
  const int64_t half = mlir::ShapedType::isDynamic(features) ? features : features / 2;
  return verifyDim(*this, "the cos table", getCos(), 1, half,
                   "half the last dimension of the input");
}

}  // namespace tessera::tile
