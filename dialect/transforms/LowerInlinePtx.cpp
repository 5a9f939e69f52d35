// tessera-lower-inline-ptx: tessera_nvidia.inline_ptx → llvm.inline_asm (docs/ir.md
// "inline_ptx"), in the device code the NVPTX backend prints verbatim into the kernel.
#include "dialect/NVIDIAOps.h"
#include "dialect/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace tessera {

#define GEN_PASS_DEF_LOWERINLINEPTX
#include "dialect/Passes.h.inc"

namespace {

class LowerInlinePtx : public impl::LowerInlinePtxBase<LowerInlinePtx> {
 public:
  using Base::Base;

  void runOnOperation() override {
    llvm::SmallVector<nvidia::InlinePtxOp> ops;
    getOperation()->walk([&](nvidia::InlinePtxOp op) { ops.push_back(op); });
    for (nvidia::InlinePtxOp op : ops) lower(op);
  }

 private:
  static void lower(nvidia::InlinePtxOp op) {
    mlir::OpBuilder b(op);
    mlir::MLIRContext* context = op.getContext();
    mlir::TypeRange results = op.getResults().getTypes();
    // LLVM inline asm returns nothing, one value, or a struct of several.
    mlir::Type result;
    if (results.size() == 1) result = results.front();
    if (results.size() > 1) {
      result = mlir::LLVM::LLVMStructType::getLiteral(context, llvm::to_vector(results));
    }
    auto asm_op = b.create<mlir::LLVM::InlineAsmOp>(
        op.getLoc(), result, op.getArgs(), op.getPtx(), op.getConstraints(), op.getHasSideEffects(),
        /*is_align_stack=*/false, mlir::LLVM::tailcallkind::TailCallKind::None,
        /*asm_dialect=*/mlir::LLVM::AsmDialectAttr(), /*operand_attrs=*/mlir::ArrayAttr());
    if (results.size() == 1) op.getResult(0).replaceAllUsesWith(asm_op.getRes());
    if (results.size() > 1) {
      for (auto [index, value] : llvm::enumerate(op.getResults())) {
        value.replaceAllUsesWith(b.create<mlir::LLVM::ExtractValueOp>(
            op.getLoc(), asm_op.getRes(), llvm::ArrayRef<int64_t>{static_cast<int64_t>(index)}));
      }
    }
    op.erase();
  }
};

}  // namespace
}  // namespace tessera
