// LLVM's new-pass-manager default pipelines.
#include "jit/llvm_optimize.h"

#include "absl/strings/str_cat.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"

namespace tessera::jit {
namespace {

/// The analysis managers a pipeline runs with, registered with `machine`'s callbacks.
struct Analyses {
  explicit Analyses(llvm::TargetMachine& machine) : builder(&machine) {
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(cgscc);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, cgscc, modules);
  }
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder;
};

/// nvvm-reflect is the NVPTX target's (registered by its pass-builder callbacks). instcombine
/// without its fixpoint check: LLVM builds with it on abort the process when one round does not
/// reach a fixpoint, which is a missed simplification, not an error.
constexpr char kKernelPipeline[] =
    "nvvm-reflect,always-inline,"
    "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(licm),"
    "loop(loop-rotate,indvars,loop-unroll-full),instcombine<no-verify-fixpoint>,gvn,infer-alignment,adce,"
    "simplifycfg)";

}  // namespace

absl::Status OptimizeKernelModule(llvm::Module& module, llvm::TargetMachine& machine,
                                  int opt_level) {
  if (opt_level <= 0) {
    OptimizeModule(module, machine, 0);
    return absl::OkStatus();
  }
  Analyses analyses(machine);
  llvm::ModulePassManager passes;
  if (llvm::Error error = analyses.builder.parsePassPipeline(passes, kKernelPipeline)) {
    return absl::InternalError(absl::StrCat("the kernel pipeline '", kKernelPipeline,
                                            "' does not parse with this LLVM: ",
                                            llvm::toString(std::move(error))));
  }
  passes.run(module, analyses.modules);
  return absl::OkStatus();
}

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine, int opt_level) {
  Analyses analyses(machine);
  llvm::PassBuilder& builder = analyses.builder;
  llvm::ModuleAnalysisManager& modules = analyses.modules;
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes = level == llvm::OptimizationLevel::O0
                                       ? builder.buildO0DefaultPipeline(level)
                                       : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, modules);
}

}  // namespace tessera::jit
