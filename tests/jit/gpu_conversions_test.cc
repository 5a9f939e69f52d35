// The frozen GPU conversions (jit/codegen/gpu_conversions.cc) against MLIR's own passes: every
// module of a corpus (the examples, the original Tessera's launch-level fixtures, a
// hand-written gpu.module with shuffles and math functions) goes through the nvptx pipeline
// up to the PTX step both ways, on one compile session whose pass managers serve the whole
// corpus as they serve a service's compiles, and the IR after each stage is the same text.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "jit/compile_session.h"
#include "jit/diagnostics.h"
#include "jit/pipeline.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace tessera::jit {
namespace {

constexpr const char* kHandwritten = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @handwritten {
    gpu.func @row_max(%x: memref<?xf32>, %y: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %lane = gpu.lane_id
      %c0 = arith.constant 0 : index
      %n = memref.dim %x, %c0 : memref<?xf32>
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %e = math.exp %v : f32
        %l = math.log1p %e : f32
        %c16 = arith.constant 16 : i32
        %c32 = arith.constant 32 : i32
        %other, %valid = gpu.shuffle xor %l, %c16, %c32 : f32
        %m = arith.maximumf %l, %other : f32
        %t = math.tanh %m : f32
        memref.store %t, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
  func.func @run(%x: memref<?xf32>, %y: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    %blocks = arith.ceildivui %n, %c128 : index
    gpu.launch_func @handwritten::@row_max blocks in (%blocks, %c1, %c1)
        threads in (%c128, %c1, %c1) args(%x : memref<?xf32>, %y : memref<?xf32>)
    return
  }
}
)mlir";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::pair<std::string, std::string>> Corpus() {
  std::vector<std::pair<std::string, std::string>> corpus;
  for (const char* path : {
           "examples/attention_training_step.mlir",
           "examples/decoder_block.mlir",
           "examples/elementwise.mlir",
           "examples/mlp.mlir",
           "examples/model_ops.mlir",
           "tests/original/attention_kernel.mlir",
           "tests/original/dtype_matmul_kernel.mlir",
           "tests/original/matmul_kernel.mlir",
           "tests/original/norm_kernel.mlir",
           "tests/original/reduce_kernel.mlir",
           "tests/original/softmax_kernel.mlir",
       }) {
    corpus.emplace_back(path, ReadFile(path));
  }
  corpus.emplace_back("handwritten", kHandwritten);
  return corpus;
}

/// The IR after each nvptx stage but the PTX step, for `options`, on `session`'s pass managers.
std::vector<std::string> Lower(CompileSession& session, mlir::ModuleOp module,
                               const PipelineOptions& options) {
  const std::string key = options.frozen_gpu_conversions ? "frozen" : "upstream";
  std::vector<std::string> texts;
  for (const PipelineStage& stage : NvptxStages(options)) {
    if (stage.name == "ptx") break;
    mlir::PassManager& pm = session.StageManager(key, stage);
    EXPECT_TRUE(mlir::succeeded(pm.run(module))) << stage.name;
    texts.push_back(OperationText(module));
  }
  return texts;
}

TEST(GpuConversionsTest, FrozenPatternSetsLowerEveryModuleAsMlirPassesDo) {
  CompileSession session;
  DiagnosticCollector diagnostics(session.context());
  PipelineOptions frozen;
  frozen.arch = "sm_90";
  PipelineOptions upstream = frozen;
  upstream.frozen_gpu_conversions = false;
  int compared = 0;
  uint64_t builds_after_first_round = 0;
  // Twice through the corpus: the second round runs on pattern sets the first one used.
  for (int round = 0; round < 2; ++round) {
    if (round == 1) builds_after_first_round = FrozenGpuConversionBuilds();
    for (const auto& [name, source] : Corpus()) {
      SCOPED_TRACE(name);
      auto parsed = ParseSource(session.context(), diagnostics, source, name);
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      mlir::OwningOpRef<mlir::ModuleOp> reference((**parsed).clone());
      const std::vector<std::string> got = Lower(session, **parsed, frozen);
      const std::vector<std::string> want = Lower(session, *reference, upstream);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i], want[i]) << "after stage " << i;
      }
      EXPECT_NE(got.back().find("nvvm.kernel"), std::string::npos) << "kernels in NVVM";
      EXPECT_EQ(got.back().find("func.func"), std::string::npos) << "host code in LLVM";
      ++compared;
    }
  }
  EXPECT_EQ(compared, 24);
  EXPECT_EQ(FrozenGpuConversionBuilds(), builds_after_first_round)
      << "the second round built pattern sets again";
  EXPECT_LE(builds_after_first_round, 4u) << "a set built per module, not per pass manager";
  EXPECT_FALSE(diagnostics.HasErrors());
}

}  // namespace
}  // namespace tessera::jit
