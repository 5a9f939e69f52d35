// Parallel loops of host code onto the runtime's threads. tessera-lower-tile-to-loops outlines
// the outer loop of each Tile op into a private function marked `tessera_jit.parallel_body`
// (kParallelBodyAttr, dialect/Passes.h),
// `(begin, end, cost, captures...)`, and calls it over the whole range. After the conversion
// to the LLVM dialect this pass (tessera-dispatch-parallel-loops, jit/Passes.td) turns each such
// call into `tessera_rt_parallel_for(@task, &captures, begin, end, cost)` (runtime/thread_pool.h),
// where `@task(context, begin, end)` unpacks the captures and calls the body. A body that can
// fail a run-time check (tessera_rt_check_failed unwinds only the calling thread) stays a
// direct, sequential call.
#include <string>

#include "dialect/Passes.h"
#include "jit/passes.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"
#include "runtime/checked_call.h"
#include "runtime/thread_pool.h"

namespace tessera::jit {

#define GEN_PASS_DEF_DISPATCHPARALLELLOOPS
#include "jit/Passes.h.inc"

namespace {

/// Whether `function` (or a function it calls) can call tessera_rt_check_failed.
bool CanFailACheck(mlir::LLVM::LLVMFuncOp function, mlir::SymbolTable& symbols,
                   llvm::DenseMap<mlir::Operation*, bool>& memo) {
  // While a function is being examined it counts as failing, so a call cycle is answered
  // conservatively.
  auto [it, inserted] = memo.try_emplace(function, true);
  if (!inserted) return it->second;
  bool fails = false;
  function.walk([&](mlir::LLVM::CallOp call) {
    auto callee = call.getCallee();
    if (!callee) {
      fails = true;  // an indirect call: assume the worst
      return;
    }
    if (*callee == runtime::kCheckFailedSymbol) fails = true;
    auto target = symbols.lookup<mlir::LLVM::LLVMFuncOp>(*callee);
    if (target && !target.isExternal() && CanFailACheck(target, symbols, memo)) fails = true;
  });
  memo[function] = fails;
  return fails;
}

/// `void (i64 begin, i64 end, i64 cost, captures...)`: what tessera-lower-tile-to-loops
/// outlines (the attribute alone is not trusted).
bool HasBodySignature(mlir::LLVM::LLVMFuncOp body) {
  mlir::LLVM::LLVMFunctionType type = body.getFunctionType();
  if (!llvm::isa<mlir::LLVM::LLVMVoidType>(type.getReturnType()) || type.getNumParams() < 3) {
    return false;
  }
  for (unsigned i = 0; i < 3; ++i) {
    if (!type.getParamType(i).isInteger(64)) return false;
  }
  return !type.isVarArg();
}

class DispatchParallelLoopsPass
    : public impl::DispatchParallelLoopsBase<DispatchParallelLoopsPass> {
 public:
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext* context = &getContext();
    mlir::SymbolTable symbols(module);
    if (auto reserved = symbols.lookup<mlir::LLVM::LLVMFuncOp>(runtime::kParallelForSymbol);
        reserved && !reserved.isExternal()) {
      reserved.emitError() << "@" << runtime::kParallelForSymbol << " is reserved for the runtime";
      return signalPassFailure();
    }
    llvm::DenseMap<mlir::Operation*, bool> memo;
    llvm::DenseMap<mlir::Operation*, mlir::LLVM::LLVMFuncOp> tasks;
    // Bodies are called only from this module: internal, so that once LLVM inlines one into
    // its task, the body itself is dropped instead of compiled twice.
    module.walk([&](mlir::LLVM::LLVMFuncOp function) {
      if (function->hasAttr(::tessera::kParallelBodyAttr) && !function.isExternal()) {
        function.setLinkage(mlir::LLVM::Linkage::Internal);
      }
    });
    llvm::SmallVector<mlir::LLVM::CallOp> calls;
    module.walk([&](mlir::LLVM::CallOp call) {
      auto callee = call.getCallee();
      if (!callee) return;
      auto body = symbols.lookup<mlir::LLVM::LLVMFuncOp>(*callee);
      if (body && body->hasAttr(::tessera::kParallelBodyAttr) && HasBodySignature(body) &&
          !CanFailACheck(body, symbols, memo)) {
        calls.push_back(call);
      }
    });
    if (calls.empty()) return;

    auto ptr = mlir::LLVM::LLVMPointerType::get(context);
    auto i64 = mlir::IntegerType::get(context, 64);
    auto voidType = mlir::LLVM::LLVMVoidType::get(context);
    auto parallelFor = symbols.lookup<mlir::LLVM::LLVMFuncOp>(runtime::kParallelForSymbol);
    if (!parallelFor) {
      mlir::OpBuilder b(module.getBodyRegion());
      b.setInsertionPointToStart(module.getBody());
      parallelFor = b.create<mlir::LLVM::LLVMFuncOp>(
          module.getLoc(), runtime::kParallelForSymbol,
          mlir::LLVM::LLVMFunctionType::get(voidType, {ptr, ptr, i64, i64, i64}));
      symbols.insert(parallelFor);
    }

    for (mlir::LLVM::CallOp call : calls) {
      auto body = symbols.lookup<mlir::LLVM::LLVMFuncOp>(*call.getCallee());
      mlir::Location loc = call.getLoc();
      // Operands: begin, end, cost, then the captures.
      auto operands = call.getArgOperands();
      llvm::SmallVector<mlir::Type> captureTypes;
      for (mlir::Value capture : operands.drop_front(3)) captureTypes.push_back(capture.getType());
      auto captureStruct = mlir::LLVM::LLVMStructType::getLiteral(context, captureTypes);

      mlir::LLVM::LLVMFuncOp& task = tasks[body];
      if (!task) {
        // task(context, begin, end): load the captures and call the body.
        mlir::OpBuilder b(body);
        b.setInsertionPointAfter(body);
        task = b.create<mlir::LLVM::LLVMFuncOp>(
            loc, (body.getName() + "_task").str(),
            mlir::LLVM::LLVMFunctionType::get(voidType, {ptr, i64, i64}),
            mlir::LLVM::Linkage::Internal);
        symbols.insert(task);
        mlir::Block* entry = task.addEntryBlock(b);
        b.setInsertionPointToStart(entry);
        mlir::Value packed =
            b.create<mlir::LLVM::LoadOp>(loc, captureStruct, entry->getArgument(0));
        llvm::SmallVector<mlir::Value> arguments{
            entry->getArgument(1), entry->getArgument(2),
            b.create<mlir::LLVM::ConstantOp>(loc, i64, b.getI64IntegerAttr(0))};
        for (int64_t i = 0; i < static_cast<int64_t>(captureTypes.size()); ++i) {
          arguments.push_back(b.create<mlir::LLVM::ExtractValueOp>(loc, packed, i));
        }
        b.create<mlir::LLVM::CallOp>(loc, body, arguments);
        b.create<mlir::LLVM::ReturnOp>(loc, mlir::ValueRange{});
      }

      // At the call: the captures in a stack slot of the caller's entry block.
      auto caller = call->getParentOfType<mlir::LLVM::LLVMFuncOp>();
      mlir::OpBuilder b(context);
      b.setInsertionPointToStart(&caller.getBody().front());
      mlir::Value one = b.create<mlir::LLVM::ConstantOp>(loc, i64, b.getI64IntegerAttr(1));
      mlir::Value slot = b.create<mlir::LLVM::AllocaOp>(loc, ptr, captureStruct, one);
      b.setInsertionPoint(call);
      mlir::Value packed = b.create<mlir::LLVM::UndefOp>(loc, captureStruct);
      for (int64_t i = 0; i < static_cast<int64_t>(captureTypes.size()); ++i) {
        packed = b.create<mlir::LLVM::InsertValueOp>(loc, packed, operands[3 + i], i);
      }
      b.create<mlir::LLVM::StoreOp>(loc, packed, slot);
      mlir::Value taskAddress = b.create<mlir::LLVM::AddressOfOp>(loc, task);
      b.create<mlir::LLVM::CallOp>(
          loc, parallelFor,
          mlir::ValueRange{taskAddress, slot, operands[0], operands[1], operands[2]});
      call.erase();
    }
  }
};

}  // namespace

}  // namespace tessera::jit
