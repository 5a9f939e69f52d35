// Tessera IR → compiled module: parse and verify, check contracts, lower stage by stage, then
// JIT the host code (host) or extract PTX and link cubins (nvptx).
#include "jit/compiler.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "dialect/NVIDIAOps.h"
#include "dialect/Registration.h"
#include "dialect/TesseraDialect.h"
#include "arbiter/arbiter.h"
#include "jit/ir_allowlist.h"
#include "jit/locations.h"
#include "jit/nvjitlink.h"
#include "jit/shape_contract.h"
#include "jit/source_limits.h"
#include "jit/probers.h"
#include "jit/runtime_checks.h"
#include "jit/runtime/checked_call.h"
#include "jit/toolchain.h"
#include "jit/delegates/delegate_passes.h"
#include "jit/delegates/registry.h"
#include "jit/runtime/delegate_abi.h"
#include "jit/runtime/kernel_abi.h"
#include "jit/pipeline.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/RuntimeOpVerification.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

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
    mlir::registerConvertNVVMToLLVMInterface(*r);
    mlir::gpu::registerConvertGpuToLLVMInterface(*r);
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

/// An MLIRContext plus the pass managers of every pipeline stage already built on it. Building
/// a pass manager freezes the pattern sets of its conversion and canonicalization passes,
/// which costs more than running them on a small module, so sessions are pooled and reused.
/// Thread-compatible: one compile uses a session at a time.
class CompileSession {
 public:
  CompileSession() : context_(Registry(), mlir::MLIRContext::Threading::DISABLED) {
    context_.loadAllAvailableDialects();
  }

  mlir::MLIRContext& context() { return context_; }

  /// The pass manager for `stage` under `key` (everything that changes what the stage adds),
  /// built on first use.
  mlir::PassManager& StageManager(const std::string& key, const PipelineStage& stage) {
    std::unique_ptr<mlir::PassManager>& manager = managers_[key + "/" + stage.name];
    if (manager == nullptr) {
      manager = std::make_unique<mlir::PassManager>(&context_);
      // Verified once per stage by RunStage rather than after every pass.
      manager->enableVerifier(false);
      stage.build(*manager);
    }
    return *manager;
  }

  /// Counts a compile; true when the session has served its share and should be dropped.
  bool Retire() { return ++compiles_ >= kCompilesPerSession; }

 private:
  mlir::MLIRContext context_;
  std::map<std::string, std::unique_ptr<mlir::PassManager>> managers_;
  int compiles_ = 0;
};

/// Idle sessions, shared by all compiles. Thread-safe.
class SessionPool {
 public:
  std::unique_ptr<CompileSession> Acquire() {
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

  void Release(std::unique_ptr<CompileSession> session) {
    if (session->Retire()) return;
    absl::MutexLock lock(&mu_);
    idle_.push_back(std::move(session));
  }

 private:
  absl::Mutex mu_;
  std::vector<std::unique_ptr<CompileSession>> idle_ ABSL_GUARDED_BY(mu_);
};

SessionPool& Sessions() {
  static auto* pool = new SessionPool();
  return *pool;
}

absl::string_view SeverityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
    case mlir::DiagnosticSeverity::Error:
      return "error";
    case mlir::DiagnosticSeverity::Warning:
      return "warning";
    case mlir::DiagnosticSeverity::Note:
      return "note";
    case mlir::DiagnosticSeverity::Remark:
      return "remark";
  }
  return "diagnostic";
}

/// Collects every diagnostic of a compile as `location: severity: message` lines (notes
/// included), so a failure status carries all of them with their source locations.
class DiagnosticCollector {
 public:
  explicit DiagnosticCollector(mlir::MLIRContext& context)
      : handler_(&context, [this](mlir::Diagnostic& diagnostic) {
          Record(diagnostic);
          return mlir::success();
        }) {}

  bool HasErrors() const { return has_errors_; }

  /// InvalidArgument: `summary`, then every diagnostic recorded so far.
  absl::Status Failure(absl::string_view summary) const {
    if (lines_.empty()) return absl::InvalidArgumentError(summary);
    return absl::InvalidArgumentError(absl::StrCat(summary, ":\n", absl::StrJoin(lines_, "\n")));
  }

 private:
  void Record(mlir::Diagnostic& diagnostic) {
    if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error) has_errors_ = true;
    AddLine(diagnostic);
    for (mlir::Diagnostic& note : diagnostic.getNotes()) {
      // MLIR attaches the failing operation's full text to pass failures; it repeats the IR
      // and hides the message, so it is left out.
      if (llvm::StringRef(note.str()).starts_with("see current operation")) continue;
      AddLine(note);
    }
  }

  void AddLine(mlir::Diagnostic& diagnostic) {
    lines_.push_back(absl::StrCat(FormatLocation(diagnostic.getLocation()), ": ",
                                  SeverityName(diagnostic.getSeverity()), ": ",
                                  diagnostic.str()));
  }

  mlir::ScopedDiagnosticHandler handler_;
  std::vector<std::string> lines_;
  bool has_errors_ = false;
};

std::string Print(mlir::Operation* op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

std::string TypeText(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

bool IsScalar(mlir::Type type) { return type.isIntOrIndexOrFloat(); }

ElementType DescribeElement(mlir::Type type) {
  if (type.isIndex()) return {ElementType::Class::kIndex, 64};
  if (type.isBF16()) return {ElementType::Class::kBFloat, 16};
  if (auto integer = llvm::dyn_cast<mlir::IntegerType>(type)) {
    return {ElementType::Class::kInt, static_cast<int>(integer.getWidth())};
  }
  return {ElementType::Class::kFloat, static_cast<int>(type.getIntOrFloatBitWidth())};
}

EntryArgument DescribeScalar(mlir::Type type) {
  EntryArgument argument;
  argument.kind = EntryArgument::Kind::kScalar;
  argument.type = TypeText(type);
  argument.element = DescribeElement(type);
  return argument;
}

/// The public, defined functions of the module: what callers invoke.
std::vector<mlir::func::FuncOp> EntryFunctions(mlir::ModuleOp module) {
  std::vector<mlir::func::FuncOp> entries;
  for (auto function : module.getOps<mlir::func::FuncOp>()) {
    if (!function.isPrivate() && !function.isExternal()) entries.push_back(function);
  }
  return entries;
}

/// The SSA name (without `%`) that `location` points at in `source`, or "" when it points at
/// none (a location from elsewhere, an `loc(...)` override).
std::string SourceName(absl::string_view source, mlir::Location location) {
  auto file = llvm::dyn_cast<mlir::FileLineColLoc>(location);
  if (file == nullptr || file.getLine() == 0 || file.getColumn() == 0) return "";
  size_t at = 0;
  for (unsigned line = 1; line < file.getLine(); ++line) {
    at = source.find('\n', at);
    if (at == absl::string_view::npos) return "";
    ++at;
  }
  at += file.getColumn() - 1;
  if (at >= source.size() || source[at] != '%') return "";
  size_t end = at + 1;
  while (end < source.size() && (std::isalnum(static_cast<unsigned char>(source[end])) ||
                                 source[end] == '_' || source[end] == '$' || source[end] == '.' ||
                                 source[end] == '-')) {
    ++end;
  }
  return std::string(source.substr(at + 1, end - at - 1));
}

/// Checks the entry signatures and describes them: memref or scalar arguments, at most one
/// scalar result.
absl::StatusOr<std::vector<EntryFunction>> DescribeEntries(mlir::ModuleOp module,
                                                           absl::string_view source) {
  std::vector<EntryFunction> entries;
  for (mlir::func::FuncOp function : EntryFunctions(module)) {
    EntryFunction entry{function.getName().str(), {}, {}, isDeterministic(function), {}};
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
      auto memref = llvm::dyn_cast<mlir::MemRefType>(type);
      if (memref && IsScalar(memref.getElementType()) && memref.getLayout().isIdentity()) {
        EntryArgument argument;
        argument.kind = EntryArgument::Kind::kMemRef;
        argument.type = TypeText(type);
        argument.element = DescribeElement(memref.getElementType());
        argument.rank = memref.getRank();
        for (int64_t size : memref.getShape()) {
          argument.shape.push_back(mlir::ShapedType::isDynamic(size) ? -1 : size);
        }
        entry.arguments.push_back(std::move(argument));
      } else if (IsScalar(type)) {
        entry.arguments.push_back(DescribeScalar(type));
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            FormatLocation(function.getLoc()), ": error: argument #", index, " of entry @",
            entry.name, " has type ", TypeText(type),
            "; expected a ranked memref with the identity layout or an integer, index or float "
            "scalar"));
      }
    }
    if (function.getNumResults() > 1 ||
        (function.getNumResults() == 1 && !IsScalar(function.getResultTypes()[0]))) {
      return absl::InvalidArgumentError(absl::StrCat(
          FormatLocation(function.getLoc()), ": error: entry @", entry.name,
          " must return nothing or one scalar (write tensors through memref arguments)"));
    }
    for (mlir::Type result : function.getResultTypes()) {
      entry.results.push_back(DescribeScalar(result));
    }
    for (auto [index, argument] : llvm::enumerate(entry.arguments)) {
      argument.name = SourceName(source, function.getArgument(index).getLoc());
    }
    TESSERA_RETURN_IF_ERROR(DeriveShapeContract(function, entry));
    entries.push_back(std::move(entry));
  }
  return entries;
}

/// Rejects what this compiler cannot generate code for, naming the location.
absl::Status CheckSupported(mlir::ModuleOp module, Target target) {
  absl::Status status = absl::OkStatus();
  module.walk([&](mlir::Operation* op) {
    if (auto ptx = llvm::dyn_cast<nvidia::InlinePtxOp>(op)) {
      status = absl::UnimplementedError(absl::StrCat(
          FormatLocation(op->getLoc()),
          ": error: 'tessera_nvidia.inline_ptx' is verified and checked for determinism, but "
          "this compiler does not generate code for it yet"));
      return mlir::WalkResult::interrupt();
    }
    if (auto gpuModule = llvm::dyn_cast<mlir::gpu::GPUModuleOp>(op);
        gpuModule && target == Target::kHost) {
      status = absl::InvalidArgumentError(absl::StrCat(
          FormatLocation(op->getLoc()), ": error: gpu.module @", gpuModule.getName().str(),
          " holds raw GPU kernels, which need a GPU: compile with target 'nvptx'"));
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return status;
}

absl::Status RunStage(CompileSession& session, const std::string& key, mlir::ModuleOp module,
                      const PipelineStage& stage, const DiagnosticCollector& diagnostics,
                      CompiledModule& out) {
  mlir::PassManager& pm = session.StageManager(key, stage);
  // Any error diagnostic fails the stage, even when the pass reports success (the
  // gpu-module-to-binary toolkit trap in TOOLCHAIN.md).
  if (mlir::failed(pm.run(module)) || mlir::failed(mlir::verify(module)) ||
      diagnostics.HasErrors()) {
    return diagnostics.Failure(absl::StrCat("compile failed in stage '", stage.name, "'"));
  }
  if (out.options.dump_stages) out.stages.emplace_back(stage.name, Print(module));
  return absl::OkStatus();
}

/// Adds `void _tessera_packed_<name>(void** args)` calling `_mlir_ciface_<name>`: the uniform
/// calling convention of HostExecutable (see PackedEntry).
absl::Status AddPackedWrapper(llvm::Module& module, const std::string& name) {
  llvm::Function* target = module.getFunction("_mlir_ciface_" + name);
  if (target == nullptr) {
    return absl::InternalError(absl::StrCat("no C interface was generated for @", name));
  }
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* pointer = llvm::PointerType::getUnqual(context);
  auto* wrapper = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {pointer}, false),
      llvm::Function::ExternalLinkage, absl::StrCat(kPackedEntryPrefix, name), module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", wrapper));
  auto slot = [&](unsigned index) {
    llvm::Value* address = builder.CreateConstGEP1_64(pointer, wrapper->getArg(0), index);
    return builder.CreateLoad(pointer, address);
  };
  std::vector<llvm::Value*> arguments;
  for (llvm::Argument& parameter : target->args()) {
    llvm::Value* argument = slot(parameter.getArgNo());
    // A memref travels as a pointer to its descriptor; a scalar is loaded from its slot.
    if (!parameter.getType()->isPointerTy()) {
      argument = builder.CreateLoad(parameter.getType(), argument);
    }
    arguments.push_back(argument);
  }
  llvm::Value* result = builder.CreateCall(target, arguments);
  if (!target->getReturnType()->isVoidTy()) {
    builder.CreateStore(result, slot(static_cast<unsigned>(target->arg_size())));
  }
  builder.CreateRetVoid();
  return absl::OkStatus();
}

/// The symbols JIT'd host code may call besides the C library allowlist: the device runtime
/// (nvptx), the delegate runtime, and the module's c_abi callees resolved in the registry.
absl::StatusOr<RuntimeSymbolList> HostSymbols(const CompiledModule& module) {
  RuntimeSymbolList symbols = runtime::DelegateRuntimeSymbols();
  for (auto& symbol : runtime::RuntimeCheckSymbols()) symbols.push_back(symbol);
  if (module.options.target == Target::kNvptx) {
    for (auto& symbol : runtime::RuntimeSymbols()) symbols.push_back(symbol);
  }
  for (const std::string& name : module.delegate_symbols) {
    if (module.options.delegates == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("host code calls '", name, "' but no delegate registry was given"));
    }
    auto resolved = module.options.delegates->ResolveCAbi(name);
    if (!resolved.ok()) return resolved.status();
    symbols.emplace_back(name, resolved->address);
  }
  return symbols;
}

/// Moves the lowering's record of resolved delegates from module attributes into `out`.
void TakeDelegateRecord(mlir::ModuleOp module, CompiledModule& out) {
  auto take = [&](const char* name, std::vector<std::string>& into) {
    if (auto list = module->getAttrOfType<mlir::ArrayAttr>(name)) {
      for (mlir::Attribute value : list) {
        into.push_back(llvm::cast<mlir::StringAttr>(value).getValue().str());
      }
      module->removeAttr(name);
    }
  };
  take(delegates::kDelegateSymbolsAttr, out.delegate_symbols);
  take(delegates::kDelegateIdentitiesAttr, out.delegate_identities);
}

absl::Status FinishHost(mlir::ModuleOp module, CompiledModule& out) {
  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(module, *context);
  if (llvm_module == nullptr) {
    return absl::InternalError("translating the host code to LLVM IR failed");
  }
  std::vector<std::string> names;
  for (const EntryFunction& entry : out.entries) {
    TESSERA_RETURN_IF_ERROR(AddPackedWrapper(*llvm_module, entry.name));
    names.push_back(entry.name);
  }
  {
    llvm::raw_string_ostream os(out.host_llvm_ir);
    llvm_module->print(os, nullptr);
  }
  TESSERA_ASSIGN_OR_RETURN(RuntimeSymbolList symbols, HostSymbols(out));
  TESSERA_ASSIGN_OR_RETURN(out.host, HostExecutable::Create(std::move(llvm_module),
                                                            std::move(context), names,
                                                            out.options.opt_level, symbols));
  return absl::OkStatus();
}

absl::Status FinishNvptx(mlir::ModuleOp module, CompiledModule& out) {
  std::vector<mlir::gpu::BinaryOp> binaries(module.getOps<mlir::gpu::BinaryOp>().begin(),
                                            module.getOps<mlir::gpu::BinaryOp>().end());
  mlir::Builder builder(module.getContext());
  for (mlir::gpu::BinaryOp binary : binaries) {
    llvm::SmallVector<mlir::Attribute> packed_objects;
    for (mlir::Attribute attribute : binary.getObjects()) {
      auto object = llvm::cast<mlir::gpu::ObjectAttr>(attribute);
      DeviceImage image;
      image.module_name = binary.getName().str();
      image.ptx = object.getObject().getValue().str();
      image.kernels = delegates::PtxEntries(image.ptx);
      if (out.options.link_cubin) {
        TESSERA_ASSIGN_OR_RETURN(image.cubin, LinkPtxToCubin(image.ptx, out.options.arch,
                                                             out.options.opt_level));
      }
      // The host code embeds both: the runtime loads the cubin, or JITs the PTX if the driver
      // rejects it.
      packed_objects.push_back(mlir::gpu::ObjectAttr::get(
          module.getContext(), object.getTarget(), mlir::gpu::CompilationTarget::Binary,
          builder.getStringAttr(runtime::PackDeviceImage(image.cubin, image.ptx)),
          object.getProperties(), object.getKernels()));
      out.device_images.push_back(std::move(image));
    }
    binary.setObjectsAttr(builder.getArrayAttr(packed_objects));
  }
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> host = mlir::translateModuleToLLVMIR(module, context);
  if (host == nullptr) return absl::InternalError("translating the host code to LLVM IR failed");
  for (const EntryFunction& entry : out.entries) {
    TESSERA_RETURN_IF_ERROR(AddPackedWrapper(*host, entry.name));
  }
  // The host code is JIT-linked only when a function is first looked up; its external symbols
  // are checked against the trust boundary now, so a forbidden one fails the compile.
  TESSERA_ASSIGN_OR_RETURN(RuntimeSymbolList symbols, HostSymbols(out));
  std::vector<std::string> forbidden;
  for (const llvm::GlobalValue& global : host->global_values()) {
    if (!global.isDeclaration() || global.getName().starts_with("llvm.")) continue;
    const std::string name = global.getName().str();
    const bool runtime = std::any_of(symbols.begin(), symbols.end(),
                                     [&](const auto& symbol) { return symbol.first == name; });
    if (!runtime && !IsAllowedHostSymbol(name)) forbidden.push_back(name);
  }
  if (!forbidden.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the module's host code references symbols outside the runtime allowlist (the GPU "
        "runtime, allocation, memcpy/memset, libm, registered delegates): ",
        absl::StrJoin(forbidden, ", ")));
  }
  llvm::raw_string_ostream os(out.host_llvm_ir);
  host->print(os, nullptr);
  return absl::OkStatus();
}

absl::Status CheckOptions(const CompileOptions& options) {
  if (options.opt_level < 0 || options.opt_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("opt_level must be 0, 1, 2 or 3, found ", options.opt_level));
  }
  if (options.target != Target::kNvptx) return absl::OkStatus();
  TESSERA_RETURN_IF_ERROR(ValidateArch(options.arch));
  // Without libdevice, gpu-module-to-binary only warns and leaves __nv_* calls unresolved.
  std::filesystem::path libdevice = std::filesystem::path(ResolveCudaToolkit(options)) /
                                    "nvvm" / "libdevice" / "libdevice.10.bc";
  std::error_code error;
  if (!std::filesystem::exists(libdevice, error)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA toolkit is not usable: ", libdevice.string(),
                     " is missing (set CompileOptions::cuda_toolkit or CUDA_HOME)"));
  }
  return absl::OkStatus();
}

/// Decides every Tile op (arbiter/arbiter.h) and writes the decisions back into `module`.
absl::Status ArbitrateModule(mlir::ModuleOp module, CompiledModule& out) {
  const CompileOptions& options = out.options;
  delegates::DelegateSelection selection;
  selection.target = options.target;
  selection.arch = options.target == Target::kHost ? "host" : options.arch;
  selection.deterministic = options.deterministic;
  selection.forced = options.matmul_delegate;
  selection.registry = options.delegates.get();
  selection.toolchain = Toolchain::Current().ToString();
  std::unique_ptr<arbiter::Prober> prober;  // made on the first contest
  if (options.arbitrate) {
    selection.arbitrate = [&](const arbiter::ArbitrationPoint& point,
                              const std::vector<arbiter::Candidate>& candidates) {
      arbiter::ArbitrationContext context;
      if (candidates.size() > 1) {
        if (prober == nullptr) prober = MakeProber(options);
        context.prober = prober.get();
      }
      context.cache = options.decisions.get();
      context.toolchain = selection.toolchain;
      return arbiter::Arbitrate(point, candidates, context);
    };
  }
  return delegates::SelectDelegates(module, selection, out.decisions);
}

/// Everything that changes the passes a stage adds.
std::string PipelineKey(const CompileOptions& options, const PipelineOptions& pipeline) {
  return absl::StrCat(TargetName(options.target), "/", pipeline.arch, "/O", pipeline.opt_level,
                      pipeline.deterministic ? "/det" : "", "/", pipeline.cuda_toolkit, "/",
                      reinterpret_cast<uintptr_t>(options.delegates.get()));
}

/// Parses `source` in `context` (diagnostics go to `diagnostics`): refuses IR nested deeper
/// than the parser's stack allows, and parses a NUL-terminated copy (MLIR's lexer reads one
/// byte past the end of its buffer).
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ParseSource(
    mlir::MLIRContext& context, const DiagnosticCollector& diagnostics, absl::string_view source,
    const std::string& source_name) {
  TESSERA_RETURN_IF_ERROR(CheckSourceBeforeParsing(source, source_name));
  const std::string terminated(source);
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(
      llvm::StringRef(terminated.data(), terminated.size()), config, source_name);
  if (!module || diagnostics.HasErrors()) {
    return diagnostics.Failure("invalid Tessera IR");
  }
  return module;
}

absl::Status CompileInSession(CompileSession& session, absl::string_view source,
                              CompiledModule& out) {
  const CompileOptions& options = out.options;
  mlir::MLIRContext& context = session.context();
  DiagnosticCollector diagnostics(context);
  TESSERA_ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module,
                           ParseSource(context, diagnostics, source, options.source_name));
  TESSERA_RETURN_IF_ERROR(CheckAllowedIr(*module, options.target));
  TESSERA_ASSIGN_OR_RETURN(out.entries, DescribeEntries(*module, source));

  PipelineOptions pipeline{options.arch, options.opt_level, options.deterministic,
                           ResolveCudaToolkit(options)};
  const std::string key = PipelineKey(options, pipeline);
  // Every Tile op is arbitrated first; a winning delegate becomes a kernel_call, so the
  // contract checks see it.
  TESSERA_RETURN_IF_ERROR(ArbitrateModule(*module, out));
  if (options.dump_stages) out.stages.emplace_back("arbitrate", Print(*module));
  TESSERA_RETURN_IF_ERROR(
      RunStage(session, key, *module, ContractStage(pipeline), diagnostics, out));
  TESSERA_RETURN_IF_ERROR(CheckSupported(*module, options.target));
  TESSERA_RETURN_IF_ERROR(RunStage(
      session, key, *module,
      PipelineStage{"delegates",
                    [&](mlir::OpPassManager& pm) {
                      pm.addPass(delegates::CreateLowerDelegateCallsPass(options.delegates.get(),
                                                                         options.target));
                    }},
      diagnostics, out));
  TakeDelegateRecord(*module, out);

  // Entry points get a C interface (memref descriptors by pointer) for the packed wrappers.
  for (mlir::func::FuncOp function : EntryFunctions(*module)) {
    function->setAttr("llvm.emit_c_interface", mlir::UnitAttr::get(&context));
  }
  const std::vector<PipelineStage> stages =
      options.target == Target::kHost ? HostStages() : NvptxStages(pipeline);
  for (const PipelineStage& stage : stages) {
    TESSERA_RETURN_IF_ERROR(RunStage(session, key, *module, stage, diagnostics, out));
  }
  if (auto checks = (*module)->getAttrOfType<mlir::ArrayAttr>(kRuntimeCheckMessagesAttr)) {
    for (mlir::Attribute message : checks) {
      out.runtime_checks.push_back(llvm::cast<mlir::StringAttr>(message).getValue().str());
    }
    (*module)->removeAttr(kRuntimeCheckMessagesAttr);
  }
  if (options.target == Target::kHost) return FinishHost(*module, out);
  return FinishNvptx(*module, out);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompiledModule>> Compile(absl::string_view source,
                                                        const CompileOptions& options) {
  TESSERA_RETURN_IF_ERROR(CheckOptions(options));
  auto out = std::make_unique<CompiledModule>();
  out->options = options;
  std::unique_ptr<CompileSession> session = Sessions().Acquire();
  absl::Status status = CompileInSession(*session, source, *out);
  Sessions().Release(std::move(session));
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<std::unique_ptr<HostExecutable>> LoadHostCode(const CompiledModule& module) {
  auto context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> host = llvm::parseAssemblyString(module.host_llvm_ir, error,
                                                                 *context);
  if (host == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot parse the module's host code: ", error.getMessage().str()));
  }
  std::vector<std::string> names;
  for (const EntryFunction& entry : module.entries) names.push_back(entry.name);
  TESSERA_ASSIGN_OR_RETURN(RuntimeSymbolList symbols, HostSymbols(module));
  return HostExecutable::Create(std::move(host), std::move(context), names,
                                module.options.opt_level, symbols);
}

absl::StatusOr<std::string> CanonicalSource(absl::string_view source) {
  std::unique_ptr<CompileSession> session = Sessions().Acquire();
  absl::StatusOr<std::string> text = [&]() -> absl::StatusOr<std::string> {
    // Everything that lives on the session's context (the diagnostic handler, the module)
    // ends inside this scope, before the session can be retired below.
    DiagnosticCollector diagnostics(session->context());
    TESSERA_ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module,
                             ParseSource(session->context(), diagnostics, source, "<source>"));
    // The generic form without locations: comments, whitespace and SSA names are gone, every
    // semantic detail stays.
    std::string printed;
    llvm::raw_string_ostream os(printed);
    mlir::OpPrintingFlags flags;
    flags.printGenericOpForm();
    module->print(os, flags);
    return printed;
  }();
  Sessions().Release(std::move(session));
  return text;
}

}  // namespace tessera::jit
