// tile.matmul → kernel_call of a vendor GEMM, when a provider is selected.
#include <string>

#include "dialect/NVIDIAOps.h"
#include "dialect/TileOps.h"
#include "jit/delegates/abi_catalogue.h"
#include "jit/delegates/delegate_passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessera::jit::delegates {
namespace {

// cblas.h and cublas_api.h constants.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;
constexpr int kCublasOpN = 0;
constexpr int kCublasOpT = 1;

/// Why `provider` cannot serve `op`, or "" when it can.
std::string Decline(const MatmulProvider& provider, Target target, tile::MatmulOp op) {
  if (provider.target != target) {
    return "it serves the " + std::string(TargetName(provider.target)) +
           " target and this compile is for " + std::string(TargetName(target));
  }
  auto f32 = [](mlir::Value value) {
    return llvm::cast<mlir::MemRefType>(value.getType()).getElementType().isF32();
  };
  if (!f32(op.getLhs()) || !f32(op.getRhs()) || !f32(op.getOutput())) {
    return "it computes f32 only (A, B and C must be f32)";
  }
  if (op.getNumericPolicyOrDefault() != tile::NumericPolicy::f32) {
    return "it implements the f32 numeric policy only";
  }
  if (provider.covers == "root_only" && op.hasFusedEpilogue()) {
    return "it covers root_only and the op has a fused epilogue (bias or activation)";
  }
  for (mlir::Value memref : {op.getLhs(), op.getRhs(), op.getOutput()}) {
    if (!llvm::cast<mlir::MemRefType>(memref.getType()).getLayout().isIdentity()) {
      return "it needs dense row-major matrices";
    }
  }
  return "";
}

class SelectMatmulDelegates
    : public mlir::PassWrapper<SelectMatmulDelegates, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SelectMatmulDelegates)

  SelectMatmulDelegates(Target target, std::string forced)
      : target_(target), forced_(std::move(forced)) {}

  llvm::StringRef getArgument() const override { return "tessera-select-matmul-delegates"; }

  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<nvidia::NVIDIADialect, mlir::arith::ArithDialect,
                    mlir::memref::MemRefDialect>();
  }

  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](tile::MatmulOp op) {
      std::string name = op.getDelegate() ? op.getDelegate()->str() : forced_;
      if (name.empty()) return;
      const MatmulProvider* provider = FindMatmulProvider(name);
      if (provider == nullptr) {
        std::string known;
        for (const MatmulProvider& p : MatmulProviders()) known += (known.empty() ? "" : ", ") + p.name;
        op.emitOpError() << "unknown matmul delegate '" << name << "'; known: " << known;
        failed = true;
        return;
      }
      if (std::string why = Decline(*provider, target_, op); !why.empty()) {
        op.emitOpError() << "delegate '" << name << "' declines this op: " << why;
        failed = true;
        return;
      }
      Rewrite(op, *provider);
    });
    if (failed) signalPassFailure();
  }

 private:
  void Rewrite(tile::MatmulOp op, const MatmulProvider& provider) {
    mlir::OpBuilder b(op);
    mlir::Location loc = op.getLoc();
    auto i32 = [&](int64_t value) -> mlir::Value {
      return b.create<mlir::arith::ConstantOp>(loc, b.getI32IntegerAttr(value));
    };
    auto dim = [&](mlir::Value memref, int64_t d) -> mlir::Value {
      mlir::Value size = b.create<mlir::memref::DimOp>(loc, memref, d);
      return b.create<mlir::arith::IndexCastOp>(loc, b.getI32Type(), size);
    };
    auto f32 = [&](float value) -> mlir::Value {
      return b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(value));
    };
    mlir::Value a = op.getLhs();
    mlir::Value bm = op.getRhs();
    mlir::Value c = op.getOutput();
    mlir::Value m = dim(c, 0);
    mlir::Value n = dim(c, 1);
    mlir::Value k = dim(a, op.getTransposeA() ? 0 : 1);
    // Row-major leading dimensions: the row length of each stored matrix.
    mlir::Value lda = dim(a, 1);
    mlir::Value ldb = dim(bm, 1);
    mlir::Value ldc = dim(c, 1);
    llvm::SmallVector<mlir::Value> operands;
    if (provider.target == Target::kHost) {
      operands = {i32(kCblasRowMajor),
                  i32(op.getTransposeA() ? kCblasTrans : kCblasNoTrans),
                  i32(op.getTransposeB() ? kCblasTrans : kCblasNoTrans),
                  m, n, k, f32(1.0f), a, lda, bm, ldb, f32(0.0f), c, ldc};
    } else {
      // cuBLAS is column-major: compute Cᵀ = op(B)ᵀ · op(A)ᵀ on the same bytes.
      operands = {i32(op.getTransposeB() ? kCublasOpT : kCublasOpN),
                  i32(op.getTransposeA() ? kCublasOpT : kCublasOpN),
                  n, m, k, f32(1.0f), bm, ldb, a, lda, f32(0.0f), c, ldc};
    }
    b.create<nvidia::KernelCallOp>(
        loc, mlir::TypeRange{}, operands, provider.callee, provider.arch, "c_abi",
        "vendor_library", provider.accuracy, provider.determinism, /*tolerance=*/nullptr,
        /*tolerance_rel=*/nullptr, b.getStringAttr(provider.covers));
    op.erase();
  }

  Target target_;
  std::string forced_;
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateSelectMatmulDelegatesPass(Target target, std::string forced) {
  return std::make_unique<SelectMatmulDelegates>(target, std::move(forced));
}

}  // namespace tessera::jit::delegates
