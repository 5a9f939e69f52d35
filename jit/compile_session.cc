// Compile sessions: the dialect registry (the one translation unit with MLIR's registration
// headers), pooled contexts with their pass managers, and parsing.
#include "jit/compile_session.h"

#include <atomic>
#include <utility>

#include "dialect/Passes.h"
#include "dialect/Registration.h"
#include "dialect/TileOps.h"
#include "jit/admission/guarded_parse.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ComplexToLLVM/ComplexToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/RuntimeOpVerification.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

namespace tessera::jit {
namespace {

const mlir::DialectRegistry& Registry() {
  static const mlir::DialectRegistry* registry = [] {
    auto* r = new mlir::DialectRegistry();
    registerTesseraDialects(*r);
    r->insert<mlir::affine::AffineDialect, mlir::cf::ControlFlowDialect, mlir::index::IndexDialect,
              mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect, mlir::scf::SCFDialect,
              mlir::ub::UBDialect, mlir::vector::VectorDialect>();
    // Only what the pipelines use (not registerAll*: fewer dialects to load per context, and a
    // statically linked bundle does not pull in every backend MLIR knows).
    mlir::registerConvertFuncToLLVMInterface(*r);
    mlir::arith::registerConvertArithToLLVMInterface(*r);
    mlir::cf::registerConvertControlFlowToLLVMInterface(*r);
    mlir::registerConvertMathToLLVMInterface(*r);
    mlir::registerConvertMemRefToLLVMInterface(*r);
    mlir::memref::registerRuntimeVerifiableOpInterfaceExternalModels(*r);
    mlir::index::registerConvertIndexToLLVMInterface(*r);
    mlir::ub::registerConvertUBToLLVMInterface(*r);
    // vector-to-llvm loads the tensor dialect, and with it complex, which promises this
    // interface: unregistered, the first conversion that asks a loaded dialect for it aborts.
    mlir::registerConvertComplexToLLVMInterface(*r);
    mlir::registerConvertNVVMToLLVMInterface(*r);
    mlir::gpu::registerConvertGpuToLLVMInterface(*r);
    // gpu-to-nvvm lowers the vectorized kernels' 128-bit vector.load/store with it.
    mlir::vector::registerConvertVectorToLLVMInterface(*r);
    mlir::NVVM::registerNVVMTargetInterfaceExternalModels(*r);
    mlir::registerBuiltinDialectTranslation(*r);
    mlir::registerLLVMDialectTranslation(*r);
    mlir::registerNVVMDialectTranslation(*r);
    mlir::registerGPUDialectTranslation(*r);
    mlir::gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(*r);  // #gpu.select_object
    return r;
  }();
  return *registry;
}

/// How many compiles a session serves before its context is replaced: an MLIRContext keeps
/// every type and attribute it has uniqued, so a long-running service recycles it.
constexpr int kCompilesPerSession = 256;

}  // namespace

CompileSession::CompileSession() : context_(Registry(), mlir::MLIRContext::Threading::DISABLED) {
  context_.loadAllAvailableDialects();
}

mlir::PassManager& CompileSession::StageManager(const std::string& key,
                                                const PipelineStage& stage) {
  std::unique_ptr<mlir::PassManager>& manager = managers_[key + "/" + stage.name];
  if (manager == nullptr) {
    manager = std::make_unique<mlir::PassManager>(&context_);
    // Verified once per stage by the compiler's RunStage rather than after every pass.
    manager->enableVerifier(false);
    stage.build(*manager);
  }
  return *manager;
}

bool CompileSession::Retire() { return ++compiles_ >= kCompilesPerSession; }

std::unique_ptr<CompileSession> SessionPool::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<CompileSession> session = std::move(idle_.back());
      idle_.pop_back();
      return session;
    }
  }
  return std::make_unique<CompileSession>();
}

void SessionPool::Release(std::unique_ptr<CompileSession> session) {
  if (session->Retire()) return;
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(session));
}

SessionPool& Sessions() {
  static auto* pool = new SessionPool();
  return *pool;
}

namespace {
std::atomic<uint64_t> parses{0};
}  // namespace

uint64_t ParseCount() { return parses.load(std::memory_order_relaxed); }

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ParseSource(
    mlir::MLIRContext& context, const DiagnosticCollector& diagnostics, absl::string_view source,
    const std::string& source_name) {
  parses.fetch_add(1, std::memory_order_relaxed);
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module =
      ParseGuarded(context, source, source_name);
  if (diagnostics.HasErrors()) return diagnostics.Failure("invalid Tessera IR");
  if (!module.ok()) return module;
  // The original Tessera's launch-level kernels become this project's Tile ops before anything
  // else looks at the module (docs/original-ir.md).
  const bool has_launch_kernels =
      (**module)
          ->walk([](mlir::Operation* op) {
            return llvm::isa<tile::MatmulKernelOp, tile::ReduceKernelOp, tile::SoftmaxKernelOp,
                             tile::NormKernelOp, tile::AttentionKernelOp,
                             tile::AttentionBackwardKernelOp>(op)
                       ? mlir::WalkResult::interrupt()
                       : mlir::WalkResult::advance();
          })
          .wasInterrupted();
  if (has_launch_kernels) {
    mlir::PassManager pm(&context);
    pm.addPass(createImportLaunchKernels());
    if (mlir::failed(pm.run(**module)) || diagnostics.HasErrors()) {
      return diagnostics.Failure("invalid Tessera IR");
    }
  }
  return module;
}

}  // namespace tessera::jit
