// LLVM's new-pass-manager default pipelines.
#include "jit/codegen/llvm_optimize.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/LoopIterator.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

namespace tessera::jit {
namespace {

/// The analysis managers a pipeline runs with, registered with `machine`'s callbacks.
struct Analyses {
  explicit Analyses(llvm::TargetMachine& machine, llvm::PipelineTuningOptions tuning = {})
      : builder(&machine, tuning) {
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
    "loop(loop-rotate,indvars,loop-unroll-full),instcombine<no-verify-fixpoint>,gvn,infer-"
    "alignment,adce,"
    "simplifycfg)";

/// Operand paths through `loop`'s body: the number of distinct use-def paths that end at
/// its most-reached instruction, counting each instruction of the loop as 1 plus the paths of
/// its operands defined in the loop (phis end a path). Saturates at UINT64_MAX / 2.
uint64_t MaxOperandPaths(llvm::Loop& loop, llvm::LoopInfo& info) {
  constexpr uint64_t kSaturated = UINT64_MAX / 2;
  llvm::DenseMap<const llvm::Instruction*, uint64_t> paths;
  uint64_t most = 0;
  llvm::LoopBlocksRPO order(&loop);
  order.perform(&info);
  for (llvm::BasicBlock* block : order) {
    for (llvm::Instruction& instruction : *block) {
      uint64_t count = 1;
      if (!llvm::isa<llvm::PHINode>(instruction)) {
        for (const llvm::Value* operand : instruction.operands()) {
          auto found = paths.find(llvm::dyn_cast<llvm::Instruction>(operand));
          if (found != paths.end()) count = std::min(kSaturated, count + found->second);
        }
      }
      paths[&instruction] = count;
      most = std::max(most, count);
    }
  }
  return most;
}

/// Keeps LLVM 22's loop vectorizer away from loops whose bodies would make it run for minutes:
/// its VPlan unrolling asks `isUniformAcrossVFsAndUFs` of each value, which walks operands
/// without memoisation — time exponential in the body's depth, so a tile.map body of two bf16
/// fmas (each rounded exactly: tessera-exact-float-ops) took 10 s and deeper ones > 9 min.
/// Such loops stay scalar (correct, and still optimised otherwise).
void KeepDeepLoopsFromTheVectorizer(llvm::Module& module) {
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo info(dominators);
    for (llvm::Loop* loop : info.getLoopsInPreorder()) {
      if (!loop->isInnermost()) continue;
      const uint64_t paths = MaxOperandPaths(*loop, info);
      if (paths <= kMaxVectorizedOperandPaths) continue;
      llvm::addStringMetadataToLoop(loop, "llvm.loop.vectorize.enable", 0);
      llvm::addStringMetadataToLoop(loop, "llvm.loop.interleave.count", 1);
    }
  }
}

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
    return absl::InternalError(
        absl::StrCat("the kernel pipeline '", kKernelPipeline,
                     "' does not parse with this LLVM: ", llvm::toString(std::move(error))));
  }
  passes.run(module, analyses.modules);
  return absl::OkStatus();
}

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine, int opt_level) {
  // Host code: the lowering already writes the vector code where lanes matter (lane folds, the
  // matmul's microkernels) and asks for interleaving on the loops that gain from it
  // (host::interleaveLoop). LLVM's interleaving of every vectorised loop (which also brings
  // a vectorised epilogue), its loop unrolling and its SLP vectorizer cost about 45 % of a host
  // compile; without them run time moved by -11 % to +6 % per op (docs/performance.md).
  llvm::PipelineTuningOptions tuning;
  tuning.LoopInterleaving = false;
  tuning.LoopUnrolling = false;
  tuning.SLPVectorization = false;
  Analyses analyses(machine, tuning);
  llvm::PassBuilder& builder = analyses.builder;
  llvm::ModuleAnalysisManager& modules = analyses.modules;
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  if (level != llvm::OptimizationLevel::O0) KeepDeepLoopsFromTheVectorizer(module);
  llvm::ModulePassManager passes = level == llvm::OptimizationLevel::O0
                                       ? builder.buildO0DefaultPipeline(level)
                                       : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, modules);
}

}  // namespace tessera::jit
