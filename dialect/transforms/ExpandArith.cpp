// tessera-expand-arith: upstream arith-expand's bf16 conversion and integer division
// expansions, without its compare-and-select expansion of maximumf/minimumf (which loses the
// order of -0.0 and +0.0; LLVM's llvm.maximum/llvm.minimum keep it).
#include "dialect/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera {

#define GEN_PASS_DEF_EXPANDARITH
#include "dialect/Passes.h.inc"

namespace {

class ExpandArith : public impl::ExpandArithBase<ExpandArith> {
 public:
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    mlir::arith::populateExpandBFloat16Patterns(patterns);
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      signalPassFailure();
    }
  }
};

}  // namespace
}  // namespace tessera
