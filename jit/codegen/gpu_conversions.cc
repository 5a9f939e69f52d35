// The two GPU conversions of the nvptx pipeline with their pattern sets frozen once per pass
// manager: MLIR's convert-gpu-to-nvvm and gpu-to-llvm build their type converter, conversion
// target and patterns on every run, which costs more than converting a small module. A
// session's pass managers are reused across compiles (jit/compile_session.h), so these build
// them in Pass::initialize and every later compile only applies them. The patterns, their order
// and benefits, the legality and the options are MLIR's own (its populate and configure
// functions); the pipeline can run MLIR's passes instead (PipelineOptions::
// frozen_gpu_conversions), and tests/jit/gpu_conversions_test compares the two on a corpus.
#include <atomic>
#include <memory>
#include <utility>

#include "jit/passes.h"
#include "jit/pipeline.h"
#include "mlir/Conversion/AsyncToLLVM/AsyncToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::jit {

#define GEN_PASS_DEF_CONVERTGPUTONVVM
#define GEN_PASS_DEF_CONVERTGPUTOLLVM
#include "jit/Passes.h.inc"

namespace {

std::atomic<uint64_t> builds{0};

/// A conversion built once and applied to many modules: the rewrites that prepare a module
/// (applied greedily), then the dialect conversion. The converter and the target live on the
/// heap at fixed addresses: patterns and legality callbacks refer to them.
struct FrozenConversion {
  FrozenConversion(mlir::MLIRContext* context, const mlir::LowerToLLVMOptions& options,
                   std::unique_ptr<mlir::ConversionTarget> target)
      : converter(context, options),
        target(std::move(target)),
        loaded_dialects(context->getLoadedDialects().size()) {
    builds.fetch_add(1, std::memory_order_relaxed);
  }

  mlir::LLVMTypeConverter converter;
  std::unique_ptr<mlir::ConversionTarget> target;
  mlir::FrozenRewritePatternSet prepare;
  mlir::FrozenRewritePatternSet conversion;
  /// How many dialects the context had loaded: the patterns of a dialect loaded later are not
  /// in the set (upstream's passes collect them when they run).
  size_t loaded_dialects;
};

/// True when `frozen` was built for what `context` has loaded now.
bool StillCurrent(const FrozenConversion& frozen, mlir::MLIRContext* context) {
  return frozen.loaded_dialects == context->getLoadedDialects().size();
}

/// Every loaded dialect's ConvertToLLVMPatternInterface patterns and legality (but those of
/// `skip`), as upstream's conversions collect them.
void PopulateFromDialects(mlir::MLIRContext* context, FrozenConversion& frozen,
                          mlir::RewritePatternSet& patterns, mlir::TypeID skip) {
  for (mlir::Dialect* dialect : context->getLoadedDialects()) {
    if (dialect->getTypeID() == skip) continue;
    auto* iface = llvm::dyn_cast<mlir::ConvertToLLVMPatternInterface>(dialect);
    if (iface == nullptr) continue;
    iface->populateConvertToLLVMConversionPatterns(*frozen.target, frozen.converter, patterns);
  }
}

/// convert-gpu-to-nvvm's conversion for gpu.modules with `index_bits`-wide indices.
std::shared_ptr<const FrozenConversion> BuildNvvmConversion(mlir::MLIRContext* context,
                                                            unsigned index_bits) {
  mlir::LowerToLLVMOptions options(context);
  options.overrideIndexBitwidth(index_bits);
  auto frozen = std::make_shared<FrozenConversion>(
      context, options, std::make_unique<mlir::LLVMConversionTarget>(*context));

  mlir::RewritePatternSet prepare(context);
  mlir::populateGpuRewritePatterns(prepare);
  mlir::vector::populateVectorFromElementsUnrollPatterns(prepare);
  frozen->prepare = mlir::FrozenRewritePatternSet(std::move(prepare));

  mlir::configureGpuToNVVMTypeConverter(frozen->converter);
  mlir::RewritePatternSet patterns(context);
  // Above the generic LLVM lowerings, as upstream: math goes to libdevice, not to intrinsics.
  mlir::populateGpuToNVVMConversionPatterns(frozen->converter, patterns, /*benefit=*/10);
  PopulateFromDialects(context, *frozen, patterns, mlir::TypeID::get<mlir::math::MathDialect>());
  mlir::populateGpuWMMAToNVVMConversionPatterns(frozen->converter, patterns);
  mlir::configureGpuToNVVMConversionLegality(*frozen->target);
  frozen->conversion = mlir::FrozenRewritePatternSet(std::move(patterns));
  return frozen;
}

/// gpu-to-llvm's conversion of a module's host code.
std::shared_ptr<const FrozenConversion> BuildGpuToLlvmConversion(mlir::MLIRContext* context) {
  auto frozen =
      std::make_shared<FrozenConversion>(context, mlir::LowerToLLVMOptions(context),
                                         std::make_unique<mlir::ConversionTarget>(*context));
  mlir::ConversionTarget& target = *frozen->target;
  target.addLegalDialect<mlir::LLVM::LLVMDialect>();

  mlir::RewritePatternSet prepare(context);
  mlir::vector::populateVectorTransferLoweringPatterns(prepare, /*maxTransferRank=*/1);
  mlir::vector::populateVectorFromElementsUnrollPatterns(prepare);
  frozen->prepare = mlir::FrozenRewritePatternSet(std::move(prepare));

  mlir::RewritePatternSet patterns(context);
  PopulateFromDialects(context, *frozen, patterns, mlir::TypeID());
  // Kernels stay for gpu-module-to-binary; launches are legal once their operands converted.
  target.addLegalOp<mlir::gpu::GPUModuleOp, mlir::gpu::BinaryOp>();
  const mlir::LLVMTypeConverter* converter = &frozen->converter;
  target.addDynamicallyLegalOp<mlir::gpu::LaunchFuncOp>(
      [converter](mlir::gpu::LaunchFuncOp op) { return converter->isLegal(op); });
  mlir::populateVectorToLLVMConversionPatterns(frozen->converter, patterns);
  mlir::populateFinalizeMemRefToLLVMConversionPatterns(frozen->converter, patterns);
  mlir::populateAsyncStructuralTypeConversionsAndLegality(frozen->converter, patterns, target);
  mlir::populateGpuToLLVMConversionPatterns(frozen->converter, patterns);
  frozen->conversion = mlir::FrozenRewritePatternSet(std::move(patterns));
  return frozen;
}

/// Applies `frozen` to `op`: its preparing rewrites, then the partial conversion.
mlir::LogicalResult Apply(mlir::Operation* op, const FrozenConversion& frozen) {
  if (mlir::failed(mlir::applyPatternsGreedily(op, frozen.prepare))) return mlir::failure();
  mlir::ConversionConfig config;
  config.allowPatternRollback = true;
  return mlir::applyPartialConversion(op, *frozen.target, frozen.conversion, config);
}

class ConvertGpuToNvvm : public impl::ConvertGpuToNvvmBase<ConvertGpuToNvvm> {
 public:
  mlir::LogicalResult initialize(mlir::MLIRContext* context) override {
    frozen_ = BuildNvvmConversion(
        context, mlir::DataLayout().getTypeSizeInBits(mlir::IndexType::get(context)));
    return mlir::success();
  }

  void runOnOperation() override {
    mlir::gpu::GPUModuleOp module = getOperation();
    mlir::MLIRContext* context = &getContext();
    // Kernel functions get C wrappers, as upstream asks.
    for (auto func : module.getOps<mlir::func::FuncOp>()) {
      func->setAttr(mlir::LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    mlir::UnitAttr::get(context));
    }
    const unsigned index_bits =
        mlir::DataLayout(llvm::cast<mlir::DataLayoutOpInterface>(module.getOperation()))
            .getTypeSizeInBits(mlir::IndexType::get(context));
    std::shared_ptr<const FrozenConversion> frozen = frozen_;
    if (frozen == nullptr || frozen->converter.getIndexTypeBitwidth() != index_bits ||
        !StillCurrent(*frozen, context)) {
      frozen = BuildNvvmConversion(context, index_bits);  // this run only
    }
    if (mlir::failed(Apply(module, *frozen))) signalPassFailure();
  }

 private:
  std::shared_ptr<const FrozenConversion> frozen_;
};

class ConvertGpuToLlvm : public impl::ConvertGpuToLlvmBase<ConvertGpuToLlvm> {
 public:
  mlir::LogicalResult initialize(mlir::MLIRContext* context) override {
    frozen_ = BuildGpuToLlvmConversion(context);
    return mlir::success();
  }

  void runOnOperation() override {
    std::shared_ptr<const FrozenConversion> frozen = frozen_;
    if (frozen == nullptr || !StillCurrent(*frozen, &getContext())) {
      frozen = BuildGpuToLlvmConversion(&getContext());  // this run only
    }
    if (mlir::failed(Apply(getOperation(), *frozen))) signalPassFailure();
  }

 private:
  std::shared_ptr<const FrozenConversion> frozen_;
};

}  // namespace

uint64_t FrozenGpuConversionBuilds() { return builds.load(std::memory_order_relaxed); }

}  // namespace tessera::jit
