// tessera-align-workgroup-buffers: every kernel's shared-memory buffers 16-byte aligned, so
// that the tensor-core matmuls' 16-byte cp.async copies and ldmatrix rows may address them.
#include "dialect/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace tessera {

#define GEN_PASS_DEF_ALIGNWORKGROUPBUFFERS
#include "dialect/Passes.h.inc"

namespace {

constexpr int64_t kWorkgroupAlignment = 16;

class AlignWorkgroupBuffers : public impl::AlignWorkgroupBuffersBase<AlignWorkgroupBuffers> {
 public:
  using Base::Base;

  void runOnOperation() override {
    mlir::Builder b(&getContext());
    const llvm::StringRef name = mlir::LLVM::LLVMDialect::getAlignAttrName();
    getOperation()->walk([&](mlir::gpu::GPUFuncOp func) {
      for (unsigned i = 0; i < func.getNumWorkgroupAttributions(); ++i) {
        auto current =
            llvm::dyn_cast_or_null<mlir::IntegerAttr>(func.getWorkgroupAttributionAttr(i, name));
        if (current && current.getInt() >= kWorkgroupAlignment) continue;
        func.setWorkgroupAttributionAttr(i, b.getStringAttr(name),
                                         b.getI64IntegerAttr(kWorkgroupAlignment));
      }
    });
  }
};

}  // namespace
}  // namespace tessera
