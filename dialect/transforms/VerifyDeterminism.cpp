// tessera-verify-determinism: refuses, before anything is dispatched, a nondeterministic delegate
// inside a deterministic function (DESIGN.md §5).
#include "dialect/NVIDIAOps.h"
#include "dialect/Passes.h"
#include "dialect/TesseraDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace tessera {

#define GEN_PASS_DEF_VERIFYDETERMINISM
#include "dialect/Passes.h.inc"

namespace {

class VerifyDeterminism : public impl::VerifyDeterminismBase<VerifyDeterminism> {
 public:
  using Base::Base;

  void runOnOperation() override {
    bool foundOffender = false;
    getOperation().walk([&](mlir::FunctionOpInterface function) {
      const bool declared = isDeterministic(function);
      if (!declared && !allFunctions) return;
      function.walk([&](nvidia::DelegateOpInterface delegate) {
        if (!delegate.isNondeterministic()) return;
        foundOffender = true;
        reportOffender(function, delegate, declared);
      });
    });
    if (foundOffender) signalPassFailure();
  }

 private:
  // Every offender gets its own error, so a user fixes them all in one round.
  static void reportOffender(mlir::FunctionOpInterface function,
                             nvidia::DelegateOpInterface delegate, bool declared) {
    const llvm::StringRef name = function.getName();
    mlir::InFlightDiagnostic diag = delegate->emitOpError();
    diag << "nondeterministic delegate '" << delegate.getDelegateName()
         << "' (determinism = \"" << delegate.getDeterminism() << "\") in deterministic function @"
         << name << "; remedy: use a delegate declared determinism = \"deterministic\" or the "
         << "compiled lowering, or ";
    if (declared) {
      diag << "remove '" << kDeterministicAttrName << "' from @" << name;
    } else {
      diag << "compile without the deterministic requirement";
    }
    if (declared) {
      diag.attachNote(function.getLoc())
          << "@" << name << " is declared '" << kDeterministicAttrName << "' here";
    } else {
      diag.attachNote(function.getLoc())
          << "@" << name << " is deterministic because the whole compile is";
    }
  }
};

}  // namespace
}  // namespace tessera
