// The original Tessera project's launch-level Tile ops: their verifiers, which follow the
// original's rules in its order and with its message fragments (docs/original-ir.md). The
// attributes are in TileLaunchAttrs.cpp.
// What the original's lowering refuses beyond these is refused by the import at compile time
// (dialect/transforms/ImportLaunchKernels.cpp).
#include <cstdint>

#include "dialect/TileOps.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace tessera::tile {
namespace {

using mlir::failure;
using mlir::LogicalResult;
using mlir::success;
using mlir::Value;

bool IsPointer(Value value) { return llvm::isa<mlir::LLVM::LLVMPointerType>(value.getType()); }
bool IsI64(Value value) { return value.getType().isInteger(64); }

mlir::StringAttr StringAttrNamed(mlir::Operation* op, llvm::StringRef name) {
  return op->getAttrOfType<mlir::StringAttr>(name);
}

bool IsOneOf(mlir::StringAttr attr, std::initializer_list<llvm::StringRef> values) {
  if (!attr) return false;
  for (llvm::StringRef value : values) {
    if (attr.getValue() == value) return true;
  }
  return false;
}

/// The first `pointers` operands are !llvm.ptr (else `pointer_message`), the rest i64 (else
/// `dim_message`), checked in that order.
LogicalResult VerifyPointersThenDims(mlir::Operation* op, unsigned pointers,
                                     llvm::StringRef pointer_message, llvm::StringRef dim_message) {
  for (Value pointer : op->getOperands().take_front(pointers)) {
    if (!IsPointer(pointer)) return op->emitOpError(pointer_message);
  }
  for (Value dim : op->getOperands().drop_front(pointers)) {
    if (!IsI64(dim)) return op->emitOpError(dim_message);
  }
  return success();
}

/// The storage and accumulation rules the original's reduce, softmax and attention share.
LogicalResult VerifyStorageAndAccum(mlir::Operation* op, llvm::StringRef storage_message) {
  if (!IsOneOf(StringAttrNamed(op, "storage"), {"f16", "bf16", "f32"})) {
    return op->emitOpError(storage_message);
  }
  if (!IsOneOf(StringAttrNamed(op, "accum"), {"f32"})) {
    return op->emitOpError("requires accum=\"f32\"");
  }
  return success();
}

/// The attention options the forward and backward ops share, checked in the original's order.
LogicalResult VerifyAttentionOptions(mlir::Operation* op) {
  auto scale = op->getAttrOfType<mlir::FloatAttr>("scale");
  auto causal = op->getAttrOfType<mlir::BoolAttr>("causal");
  auto window_left = op->getAttrOfType<mlir::IntegerAttr>("window_left");
  auto window_right = op->getAttrOfType<mlir::IntegerAttr>("window_right");
  auto softcap = op->getAttrOfType<mlir::FloatAttr>("softcap");
  auto dropout = op->getAttrOfType<mlir::FloatAttr>("dropout_p");
  if (!scale || !scale.getValue().isFinite() || scale.getValueAsDouble() <= 0.0) {
    return op->emitOpError("requires a finite positive f32 scale");
  }
  if (!causal) return op->emitOpError("requires an explicit causal boolean");
  if (!window_left || !window_right || window_left.getInt() < -1 || window_right.getInt() < -1) {
    return op->emitOpError("requires window_left/window_right >= -1");
  }
  if (!softcap || !softcap.getValue().isFinite() || softcap.getValueAsDouble() < 0.0) {
    return op->emitOpError("requires finite softcap >= 0");
  }
  if (!dropout || !dropout.getValue().isFinite() || dropout.getValueAsDouble() < 0.0 ||
      dropout.getValueAsDouble() >= 1.0) {
    return op->emitOpError("requires finite dropout_p in [0, 1)");
  }
  if (!op->getAttrOfType<mlir::IntegerAttr>("dropout_seed")) {
    return op->emitOpError("requires an explicit dropout_seed");
  }
  return success();
}

/// The bias flag and the row_lse checkpoint of the attention ops; sets the optional operands.
LogicalResult VerifyAttentionOperands(mlir::Operation* op, bool& has_bias, bool& has_saved_lse) {
  auto bias = op->getAttrOfType<mlir::BoolAttr>("bias");
  auto checkpoint = StringAttrNamed(op, "lse_checkpoint");
  has_bias = bias && bias.getValue();
  has_saved_lse = checkpoint && checkpoint.getValue() == "saved";
  if (!bias) return op->emitOpError("requires an explicit bias boolean");
  if (checkpoint && !IsOneOf(checkpoint, {"recompute", "saved"})) {
    return op->emitOpError("requires lse_checkpoint=\"recompute\" or \"saved\"");
  }
  return success();
}

}  // namespace

bool MatmulKernelOp::isBlockScaled() {
  auto desc = (*this)->getAttrOfType<MmaDescAttr>("mma");
  return desc && (desc.getAType() == "nvfp4" || desc.getAType() == "fp4_e2m1" ||
                  desc.getAType() == "e2m3" || desc.getAType() == "e3m2");
}

bool MatmulKernelOp::hasResidual() {
  auto residual = (*this)->getAttrOfType<mlir::BoolAttr>("residual");
  return residual && residual.getValue();
}

LogicalResult MatmulKernelOp::verify() {
  auto desc = (*this)->getAttrOfType<MmaDescAttr>("mma");
  auto epilogue = (*this)->getAttrOfType<EpilogueAttr>("epilogue");
  if (!desc) return emitOpError("requires a #tile.mma_desc mma attribute");
  if (!epilogue) return emitOpError("requires a #tile.epilogue epilogue attribute");
  const bool block_scaled = isBlockScaled();
  const bool residual = hasResidual();
  if (block_scaled && (epilogue.getBias() || residual)) {
    return emitOpError("block-scaled launch-level matmul does not support fused bias/residual yet");
  }
  if (residual &&
      !IsOneOf(StringAttrNamed(*this, "epilogue_order"), {"matmul_bias_activation_residual"})) {
    return emitOpError("residual requires epilogue_order=matmul_bias_activation_residual");
  }
  const unsigned expected =
      block_scaled ? 8 : 6 + unsigned(epilogue.getBias()) + unsigned(residual);
  if (getInputs().size() != expected) {
    return emitOpError(block_scaled
                           ? "expects packed A, packed B, scale A, scale B, D, M, N, K operands"
                           : "expects A, B, optional bias, optional residual, D, M, N, K operands");
  }
  const unsigned dim_start = expected - 3;
  for (Value dim : getInputs().drop_front(dim_start)) {
    if (!IsI64(dim)) return emitOpError("M, N, and K must be i64");
  }
  for (Value pointer : getInputs().take_front(dim_start)) {
    if (!IsPointer(pointer)) {
      return emitOpError("matrix, scale, optional bias, and D operands must be !llvm.ptr");
    }
  }
  int64_t warps = 1;
  if (auto attr = (*this)->getAttrOfType<mlir::IntegerAttr>("warps")) warps = attr.getInt();
  if (warps != 1 && warps != 4) return emitOpError("warps must be 1 or 4");
  llvm::StringRef staging = "global";
  if (auto attr = StringAttrNamed(*this, "staging")) staging = attr.getValue();
  if (staging != "global" && staging != "shared") {
    return emitOpError("staging must be global or shared");
  }
  if (staging == "shared" && warps != 4) {
    return emitOpError("shared staging currently requires four warps");
  }
  auto canonical = (*this)->getAttrOfType<mlir::BoolAttr>("tessera.canonical_k_loop");
  if (!canonical || !canonical.getValue()) return success();
  const auto tile_size = [&](llvm::StringRef name) {
    return (*this)->getAttrOfType<mlir::IntegerAttr>(name);
  };
  auto tile_m = tile_size("tessera.tile_m");
  auto tile_n = tile_size("tessera.tile_n");
  auto tile_k = tile_size("tessera.tile_k");
  if (!tile_m || !tile_n || !tile_k) {
    return emitOpError(
        "canonical K-loop requires tessera.tile_m, tessera.tile_n, and tessera.tile_k");
  }
  if (tile_m.getInt() <= 0 || tile_n.getInt() <= 0 || tile_k.getInt() <= 0) {
    return emitOpError("canonical K-loop tile sizes must be positive");
  }
  if (tile_m.getInt() != desc.getM() || tile_n.getInt() != desc.getN() ||
      tile_k.getInt() != desc.getK()) {
    return emitOpError("canonical K-loop tile sizes must match the physical MMA descriptor");
  }
  auto macro_m = tile_size("tessera.macro_tile_m");
  auto macro_n = tile_size("tessera.macro_tile_n");
  if (bool(macro_m) != bool(macro_n)) {
    return emitOpError("canonical K-loop macro_tile_m and macro_tile_n must appear together");
  }
  if (macro_m && (macro_m.getInt() < desc.getM() || macro_n.getInt() < desc.getN() ||
                  macro_m.getInt() % desc.getM() != 0 || macro_n.getInt() % desc.getN() != 0)) {
    return emitOpError(
        "canonical K-loop macro tile must be a positive multiple of the physical MMA tile");
  }
  const llvm::StringRef acc = desc.getAccType();
  if (acc != "f32" && acc != "s32" && acc != "int32" && acc != "f64") {
    return emitOpError("canonical K-loop requires FP32, INT32, or FP64 accumulation");
  }
  return success();
}

LogicalResult SoftmaxKernelOp::verify() {
  if (getInputs().size() != 4) {
    return emitOpError("expects source, destination, rows, and columns operands");
  }
  if (!IsPointer(getInputs()[0]) || !IsPointer(getInputs()[1])) {
    return emitOpError("source and destination operands must be !llvm.ptr");
  }
  if (!IsI64(getInputs()[2]) || !IsI64(getInputs()[3])) {
    return emitOpError("rows and columns must be i64");
  }
  if (failed(VerifyStorageAndAccum(
          *this, "requires storage=\"f16\", storage=\"bf16\", or storage=\"f32\""))) {
    return failure();
  }
  auto axis = (*this)->getAttrOfType<mlir::IntegerAttr>("axis");
  if (!axis || axis.getInt() != -1) return emitOpError("currently requires axis=-1");
  auto exp_mode = StringAttrNamed(*this, "exp_mode");
  if (!exp_mode || exp_mode.getValue().empty()) {
    return emitOpError("requires an explicit exp_mode");
  }
  if (!(*this)->getAttrOfType<mlir::BoolAttr>("ftz")) {
    return emitOpError("requires an explicit ftz boolean");
  }
  return success();
}

LogicalResult ReduceKernelOp::verify() {
  if (getInputs().size() != 5) {
    return emitOpError("expects source, destination, outer, axis extent, and inner operands");
  }
  if (failed(VerifyPointersThenDims(*this, 2, "source and destination operands must be !llvm.ptr",
                                    "reduction dimensions must be i64"))) {
    return failure();
  }
  if (failed(VerifyStorageAndAccum(
          *this, "requires storage=\"f16\", storage=\"bf16\", or storage=\"f32\""))) {
    return failure();
  }
  if (!IsOneOf(StringAttrNamed(*this, "kind"), {"sum", "mean", "max", "min"})) {
    return emitOpError("requires kind in {sum, mean, max, min}");
  }
  auto axis = (*this)->getAttrOfType<mlir::IntegerAttr>("axis");
  if (!axis || axis.getInt() < 0) return emitOpError("requires a normalized nonnegative axis");
  if (!(*this)->getAttrOfType<mlir::BoolAttr>("keepdims")) {
    return emitOpError("requires an explicit keepdims boolean");
  }
  if (!IsOneOf(StringAttrNamed(*this, "schedule"), {"serial", "cooperative_128"})) {
    return emitOpError("requires schedule=serial|cooperative_128");
  }
  if (!IsOneOf(StringAttrNamed(*this, "nan_mode"), {"propagate"})) {
    return emitOpError("currently requires nan_mode=\"propagate\"");
  }
  return success();
}

LogicalResult NormKernelOp::verify() {
  if (getInputs().size() != 5) {
    return emitOpError("expects source, destination, rows, columns, and epsilon");
  }
  if (!IsPointer(getInputs()[0]) || !IsPointer(getInputs()[1]) || !IsI64(getInputs()[2]) ||
      !IsI64(getInputs()[3]) || !getInputs()[4].getType().isF32()) {
    return emitOpError("requires ptr, ptr, i64, i64, f32 operands");
  }
  if (!IsOneOf(StringAttrNamed(*this, "kind"), {"rmsnorm", "layernorm"})) {
    return emitOpError("requires kind=rmsnorm|layernorm");
  }
  if (!IsOneOf(StringAttrNamed(*this, "storage"), {"f16", "bf16", "f32"}) ||
      !IsOneOf(StringAttrNamed(*this, "accum"), {"f32"})) {
    return emitOpError("requires f16, bf16, or f32 storage and f32 accumulation");
  }
  auto axis = (*this)->getAttrOfType<mlir::IntegerAttr>("axis");
  auto affine = (*this)->getAttrOfType<mlir::BoolAttr>("affine");
  if (!axis || axis.getInt() != -1 || !affine || affine.getValue()) {
    return emitOpError("requires axis=-1 and affine=false");
  }
  return success();
}

LogicalResult AttentionKernelOp::verify() {
  bool has_bias = false;
  bool has_saved_lse = false;
  if (failed(VerifyAttentionOperands(*this, has_bias, has_saved_lse))) return failure();
  if (getInputs().size() != 11 + unsigned(has_bias) + unsigned(has_saved_lse)) {
    return emitOpError(
        "expects Q, K, V, optional bias, O, optional row_lse, B, Hq, Hkv, Sq, Sk, D, and Dv "
        "operands");
  }
  if (failed(VerifyPointersThenDims(
          *this, 4 + unsigned(has_bias) + unsigned(has_saved_lse),
          "Q, K, V, optional bias, O, and optional row_lse operands must be !llvm.ptr",
          "attention dimensions must be i64"))) {
    return failure();
  }
  if (failed(VerifyStorageAndAccum(
          *this, "requires storage=\"f16\", storage=\"bf16\", or storage=\"f32\""))) {
    return failure();
  }
  return VerifyAttentionOptions(*this);
}

LogicalResult AttentionBackwardKernelOp::verify() {
  bool has_bias = false;
  bool has_saved_lse = false;
  if (failed(VerifyAttentionOperands(*this, has_bias, has_saved_lse))) return failure();
  if (getInputs().size() != 14 + unsigned(has_bias) + unsigned(has_saved_lse)) {
    return emitOpError(
        "expects dO, Q, K, V, optional bias, optional row_lse, dQ, dK, dV, B, Hq, Hkv, Sq, Sk, "
        "D, and Dv operands");
  }
  if (failed(VerifyPointersThenDims(
          *this, 7 + unsigned(has_bias) + unsigned(has_saved_lse),
          "dO, Q, K, V, optional bias, optional row_lse, dQ, dK, and dV operands must be "
          "!llvm.ptr",
          "attention backward dimensions must be i64"))) {
    return failure();
  }
  if (failed(VerifyStorageAndAccum(*this,
                                   "deterministic reference route requires storage=\"f16\", "
                                   "storage=\"bf16\", or storage=\"f32\""))) {
    return failure();
  }
  if (failed(VerifyAttentionOptions(*this))) return failure();
  auto route = StringAttrNamed(*this, "route");
  auto deterministic = (*this)->getAttrOfType<mlir::BoolAttr>("deterministic");
  auto workspace = (*this)->getAttrOfType<mlir::IntegerAttr>("workspace_bytes");
  auto owner = StringAttrNamed(*this, "workspace_owner");
  if (!route) return emitOpError("requires an explicit backward route");
  if (!deterministic || !deterministic.getValue()) {
    return emitOpError("attention backward requires deterministic=true");
  }
  if (!workspace || !owner) return emitOpError("requires explicit workspace_bytes/workspace_owner");
  if (route.getValue() == "deterministic_direct") {
    if (workspace.getInt() != 0)
      return emitOpError("deterministic_direct requires workspace_bytes=0");
    if (owner.getValue() != "output_element") {
      return emitOpError("deterministic_direct requires workspace_owner=\"output_element\"");
    }
    return success();
  }
  if (route.getValue() != "deterministic_split_reduced") {
    return emitOpError("route must be \"deterministic_direct\" or \"deterministic_split_reduced\"");
  }
  if (workspace.getInt() <= 0 || owner.getValue() != "program_launch") {
    return emitOpError("deterministic_split_reduced requires positive launch-owned workspace");
  }
  auto split_count = (*this)->getAttrOfType<mlir::IntegerAttr>("split_count");
  auto reduction_order = (*this)->getAttrOfType<mlir::DenseI64ArrayAttr>("reduction_order");
  auto query_block = (*this)->getAttrOfType<mlir::IntegerAttr>("query_block");
  auto key_block = (*this)->getAttrOfType<mlir::IntegerAttr>("key_block");
  auto loop_order = (*this)->getAttrOfType<mlir::ArrayAttr>("loop_order");
  if (!split_count || split_count.getInt() < 2) {
    return emitOpError("split/reduced route requires split_count >= 2");
  }
  if (!reduction_order || reduction_order.size() != split_count.getInt()) {
    return emitOpError("split/reduced route requires one reduction_order entry per split");
  }
  for (auto [index, value] : llvm::enumerate(reduction_order.asArrayRef())) {
    if (value != static_cast<int64_t>(index)) {
      return emitOpError("split/reduced partials must reduce in ascending split order");
    }
  }
  if (!query_block || query_block.getInt() <= 0 || !key_block || key_block.getInt() <= 0) {
    return emitOpError("split/reduced route requires positive block sizes");
  }
  if (!loop_order || loop_order.size() != 5) {
    return emitOpError("split/reduced route requires five-level canonical loop_order");
  }
  return success();
}

}  // namespace tessera::tile
