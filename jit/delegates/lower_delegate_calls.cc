// kernel_call → calls into registered libraries and launches of registered kernels.
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "dialect/NVIDIAOps.h"
#include "jit/delegates/c_signatures.h"
#include "jit/delegates/delegate_passes.h"
#include "jit/delegates/gemm_extents.h"
#include "jit/delegates/registry.h"
#include "jit/diagnostics.h"
#include "jit/passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessera::jit {

#define GEN_PASS_DEF_LOWERDELEGATECALLS
#include "jit/Passes.h.inc"

}  // namespace tessera::jit

namespace tessera::jit::delegates {
namespace {

bool IsMemRefOf(mlir::Type type, bool (*element)(mlir::Type)) {
  auto memref = llvm::dyn_cast<mlir::MemRefType>(type);
  return memref && element(memref.getElementType());
}

bool Matches(AbiParam param, mlir::Type type) {
  switch (param) {
    case AbiParam::kI32:
      return type.isSignlessInteger(32);
    case AbiParam::kF32:
    case AbiParam::kF32ByPointer:
      return type.isF32();
    case AbiParam::kF64:
    case AbiParam::kF64ByPointer:
      return type.isF64();
    case AbiParam::kF32Array:
      return IsMemRefOf(type, [](mlir::Type t) { return t.isF32(); });
    case AbiParam::kF64Array:
      return IsMemRefOf(type, [](mlir::Type t) { return t.isF64(); });
    case AbiParam::kAnyArray:
      return llvm::isa<mlir::MemRefType>(type);
    case AbiParam::kCublasHandle:
      return false;
  }
  return false;
}

class LowerDelegateCalls : public impl::LowerDelegateCallsBase<LowerDelegateCalls> {
 public:
  using LowerDelegateCallsBase::LowerDelegateCallsBase;
  LowerDelegateCalls(const DelegateRegistry* registry, Target target) : registry_(registry) {
    this->target = target == Target::kNvptx ? "nvptx" : "host";
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    if (target != "host" && target != "nvptx") {
      module.emitError() << "tessera-lower-delegate-calls: target must be host or nvptx, not '"
                         << target << "'";
      return signalPassFailure();
    }
    target_ = target == "nvptx" ? Target::kNvptx : Target::kHost;
    llvm::SmallVector<nvidia::KernelCallOp> calls;
    module.walk([&](nvidia::KernelCallOp call) {
      if (!call->getParentOfType<mlir::gpu::GPUModuleOp>()) calls.push_back(call);
    });
    std::set<std::string> symbols;
    std::set<std::string> identities;
    bool failed = false;
    for (nvidia::KernelCallOp call : calls) {
      mlir::LogicalResult result = call.getDeclaredBinding() == "c_abi"
                                       ? LowerCAbi(call, symbols, identities)
                                       : LowerCudaKernel(call, identities);
      if (mlir::failed(result)) failed = true;
    }
    if (failed) return signalPassFailure();
    mlir::Builder b(module.getContext());
    auto strings = [&](const std::set<std::string>& values) {
      llvm::SmallVector<mlir::Attribute> attributes;
      for (const std::string& value : values) attributes.push_back(b.getStringAttr(value));
      return b.getArrayAttr(attributes);
    };
    if (!symbols.empty()) module->setAttr(kDelegateSymbolsAttr, strings(symbols));
    if (!identities.empty()) module->setAttr(kDelegateIdentitiesAttr, strings(identities));
  }

 private:
  /// `llvm.func @name(params) -> result` in the module, declared once.
  mlir::LLVM::LLVMFuncOp Declare(mlir::Operation* anchor, llvm::StringRef name, mlir::Type result,
                                 llvm::ArrayRef<mlir::Type> params) {
    mlir::ModuleOp module = anchor->getParentOfType<mlir::ModuleOp>();
    if (auto existing = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>(name)) return existing;
    mlir::OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToStart(module.getBody());
    return b.create<mlir::LLVM::LLVMFuncOp>(module.getLoc(), name,
                                            mlir::LLVM::LLVMFunctionType::get(result, params));
  }

  mlir::Value Call(mlir::OpBuilder& b, mlir::Location loc, mlir::LLVM::LLVMFuncOp callee,
                   mlir::ValueRange args) {
    auto call = b.create<mlir::LLVM::CallOp>(loc, callee, args);
    return call.getNumResults() == 1 ? call.getResult() : mlir::Value();
  }

  mlir::Type Ptr() { return mlir::LLVM::LLVMPointerType::get(&getContext()); }

  /// The address of a memref's first element, as `!llvm.ptr`.
  mlir::Value DataPointer(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref) {
    auto type = llvm::cast<mlir::MemRefType>(memref.getType());
    auto metadata = b.create<mlir::memref::ExtractStridedMetadataOp>(loc, memref);
    mlir::Value base = b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
    mlir::Value bytes = b.create<mlir::arith::ConstantIndexOp>(
        loc, (type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
    mlir::Value offset = b.create<mlir::arith::MulIOp>(loc, metadata.getOffset(), bytes);
    mlir::Value address = b.create<mlir::arith::IndexCastOp>(
        loc, b.getI64Type(), b.create<mlir::arith::AddIOp>(loc, base, offset));
    return b.create<mlir::LLVM::IntToPtrOp>(loc, Ptr(), address);
  }

  /// A stack slot holding `value`, as `!llvm.ptr`.
  mlir::Value Spill(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value) {
    mlir::Value one = b.create<mlir::LLVM::ConstantOp>(loc, b.getI64Type(), 1);
    mlir::Value slot = b.create<mlir::LLVM::AllocaOp>(loc, Ptr(), value.getType(), one);
    b.create<mlir::LLVM::StoreOp>(loc, value, slot);
    return slot;
  }

  void CountDispatch(mlir::OpBuilder& b, mlir::Location loc, mlir::Operation* anchor) {
    auto counter = Declare(anchor, "tessera_rt_count_dispatch",
                           mlir::LLVM::LLVMVoidType::get(&getContext()), {});
    Call(b, loc, counter, {});
  }

  mlir::LogicalResult LowerCAbi(nvidia::KernelCallOp call, std::set<std::string>& symbols,
                                std::set<std::string>& identities) {
    const std::string callee = call.getCallee().str();
    if (registry_ == nullptr) {
      return call.emitOpError() << "'" << callee
                                << "' not found in registered libraries (searched: none "
                                   "registered)";
    }
    absl::StatusOr<ResolvedSymbol> resolved = registry_->ResolveCAbi(callee);
    if (!resolved.ok()) return call.emitOpError() << std::string(resolved.status().message());

    // The C parameters, and which operand feeds each.
    const AbiSignature* known = KnownSignature(callee);
    llvm::SmallVector<AbiParam> params;
    AbiResult result_kind = AbiResult::kVoid;
    mlir::Type result_type;
    if (known != nullptr) {
      params.assign(known->params.begin(), known->params.end());
      result_kind = known->result;
      size_t expected = 0;
      for (AbiParam p : params) expected += p != AbiParam::kCublasHandle;
      if (call.getArgs().size() != expected) {
        return call.emitOpError() << "'" << callee << "' takes " << expected
                                  << " operand(s) (its C signature in the ABI catalogue), found "
                                  << call.getArgs().size();
      }
      if (!call.getResults().empty()) {
        return call.emitOpError() << "'" << callee << "' returns no value to the IR";
      }
      size_t operand = 0;
      for (AbiParam p : params) {
        if (p == AbiParam::kCublasHandle) continue;
        mlir::Type type = call.getArgs()[operand].getType();
        if (!Matches(p, type)) {
          return call.emitOpError() << "operand #" << operand << " of '" << callee << "': expected "
                                    << Describe(p) << ", found '" << TypeText(type) << "'";
        }
        ++operand;
      }
      bool needs_handle = false;
      for (AbiParam p : params) needs_handle |= p == AbiParam::kCublasHandle;
      if (needs_handle && target_ != Target::kNvptx) {
        return call.emitOpError() << "'" << callee
                                  << "' is a cuBLAS call and needs the nvptx "
                                     "target (device memory, a stream)";
      }
    } else {
      // The verifier has matched a declared signature against the operands and results.
      if (!call.getSignature()) {
        return call.emitOpError()
               << "'" << callee
               << "' is not in the ABI catalogue; declare its C signature with `signature = "
                  "(operand types) -> (result types)`";
      }
      mlir::FunctionType function = *call.getSignature();
      // Memrefs pass their data pointer and scalars their value (below).
      params.assign(function.getNumInputs(), AbiParam::kAnyArray);
      if (function.getNumResults() == 1) result_type = function.getResult(0);
    }

    mlir::OpBuilder b(call);
    mlir::Location loc = call.getLoc();
    // A GEMM's sizes are checked against its buffers before the library sees them.
    if (known != nullptr) GuardGemmExtents(b, call);
    llvm::SmallVector<mlir::Value> arguments;
    llvm::SmallVector<mlir::Type> argument_types;
    size_t operand = 0;
    for (AbiParam p : params) {
      mlir::Value value;
      if (p == AbiParam::kCublasHandle) {
        value = Call(b, loc, Declare(call, "tessera_rt_cublas_handle", Ptr(), {}), {});
      } else {
        mlir::Value op = call.getArgs()[operand++];
        if (llvm::isa<mlir::MemRefType>(op.getType())) {
          value = DataPointer(b, loc, op);
        } else if (p == AbiParam::kF32ByPointer || p == AbiParam::kF64ByPointer) {
          value = Spill(b, loc, op);
        } else {
          value = op;
        }
      }
      arguments.push_back(value);
      argument_types.push_back(value.getType());
    }
    mlir::Type llvm_result = result_kind == AbiResult::kStatus ? mlir::Type(b.getI32Type())
                             : result_type ? result_type
                                           : mlir::LLVM::LLVMVoidType::get(&getContext());
    CountDispatch(b, loc, call);
    mlir::Value returned =
        Call(b, loc, Declare(call, callee, llvm_result, argument_types), arguments);
    if (result_kind == AbiResult::kStatus) {
      mlir::Value name = mlir::LLVM::createGlobalString(
          loc, b, "tessera_delegate_name_" + callee, callee + '\0', mlir::LLVM::Linkage::Internal);
      Call(b, loc,
           Declare(call, "tessera_rt_delegate_status", mlir::LLVM::LLVMVoidType::get(&getContext()),
                   {b.getI32Type(), Ptr()}),
           {returned, name});
    }
    if (result_type) call.getResult(0).replaceAllUsesWith(returned);
    symbols.insert(callee);
    identities.insert(resolved->library.ToString());
    call.erase();
    return mlir::success();
  }

  mlir::LogicalResult LowerCudaKernel(nvidia::KernelCallOp call,
                                      std::set<std::string>& identities) {
    const std::string callee = call.getCallee().str();
    // (The host target refused cuda_kernel delegates before arbitration: delegate_targets.h.)
    if (registry_ == nullptr) {
      return call.emitOpError() << "kernel '" << callee
                                << "' not found in registered kernel images (searched: none "
                                   "registered)";
    }
    absl::StatusOr<KernelImage> image = registry_->ResolveKernel(callee);
    if (!image.ok()) return call.emitOpError() << std::string(image.status().message());
    // The verifier has checked the launch configuration (1 to 3 sizes each, CUDA's limits).
    llvm::ArrayRef<int64_t> grid = *call.getGrid();
    llvm::ArrayRef<int64_t> block = *call.getBlock();
    mlir::OpBuilder b(call);
    mlir::Location loc = call.getLoc();
    // Kernel parameters: a memref passes its data pointer, a scalar its value.
    const int64_t count = static_cast<int64_t>(call.getArgs().size());
    mlir::Value count_value =
        b.create<mlir::LLVM::ConstantOp>(loc, b.getI64Type(), std::max<int64_t>(count, 1));
    mlir::Value params = b.create<mlir::LLVM::AllocaOp>(loc, Ptr(), Ptr(), count_value);
    for (auto [index, operand] : llvm::enumerate(call.getArgs())) {
      mlir::Value value =
          llvm::isa<mlir::MemRefType>(operand.getType()) ? DataPointer(b, loc, operand) : operand;
      mlir::Value slot = Spill(b, loc, value);
      mlir::Value at = b.create<mlir::LLVM::GEPOp>(
          loc, Ptr(), Ptr(), params,
          llvm::ArrayRef<mlir::LLVM::GEPArg>{static_cast<int32_t>(index)});
      b.create<mlir::LLVM::StoreOp>(loc, slot, at);
    }
    auto size = [&](llvm::ArrayRef<int64_t> sizes, size_t i) -> mlir::Value {
      return b.create<mlir::LLVM::ConstantOp>(loc, b.getI64Type(), i < sizes.size() ? sizes[i] : 1);
    };
    mlir::Value image_name = mlir::LLVM::createGlobalString(
        loc, b, "tessera_image_" + image->name, image->name + '\0', mlir::LLVM::Linkage::Internal);
    mlir::Value kernel_name = mlir::LLVM::createGlobalString(
        loc, b, "tessera_kernel_" + callee, callee + '\0', mlir::LLVM::Linkage::Internal);
    mlir::Type i64 = b.getI64Type();
    auto launch = Declare(call, "tessera_rt_launch_image_kernel",
                          mlir::LLVM::LLVMVoidType::get(&getContext()),
                          {Ptr(), Ptr(), i64, i64, i64, i64, i64, i64, Ptr()});
    CountDispatch(b, loc, call);
    Call(b, loc, launch,
         {image_name, kernel_name, size(grid, 0), size(grid, 1), size(grid, 2), size(block, 0),
          size(block, 1), size(block, 2), params});
    identities.insert(image->identity.ToString());
    call.erase();
    return mlir::success();
  }

  const DelegateRegistry* registry_ = nullptr;  ///< null: nothing registered (tessera-opt)
  Target target_ = Target::kHost;
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateLowerDelegateCallsPass(const DelegateRegistry* registry,
                                                         Target target) {
  return std::make_unique<LowerDelegateCalls>(registry, target);
}

}  // namespace tessera::jit::delegates
