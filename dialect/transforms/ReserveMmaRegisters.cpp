// tessera-reserve-mma-registers: `.minnctapersm 1` on the tensor-core kernels, so that ptxas
// keeps their 32 accumulators per thread in registers instead of capping them for occupancy.
#include "dialect/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace tessera {

#define GEN_PASS_DEF_RESERVEMMAREGISTERS
#include "dialect/Passes.h.inc"

namespace {

class ReserveMmaRegisters : public impl::ReserveMmaRegistersBase<ReserveMmaRegisters> {
 public:
  using Base::Base;

  void runOnOperation() override {
    mlir::Builder b(&getContext());
    getOperation()->walk([&](mlir::gpu::GPUFuncOp func) {
      const bool tensorCores =
          func.walk([](mlir::NVVM::MmaOp) { return mlir::WalkResult::interrupt(); })
              .wasInterrupted();
      if (tensorCores) {
        func->setAttr(mlir::NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(1));
      }
    });
  }
};

}  // namespace
}  // namespace tessera
