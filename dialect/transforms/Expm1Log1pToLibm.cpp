// tessera-expm1-log1p-to-libm: the math.expm1 and math.log1p that no approximation replaced
// (f64 on the host) become libm calls. MathToLLVM would lower them to exp(x) − 1 and
// log(1 + x), which lose every bit near 0 (expm1(1e-20) gave 0, expm1(-0.0) gave +0.0).
// Upstream's MathToLibm patterns, applied to these two ops only: every other op is legal.
#include "dialect/Passes.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tessera {

#define GEN_PASS_DEF_EXPM1LOG1PTOLIBM
#include "dialect/Passes.h.inc"

namespace {

class Expm1Log1pToLibm : public impl::Expm1Log1pToLibmBase<Expm1Log1pToLibm> {
 public:
  void runOnOperation() override {
    mlir::MLIRContext* context = &getContext();
    mlir::ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal([](mlir::Operation*) { return true; });
    target.addIllegalOp<mlir::math::ExpM1Op, mlir::math::Log1pOp>();
    mlir::RewritePatternSet patterns(context);
    mlir::populateMathToLibmConversionPatterns(patterns);
    if (mlir::failed(mlir::applyPartialConversion(getOperation(), target, std::move(patterns)))) {
      signalPassFailure();
    }
  }
};

}  // namespace
}  // namespace tessera
