// Tests of the dialect C++ API: ops built programmatically verify (or fail with the documented
// message), the DelegateOpInterface reads the contract, and the determinism pass reports every
// offender through the PassManager.
#include <memory>
#include <string>
#include <vector>

#include "dialect/NVIDIAOps.h"
#include "dialect/Passes.h"
#include "dialect/Registration.h"
#include "dialect/TesseraDialect.h"
#include "dialect/TileOps.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// An MLIR context with the Tessera dialects loaded that records every diagnostic.
class DialectTest : public ::testing::Test {
 protected:
  DialectTest() : context_(makeRegistry()), builder_(&context_) {
    context_.loadAllAvailableDialects();
    handler_ =
        std::make_unique<mlir::ScopedDiagnosticHandler>(&context_, [this](mlir::Diagnostic& diag) {
          if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
            errors_.push_back(diag.str());
          }
          return mlir::success();
        });
    module_ = mlir::ModuleOp::create(builder_.getUnknownLoc());
  }

  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    registerTesseraDialects(registry);
    return registry;
  }

  /// Creates `func.func @name(argTypes...)` in the module and leaves the builder in its body.
  mlir::func::FuncOp createFunction(llvm::StringRef name, llvm::ArrayRef<mlir::Type> argTypes) {
    builder_.setInsertionPointToEnd(module_->getBody());
    auto function = builder_.create<mlir::func::FuncOp>(builder_.getUnknownLoc(), name,
                                                        builder_.getFunctionType(argTypes, {}));
    builder_.setInsertionPointToStart(function.addEntryBlock());
    return function;
  }

  mlir::MemRefType memref(llvm::ArrayRef<int64_t> shape, mlir::Type element = {}) {
    return mlir::MemRefType::get(shape, element ? element : builder_.getF32Type());
  }

  mlir::MLIRContext context_;
  mlir::OpBuilder builder_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler_;
  std::vector<std::string> errors_;
};

TEST_F(DialectTest, BuiltMatmulWithEpilogueVerifies) {
  auto function =
      createFunction("dense", {memref({mlir::ShapedType::kDynamic, 784}), memref({784, 256}),
                               memref({256}), memref({mlir::ShapedType::kDynamic, 256})});
  auto args = function.getArguments();
  auto matmul = builder_.create<tile::MatmulOp>(
      builder_.getUnknownLoc(), args[0], args[1], args[3], args[2], /*residual=*/mlir::Value(),
      /*transpose_a=*/false,
      /*transpose_b=*/false, tile::ActivationAttr::get(&context_, tile::Activation::relu),
      /*numeric_policy=*/nullptr, /*delegate=*/nullptr);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(matmul)));
  EXPECT_TRUE(errors_.empty());
  EXPECT_TRUE(matmul.hasFusedEpilogue());
  EXPECT_EQ(matmul.getActivationOrNone(), tile::Activation::relu);
  EXPECT_EQ(matmul.getNumericPolicyOrDefault(), tile::NumericPolicy::f32);
}

TEST_F(DialectTest, MatmulWithoutBiasOrActivationHasNoEpilogue) {
  auto function = createFunction("plain", {memref({8, 4}), memref({4, 2}), memref({8, 2})});
  auto args = function.getArguments();
  auto matmul = builder_.create<tile::MatmulOp>(
      builder_.getUnknownLoc(), args[0], args[1], args[2], /*bias=*/mlir::Value(),
      /*residual=*/mlir::Value(), false, false, nullptr, nullptr, nullptr);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(matmul)));
  EXPECT_FALSE(matmul.hasFusedEpilogue());
}

TEST_F(DialectTest, BuiltMatmulWithMismatchedKFailsWithMessage) {
  auto function = createFunction("bad", {memref({16, 64}), memref({32, 8}), memref({16, 8})});
  auto args = function.getArguments();
  auto matmul = builder_.create<tile::MatmulOp>(builder_.getUnknownLoc(), args[0], args[1], args[2],
                                                mlir::Value(), mlir::Value(), false, false, nullptr,
                                                nullptr, nullptr);
  EXPECT_TRUE(mlir::failed(mlir::verify(matmul)));
  EXPECT_THAT(errors_, ElementsAre(HasSubstr("expected K of A (64) to equal K of B (32)")));
}

TEST_F(DialectTest, BuiltReduceChecksAxis) {
  auto function = createFunction("reduce", {memref({4, 8}), memref({4})});
  auto args = function.getArguments();
  auto good = builder_.create<tile::ReduceOp>(builder_.getUnknownLoc(), tile::ReduceKind::mean,
                                              args[0], args[1], /*axis=*/1);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(good)));
  auto bad = builder_.create<tile::ReduceOp>(builder_.getUnknownLoc(), tile::ReduceKind::sum,
                                             args[0], args[1], /*axis=*/5);
  EXPECT_TRUE(mlir::failed(mlir::verify(bad)));
  EXPECT_THAT(errors_,
              ElementsAre(HasSubstr("expected axis in [0, 2) for an input of rank 2, found 5")));
}

TEST_F(DialectTest, ReduceKindsRoundTripThroughTheirNames) {
  for (auto kind : {tile::ReduceKind::sum, tile::ReduceKind::mean, tile::ReduceKind::max,
                    tile::ReduceKind::min, tile::ReduceKind::prod}) {
    EXPECT_EQ(tile::symbolizeReduceKind(tile::stringifyReduceKind(kind)), kind);
  }
  EXPECT_FALSE(tile::symbolizeReduceKind("median").has_value());
}

TEST_F(DialectTest, BuiltMapWithBodyVerifies) {
  auto function = createFunction("scale", {memref({16}), builder_.getF32Type(), memref({16})});
  auto args = function.getArguments();
  auto map = builder_.create<tile::MapOp>(
      builder_.getUnknownLoc(), mlir::ValueRange{args[0], args[1]}, mlir::ValueRange{args[2]});
  mlir::Block* body =
      builder_.createBlock(&map.getBody(), {}, {builder_.getF32Type(), builder_.getF32Type()},
                           {builder_.getUnknownLoc(), builder_.getUnknownLoc()});
  auto product = builder_.create<mlir::arith::MulFOp>(builder_.getUnknownLoc(),
                                                      body->getArgument(0), body->getArgument(1));
  builder_.create<tile::YieldOp>(builder_.getUnknownLoc(), mlir::ValueRange{product});
  EXPECT_TRUE(mlir::succeeded(mlir::verify(map)));
  EXPECT_TRUE(errors_.empty());
}

TEST_F(DialectTest, BuiltKernelCallExposesItsContract) {
  auto function = createFunction("gemm", {memref({4, 4}), memref({4, 4}), memref({4, 4})});
  auto call = builder_.create<nvidia::KernelCallOp>(
      builder_.getUnknownLoc(), mlir::TypeRange{}, function.getArguments(),
      builder_.getStringAttr("cublasSgemm_v2"), builder_.getStringAttr("sm_80+"),
      builder_.getStringAttr("c_abi"), builder_.getStringAttr("vendor_library"),
      builder_.getStringAttr("tolerance_bounded"), builder_.getStringAttr("nondeterministic"),
      builder_.getF64FloatAttr(1e-4), /*tolerance_rel=*/nullptr,
      /*covers=*/nullptr, /*grid=*/nullptr, /*block=*/nullptr, /*signature=*/nullptr);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(call)));
  auto delegate = llvm::cast<nvidia::DelegateOpInterface>(call.getOperation());
  EXPECT_EQ(delegate.getDelegateName(), "cublasSgemm_v2");
  EXPECT_EQ(delegate.getArch(), "sm_80+");
  EXPECT_TRUE(delegate.isNondeterministic());
  EXPECT_DOUBLE_EQ(delegate.getToleranceAttr().getValueAsDouble(), 1e-4);
  EXPECT_FALSE(delegate.getToleranceRelAttr());
  EXPECT_EQ(call.getCoversOrDefault(), "root_only");
}

TEST_F(DialectTest, BuiltKernelCallWithNanToleranceFails) {
  auto function = createFunction("gemm", {memref({4})});
  auto call = builder_.create<nvidia::KernelCallOp>(
      builder_.getUnknownLoc(), mlir::TypeRange{}, function.getArguments(),
      builder_.getStringAttr("k"), builder_.getStringAttr("sm_90"),
      builder_.getStringAttr("cuda_kernel"), builder_.getStringAttr("handwritten_kernel"),
      builder_.getStringAttr("tolerance_bounded"), builder_.getStringAttr("deterministic"),
      builder_.getF64FloatAttr(std::nan("")), nullptr, nullptr, nullptr, nullptr, nullptr);
  EXPECT_TRUE(mlir::failed(mlir::verify(call)));
  EXPECT_THAT(
      errors_,
      ElementsAre(HasSubstr("`tolerance` must be finite and greater than zero, found nan")));
}

TEST_F(DialectTest, BuiltInlinePtxReportsItselfAsInlinePtx) {
  auto function = createFunction("fast", {builder_.getF32Type()});
  auto ptx = builder_.create<nvidia::InlinePtxOp>(
      builder_.getUnknownLoc(), mlir::TypeRange{builder_.getF32Type()}, function.getArguments(),
      "ex2.approx.f32 $0, $1;", "=f,f", "sm_75+", "tolerance_bounded", "deterministic", nullptr,
      builder_.getF64FloatAttr(2e-7));
  auto delegate = llvm::cast<nvidia::DelegateOpInterface>(ptx.getOperation());
  EXPECT_EQ(delegate.getDelegateName(), "inline_ptx");
  EXPECT_FALSE(delegate.isNondeterministic());
  // Its contract holds; where it stands (here host code) is the compile's concern, not the
  // verifier's (the original verifies Target IR before outlining).
  EXPECT_TRUE(mlir::succeeded(mlir::verify(ptx)));
  EXPECT_TRUE(errors_.empty());
  EXPECT_FALSE(nvidia::isInDeviceCode(ptx));
}

constexpr llvm::StringLiteral kTwoOffenders = R"mlir(
func.func @seeded(%x: memref<4xf32>, %a: memref<4xf32>)
    attributes {tessera.deterministic = {seed = 7}} {
  tile.map ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%v: f32):
    %y = tessera_nvidia.inline_ptx %v {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
        arch = "sm_80+", accuracy = "reference_exact", determinism = "nondeterministic"}
        : (f32) -> f32
    tile.yield %y : f32
  }
  tessera_nvidia.kernel_call %a {callee = "scatter_add", arch = "sm_90",
      binding = "cuda_kernel", provenance = "handwritten_kernel",
      accuracy = "reference_exact", determinism = "nondeterministic",
      grid = array<i64: 1>, block = array<i64: 32>} : (memref<4xf32>) -> ()
  return
}
func.func @free(%a: memref<4xf32>) {
  tessera_nvidia.kernel_call %a {callee = "atomic_hist", arch = "sm_90",
      binding = "cuda_kernel", provenance = "handwritten_kernel",
      accuracy = "reference_exact", determinism = "nondeterministic",
      grid = array<i64: 1>, block = array<i64: 32>} : (memref<4xf32>) -> ()
  return
}
)mlir";

TEST_F(DialectTest, DeterministicAttributeHelpersReadTheSeed) {
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kTwoOffenders, &context_);
  ASSERT_TRUE(module);
  auto seeded = module->lookupSymbol<mlir::func::FuncOp>("seeded");
  auto free = module->lookupSymbol<mlir::func::FuncOp>("free");
  EXPECT_TRUE(isDeterministic(seeded));
  EXPECT_EQ(getDeterministicSeed(seeded), 7u);
  EXPECT_FALSE(isDeterministic(free));
  EXPECT_EQ(getDeterministicSeed(free), std::nullopt);
}

TEST_F(DialectTest, DeterminismPassReportsEveryOffenderInDeclaredFunctions) {
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kTwoOffenders, &context_);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context_);
  pm.addPass(createVerifyDeterminism());
  EXPECT_TRUE(mlir::failed(pm.run(*module)));
  EXPECT_THAT(errors_,
              ElementsAre(HasSubstr("nondeterministic delegate 'inline_ptx' (determinism = "
                                    "\"nondeterministic\") in deterministic function @seeded"),
                          HasSubstr("nondeterministic delegate 'scatter_add' (determinism = "
                                    "\"nondeterministic\") in deterministic function @seeded")));
}

TEST_F(DialectTest, DeterminismPassWithAllFunctionsCoversUndeclaredFunctions) {
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kTwoOffenders, &context_);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context_);
  VerifyDeterminismOptions options;
  options.allFunctions = true;
  pm.addPass(createVerifyDeterminism(options));
  EXPECT_TRUE(mlir::failed(pm.run(*module)));
  ASSERT_EQ(errors_.size(), 3u);
  EXPECT_THAT(errors_[2], HasSubstr("'atomic_hist'"));
  EXPECT_THAT(errors_[2], HasSubstr("compile without the deterministic requirement"));
}

TEST_F(DialectTest, DeterminismPassAcceptsDeterministicDelegates) {
  constexpr llvm::StringLiteral kClean = R"mlir(
func.func @clean(%a: memref<4xf32>) attributes {tessera.deterministic} {
  tessera_nvidia.kernel_call %a {callee = "k", arch = "sm_90", binding = "cuda_kernel",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 1>, block = array<i64: 32>}
      : (memref<4xf32>) -> ()
  return
}
)mlir";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kClean, &context_);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context_);
  pm.addPass(createVerifyDeterminism());
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
  EXPECT_TRUE(errors_.empty());
}

}  // namespace
}  // namespace tessera
