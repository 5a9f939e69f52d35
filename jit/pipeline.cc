// The host and nvptx lowering pipelines, stage by stage.
#include "jit/pipeline.h"

#include "dialect/Passes.h"
#include "jit/compile_options.h"
#include "jit/passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "runtime/host_target.h"

namespace tessera::jit {
namespace {

/// Low-precision math and bf16 conversions expanded to what every backend supports. On the
/// host, also its float semantics independent of the instruction set: bf16 arithmetic in f32
/// between explicit conversions (AVX512-BF16's conversion flushes subnormals), and math
/// functions as polynomial approximations the loop vectorizer can widen.
void AddFloatLegalization(mlir::OpPassManager& pm, bool host) {
  pm.addPass(createExactFloatOps());  // before f16/bf16 math is extended to f32
  LegalizeNarrowFloatsOptions narrow;
  narrow.emulateBf16Arithmetic = host;
  pm.addPass(createLegalizeNarrowFloats(narrow));
  if (host) {
    pm.addPass(createApproximateMath());
    pm.addPass(createExpm1Log1pToLibm());  // what the approximations left (f64)
  }
  pm.addPass(createExpandArith());
}

void AddCleanup(mlir::OpPassManager& pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

struct PipelineCliOptions : mlir::PassPipelineOptions<PipelineCliOptions> {
  Option<std::string> arch{*this, "arch", llvm::cl::desc("GPU architecture (nvptx)"),
                           llvm::cl::init("sm_90")};
  Option<int> optLevel{*this, "opt-level", llvm::cl::desc("optimisation level 0-3"),
                       llvm::cl::init(2)};
  Option<bool> deterministic{*this, "deterministic",
                             llvm::cl::desc("treat every function as deterministic"),
                             llvm::cl::init(false)};
  Option<std::string> toolkit{*this, "cuda-toolkit", llvm::cl::desc("CUDA toolkit path"),
                              llvm::cl::init("/usr/local/cuda")};
  Option<int64_t> hostVectorBits{
      *this, "host-vector-bits",
      llvm::cl::desc("host: widest vector register in bits (0: this machine's)"),
      llvm::cl::init(0)};
  Option<bool> frozenGpuConversions{
      *this, "frozen-gpu-conversions",
      llvm::cl::desc("nvptx: GPU conversions with pattern sets built once (false: MLIR's passes)"),
      llvm::cl::init(true)};

  PipelineOptions ToOptions() const {
    return PipelineOptions{arch,    optLevel,       deterministic,
                           toolkit, hostVectorBits, frozenGpuConversions};
  }
};

void AddStages(mlir::OpPassManager& pm, const PipelineOptions& options,
               const std::vector<PipelineStage>& stages) {
  ContractStage(options).build(pm);
  for (const PipelineStage& stage : stages) stage.build(pm);
}

}  // namespace

PipelineStage ContractStage(const PipelineOptions& options) {
  return {"contracts", [options](mlir::OpPassManager& pm) {
            VerifyDeterminismOptions determinism;
            determinism.allFunctions = options.deterministic;
            pm.addPass(createVerifyDeterminism(determinism));
          }};
}

std::vector<PipelineStage> HostStages(const PipelineOptions& options) {
  const int64_t vector_bits = options.host_vector_bits > 0
                                  ? options.host_vector_bits
                                  : runtime::ThisMachineHostTarget().vector_bits;
  return {
      {"tile-to-loops",
       [vector_bits](mlir::OpPassManager& pm) {
         pm.addPass(createExactFloatOps());  // before the first canonicalization (atan2 folds)
         // Bounds checks for the memref accesses user IR makes itself (Tile ops are in bounds
         // by construction once invoke has checked the shape contract).
         pm.addPass(mlir::createGenerateRuntimeVerificationPass());
         pm.addPass(createLowerRuntimeChecks());
         LowerTileToLoopsOptions loops;
         loops.vectorBits = vector_bits;
         pm.addPass(createLowerTileToLoops(loops));
         AddCleanup(pm);
       }},
      {"llvm",
       [](mlir::OpPassManager& pm) {
         pm.addPass(mlir::createSCFToControlFlowPass());
         pm.addPass(mlir::memref::createExpandStridedMetadataPass());
         pm.addPass(mlir::createLowerAffinePass());
         AddFloatLegalization(pm, /*host=*/true);
         pm.addPass(mlir::createConvertVectorToLLVMPass());
         pm.addPass(mlir::createConvertMathToLLVMPass());
         pm.addPass(mlir::createConvertMathToLibmPass());
         pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass());
         pm.addPass(mlir::createConvertToLLVMPass());
         pm.addPass(mlir::createReconcileUnrealizedCastsPass());
         pm.addPass(createAttachLoopAnnotations());
         pm.addPass(createDispatchParallelLoops());
         AddCleanup(pm);
       }},
  };
}

std::vector<PipelineStage> NvptxStages(const PipelineOptions& options) {
  return {
      {"tile-to-gpu",
       [options](mlir::OpPassManager& pm) {
         pm.addPass(createExactFloatOps());       // before the first canonicalization (atan2 folds)
         pm.addPass(createLowerRuntimeChecks());  // integer division that cannot trap
         LowerTileToGpuOptions gpu;
         gpu.arch = options.arch;
         pm.addNestedPass<mlir::func::FuncOp>(createLowerTileToGpu(gpu));
         pm.addPass(mlir::createGpuKernelOutliningPass());
         pm.addPass(createAlignWorkgroupBuffers());  // 16 bytes: cp.async targets
         pm.addPass(createReserveMmaRegisters());    // .minnctapersm 1 on mma.sync kernels
         AddCleanup(pm);
       }},
      {"nvvm",
       [options](mlir::OpPassManager& pm) {
         mlir::GpuNVVMAttachTargetOptions target;
         target.chip = options.arch;
         target.features = PtxFeatures(options.arch);
         target.optLevel = options.opt_level;
         pm.addPass(mlir::createGpuNVVMAttachTarget(target));
         pm.addPass(mlir::createSCFToControlFlowPass());
         pm.addPass(mlir::memref::createExpandStridedMetadataPass());
         pm.addPass(mlir::createLowerAffinePass());
         mlir::OpPassManager& device = pm.nest<mlir::gpu::GPUModuleOp>();
         AddFloatLegalization(device, /*host=*/false);
         device.addPass(createLowerInlinePtx());
         device.addPass(options.frozen_gpu_conversions ? createConvertGpuToNvvm()
                                                       : mlir::createConvertGpuOpsToNVVMOps());
         AddCleanup(device);
         device.addPass(mlir::createReconcileUnrealizedCastsPass());
       }},
      {"host-llvm",
       [options](mlir::OpPassManager& pm) {
         pm.addPass(options.frozen_gpu_conversions ? createConvertGpuToLlvm()
                                                   : mlir::createGpuToLLVMConversionPass());
         pm.addPass(mlir::createConvertToLLVMPass());
         pm.addPass(mlir::createReconcileUnrealizedCastsPass());
         AddCleanup(pm);
       }},
      {"ptx",
       [options](mlir::OpPassManager& pm) {
         GpuModuleToPtxOptions ptx;
         ptx.toolkit = options.cuda_toolkit;
         pm.addPass(createGpuModuleToPtx(ptx));
       }},
  };
}

void RegisterPipelines() {
  mlir::PassPipelineRegistration<PipelineCliOptions>(
      "tessera-lower-to-host",
      "Lower Tessera IR to the LLVM dialect for the host target (the stages of a host compile)",
      [](mlir::OpPassManager& pm, const PipelineCliOptions& cli) {
        AddStages(pm, cli.ToOptions(), HostStages(cli.ToOptions()));
      });
  mlir::PassPipelineRegistration<PipelineCliOptions>(
      "tessera-lower-to-nvvm",
      "Lower Tessera IR for NVIDIA GPUs: kernels to PTX in gpu.binary ops, host code to the "
      "LLVM dialect (the stages of an nvptx compile)",
      [](mlir::OpPassManager& pm, const PipelineCliOptions& cli) {
        AddStages(pm, cli.ToOptions(), NvptxStages(cli.ToOptions()));
      });
}

}  // namespace tessera::jit
