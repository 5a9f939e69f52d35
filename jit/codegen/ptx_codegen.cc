// tessera-gpu-module-to-ptx (jit/Passes.td): gpu.module → PTX in process. Each gpu.module
// carrying one #nvvm.target (chip, PTX features, O level) is translated to LLVM IR, gets the
// libdevice functions its kernels call (`__nv_*`) from a lazily loaded, process-wide copy of
// `<cuda-toolkit>/nvvm/libdevice` (a missing libdevice is an error naming the path), is
// optimised with the NVPTX target's pipeline (which includes NVVMReflect) and emitted as PTX by
// the NVPTX backend, then replaced by a gpu.binary (format `assembly`). Replaces upstream
// gpu-module-to-binary{format=isa}, which parses and links all of libdevice (~0.5 MB of
// bitcode) on every compile. Thread-safe to run in parallel compiles.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "jit/codegen/llvm_optimize.h"
#include "jit/compile_options.h"
#include "jit/passes.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "runtime/thread_pool.h"

namespace tessera::jit {

#define GEN_PASS_DEF_GPUMODULETOPTX
#include "jit/Passes.h.inc"

namespace {

constexpr char kNvptxTriple[] = "nvptx64-nvidia-cuda";

void InitializeNvptx() {
  static absl::once_flag once;
  absl::call_once(once, [] {
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// libdevice's bitcode, read once per path and shared by every compile (read-only).
absl::StatusOr<llvm::MemoryBufferRef> Libdevice(const std::string& cuda_toolkit) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* buffers = new std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>>();
  std::string path = absl::StrCat(cuda_toolkit, "/nvvm/libdevice/libdevice.10.bc");
  absl::MutexLock lock(&mu);
  auto it = buffers->find(path);
  if (it == buffers->end()) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      return absl::FailedPreconditionError(
          absl::StrCat("kernels call libdevice math functions, but ", path,
                       " cannot be read: ", buffer.getError().message()));
    }
    it = buffers->emplace(path, std::move(*buffer)).first;
  }
  return it->second->getMemBufferRef();
}

std::string ErrorText(llvm::Error error) { return llvm::toString(std::move(error)); }

/// Collects the LLVM context's error diagnostics (e.g. an inline asm operand the NVPTX backend
/// cannot bind). Without a handler LLVM prints them and exits the process.
void CollectLlvmErrors(const llvm::DiagnosticInfo* info, void* context) {
  if (info->getSeverity() != llvm::DS_Error) return;
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DiagnosticPrinterRawOStream printer(os);
  info->print(printer);
  static_cast<std::vector<std::string>*>(context)->push_back(std::move(text));
}

/// Links the libdevice functions `module` declares (lazily: only those bodies are read) and
/// makes them internal and `alwaysinline`, so the kernel pipeline inlines and drops them.
absl::Status LinkLibdevice(llvm::Module& module, const std::string& cuda_toolkit) {
  bool needed = false;
  absl::flat_hash_set<std::string> own_definitions;
  for (llvm::Function& function : module) {
    if (function.isDeclaration() && function.getName().starts_with("__nv_")) needed = true;
    if (!function.isDeclaration()) own_definitions.insert(function.getName().str());
  }
  if (!needed) return absl::OkStatus();
  auto buffer = Libdevice(cuda_toolkit);
  if (!buffer.ok()) return buffer.status();
  auto library = llvm::getOwningLazyBitcodeModule(
      llvm::MemoryBuffer::getMemBuffer(*buffer, /*RequiresNullTerminator=*/false),
      module.getContext());
  if (!library) {
    return absl::InternalError(
        absl::StrCat("cannot read libdevice: ", ErrorText(library.takeError())));
  }
  (*library)->setDataLayout(module.getDataLayout());
  (*library)->setTargetTriple(module.getTargetTriple());
  if (llvm::Linker::linkModules(module, std::move(*library), llvm::Linker::LinkOnlyNeeded)) {
    return absl::InternalError("linking libdevice failed");
  }
  for (llvm::Function& function : module) {
    if (!function.isDeclaration() && !own_definitions.contains(function.getName().str())) {
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
      function.removeFnAttr(llvm::Attribute::NoInline);
      function.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  }
  // Accurate (non-flush-to-zero) math, as NVRTC without --ftz.
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  return absl::OkStatus();
}

/// One gpu.module on its way to PTX: translated to LLVM IR (on the compiling thread, which owns
/// the MLIR context), then optimised and emitted (on any thread: nothing here touches MLIR).
struct PtxJob {
  std::string name;
  std::string chip;
  int level = 2;
  std::unique_ptr<llvm::LLVMContext> context = std::make_unique<llvm::LLVMContext>();
  std::vector<std::string> llvm_errors;
  std::unique_ptr<llvm::Module> module;
  absl::StatusOr<std::string> ptx = absl::UnknownError("not compiled");
};

absl::Status Translate(mlir::gpu::GPUModuleOp gpu_module, mlir::NVVM::NVVMTargetAttr target,
                       PtxJob& job) {
  job.name = gpu_module.getName().str();
  // The chip decides the PTX ISA (compile_options.h): a chip LLVM knows but CUDA 13 does not,
  // or a `+ptx` feature too old for the chip, would abort inside the NVPTX backend.
  job.chip = target.getChip().str();
  if (absl::Status supported = ValidateArch(job.chip); !supported.ok()) return supported;
  job.level = target.getO();
  job.context->setDiagnosticHandlerCallBack(CollectLlvmErrors, &job.llvm_errors);
  job.module =
      mlir::translateModuleToLLVMIR(gpu_module.getOperation(), *job.context, gpu_module.getName());
  if (job.module == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("translating gpu.module @", job.name, " to LLVM IR failed"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> EmitPtx(PtxJob& job, const std::string& cuda_toolkit) {
  InitializeNvptx();
  llvm::Triple triple(kNvptxTriple);
  std::string error;
  const llvm::Target* backend = llvm::TargetRegistry::lookupTarget(triple, error);
  if (backend == nullptr) return absl::InternalError(absl::StrCat("no NVPTX backend: ", error));
  std::unique_ptr<llvm::TargetMachine> machine(backend->createTargetMachine(
      triple, job.chip, PtxFeatures(job.chip), llvm::TargetOptions(), std::nullopt, std::nullopt,
      job.level == 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Aggressive));
  if (machine == nullptr) {
    return absl::UnimplementedError(absl::StrCat("the NVPTX backend cannot target ", job.chip));
  }
  llvm::Module& module = *job.module;
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());
  if (absl::Status linked = LinkLibdevice(module, cuda_toolkit); !linked.ok()) return linked;
  if (absl::Status optimized = OptimizeKernelModule(module, *machine, job.level); !optimized.ok()) {
    return optimized;
  }

  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream stream(ptx);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, stream, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    return absl::InternalError("the NVPTX backend cannot emit PTX");
  }
  codegen.run(module);
  if (!job.llvm_errors.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("the NVPTX backend rejected gpu.module @",
                                                   job.name, ": ",
                                                   absl::StrJoin(job.llvm_errors, "; ")));
  }
  return std::string(ptx.str());
}

class GpuModuleToPtxPass : public impl::GpuModuleToPtxBase<GpuModuleToPtxPass> {
 public:
  using GpuModuleToPtxBase::GpuModuleToPtxBase;

  void runOnOperation() override {
    std::vector<mlir::gpu::GPUModuleOp> gpu_modules(
        getOperation().getOps<mlir::gpu::GPUModuleOp>().begin(),
        getOperation().getOps<mlir::gpu::GPUModuleOp>().end());
    std::vector<mlir::NVVM::NVVMTargetAttr> targets;
    std::vector<PtxJob> jobs(gpu_modules.size());
    for (size_t i = 0; i < gpu_modules.size(); ++i) {
      mlir::gpu::GPUModuleOp gpu_module = gpu_modules[i];
      mlir::ArrayAttr attrs = gpu_module.getTargetsAttr();
      auto target = attrs && attrs.size() == 1
                        ? llvm::dyn_cast<mlir::NVVM::NVVMTargetAttr>(attrs[0])
                        : mlir::NVVM::NVVMTargetAttr();
      if (!target) {
        gpu_module.emitError() << "expected exactly one #nvvm.target on gpu.module @"
                               << gpu_module.getName();
        return signalPassFailure();
      }
      targets.push_back(target);
      if (absl::Status translated = Translate(gpu_module, target, jobs[i]); !translated.ok()) {
        jobs[i].ptx = translated;
      }
    }
    // Each module is its own LLVM context: optimised and emitted in parallel on this thread's
    // pool (the compile's context's threads).
    runtime::RunTasks(static_cast<int64_t>(jobs.size()), [&](int64_t i) {
      PtxJob& job = jobs[static_cast<size_t>(i)];
      if (job.module != nullptr) job.ptx = EmitPtx(job, toolkit);
      job.module.reset();  // (before its context)
    });
    for (size_t i = 0; i < gpu_modules.size(); ++i) {
      mlir::gpu::GPUModuleOp gpu_module = gpu_modules[i];
      const absl::StatusOr<std::string>& ptx = jobs[i].ptx;
      if (!ptx.ok()) {
        // (absl::string_view would stream into a diagnostic as a character range.)
        gpu_module.emitError() << "PTX generation failed: " << std::string(ptx.status().message());
        return signalPassFailure();
      }
      mlir::OpBuilder builder(gpu_module);
      auto object = mlir::gpu::ObjectAttr::get(&getContext(), targets[i],
                                               mlir::gpu::CompilationTarget::Assembly,
                                               builder.getStringAttr(*ptx), nullptr, nullptr);
      builder.create<mlir::gpu::BinaryOp>(gpu_module.getLoc(), gpu_module.getName(),
                                          /*offloadingHandler=*/nullptr,
                                          builder.getArrayAttr({object}));
      gpu_module.erase();
    }
  }
};

}  // namespace

}  // namespace tessera::jit
