// Host code generation: an LLVM module optimised and compiled to a relocatable object for one
// CPU, its static constructors and destructors renamed so the loader can run them.
#include "jit/codegen/host_object.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "jit/codegen/llvm_optimize.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "runtime/host_machine.h"

namespace tessera::jit {
namespace {

std::atomic<uint64_t> codegen_runs{0};

/// Removes `array` (llvm.global_ctors or llvm.global_dtors) from `module` and returns its
/// functions in priority order, renamed `<prefix><i>` with external linkage so they can be
/// looked up and called (the inactive ORC platform never runs them itself).
std::vector<std::string> TakeStructors(llvm::Module& module, llvm::StringRef array,
                                       llvm::StringRef prefix) {
  llvm::GlobalVariable* variable = module.getNamedGlobal(array);
  if (variable == nullptr) return {};
  std::vector<std::pair<uint64_t, llvm::Function*>> entries;
  if (auto* list = llvm::dyn_cast_or_null<llvm::ConstantArray>(
          variable->hasInitializer() ? variable->getInitializer() : nullptr)) {
    for (llvm::Value* operand : list->operands()) {
      auto* entry = llvm::dyn_cast<llvm::ConstantStruct>(operand);
      if (entry == nullptr || entry->getNumOperands() < 2) continue;
      auto* priority = llvm::dyn_cast<llvm::ConstantInt>(entry->getOperand(0));
      auto* function = llvm::dyn_cast<llvm::Function>(entry->getOperand(1));
      if (priority != nullptr && function != nullptr) {
        entries.emplace_back(priority->getZExtValue(), function);
      }
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  variable->eraseFromParent();
  std::vector<std::string> names;
  for (auto& [priority, function] : entries) {
    std::string name = absl::StrCat(prefix.str(), names.size());
    function->setName(name);
    function->setLinkage(llvm::GlobalValue::ExternalLinkage);
    names.push_back(name);
  }
  return names;
}

}  // namespace

absl::StatusOr<runtime::HostObject> CompileHostObject(llvm::Module& module, int opt_level,
                                                      const runtime::HostTarget& target,
                                                      StageTimes* stages) {
  StageTimes unused;
  StageTimes& times = stages != nullptr ? *stages : unused;
  runtime::InitializeNativeTarget();
  runtime::HostObject out;
  out.cpu = target.id;
  out.initializers = TakeStructors(module, "llvm.global_ctors", "_tessera_init_");
  out.finalizers = TakeStructors(module, "llvm.global_dtors", "_tessera_fini_");
  TESSERA_ASSIGN_OR_RETURN(llvm::orc::JITTargetMachineBuilder builder,
                           runtime::HostMachineBuilder(target));
  builder.setCodeGenOptLevel(opt_level == 0 ? llvm::CodeGenOptLevel::None
                                            : llvm::CodeGenOptLevel::Default);
  auto machine = builder.createTargetMachine();
  if (!machine) {
    return absl::InternalError(
        absl::StrCat("cannot create a host target machine: ", llvm::toString(machine.takeError())));
  }
  // Host code never unwinds (nothing it calls throws, and no unwinder is registered for its
  // frames): without unwind tables its object has no .eh_frame, which JITLink would parse and
  // runtime::CheckHostObjectShape refuses.
  for (llvm::Function& function : module) {
    function.addFnAttr(llvm::Attribute::NoUnwind);
    function.setUWTableKind(llvm::UWTableKind::None);
  }
  module.setDataLayout((*machine)->createDataLayout());
  module.setTargetTriple((*machine)->getTargetTriple());
  if (opt_level > 0) {
    StageClock clock(times, "host-optimize");
    OptimizeModule(module, **machine, opt_level);
  }
  StageClock clock(times, "host-codegen");
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, stream, nullptr,
                                      llvm::CodeGenFileType::ObjectFile)) {
    return absl::InternalError("the host target cannot emit object files");
  }
  codegen.run(module);
  codegen_runs.fetch_add(1, std::memory_order_relaxed);
  out.object.assign(object.data(), object.size());
  return out;
}

uint64_t HostCodegenCount() { return codegen_runs.load(std::memory_order_relaxed); }

}  // namespace tessera::jit
