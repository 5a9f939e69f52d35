// Host code: packed wrappers, the runtime symbols, emission and loading.
#include "jit/codegen/host_code.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "jit/codegen/host_object.h"
#include "jit/compiler.h"
#include "jit/delegates/registry.h"
#include "jit/stage_clock.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "runtime/checked_call.h"
#include "runtime/delegate_entry_points.h"
#include "runtime/host_target.h"
#include "runtime/launch_entry_points.h"
#include "runtime/thread_pool.h"
#include "runtime/ukernels/matmul_f32.h"

namespace tessera::jit {

absl::Status AddPackedWrapper(llvm::Module& module, const std::string& name) {
  llvm::Function* target = module.getFunction("_mlir_ciface_" + name);
  if (target == nullptr) {
    return absl::InternalError(absl::StrCat("no C interface was generated for @", name));
  }
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* pointer = llvm::PointerType::getUnqual(context);
  auto* wrapper = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {pointer}, false),
      llvm::Function::ExternalLinkage, absl::StrCat(runtime::kPackedEntryPrefix, name), module);
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

absl::StatusOr<runtime::RuntimeSymbolList> HostSymbols(const CompiledModule& module) {
  runtime::RuntimeSymbolList symbols = runtime::DelegateEntryPoints();
  for (auto& symbol : runtime::RuntimeCheckSymbols()) symbols.push_back(symbol);
  for (auto& symbol : runtime::ParallelSymbols()) symbols.push_back(symbol);
  for (auto& symbol : runtime::MatmulUkernelSymbols()) symbols.push_back(symbol);
  if (module.options.target == Target::kNvptx) {
    for (auto& symbol : runtime::LaunchEntryPoints()) symbols.push_back(symbol);
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

absl::Status EmitHostCode(mlir::ModuleOp module, CompiledModule& out) {
  std::optional<StageClock> translate(std::in_place, out.stage_ms, "host-translate");
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
  TESSERA_ASSIGN_OR_RETURN(runtime::HostTarget target,
                           runtime::ResolveHostTarget(out.options.host_cpu));
  translate.reset();
  TESSERA_ASSIGN_OR_RETURN(out.host_object, CompileHostObject(*llvm_module, out.options.opt_level,
                                                              target, &out.stage_ms));
  StageClock load(out.stage_ms, "host-load");
  TESSERA_ASSIGN_OR_RETURN(runtime::RuntimeSymbolList symbols, HostSymbols(out));
  // Code for a CPU this one cannot run is for a package: compiled, held to the trust boundary
  // here too, not linked.
  if (!runtime::CheckHostCodeRunsHere(target.id).ok())
    return runtime::CheckHostObject(out.host_object, symbols);
  TESSERA_ASSIGN_OR_RETURN(out.host,
                           runtime::HostExecutable::Load(out.host_object, names, symbols));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<runtime::HostExecutable>> LoadHostCode(
    const CompiledModule& module) {
  std::vector<std::string> names;
  for (const EntryFunction& entry : module.entries) names.push_back(entry.name);
  TESSERA_ASSIGN_OR_RETURN(runtime::RuntimeSymbolList symbols, HostSymbols(module));
  return runtime::HostExecutable::Load(module.host_object, names, symbols);
}

}  // namespace tessera::jit
