// tessera-verify-determinism: refuses, before anything is dispatched, a nondeterministic delegate
// or raw kernel that a deterministic function can reach — directly, through func.call chains,
// or through gpu.launch_func (docs/design.md §5).
#include <string>
#include <vector>

#include "dialect/NVIDIAOps.h"
#include "dialect/Passes.h"
#include "dialect/TesseraDialect.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace tessera {

#define GEN_PASS_DEF_VERIFYDETERMINISM
#include "dialect/Passes.h.inc"

namespace {

/// Why a function must be deterministic.
enum class Requirement {
  kNone,
  kDeclared,     ///< it carries tessera.deterministic
  kCompile,      ///< the whole compile is deterministic
  kKernelClaim,  ///< a raw kernel declaring tessera.determinism = "deterministic"
};

/// A deterministic function and the calls that lead from it to the function being searched.
struct Reach {
  mlir::FunctionOpInterface entry;
  Requirement why;
  std::vector<mlir::Operation*> calls;  ///< func.call ops, outermost first
  mlir::FunctionOpInterface where;      ///< the function the calls end in
};

class VerifyDeterminism : public impl::VerifyDeterminismBase<VerifyDeterminism> {
 public:
  using Base::Base;

  void runOnOperation() override {
    mlir::SymbolTableCollection symbols;
    symbols_ = &symbols;
    failed_ = false;
    getOperation().walk([&](mlir::FunctionOpInterface function) {
      const Requirement why = requirementOf(function);
      auto gpu_func = llvm::dyn_cast<mlir::gpu::GPUFuncOp>(function.getOperation());
      if (why == Requirement::kCompile && gpu_func && gpu_func.isKernel()) {
        checkKernelDeclares(function, function, Reach{function, why, {}, function});
      }
      if (why != Requirement::kNone) searchFrom(function, why);
    });
    if (failed_) signalPassFailure();
  }

 private:
  Requirement requirementOf(mlir::FunctionOpInterface function) const {
    if (isDeterministic(function)) return Requirement::kDeclared;
    if (allFunctions) return Requirement::kCompile;
    if (getDeclaredDeterminism(function) == llvm::StringRef("deterministic")) {
      return Requirement::kKernelClaim;
    }
    return Requirement::kNone;
  }

  /// Every function `entry` reaches through func.call (breadth first: the shortest chain),
  /// except those that are checked as deterministic themselves.
  void searchFrom(mlir::FunctionOpInterface entry, Requirement why) {
    std::vector<Reach> queue = {Reach{entry, why, {}, entry}};
    llvm::SmallPtrSet<mlir::Operation*, 8> seen = {entry.getOperation()};
    for (size_t next = 0; next < queue.size(); ++next) {
      Reach reach = queue[next];
      reach.where.walk([&](mlir::Operation* op) {
        if (auto delegate = llvm::dyn_cast<nvidia::DelegateOpInterface>(op)) {
          // An undeclared delegate (the original's kernel_call form) may be either.
          if (delegate.isNondeterministic() || delegate.getDeclaredDeterminism().empty()) {
            reportDelegate(reach, delegate);
          }
        } else if (auto launch = llvm::dyn_cast<mlir::gpu::LaunchFuncOp>(op)) {
          auto kernel = symbols_->lookupNearestSymbolFrom<mlir::FunctionOpInterface>(
              launch, launch.getKernel());
          // A deterministic compile checks every kernel where it is defined.
          if (kernel && reach.why != Requirement::kCompile) {
            checkKernelDeclares(kernel, launch, reach);
          }
        } else if (auto call = llvm::dyn_cast<mlir::CallOpInterface>(op)) {
          auto callee = llvm::dyn_cast_or_null<mlir::FunctionOpInterface>(
              call.resolveCallableInTable(symbols_));
          if (!callee || requirementOf(callee) != Requirement::kNone ||
              !seen.insert(callee.getOperation()).second) {
            return;
          }
          Reach deeper = reach;
          deeper.calls.push_back(op);
          deeper.where = callee;
          queue.push_back(std::move(deeper));
        }
      });
    }
  }

  /// A raw kernel that `reach` runs (at `site`: its launch, or its own definition) must declare
  /// itself deterministic.
  void checkKernelDeclares(mlir::FunctionOpInterface kernel, mlir::Operation* site, Reach reach) {
    std::optional<llvm::StringRef> declared = getDeclaredDeterminism(kernel);
    if (declared == llvm::StringRef("deterministic")) return;
    failed_ = true;
    mlir::InFlightDiagnostic diag = site->emitOpError();
    diag << "raw kernel @" << kernel.getName() << " ";
    if (declared) {
      diag << "declares " << kDeterminismAttrName << " = \"" << *declared << "\"";
    } else {
      diag << "does not declare its determinism";
    }
    const bool at_definition = site == kernel.getOperation();
    if (at_definition) {
      diag << ", and the whole compile is deterministic";
    } else {
      diag << ", and " << subject(reach);
    }
    diag << "; remedy: ";
    if (!declared) {
      diag << "declare " << kDeterminismAttrName << " = \"deterministic\" on the gpu.func if "
           << "it gives the same bits every run (no float atomics, a fixed reduction order), or ";
    }
    diag << remedy(reach);
    if (!at_definition) attachNotes(diag, reach);
  }

  void reportDelegate(Reach reach, nvidia::DelegateOpInterface delegate) {
    failed_ = true;
    mlir::InFlightDiagnostic diag = delegate->emitOpError();
    if (delegate.getDeclaredDeterminism().empty()) {
      diag << "delegate '" << delegate.getDelegateName() << "' declares no determinism in ";
    } else {
      diag << "nondeterministic delegate '" << delegate.getDelegateName() << "' (determinism = \""
           << delegate.getDeclaredDeterminism() << "\") in ";
    }
    if (reach.calls.empty()) {
      diag << (reach.why == Requirement::kKernelClaim ? "kernel @" : "deterministic function @")
           << reach.entry.getName();
      if (reach.why == Requirement::kKernelClaim) {
        diag << ", which declares " << kDeterminismAttrName << " = \"deterministic\"";
      }
    } else {
      diag << "@" << reach.where.getName() << ", " << subject(reach);
    }
    diag << "; remedy: use a delegate declared determinism = \"deterministic\" or the compiled "
         << "lowering, or " << remedy(reach);
    attachNotes(diag, reach);
  }

  /// "deterministic function @f reaches it through the call chain @f → @g → @h", or
  /// "deterministic function @f launches it".
  static std::string subject(Reach reach) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << (reach.why == Requirement::kKernelClaim ? "kernel @" : "deterministic function @")
       << reach.entry.getName();
    if (reach.calls.empty()) {
      os << " launches it";
      return text;
    }
    os << " reaches it through the call chain @" << reach.entry.getName();
    for (mlir::Operation* call : reach.calls) {
      auto callee = llvm::cast<mlir::CallOpInterface>(call).getCallableForCallee();
      if (auto symbol = llvm::dyn_cast<mlir::SymbolRefAttr>(callee)) {
        os << " \u2192 @" << symbol.getLeafReference().getValue();
      }
    }
    return text;
  }

  static std::string remedy(Reach reach) {
    const std::string name = reach.entry.getName().str();
    switch (reach.why) {
      case Requirement::kDeclared:
        return "remove '" + kDeterministicAttrName.str() + "' from @" + name;
      case Requirement::kCompile:
        return "compile without the deterministic requirement";
      case Requirement::kKernelClaim:
        return "declare @" + name + " " + kDeterminismAttrName.str() + " = \"nondeterministic\"";
      case Requirement::kNone:
        break;
    }
    return "";
  }

  static void attachNotes(mlir::InFlightDiagnostic& diag, Reach reach) {
    const llvm::StringRef name = reach.entry.getName();
    if (!reach.calls.empty()) {
      diag.attachNote(reach.calls.front()->getLoc()) << "@" << name << " makes the first call "
                                                     << "of the chain here";
    }
    switch (reach.why) {
      case Requirement::kDeclared:
        diag.attachNote(reach.entry.getLoc())
            << "@" << name << " is declared '" << kDeterministicAttrName << "' here";
        break;
      case Requirement::kCompile:
        diag.attachNote(reach.entry.getLoc())
            << "@" << name << " is deterministic because the whole compile is";
        break;
      case Requirement::kKernelClaim:
        diag.attachNote(reach.entry.getLoc())
            << "@" << name << " declares " << kDeterminismAttrName << " = \"deterministic\" here";
        break;
      case Requirement::kNone:
        break;
    }
  }

  mlir::SymbolTableCollection* symbols_ = nullptr;  // for the current run
  bool failed_ = false;
};

}  // namespace
}  // namespace tessera
