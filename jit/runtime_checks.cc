#include "jit/runtime_checks.h"

#include <string>

#include "jit/locations.h"
#include "jit/runtime/checked_call.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessera::jit {
namespace {

class LowerRuntimeChecksPass
    : public mlir::PassWrapper<LowerRuntimeChecksPass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerRuntimeChecksPass)

  llvm::StringRef getArgument() const override { return "tessera-lower-runtime-checks"; }
  llvm::StringRef getDescription() const override {
    return "Lower cf.assert to calls that fail the invocation with a status";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::scf::SCFDialect>();
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    llvm::SmallVector<mlir::cf::AssertOp> checks;
    module.walk([&](mlir::cf::AssertOp op) { checks.push_back(op); });
    if (checks.empty()) return;
    mlir::OpBuilder b(module.getContext());
    auto callee = module.lookupSymbol<mlir::func::FuncOp>(runtime::kCheckFailedSymbol);
    if (callee == nullptr) {
      b.setInsertionPointToStart(module.getBody());
      callee = mlir::func::FuncOp::create(b, module.getLoc(), runtime::kCheckFailedSymbol,
                                          b.getFunctionType({b.getI64Type()}, {}));
      callee.setPrivate();
    }
    llvm::SmallVector<mlir::Attribute> messages;
    if (auto existing = module->getAttrOfType<mlir::ArrayAttr>(kRuntimeCheckMessagesAttr)) {
      messages.append(existing.begin(), existing.end());
    }
    for (mlir::cf::AssertOp check : checks) {
      const mlir::Location loc = check.getLoc();
      b.setInsertionPoint(check);
      mlir::Value ok = check.getArg();
      mlir::Value one = mlir::arith::ConstantIntOp::create(b, loc, 1, 1);
      mlir::Value failed = mlir::arith::XOrIOp::create(b, loc, ok, one);
      auto branch = mlir::scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
      mlir::Value id =
          mlir::arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(messages.size()), 64);
      mlir::func::CallOp::create(b, loc, callee, mlir::ValueRange{id});
      // The message MLIR generates opens with a banner; the location and the reason are what
      // a caller needs.
      std::string message = check.getMsg().str();
      for (const char* banner : {"ERROR: Runtime op verification failed\n"}) {
        if (message.rfind(banner, 0) == 0) message.erase(0, std::string(banner).size());
      }
      messages.push_back(b.getStringAttr(FormatLocation(loc) + ": " + message));
      check.erase();
    }
    module->setAttr(kRuntimeCheckMessagesAttr, b.getArrayAttr(messages));
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateLowerRuntimeChecksPass() {
  return std::make_unique<LowerRuntimeChecksPass>();
}

}  // namespace tessera::jit
