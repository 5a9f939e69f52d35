#include "jit/admission/memref_accesses.h"

#include "dialect/NVIDIAOps.h"
#include "dialect/TileOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tessera::jit {
namespace {

/// Whether `op` reads or writes operand `value` at the same index as each output element, every
/// read of an element before its write (on the host, tests/capi/argument_overlap_test.cc checks
/// that each op computes in place what it computes out of place; on the GPU, one thread or block
/// owns each element, pair or row).
bool IsElementwise(mlir::Operation* op, mlir::Value value) {
  if (llvm::isa<tile::MapOp, tile::SoftmaxOp, mlir::memref::CopyOp>(op)) return true;
  if (auto rope = llvm::dyn_cast<tile::RopeOp>(op)) {
    // One thread rotates each pair of features: it reads both before it writes either.
    return value == rope.getInput() || value == rope.getOutput();
  }
  if (auto norm = llvm::dyn_cast<tile::NormOp>(op)) {
    // A row's statistics are computed before any element of it is written; then each element
    // reads input and residual and writes input + residual and the output (TileSemantics.cpp).
    return value == norm.getInput() || value == norm.getResidual() || value == norm.getOutput() ||
           value == norm.getResidualOut();
  }
  if (auto matmul = llvm::dyn_cast<tile::MatmulOp>(op)) {
    // The epilogue reads residual[i, j] and then writes C[i, j]; A and B are read throughout.
    return value == matmul.getOutput() || value == matmul.getResidual();
  }
  return false;
}

}  // namespace

std::optional<std::vector<MemRefAccess>> MemRefAccesses(mlir::Operation* op) {
  if (llvm::isa<nvidia::KernelCallOp, mlir::gpu::LaunchFuncOp>(op)) return std::nullopt;
  std::vector<MemRefAccess> accesses;
  auto interface = llvm::dyn_cast<mlir::MemoryEffectOpInterface>(op);
  if (!interface) return accesses;
  llvm::SmallVector<mlir::MemoryEffects::EffectInstance> effects;
  interface.getEffects(effects);
  for (mlir::OpOperand& operand : op->getOpOperands()) {
    if (!llvm::isa<mlir::MemRefType>(operand.get().getType())) continue;
    // Per operand, not per value: a memref passed twice (A and B alike) has both roles.
    bool read = false, written = false;
    for (const mlir::MemoryEffects::EffectInstance& effect : effects) {
      if (effect.getEffectValue<mlir::OpOperand*>() != &operand) continue;
      read |= llvm::isa<mlir::MemoryEffects::Read>(effect.getEffect());
      written |= llvm::isa<mlir::MemoryEffects::Write>(effect.getEffect());
    }
    if (!read && !written) continue;
    accesses.push_back(MemRefAccess{operand.get(), written, IsElementwise(op, operand.get())});
  }
  return accesses;
}

}  // namespace tessera::jit
