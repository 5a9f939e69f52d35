#include "jit/codegen/runtime_checks.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "jit/diagnostics.h"
#include "jit/passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "runtime/checked_call.h"

namespace tessera::jit {

#define GEN_PASS_DEF_LOWERRUNTIMECHECKS
#include "jit/Passes.h.inc"

namespace {

class LowerRuntimeChecksPass : public impl::LowerRuntimeChecksBase<LowerRuntimeChecksPass> {
 public:
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::OpBuilder b(module.getContext());
    // User code only: what gpu.modules hold is device code, which does not trap or call us.
    llvm::SmallVector<mlir::memref::AllocOp> allocs;
    llvm::SmallVector<mlir::Operation*> divisions;
    for (auto function : module.getOps<mlir::func::FuncOp>()) {
      function.walk([&](mlir::Operation* op) {
        if (auto alloc = llvm::dyn_cast<mlir::memref::AllocOp>(op)) allocs.push_back(alloc);
        if (llvm::isa<mlir::arith::DivSIOp, mlir::arith::DivUIOp, mlir::arith::RemSIOp,
                      mlir::arith::RemUIOp, mlir::arith::CeilDivSIOp, mlir::arith::CeilDivUIOp,
                      mlir::arith::FloorDivSIOp>(op)) {
          divisions.push_back(op);
        }
      });
    }
    for (mlir::memref::AllocOp alloc : allocs) GuardAlloc(b, alloc);
    for (mlir::Operation* division : divisions) GuardDivision(b, division);
    llvm::SmallVector<mlir::cf::AssertOp> checks;
    module.walk([&](mlir::cf::AssertOp op) { checks.push_back(op); });
    if (checks.empty()) return;
    auto callee = module.lookupSymbol<mlir::func::FuncOp>(runtime::kCheckFailedSymbol);
    if (callee != nullptr && !callee.isExternal()) {
      module.emitError() << "@" << runtime::kCheckFailedSymbol << " is reserved for the runtime";
      return signalPassFailure();
    }
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
      const std::string banner = "ERROR: Runtime op verification failed\n";
      if (message.rfind(banner, 0) == 0) message.erase(0, banner.size());
      messages.push_back(b.getStringAttr(FormatLocation(loc) + ": " + message));
      check.erase();
    }
    module->setAttr(kRuntimeCheckMessagesAttr, b.getArrayAttr(messages));
  }

 private:
  /// Before `alloc`: every dynamic size ≥ 0 and the byte size ≤ kMaxAllocBytes, multiplied
  /// without overflow (running ≤ limit / size); after it: a non-NULL pointer (or no bytes).
  static void GuardAlloc(mlir::OpBuilder& b, mlir::memref::AllocOp alloc) {
    const mlir::Location loc = alloc.getLoc();
    mlir::MemRefType type = alloc.getType();
    b.setInsertionPoint(alloc);
    auto index = [&](int64_t value) -> mlir::Value {
      return mlir::arith::ConstantIndexOp::create(b, loc, value);
    };
    int64_t static_bytes = (type.getElementTypeBitWidth() + 7) / 8;
    for (int64_t size : type.getShape()) {
      if (!mlir::ShapedType::isDynamic(size)) static_bytes *= size;  // bounded by the allowlist
    }
    const std::string too_large = absl::StrCat("'memref.alloc' of more than ", kMaxAllocBytes,
                                               " bytes, or with a negative size");
    mlir::Value limit = index(kMaxAllocBytes);
    mlir::Value zero = index(0);
    mlir::Value one = index(1);
    mlir::Value bytes = index(static_bytes);
    for (mlir::Value size : alloc.getDynamicSizes()) {
      mlir::Value non_negative =
          mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::sge, size, zero);
      mlir::Value positive =
          mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::sgt, size, zero);
      mlir::Value divisor = mlir::arith::SelectOp::create(b, loc, positive, size, one);
      mlir::Value room = mlir::arith::DivUIOp::create(b, loc, limit, divisor);
      mlir::Value fits =
          mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ule, bytes, room);
      mlir::Value ok = mlir::arith::AndIOp::create(b, loc, non_negative, fits);
      mlir::cf::AssertOp::create(b, loc, ok, b.getStringAttr(too_large));
      bytes = mlir::arith::MulIOp::create(b, loc, bytes, size);
    }
    b.setInsertionPointAfter(alloc);
    mlir::Value pointer =
        mlir::memref::ExtractAlignedPointerAsIndexOp::create(b, loc, alloc.getResult());
    mlir::Value allocated =
        mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ne, pointer, zero);
    mlir::Value empty =
        mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::eq, bytes, zero);
    mlir::Value ok = mlir::arith::OrIOp::create(b, loc, allocated, empty);
    mlir::cf::AssertOp::create(b, loc, ok, b.getStringAttr("'memref.alloc' failed: out of memory"));
  }

  /// Replaces the divisor of `op` by 1 where it would trap: 0, or -1 with INT_MIN (signed).
  static void GuardDivision(mlir::OpBuilder& b, mlir::Operation* op) {
    mlir::Type type = op->getResult(0).getType();
    auto integer = llvm::dyn_cast<mlir::IntegerType>(type);
    if (!type.isIndex() && integer == nullptr) return;  // vectors are not Tessera IR
    const unsigned width = integer != nullptr ? integer.getWidth() : 64;
    const mlir::Location loc = op->getLoc();
    b.setInsertionPoint(op);
    auto constant = [&](const llvm::APInt& value) -> mlir::Value {
      return mlir::arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
    };
    mlir::Value dividend = op->getOperand(0);
    mlir::Value divisor = op->getOperand(1);
    mlir::Value bad = mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::eq, divisor,
                                                  constant(llvm::APInt(width, 0)));
    if (llvm::isa<mlir::arith::DivSIOp, mlir::arith::RemSIOp, mlir::arith::CeilDivSIOp,
                  mlir::arith::FloorDivSIOp>(op)) {
      mlir::Value minimum =
          mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::eq, dividend,
                                      constant(llvm::APInt::getSignedMinValue(width)));
      mlir::Value minus_one =
          mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::eq, divisor,
                                      constant(llvm::APInt::getAllOnes(width)));
      mlir::Value overflow = mlir::arith::AndIOp::create(b, loc, minimum, minus_one);
      bad = mlir::arith::OrIOp::create(b, loc, bad, overflow);
    }
    mlir::Value safe =
        mlir::arith::SelectOp::create(b, loc, bad, constant(llvm::APInt(width, 1)), divisor);
    op->setOperand(1, safe);
  }
};

}  // namespace

}  // namespace tessera::jit
