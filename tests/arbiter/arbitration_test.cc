// The arbiter end to end on the host target: tile.matmul compiled vs OpenBLAS vs declared test
// GEMMs, through jit::Compile — the noise rule on real timings, the accuracy gate on a delegate
// that computes in TF32, determinism, root_only, forcing, decisions written back into the IR,
// and the decision cache across compiles, processes (a reopened directory) and a changed
// library identity. Every arbitrated module is also run and checked against a C++ reference.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "arbiter/decision_cache.h"
#include "arbiter/decision_record.h"
#include "arbiter/matmul_probe.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "jit/delegates/registry.h"
#include "tests/jit/host_tensor.h"

namespace tessera::jit {
namespace {

using ::tessera::testing::FillUniform;
using ::tessera::testing::HostTensor;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Timing tests share the machine with whatever else runs: a single-threaded OpenBLAS keeps its
// worker threads from competing with the measurement (set before the library is loaded).
const bool kSingleThreadedBlas = setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/1) == 0;

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return srcdir != nullptr ? absl::StrCat(srcdir, "/tessera_jit/", path) : path;
}

std::string Matmul(int64_t m, int64_t n, int64_t k, const std::string& extra = "",
                   const std::string& attributes = "") {
  const std::string a = absl::StrCat("memref<", m, "x", k, "xf32>");
  const std::string b = absl::StrCat("memref<", k, "x", n, "xf32>");
  const std::string c = absl::StrCat("memref<", m, "x", n, "xf32>");
  const std::string bias = absl::StrCat("memref<", n, "xf32>");
  return absl::StrCat("func.func @mm(%a: ", a, ", %b: ", b, ", %c: ", c, ", %bias: ", bias,
                      ") {\n  tile.matmul %a, %b -> %c", extra, " ", attributes, " : ", a,
                      ", ", b, " -> ", c, "\n  return\n}\n");
}

delegates::MatmulProvider TestProvider(const std::string& name, const std::string& callee,
                                       const std::string& determinism = "deterministic") {
  delegates::MatmulProvider p;
  p.name = name;
  p.library = "testgemm";
  p.target = Target::kHost;
  p.callee = callee;
  p.abi = "cblas_sgemm";
  p.arch = "host";
  p.provenance = "handwritten_kernel";
  p.covers = "root_only";
  p.determinism = determinism;
  p.accuracy = "reference_exact";
  return p;
}

/// OpenBLAS, plus the test GEMM library (build `build`) with the providers `declare` lists.
std::shared_ptr<delegates::DelegateRegistry> Registry(
    const std::vector<delegates::MatmulProvider>& declare = {}, const std::string& build = "a") {
  auto registry = std::make_shared<delegates::DelegateRegistry>();
  EXPECT_TRUE(registry->RegisterDefaultLibraries(Target::kHost).ok());
  EXPECT_TRUE(registry
                  ->RegisterLibrary("testgemm",
                                    Runfile(absl::StrCat("tests/arbiter/libtest_gemm_", build,
                                                         ".so")))
                  .ok());
  for (const delegates::MatmulProvider& provider : declare) {
    absl::Status status = registry->DeclareMatmulProvider(provider);
    EXPECT_TRUE(status.ok()) << status;
  }
  return registry;
}

absl::StatusOr<std::unique_ptr<CompiledModule>> CompileArbitrated(
    const std::string& source, std::shared_ptr<const delegates::DelegateRegistry> registry,
    std::shared_ptr<arbiter::DecisionCache> decisions = nullptr, bool deterministic = false,
    const std::string& forced = "") {
  CompileOptions options;
  options.delegates = std::move(registry);
  options.decisions = std::move(decisions);
  options.deterministic = deterministic;
  options.matmul_delegate = forced;
  options.dump_stages = true;
  options.source_name = "a.mlir";
  return Compile(source, options);
}

/// Runs @mm on uniform inputs and checks C against the double-precision reference.
void ExpectComputesTheReference(const CompiledModule& module, int64_t m, int64_t n, int64_t k,
                                bool bias_relu = false) {
  HostTensor<float> a({m, k}), b({k, n}), c({m, n}), bias({n});
  FillUniform(a.data(), 1);
  FillUniform(b.data(), 2);
  FillUniform(bias.data(), 3);
  void* args[] = {a.descriptor(), b.descriptor(), c.descriptor(), bias.descriptor()};
  (*module.host->Lookup("mm"))(args);
  arbiter::MatmulInputs inputs;
  inputs.problem.m = m;
  inputs.problem.n = n;
  inputs.problem.k = k;
  inputs.problem.bias = bias_relu;
  inputs.problem.activation = bias_relu ? "relu" : "none";
  inputs.a = a.data();
  inputs.b = b.data();
  inputs.bias = bias.data();
  const arbiter::AccuracyCheck check =
      arbiter::CheckAccuracy(c.data(), arbiter::ReferenceMatmul(inputs), {1e-3, 1e-5});
  EXPECT_LE(check.ratio, 1) << "max |out - ref| " << check.max_abs_error;
}

std::string ArbitratedIr(const CompiledModule& module) {
  for (const auto& [stage, ir] : module.stages) {
    if (stage == "arbitrate") return ir;
  }
  return "";
}

TEST(ArbitrationTest, CompiledVsOpenBlasAcrossShapesFollowsTheNoiseRule) {
  auto registry = Registry();
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{4, 4, 4},
                         {33, 17, 65},
                         {256, 256, 256}}) {
    SCOPED_TRACE(absl::StrCat(m, "x", n, "x", k));
    auto module = CompileArbitrated(Matmul(m, n, k), registry);
    ASSERT_TRUE(module.ok()) << module.status();
    ASSERT_EQ((*module)->decisions.size(), 1u);
    const arbiter::DecisionRecord& record = (*module)->decisions[0];
    EXPECT_EQ(record.source, "measured");
    EXPECT_EQ(record.timing_source, "host steady_clock");
    const arbiter::CandidateOutcome* compiled = record.Find("compiled");
    const arbiter::CandidateOutcome* openblas = record.Find("openblas");
    ASSERT_NE(compiled, nullptr);
    ASSERT_NE(openblas, nullptr);
    EXPECT_EQ(record.Find("cublas")->gate, "applicability");
    EXPECT_EQ(record.Find("cublas")->samples, 0);
    ASSERT_GE(compiled->samples, 3);
    ASSERT_GE(openblas->samples, 3);
    EXPECT_LE(compiled->error_ratio, 1);
    EXPECT_LE(openblas->error_ratio, 1);
    // The rule: the faster wins when separated by more than 2× noise; otherwise a tie-break.
    const bool compiled_faster = compiled->median_s < openblas->median_s;
    if (record.separation > 2 * record.noise) {
      EXPECT_EQ(record.winner, compiled_faster ? "compiled" : "openblas");
    } else {
      EXPECT_THAT(record.reason, HasSubstr("within noise"));
    }
    // The decision is in the IR, and the module runs what it says.
    const std::string ir = ArbitratedIr(**module);
    EXPECT_THAT(ir, AllOf(HasSubstr("tessera_jit.decision = {"),
                          HasSubstr(absl::StrCat("winner = \"", record.winner, "\""))));
    EXPECT_EQ(ir.find("tessera_nvidia.kernel_call") != std::string::npos,
              record.winner == "openblas");
    ExpectComputesTheReference(**module, m, n, k);
  }
}

TEST(ArbitrationTest, AClearlySlowerCandidateLosesByAClearMargin) {
  // A controlled race, the same on every CPU: the test GEMM doing 16 times the work against the
  // compiled lowering (no real library whose speed depends on the machine).
  auto registry = std::make_shared<delegates::DelegateRegistry>();
  ASSERT_TRUE(registry->RegisterLibrary("testgemm", Runfile("tests/arbiter/libtest_gemm_a.so")).ok());
  ASSERT_TRUE(registry->DeclareMatmulProvider(TestProvider("slowgemm", "tessera_test_sgemm_slow")).ok());
  auto module = CompileArbitrated(Matmul(64, 64, 64), registry);
  ASSERT_TRUE(module.ok()) << module.status();
  const arbiter::DecisionRecord& record = (*module)->decisions[0];
  EXPECT_EQ(record.winner, "compiled") << arbiter::FormatRecord(record);
  EXPECT_GT(record.separation, 2 * record.noise);
  EXPECT_GT(record.Find("slowgemm")->median_s, record.Find("compiled")->median_s);
  EXPECT_LE(record.Find("slowgemm")->error_ratio, 1);
  EXPECT_TRUE((*module)->delegate_symbols.empty());
  ExpectComputesTheReference(**module, 64, 64, 64);
}

TEST(ArbitrationTest, AMatmulTooLargeForMemoryIsMeasuredAtACappedShape) {
  // 2^40 rows: the real buffers would take 64 TiB. The probes never allocate more than the
  // budget, and the record says at which shape the candidates were timed.
  auto module = CompileArbitrated(Matmul(int64_t{1} << 40, 8, 8), Registry());
  ASSERT_TRUE(module.ok()) << module.status();
  const arbiter::DecisionRecord& record = (*module)->decisions[0];
  EXPECT_EQ(record.source, "measured");
  EXPECT_THAT(record.measured_shape,
              HasSubstr("x8x8 (capped from 1099511627776x8x8: probe buffers are limited to "
                        "64 MiB)"));
}

TEST(ArbitrationTest, TheAccuracyGateRejectsADelegateOutsideItsDeclaredBudget) {
  auto tf32 = TestProvider("tf32gemm", "tessera_test_sgemm_tf32");
  auto module = CompileArbitrated(Matmul(8, 8, 4), Registry({tf32}));
  ASSERT_TRUE(module.ok()) << module.status();
  const arbiter::DecisionRecord& record = (*module)->decisions[0];
  const arbiter::CandidateOutcome* wrong = record.Find("tf32gemm");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->gate, "accuracy");
  EXPECT_EQ(wrong->worst_probe, "16x16x4096");  // short sums stay inside the budget
  EXPECT_GT(wrong->error_ratio, 1);
  EXPECT_NE(record.winner, "tf32gemm");
  // Forcing it fails the compile, naming the gate.
  auto forced = CompileArbitrated(Matmul(8, 8, 4), Registry({tf32}), nullptr, false,
                                  "tf32gemm");
  EXPECT_EQ(forced.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(forced.status().message(),
              HasSubstr("a.mlir:2:3: error: tile.matmul: the forced candidate 'tf32gemm' "
                        "(option `matmul_delegate`) is rejected by the accuracy gate: on probe "
                        "16x16x4096"));
  // Declared honestly (tolerance_bounded, 5e-2), the same code passes and can be forced.
  tf32.name = "tf32gemm_bounded";
  tf32.accuracy = "tolerance_bounded";
  tf32.tolerance = 5e-2;
  auto honest = CompileArbitrated(Matmul(32, 32, 32), Registry({tf32}), nullptr, false,
                                  "tf32gemm_bounded");
  ASSERT_TRUE(honest.ok()) << honest.status();
  EXPECT_EQ((*honest)->decisions[0].winner, "tf32gemm_bounded");
  EXPECT_LE((*honest)->decisions[0].Find("tf32gemm_bounded")->error_ratio, 1);
}

TEST(ArbitrationTest, DeterminismRemovesANondeterministicCandidate) {
  auto racy = TestProvider("racygemm", "tessera_test_sgemm", "nondeterministic");
  auto module = CompileArbitrated(Matmul(64, 64, 64), Registry({racy}), nullptr,
                                  /*deterministic=*/true);
  ASSERT_TRUE(module.ok()) << module.status();
  const arbiter::DecisionRecord& record = (*module)->decisions[0];
  EXPECT_TRUE(record.point.deterministic);
  EXPECT_EQ(record.Find("racygemm")->gate, "determinism");
  EXPECT_EQ(record.Find("racygemm")->samples, 0);
  EXPECT_EQ(record.Find("racygemm")->error_ratio, -1);  // never probed
  // Without the requirement it competes.
  auto free = CompileArbitrated(Matmul(64, 64, 64), Registry({racy}));
  ASSERT_TRUE(free.ok()) << free.status();
  EXPECT_EQ((*free)->decisions[0].Find("racygemm")->gate, "");
  EXPECT_GE((*free)->decisions[0].Find("racygemm")->samples, 3);
  // Forcing it into a deterministic function is an error that says why.
  auto forced = CompileArbitrated(
      Matmul(64, 64, 64, "", "{delegate = \"racygemm\"}"), Registry({racy}), nullptr, true);
  EXPECT_THAT(forced.status().message(),
              HasSubstr("the forced candidate 'racygemm' (attribute `delegate`) is rejected by "
                        "the determinism gate: it declares determinism = \"nondeterministic\""));
}

TEST(ArbitrationTest, RootOnlyDelegatesDeclineAFusedEpilogue) {
  auto module = CompileArbitrated(
      Matmul(64, 64, 64, " bias(%bias : memref<64xf32>) activation(relu)"), Registry());
  ASSERT_TRUE(module.ok()) << module.status();
  const arbiter::DecisionRecord& record = (*module)->decisions[0];
  EXPECT_EQ(record.winner, "compiled");
  EXPECT_EQ(record.source, "sole candidate");
  EXPECT_EQ(record.Find("openblas")->gate, "applicability");
  EXPECT_THAT(record.Find("openblas")->reason,
              HasSubstr("it covers root_only and the op has a fused epilogue"));
  ExpectComputesTheReference(**module, 64, 64, 64, /*bias_relu=*/true);
}

TEST(ArbitrationTest, ForcingByOptionOrAttribute) {
  auto registry = Registry();
  auto compiled = CompileArbitrated(Matmul(256, 256, 256), registry, nullptr, false, "compiled");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ((*compiled)->decisions[0].winner, "compiled");
  EXPECT_EQ((*compiled)->decisions[0].source, "forced");
  EXPECT_TRUE((*compiled)->delegate_symbols.empty());
  // The attribute wins over the option.
  auto openblas = CompileArbitrated(Matmul(8, 8, 8, "", "{delegate = \"openblas\"}"), registry,
                                    nullptr, false, "compiled");
  ASSERT_TRUE(openblas.ok()) << openblas.status();
  EXPECT_EQ((*openblas)->decisions[0].winner, "openblas");
  EXPECT_THAT((*openblas)->decisions[0].reason,
              HasSubstr("forced (attribute `delegate`); within its accuracy budget"));
  EXPECT_EQ((*openblas)->decisions[0].Find("compiled")->gate, "forcing");
  ExpectComputesTheReference(**openblas, 8, 8, 8);
  auto unknown = CompileArbitrated(Matmul(8, 8, 8), registry, nullptr, false, "mkl");
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("a.mlir:2:3: error: tile.matmul: the forced candidate 'mkl' (option "
                        "`matmul_delegate`) is unknown; candidates: compiled, openblas, cublas"));
}

TEST(ArbitrationTest, DecisionsAreReusedAndInvalidatedByAChangedLibraryIdentity) {
  const std::string dir = ::testing::TempDir() + "/arbitration_decisions";
  std::filesystem::remove_all(dir);
  auto exact = TestProvider("testsgemm", "tessera_test_sgemm");
  auto cache = std::make_shared<arbiter::DecisionCache>(dir);
  auto first = CompileArbitrated(Matmul(48, 48, 48), Registry({exact}, "a"), cache);
  ASSERT_TRUE(first.ok()) << first.status();
  const arbiter::DecisionRecord made = (*first)->decisions[0];
  EXPECT_EQ(made.source, "measured");

  auto again = CompileArbitrated(Matmul(48, 48, 48), Registry({exact}, "a"), cache);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->decisions[0].source, "cache");
  EXPECT_EQ((*again)->decisions[0].winner, made.winner);
  EXPECT_EQ((*again)->decisions[0].key, made.key);

  // Another process: the record comes from disk.
  auto reopened = std::make_shared<arbiter::DecisionCache>(dir);
  auto from_disk = CompileArbitrated(Matmul(48, 48, 48), Registry({exact}, "a"), reopened);
  ASSERT_TRUE(from_disk.ok()) << from_disk.status();
  EXPECT_EQ((*from_disk)->decisions[0].source, "cache");

  // Build b of the library under the same name: its identity changed, so the record misses,
  // says why, is re-measured — and the old one is kept.
  auto rebuilt = CompileArbitrated(Matmul(48, 48, 48), Registry({exact}, "b"), reopened);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  const arbiter::DecisionRecord& remade = (*rebuilt)->decisions[0];
  EXPECT_NE(remade.key, made.key);
  EXPECT_EQ(remade.base_key, made.base_key);
  EXPECT_THAT(remade.source, AllOf(HasSubstr("measured; stale record (testsgemm: "),
                                   HasSubstr("libtest_gemm_a.so"), HasSubstr("libtest_gemm_b.so"),
                                   HasSubstr(absl::StrCat("its winner ", made.winner))));
  EXPECT_EQ(reopened->Records().size(), 2u);
}

}  // namespace
}  // namespace tessera::jit
