// tessera-attach-loop-annotations: loop annotations that scf-to-cf left as discardable
// attributes on latch branches become the branches' own, for the translation to LLVM IR.
#include "dialect/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tessera {

#define GEN_PASS_DEF_ATTACHLOOPANNOTATIONS
#include "dialect/Passes.h.inc"

namespace {

class AttachLoopAnnotations : public impl::AttachLoopAnnotationsBase<AttachLoopAnnotations> {
 public:
  void runOnOperation() override {
    getOperation()->walk([](mlir::Operation* op) {
      auto annotation = op->getAttrOfType<mlir::LLVM::LoopAnnotationAttr>(kLoopAnnotationAttr);
      if (!annotation) return;
      if (auto branch = llvm::dyn_cast<mlir::LLVM::BrOp>(op)) {
        branch.setLoopAnnotationAttr(annotation);
      } else if (auto conditional = llvm::dyn_cast<mlir::LLVM::CondBrOp>(op)) {
        conditional.setLoopAnnotationAttr(annotation);
      } else {
        return;  // still on an scf.for or cf branch: the conversions have not run yet
      }
      op->removeAttr(kLoopAnnotationAttr);
    });
  }
};

}  // namespace
}  // namespace tessera
