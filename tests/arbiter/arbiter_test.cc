// The arbiter without a compiler: the noise rule, timing statistics, the host reference and
// Over 600 lines: every rule of the arbiter against one scripted prober and its fixtures.
// accuracy check, decision records as JSON, the decision cache, and Arbitrate's gates driven
// by a scripted prober (exact timings and outputs, so every rule is checked deterministically).
#include "arbiter/arbiter.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "arbiter/decision_cache.h"
#include "arbiter/decision_record.h"
#include "arbiter/element_storage.h"
#include "arbiter/matmul_probe.h"
#include "arbiter/op_probe.h"
#include "arbiter/plan.h"
#include "arbiter/timing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::arbiter {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(TimingTest, MedianAndRelativeInterquartileSpread) {
  TimingSummary s = Summarize({5, 1, 3, 2, 4});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median_s, 3);
  EXPECT_DOUBLE_EQ(s.spread, (4.0 - 2.0) / 3.0);
  EXPECT_EQ(Summarize({}).samples, 0);
}

TEST(TimingTest, NoiseIsTheStandardErrorOfTheMedian) {
  EXPECT_DOUBLE_EQ(MedianNoise({1.0, 0.09, 9}), 0.03);
  EXPECT_DOUBLE_EQ(MedianNoise({1.0, 0.09, 0}), 0.09);
}

TEST(TimingTest, FastestWinsOnlyWhenSeparatedByMoreThanTwiceTheNoise) {
  const std::vector<std::string> order = {"compiled", "openblas"};
  // 30 % apart; spreads of 6 % over 9 samples: a median noise of 2 %. Separated.
  Ranking clear = Rank({{"compiled", {1.3, 0.06, 9}}, {"openblas", {1.0, 0.03, 9}}}, "", order);
  EXPECT_EQ(clear.winner, "openblas");
  EXPECT_NEAR(clear.separation, 0.3, 1e-12);
  EXPECT_DOUBLE_EQ(clear.noise, 0.02);
  EXPECT_THAT(clear.reason, HasSubstr("more than 2 × noise"));
  // 3 % apart, 2 % noise: a tie. The stable order decides…
  Ranking tie = Rank({{"compiled", {1.03, 0.06, 9}}, {"openblas", {1.0, 0.06, 9}}}, "", order);
  EXPECT_EQ(tie.winner, "compiled");
  EXPECT_THAT(tie.reason, HasSubstr("stable tie-break picks compiled"));
  // …unless the incumbent is among the tied.
  Ranking kept =
      Rank({{"compiled", {1.0, 0.06, 9}}, {"openblas", {1.03, 0.06, 9}}}, "openblas", order);
  EXPECT_EQ(kept.winner, "openblas");
  EXPECT_THAT(kept.reason, HasSubstr("the incumbent openblas stays"));
  // Perfectly steady samples still face the 1 % floor: 1.5 % apart is a tie.
  Ranking floor = Rank({{"compiled", {1.015, 0, 9}}, {"openblas", {1.0, 0, 9}}}, "", order);
  EXPECT_DOUBLE_EQ(floor.noise, kNoiseFloor);
  EXPECT_EQ(floor.winner, "compiled");
}

TEST(MatmulProbeTest, ReferenceAppliesTransposesBiasAndActivation) {
  MatmulInputs in;
  in.problem.m = 1;
  in.problem.n = 2;
  in.problem.k = 2;
  in.problem.transpose_b = true;  // B stored N×K
  in.problem.bias = true;
  in.problem.activation = "relu";
  in.a = {1, 2};
  in.b = {3, 4, -5, -6};  // columns (3,4) and (-5,-6)
  in.bias = {0.5f, 1};
  std::vector<double> out = ReferenceMatmul(in);
  EXPECT_DOUBLE_EQ(out[0], 1 * 3 + 2 * 4 + 0.5);
  EXPECT_DOUBLE_EQ(out[1], 0);  // relu(-17 + 1)
}

TEST(MatmulProbeTest, AccuracyRatioAgainstTheBudget) {
  const AccuracyBudget budget{1e-3, 1e-5};
  AccuracyCheck pass = CheckAccuracy({1.0f, 100.0f}, {1.0005, 100.0}, budget);
  EXPECT_LT(pass.ratio, 1);
  AccuracyCheck fail = CheckAccuracy({1.0f, 100.1f}, {1.0, 100.0}, budget);
  EXPECT_GT(fail.ratio, 1);
  EXPECT_EQ(fail.worst_index, 1);
  EXPECT_TRUE(
      std::isinf(CheckAccuracy({std::numeric_limits<float>::quiet_NaN()}, {0.0}, budget).ratio));
  EXPECT_TRUE(std::isinf(CheckAccuracy({1.0f}, {1.0, 2.0}, budget).ratio));
}

TEST(MatmulProbeTest, ProbesIncludeTheOpShapeARaggedOneAndALargeK) {
  ArbitrationPoint point;
  point.shape = {1000, 30, 8192};
  std::vector<MatmulProblem> probes = AccuracyProbes(point);
  ASSERT_EQ(probes.size(), 3u);
  EXPECT_EQ(probes[0].ShapeText(), "64x30x4096");
  EXPECT_EQ(probes[1].ShapeText(), "7x13x5");
  EXPECT_EQ(probes[2].ShapeText(), "16x16x4096");
  point.shape = {-1, 30, -1};
  EXPECT_EQ(AccuracyProbes(point)[0].ShapeText(), "64x30x256");
  EXPECT_EQ(TimedProblem(point).ShapeText(), "256x30x256");
  EXPECT_EQ(point.ShapeBucket(), "?x32x?");
}

TEST(ElementStorageTest, ExactValuesEncodeToTheirBitsAndDecodeBack) {
  auto bits16 = [](const std::vector<uint8_t>& bytes, size_t i) {
    return static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8);
  };
  const std::vector<float> values = {1.0f,
                                     -2.0f,
                                     0.0f,
                                     -0.0f,
                                     0.5f,
                                     65504.0f,
                                     std::ldexp(1.0f, -14),
                                     std::ldexp(1.0f, -24),
                                     std::ldexp(3.0f, -24),
                                     -127.0f / 128};
  absl::StatusOr<std::vector<uint8_t>> half = EncodeStorage(values, "f16");
  ASSERT_TRUE(half.ok()) << half.status();
  ASSERT_EQ(half->size(), 2 * values.size());
  EXPECT_EQ(bits16(*half, 0), 0x3c00);
  EXPECT_EQ(bits16(*half, 1), 0xc000);
  EXPECT_EQ(bits16(*half, 3), 0x8000);
  EXPECT_EQ(bits16(*half, 5), 0x7bff);  // the largest finite f16
  EXPECT_EQ(bits16(*half, 6), 0x0400);  // the smallest normal
  EXPECT_EQ(bits16(*half, 7), 0x0001);  // the smallest subnormal
  EXPECT_EQ(bits16(*half, 8), 0x0003);
  const std::vector<float> bf16_values = {1.0f, -2.0f, -127.0f / 128, std::ldexp(1.0f, -100)};
  absl::StatusOr<std::vector<uint8_t>> brain = EncodeStorage(bf16_values, "bf16");
  ASSERT_TRUE(brain.ok()) << brain.status();
  EXPECT_EQ(bits16(*brain, 0), 0x3f80);
  EXPECT_EQ(bits16(*brain, 1), 0xc000);
  EXPECT_EQ(DecodeStorage(half->data(), values.size(), "f16"), values);
  EXPECT_EQ(DecodeStorage(brain->data(), bf16_values.size(), "bf16"), bf16_values);
  absl::StatusOr<std::vector<uint8_t>> single = EncodeStorage({0.1f, -3.5f}, "f32");
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(DecodeStorage(single->data(), 2, "f32"), (std::vector<float>{0.1f, -3.5f}));
  EXPECT_TRUE(DecodeStorage(single->data(), 2, "f64").empty());
}

TEST(ElementStorageTest, AValueTheTypeCannotHoldExactlyIsRefusedByIndex) {
  for (const auto& [value, element] :
       std::vector<std::pair<float, std::string>>{{0.1f, "bf16"},
                                                  {0.1f, "f16"},
                                                  {65520.0f, "f16"},
                                                  {std::ldexp(1.0f, -25), "f16"},
                                                  {1.0f + std::ldexp(1.0f, -11), "f16"},
                                                  {INFINITY, "f16"},
                                                  {std::nanf(""), "bf16"}}) {
    absl::StatusOr<std::vector<uint8_t>> encoded = EncodeStorage({1.0f, value}, element);
    ASSERT_FALSE(encoded.ok()) << value << " " << element;
    EXPECT_THAT(encoded.status().message(),
                AllOf(HasSubstr("at index 1"), HasSubstr("exactly representable in " + element)));
  }
  EXPECT_THAT(EncodeStorage({1.0f}, "f64").status().message(), HasSubstr("do not store 'f64'"));
  EXPECT_EQ(StorageBytes("i32"), 0u);
}

TEST(OpProbeTest, CompareOutputsIsElementwiseWithNaNsAndInfinities) {
  const AccuracyBudget budget{1e-3, 1e-2};
  auto ratio = [&](std::vector<float> out, std::vector<float> ref, AccuracyBudget b) {
    return CompareOutputs(out, ref, b).ratio;
  };
  EXPECT_DOUBLE_EQ(ratio({1.0f, 100.0f}, {1.0f, 100.0f}, budget), 0);
  EXPECT_NEAR(ratio({1.0f, 101.0f}, {1.0f, 100.0f}, budget), 1.0 / (1e-3 + 1.0), 1e-6);
  const AccuracyCheck check = CompareOutputs({1.0f, 101.0f, 5.0f}, {1.0f, 100.0f, 5.0f}, budget);
  EXPECT_EQ(check.worst_index, 1);
  EXPECT_DOUBLE_EQ(check.max_abs_error, 1.0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_DOUBLE_EQ(ratio({nan}, {nan}, budget), 0);
  EXPECT_TRUE(std::isinf(ratio({nan}, {1.0f}, budget)));
  EXPECT_TRUE(std::isinf(ratio({1.0f}, {nan}, budget)));
  EXPECT_DOUBLE_EQ(ratio({inf}, {inf}, budget), 0);
  EXPECT_TRUE(std::isinf(ratio({inf}, {1.0f}, budget)));
  EXPECT_TRUE(std::isinf(ratio({1.0f}, {1.0f, 2.0f}, budget)));
  EXPECT_TRUE(std::isinf(ratio({1.0f}, {0.0f}, {0, 0})));
}

TEST(OpProbeTest, ANarrowOutputWidensItsOwnRelativeBudget) {
  const AccuracyBudget budget{0, 1e-5};
  // 1 + 2^-8 against 1: within one bf16 ulp (2^-7) of an output stored in bf16, not in f32.
  const std::vector<float> ref = {1.0f, 1.0f};
  const std::vector<float> out = {1.0f, 1.0f + 1.0f / 256};
  EXPECT_GT(CompareOutputs(out, ref, budget).ratio, 1);
  EXPECT_GT(CompareOutputs(out, ref, budget, {{2, "f32"}}).ratio, 1);
  EXPECT_LE(CompareOutputs(out, ref, budget, {{2, "bf16"}}).ratio, 1);
  // Only the output stored narrow gets the ulp: the second, f32 one fails.
  const AccuracyCheck check =
      CompareOutputs({1.0f, 1.0f + 1.0f / 256}, {1.0f, 1.0f}, budget, {{1, "bf16"}, {1, "f32"}});
  EXPECT_GT(check.ratio, 1);
  EXPECT_EQ(check.worst_index, 1);
  EXPECT_DOUBLE_EQ(check.allowed, 1e-5);
  EXPECT_LE(
      CompareOutputs({1.0f + 1.0f / 256, 1.0f}, {1.0f, 1.0f}, budget, {{1, "bf16"}, {1, "f32"}})
          .ratio,
      1);
  // Segments that do not add up to the values are a mismatch.
  EXPECT_TRUE(std::isinf(CompareOutputs(ref, ref, budget, {{1, "f32"}}).ratio));
  EXPECT_TRUE(std::isinf(CompareOutputs(ref, ref, budget, {{3, "f32"}}).ratio));
  EXPECT_TRUE(std::isinf(CompareOutputs(ref, ref, budget, {{-1, "f32"}, {3, "f32"}}).ratio));
}

TEST(OpProbeTest, AtolScaledByTheOutputsMagnitudeSeesErrorsInSmallOutputs) {
  const AccuracyBudget budget{1e-3, 1e-5};
  // A softmax row of 1000: every value near 1e-3; one tail value off by 2e-5 (2 %).
  std::vector<float> ref(1000, 1e-3f), out(1000, 1e-3f);
  out[997] += 2e-5f;
  EXPECT_LE(CompareOutputs(out, ref, budget).ratio, 1) << "absolute atol is blind to it";
  const AccuracyCheck scaled =
      CompareOutputs(out, ref, budget, {{1000, "f32"}}, AtolScale::kOutputMagnitude);
  EXPECT_GT(scaled.ratio, 1);
  EXPECT_EQ(scaled.worst_index, 997);
  EXPECT_NEAR(scaled.allowed, 1e-3 * 1e-3 + 1e-5 * 1e-3, 1e-12);
  // Rounding-level differences (a few f32 ulps) still pass.
  out[997] = std::nextafter(std::nextafter(1e-3f, 1.0f), 1.0f);
  EXPECT_LE(CompareOutputs(out, ref, budget, {}, AtolScale::kOutputMagnitude).ratio, 1);
  // Each output has its own scale, capped at 1 (never looser than declared).
  const std::vector<float> two_ref = {100.0f, 0.0f, 1e-3f, 1e-3f};
  const std::vector<float> two_out = {100.0f, 5e-4f, 1e-3f, 1e-3f + 5e-4f};
  const AccuracyCheck two = CompareOutputs(two_out, two_ref, budget, {{2, "f32"}, {2, "f32"}},
                                           AtolScale::kOutputMagnitude);
  EXPECT_EQ(two.worst_index, 3);
  EXPECT_GT(two.ratio, 1);
  EXPECT_NEAR(
      CompareOutputs({100.0f, 5e-4f}, {100.0f, 0.0f}, budget, {}, AtolScale::kOutputMagnitude)
          .ratio,
      0.5, 1e-6);
  // An unbounded atol stays unbounded (not inf·0) on an output of zeros.
  EXPECT_EQ(CompareOutputs({1.0f}, {0.0f}, {std::numeric_limits<double>::infinity(), 0}, {},
                           AtolScale::kOutputMagnitude)
                .ratio,
            0);
  // An output of zeros: a flushed subnormal passes, anything larger does not.
  EXPECT_LE(
      CompareOutputs({1e-40f, 0.0f}, {0.0f, 0.0f}, budget, {}, AtolScale::kOutputMagnitude).ratio,
      1);
  EXPECT_GT(
      CompareOutputs({1e-30f, 0.0f}, {0.0f, 0.0f}, budget, {}, AtolScale::kOutputMagnitude).ratio,
      1);
}

ArbitrationPoint Matmul(int64_t m, int64_t n, int64_t k);

TEST(MatmulProbeTest, NarrowProblemsHaveInputsEveryStorageTypeHoldsExactly) {
  ArbitrationPoint point = Matmul(16, 16, 64);
  point.bias = true;
  point.element_types = {"bf16", "bf16", "f16", "f16"};
  const MatmulProblem problem = ProblemFor(point, 16, 16, 64);
  EXPECT_EQ(problem.input_element, "bf16");
  EXPECT_EQ(problem.result_element, "f16");
  ASSERT_TRUE(problem.Narrow());
  const MatmulInputs inputs = MakeInputs(problem, 3);
  for (const std::vector<float>* values : {&inputs.a, &inputs.b, &inputs.bias}) {
    for (const char* element : {"f16", "bf16"}) {
      EXPECT_TRUE(EncodeStorage(*values, element).ok()) << element;
    }
  }
  point.element_types = {"f32", "f32", "f32"};
  point.numeric_policy = "tf32";
  EXPECT_TRUE(ProblemFor(point, 1, 1, 1).Narrow());
  // f32 problems keep full-precision inputs: a delegate rounding them (to TF32) shows.
  point.numeric_policy = "f32";
  const MatmulProblem plain = ProblemFor(point, 16, 16, 64);
  EXPECT_FALSE(plain.Narrow());
  EXPECT_FALSE(EncodeStorage(MakeInputs(plain, 3).a, "bf16").ok());
}

TEST(MatmulProbeTest, ANarrowResultWidensTheRelativeBudgetByOneOfItsUlps) {
  ArbitrationPoint point = Matmul(8, 8, 8);
  point.element_types = {"bf16", "bf16", "f32"};
  const AccuracyBudget budget{1e-3, 1e-5};
  EXPECT_EQ(ResultBudget(budget, ProblemFor(point, 8, 8, 8)).rtol, 1e-5);
  point.element_types = {"bf16", "bf16", "bf16"};
  EXPECT_EQ(ResultBudget(budget, ProblemFor(point, 8, 8, 8)).rtol, 1e-5 + 1.0 / 128);
  EXPECT_EQ(ResultBudget(budget, ProblemFor(point, 8, 8, 8)).atol, 1e-3);
  point.element_types = {"f16", "f16", "f16"};
  EXPECT_EQ(ResultBudget(budget, ProblemFor(point, 8, 8, 8)).rtol, 1e-5 + 1.0 / 1024);
}

TEST(MatmulProbeTest, CoverageNamesWhatTheProbesDoNotRun) {
  ArbitrationPoint point = Matmul(64, 64, 64);
  EXPECT_EQ(ProbeCoverage(point), "");
  point.element_types = {"f16", "f16", "f32"};
  EXPECT_EQ(ProbeCoverage(point), "");
  point.element_types = {"f32", "f32", "f32"};
  point.numeric_policy = "tf32";
  EXPECT_EQ(ProbeCoverage(point), "");
  point.numeric_policy = "f16";
  EXPECT_THAT(ProbeCoverage(point), HasSubstr("this op's is f16"));
  point.numeric_policy = "f32";
  point.element_types = {"f64", "f64", "f64"};
  EXPECT_THAT(ProbeCoverage(point), HasSubstr("this op has f64 operands"));
  point.element_types = {"f32", "f32", "f32"};
  point.layout = "batched";
  EXPECT_THAT(ProbeCoverage(point), HasSubstr("this op's are batched"));
  point.layout = "row-major";
  point.op = "tile.softmax";
  EXPECT_THAT(ProbeCoverage(point), HasSubstr("no probe function was made for this tile.softmax"));
  point.probe_source = "func.func @probe(...)";
  EXPECT_EQ(ProbeCoverage(point), "");
  point.element_types = {"f32", "i64"};  // argmax
  EXPECT_THAT(ProbeCoverage(point), HasSubstr("this op has i64 operands"));
}

// ---------------------------------------------------------------------------------------------
// Arbitrate with a scripted prober.

struct Script {
  double seconds = 1e-3;       ///< what Time reports per run…
  double seconds_per_mac = 0;  ///< … plus this per multiply-add of the bound problem
  double jitter = 0.001;       ///< relative, cycling 0, 1, 2 × this
  double error = 0;            ///< added to every output element
  double error_from_k = 0;     ///< … only for problems with K at least this
  /// Rows of a problem with M at least this are computed in another order (one ulp off).
  int64_t batch_variant_from_m = 0;
  bool fail_prepare = false;
  std::string cannot_probe;  ///< RunOp fails with FailedPrecondition saying this
  std::string device_error;  ///< RunOp fails with Unavailable saying this (may pass later)
  double output_scale = 1;   ///< op probes: every output value times this
};

/// What every scripted kernel of one prober ran: seconds reported by Time, times repetitions.
struct Ledger {
  double timed_seconds = 0;
  int time_calls = 0;
};

class ScriptedKernel : public ProbeKernel {
 public:
  ScriptedKernel(Script script, Ledger* ledger) : script_(script), ledger_(ledger) {}
  absl::StatusOr<std::vector<float>> Run(const MatmulInputs& inputs) override {
    problem_ = inputs.problem;
    std::vector<double> reference = ReferenceMatmul(inputs);
    std::vector<float> out(reference.begin(), reference.end());
    if (inputs.problem.k >= script_.error_from_k) {
      for (float& value : out) value += static_cast<float>(script_.error);
    }
    if (script_.batch_variant_from_m > 0 && inputs.problem.m >= script_.batch_variant_from_m) {
      for (float& value : out)
        value = std::nextafter(value, std::numeric_limits<float>::infinity());
    }
    return out;
  }
  /// An op probe: D values of a fixed function of the seed (the same for every candidate),
  /// plus the script's error.
  absl::StatusOr<std::vector<float>> RunOp(int64_t dynamic_size, uint32_t seed) override {
    if (!script_.cannot_probe.empty()) return absl::FailedPreconditionError(script_.cannot_probe);
    if (!script_.device_error.empty()) return absl::UnavailableError(script_.device_error);
    problem_ = MatmulProblem();
    bound_ = dynamic_size;
    std::vector<float> out(static_cast<size_t>(dynamic_size));
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<float>(script_.output_scale) *
               std::sin(static_cast<float>(seed) + 0.1f * static_cast<float>(i));
      if (dynamic_size >= script_.error_from_k) out[i] += static_cast<float>(script_.error);
    }
    return out;
  }
  std::string BoundShape() const override { return absl::StrCat(bound_, "x", bound_); }
  double LastRunSeconds() const override {
    return script_.seconds + script_.seconds_per_mac * static_cast<double>(problem_.m) *
                                 static_cast<double>(problem_.n) * static_cast<double>(problem_.k);
  }
  absl::StatusOr<double> Time(int repetitions) override {
    // A little deterministic jitter, so spreads are real but tiny.
    jitter_ = (jitter_ + 1) % 3;
    const double macs = static_cast<double>(problem_.m) * static_cast<double>(problem_.n) *
                        static_cast<double>(problem_.k);
    const double seconds =
        (script_.seconds + script_.seconds_per_mac * macs) * (1 + script_.jitter * jitter_);
    ledger_->timed_seconds += seconds * repetitions;
    ++ledger_->time_calls;
    return seconds;
  }

 private:
  Script script_;
  Ledger* ledger_;
  MatmulProblem problem_;
  int64_t bound_ = 0;
  int jitter_ = 0;
};

class ScriptedProber : public Prober {
 public:
  std::map<std::string, Script> scripts;
  int prepares = 0;
  std::string unavailable;
  Ledger ledger;

  std::string Device() const override { return "scripted device"; }
  std::string TimingSource() const override { return "script"; }
  std::string Unavailable() const override { return unavailable; }
  absl::StatusOr<std::unique_ptr<ProbeKernel>> Prepare(const ArbitrationPoint&,
                                                       const Candidate& candidate,
                                                       const MatmulProblem*) override {
    ++prepares;
    Script script = scripts[candidate.id];
    if (script.fail_prepare) return absl::InternalError("probe compile failed");
    return std::unique_ptr<ProbeKernel>(new ScriptedKernel(script, &ledger));
  }
};

ArbitrationPoint Matmul(int64_t m, int64_t n, int64_t k) {
  ArbitrationPoint p;
  p.op = "tile.matmul";
  p.location = "t.mlir:3:3";
  p.function = "mm";
  p.target = "host";
  p.arch = "host";
  p.element_types = {"f32", "f32", "f32"};
  p.shape = {m, n, k};
  return p;
}

Candidate Delegate(const std::string& id, const std::string& determinism = "deterministic") {
  Candidate c;
  c.id = id;
  c.provenance = "vendor_library";
  c.determinism = determinism;
  c.accuracy = "reference_exact";
  c.budget = BudgetFor(c.accuracy, std::nullopt, std::nullopt);
  c.covers = "root_only";
  c.identity = id + " v1";
  c.route = "kernel_call " + id;
  return c;
}

std::vector<Candidate> Field() {
  return {CompiledCandidate("host", "toolchain 1"), Delegate("fastblas"), Delegate("slowblas")};
}

class ArbitrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prober_.scripts["compiled"] = {2e-3};
    prober_.scripts["fastblas"] = {1e-3};
    prober_.scripts["slowblas"] = {4e-3};
    context_.prober = &prober_;
    context_.toolchain = "toolchain 1";
  }
  ScriptedProber prober_;
  ArbitrationContext context_;
};

TEST_F(ArbitrateTest, MeasuresEverySurvivorAndPicksTheSeparatedFastest) {
  absl::StatusOr<DecisionRecord> record = Arbitrate(Matmul(64, 64, 64), Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "fastblas");
  EXPECT_EQ(record->route, "kernel_call fastblas");
  EXPECT_EQ(record->source, "measured");
  EXPECT_EQ(record->timing_source, "script");
  EXPECT_EQ(record->measured_shape, "64x64x64");
  EXPECT_NEAR(record->separation, 1.0, 0.01);  // compiled is 2× slower
  for (const CandidateOutcome& o : record->candidates) {
    EXPECT_EQ(o.gate, "") << o.candidate.id;
    EXPECT_GE(o.samples, 3) << o.candidate.id;
    EXPECT_GE(o.error_ratio, 0) << o.candidate.id;
  }
  EXPECT_NEAR(record->Find("slowblas")->median_s, 4e-3, 1e-5);
}

TEST_F(ArbitrateTest, GatesRunInOrderAndEachRemovalNamesItsGate) {
  std::vector<Candidate> field = Field();
  field.push_back(Delegate("gpublas"));
  field.back().inapplicable = "it serves the nvptx target and this compile is for host";
  field.push_back(Delegate("missing"));
  field.back().unavailable = "library 'missing' is not registered";
  field.push_back(Delegate("racy", "nondeterministic"));
  prober_.scripts["racy"] = {1e-4};
  prober_.scripts["slowblas"].error = 0.5;  // wrong everywhere
  ArbitrationPoint point = Matmul(64, 64, 64);
  point.deterministic = true;
  absl::StatusOr<DecisionRecord> record = Arbitrate(point, field, context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "fastblas");
  EXPECT_EQ(record->Find("gpublas")->gate, "applicability");
  EXPECT_EQ(record->Find("missing")->gate, "availability");
  EXPECT_EQ(record->Find("racy")->gate, "determinism");
  EXPECT_THAT(record->Find("racy")->reason, HasSubstr("@mm must be deterministic"));
  EXPECT_EQ(record->Find("racy")->samples, 0);  // removed before any probe
  EXPECT_EQ(record->Find("slowblas")->gate, "accuracy");
  EXPECT_THAT(record->Find("slowblas")->reason, HasSubstr("exceeds atol + rtol*|ref|"));
}

TEST_F(ArbitrateTest, TheLargeKProbeCatchesErrorThatGrowsWithK) {
  prober_.scripts["fastblas"].error = 0.01;
  prober_.scripts["fastblas"].error_from_k = 4096;
  absl::StatusOr<DecisionRecord> record = Arbitrate(Matmul(32, 32, 32), Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->Find("fastblas")->gate, "accuracy");
  EXPECT_EQ(record->Find("fastblas")->worst_probe, "16x16x4096");
  EXPECT_EQ(record->winner, "compiled");
  // A tolerance_bounded contract that covers the error passes the same probes.
  std::vector<Candidate> field = Field();
  field[1].accuracy = "tolerance_bounded";
  field[1].budget = BudgetFor("tolerance_bounded", 0.02, std::nullopt);
  record = Arbitrate(Matmul(32, 32, 32), field, context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "fastblas");
  EXPECT_LT(record->Find("fastblas")->error_ratio, 1);
}

TEST_F(ArbitrateTest, ForcingRestrictsTheFieldAndAForcedRejectionNamesTheGate) {
  ArbitrationPoint point = Matmul(64, 64, 64);
  point.forced = "slowblas";
  point.forced_by = "option `matmul_delegate`";
  absl::StatusOr<DecisionRecord> record = Arbitrate(point, Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "slowblas");
  EXPECT_EQ(record->Find("fastblas")->gate, "forcing");
  EXPECT_EQ(record->Find("slowblas")->samples, 0);  // no contest, no timing

  prober_.scripts["slowblas"].error = 1;
  absl::Status wrong = Arbitrate(point, Field(), context_).status();
  EXPECT_EQ(wrong.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.message(),
              HasSubstr("t.mlir:3:3: error: tile.matmul: the forced candidate 'slowblas' "
                        "(option `matmul_delegate`) is rejected by the accuracy gate: on probe"));

  std::vector<Candidate> field = Field();
  field[2].determinism = "nondeterministic";
  point.deterministic = true;
  EXPECT_THAT(Arbitrate(point, field, context_).status().message(),
              HasSubstr("is rejected by the determinism gate: it declares determinism = "
                        "\"nondeterministic\""));
  point.forced = "mkl";
  EXPECT_THAT(Arbitrate(point, field, context_).status().message(),
              HasSubstr("the forced candidate 'mkl' (option `matmul_delegate`) is unknown; "
                        "candidates: compiled, fastblas, slowblas"));
}

TEST_F(ArbitrateTest, NoSurvivorIsAReportNotAFallback) {
  for (const char* id : {"compiled", "fastblas", "slowblas"}) prober_.scripts[id].error = 1;
  absl::Status status = Arbitrate(Matmul(8, 8, 8), Field(), context_).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("no candidate can run tile.matmul (shape 8x8x8"),
                                      HasSubstr("compiled: removed by the accuracy gate"),
                                      HasSubstr("fastblas: removed by the accuracy gate"),
                                      HasSubstr("slowblas: removed by the accuracy gate")));
}

TEST_F(ArbitrateTest, TheSoleCompiledLoweringIsNeitherProbedNorCached) {
  DecisionCache cache;
  context_.cache = &cache;
  std::vector<Candidate> field = Field();
  field[1].unavailable = "library 'fastblas' is not registered";
  field[2].unavailable = "library 'slowblas' is not registered";
  absl::StatusOr<DecisionRecord> record = Arbitrate(Matmul(8, 8, 8), field, context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "compiled");
  EXPECT_EQ(record->source, "sole candidate");
  EXPECT_EQ(prober_.prepares, 0);
  EXPECT_EQ(cache.stats().stores, 0u);
}

TEST_F(ArbitrateTest, WithoutProbesOnlyTheCompiledLoweringOrAForcedDelegateIsChosen) {
  prober_.unavailable = "no sm_90 device to probe on (found: none)";
  absl::StatusOr<DecisionRecord> record = Arbitrate(Matmul(64, 64, 64), Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "compiled");
  EXPECT_EQ(record->source, "unprobed");
  EXPECT_THAT(record->Find("fastblas")->reason, HasSubstr("not probed: no sm_90 device"));
  ArbitrationPoint forced = Matmul(64, 64, 64);
  forced.forced = "fastblas";
  forced.forced_by = "attribute `delegate`";
  record = Arbitrate(forced, Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "fastblas");
  EXPECT_THAT(record->reason, HasSubstr("taken as declared"));
  EXPECT_EQ(prober_.prepares, 0);
}

TEST_F(ArbitrateTest, NarrowStorageAndTheTf32PolicyAreProbedAndMeasured) {
  for (const auto& [elements, policy] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"bf16", "bf16", "bf16"}, "f32"},
           {{"f16", "f16", "f32"}, "f32"},
           {{"f32", "f32", "f32"}, "tf32"}}) {
    ArbitrationPoint point = Matmul(64, 64, 64);
    point.element_types = elements;
    point.numeric_policy = policy;
    absl::StatusOr<DecisionRecord> record = Arbitrate(point, Field(), context_);
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->source, "measured") << point.DtypeText() << " " << policy;
    EXPECT_EQ(record->winner, "fastblas");
  }
  // What the probes do not cover keeps the compiled lowering, unprobed, though a prober exists.
  ArbitrationPoint batched = Matmul(64, 64, 64);
  batched.layout = "batched";
  const int prepares = prober_.prepares;
  absl::StatusOr<DecisionRecord> record = Arbitrate(batched, Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "compiled");
  EXPECT_EQ(record->source, "unprobed");
  EXPECT_THAT(record->Find("fastblas")->reason, HasSubstr("not probed: the arbiter's probes run "
                                                          "dense row-major operands"));
  EXPECT_EQ(prober_.prepares, prepares);
}

ArbitrationPoint Softmax() {
  ArbitrationPoint p;
  p.op = "tile.softmax";
  p.location = "t.mlir:4:3";
  p.function = "f";
  p.target = "nvptx";
  p.arch = "sm_90";
  p.element_types = {"f32", "f32"};
  p.shape = {-1, -1};
  p.probe_source = "func.func @probe(%arg0: memref<?x?xf32>, %arg1: memref<?x?xf32>) { ... }";
  return p;
}

std::vector<Candidate> Variants() {
  std::vector<Candidate> field = {CompiledCandidate("nvptx", "toolchain 1")};
  for (const char* id : {"compiled.fast", "compiled.wrong", "compiled.slow"}) {
    field.push_back(CompiledCandidate("nvptx", "toolchain 1"));
    field.back().id = id;
    field.back().batch_invariance = "rows only split the grid";
  }
  return field;
}

TEST_F(ArbitrateTest, OpVariantsAreCheckedAgainstTheCompiledLoweringAndRaced) {
  prober_.scripts["compiled.fast"] = {1e-3};
  prober_.scripts["compiled.wrong"] = {1e-4};
  prober_.scripts["compiled.wrong"].error = 0.5;
  prober_.scripts["compiled.slow"] = {4e-3};
  absl::StatusOr<DecisionRecord> record = Arbitrate(Softmax(), Variants(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "compiled.fast");
  EXPECT_EQ(record->source, "measured");
  EXPECT_EQ(record->measured_shape, absl::StrCat(kOpTimedSize, "x", kOpTimedSize));
  EXPECT_EQ(record->Find("compiled")->gate, "");
  EXPECT_EQ(record->Find("compiled")->error_ratio, 0);
  EXPECT_GE(record->Find("compiled")->samples, 3);
  const CandidateOutcome* wrong = record->Find("compiled.wrong");
  EXPECT_EQ(wrong->gate, "accuracy");
  EXPECT_THAT(wrong->reason, AllOf(HasSubstr("on probe 64x64, |out - ref| = 0.5 at output element"),
                                   HasSubstr("(the compiled lowering's")));
  EXPECT_EQ(prober_.prepares, 4);  // one kernel per candidate, reused from probes to race
  // Another op body is another decision.
  ArbitrationPoint other = Softmax();
  other.probe_source += " ";
  EXPECT_NE(KeysFor(Softmax(), Variants(), "d", "t").base,
            KeysFor(other, Variants(), "d", "t").base);
}

TEST_F(ArbitrateTest, AForcedOpVariantIsStillCheckedAgainstTheCompiledLowering) {
  prober_.scripts["compiled.wrong"].error = 0.5;
  ArbitrationPoint point = Softmax();
  point.forced = "compiled.fast";
  point.forced_by = "attribute `tessera.candidate`";
  absl::StatusOr<DecisionRecord> record = Arbitrate(point, Variants(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "compiled.fast");
  EXPECT_THAT(record->reason, HasSubstr("within its accuracy budget"));
  EXPECT_EQ(record->Find("compiled")->gate, "forcing");
  EXPECT_EQ(prober_.prepares, 2);  // the reference ran though forcing removed it
  point.forced = "compiled.wrong";
  absl::Status status = Arbitrate(point, Variants(), context_).status();
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("the forced candidate 'compiled.wrong'"),
                    HasSubstr("is rejected by the accuracy gate: on probe 64x64")));
}

TEST_F(ArbitrateTest, AnOpTheProberCannotBindIsDecidedUnprobed) {
  prober_.scripts["compiled"].cannot_probe = "the op's probe cannot run: it takes memref<?xi64>";
  absl::StatusOr<DecisionRecord> record = Arbitrate(Softmax(), Variants(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "compiled");
  EXPECT_EQ(record->source, "unprobed");
  EXPECT_THAT(record->Find("compiled.fast")->reason,
              HasSubstr("not probed: the op's probe cannot run: it takes memref<?xi64>"));
  EXPECT_EQ(prober_.prepares, 1);
}

TEST_F(ArbitrateTest, AnOpVariantsErrorInSmallOutputsIsSeenAgainstTheirMagnitude) {
  // Softmax-like outputs near 1e-3: an error of 2e-5 (2 %) is far inside atol 1e-3 absolute,
  // but over atol scaled by the outputs' magnitude.
  for (const char* id : {"compiled", "compiled.fast", "compiled.wrong", "compiled.slow"}) {
    prober_.scripts[id].output_scale = 1e-3;
  }
  prober_.scripts["compiled.wrong"].error = 2e-5;
  absl::StatusOr<DecisionRecord> record = Arbitrate(Softmax(), Variants(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  const CandidateOutcome* wrong = record->Find("compiled.wrong");
  EXPECT_EQ(wrong->gate, "accuracy");
  EXPECT_THAT(wrong->reason, HasSubstr("scaled by the output's magnitude"));
  EXPECT_EQ(record->Find("compiled.fast")->gate, "");
  EXPECT_LE(record->Find("compiled.fast")->error_ratio, 1);
}

TEST_F(ArbitrateTest, AnOpThatCannotBindIsKeptSoItIsNotDeferredAgain) {
  DecisionCache cache;
  context_.cache = &cache;
  prober_.scripts["compiled"].cannot_probe = "the op's probe cannot run: it takes memref<?xi64>";
  absl::StatusOr<DecisionRecord> first = Arbitrate(Softmax(), Variants(), context_);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->source, "unprobed");
  EXPECT_EQ(cache.stats().stores, 1u);
  // The next compile, deferring contests to the background, takes the kept decision.
  context_.defer = true;
  const int prepares = prober_.prepares;
  absl::StatusOr<DecisionRecord> again = Arbitrate(Softmax(), Variants(), context_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->source, "cache");
  EXPECT_EQ(again->winner, "compiled");
  EXPECT_EQ(prober_.prepares, prepares);
}

TEST_F(ArbitrateTest, AnOpWhoseReferenceHitsADeviceErrorIsNotKept) {
  DecisionCache cache;
  context_.cache = &cache;
  prober_.scripts["compiled"].device_error = "CUDA_ERROR_LAUNCH_TIMEOUT";
  absl::StatusOr<DecisionRecord> record = Arbitrate(Softmax(), Variants(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->source, "unprobed");
  EXPECT_EQ(record->winner, "compiled");
  EXPECT_THAT(record->Find("compiled.fast")->reason, HasSubstr("CUDA_ERROR_LAUNCH_TIMEOUT"));
  EXPECT_EQ(cache.stats().stores, 0u);
  // Forced, even a repeating failure is not kept (the key does not carry the forcing).
  prober_.scripts["compiled"].device_error.clear();
  prober_.scripts["compiled"].cannot_probe = "the op's probe cannot run: it takes memref<?xi64>";
  ArbitrationPoint forced = Softmax();
  forced.forced = "compiled.fast";
  forced.forced_by = "attribute `tessera.candidate`";
  ASSERT_TRUE(Arbitrate(forced, Variants(), context_).ok());
  EXPECT_EQ(cache.stats().stores, 0u);
}

TEST_F(ArbitrateTest, DecisionsAreReusedAndAChangedIdentityMissesButKeepsTheRecord) {
  const std::string dir = ::testing::TempDir() + "/decisions_reuse";
  std::filesystem::remove_all(dir);
  DecisionCache cache(dir);
  context_.cache = &cache;
  ASSERT_TRUE(Arbitrate(Matmul(64, 64, 64), Field(), context_).ok());
  const int prepares = prober_.prepares;
  // 60 rounds up to the same bucket (64): a hit, nothing probed.
  absl::StatusOr<DecisionRecord> hit = Arbitrate(Matmul(60, 64, 64), Field(), context_);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->source, "cache");
  EXPECT_EQ(hit->winner, "fastblas");
  EXPECT_EQ(prober_.prepares, prepares);
  // A fresh process reads the disk.
  DecisionCache reopened(dir);
  context_.cache = &reopened;
  EXPECT_EQ(Arbitrate(Matmul(64, 64, 64), Field(), context_)->source, "cache");
  // fastblas v2: a miss that names the change; within noise, the incumbent stays.
  std::vector<Candidate> field = Field();
  field[1].identity = "fastblas v2";
  prober_.scripts["compiled"] = {1.005e-3};
  absl::StatusOr<DecisionRecord> remeasured = Arbitrate(Matmul(64, 64, 64), field, context_);
  ASSERT_TRUE(remeasured.ok());
  EXPECT_THAT(remeasured->source,
              HasSubstr("stale record (fastblas: fastblas v1 → fastblas v2) kept"));
  EXPECT_EQ(remeasured->winner, "fastblas");
  EXPECT_THAT(remeasured->reason, HasSubstr("the incumbent fastblas stays"));
  EXPECT_EQ(reopened.stats().stale, 1u);
  EXPECT_EQ(reopened.Records().size(), 2u);  // the old record is kept
}

// ---------------------------------------------------------------------------------------------
// Bounded cost: racing under the budget.

TEST(TimingTest, MedianConfidenceIntervalFromOrderStatistics) {
  // n = 9: ranks ⌊(9 − 5.88) / 2⌋ = 1 and ⌈1 + (9 + 5.88) / 2⌉ = 9.
  MedianInterval nine = MedianConfidence95({9, 1, 8, 2, 7, 3, 6, 4, 5});
  EXPECT_DOUBLE_EQ(nine.low, 1);
  EXPECT_DOUBLE_EQ(nine.high, 9);
  // n = 41: ranks ⌊(41 − 12.55) / 2⌋ = 14 and ⌈1 + (41 + 12.55) / 2⌉ = 28.
  std::vector<double> many;
  for (int i = 1; i <= 41; ++i) many.push_back(i);
  MedianInterval wide = MedianConfidence95(many);
  EXPECT_DOUBLE_EQ(wide.low, 14);
  EXPECT_DOUBLE_EQ(wide.high, 28);
  EXPECT_DOUBLE_EQ(wide.HalfWidth(), 7);
  EXPECT_DOUBLE_EQ(MedianConfidence95({}).high, 0);
}

TEST_F(ArbitrateTest, SteadyCandidatesSettleAndASlowOneIsDroppedEarly) {
  absl::StatusOr<DecisionRecord> record = Arbitrate(Matmul(64, 64, 64), Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "fastblas");
  // 0.2 % jitter: the median's interval is tight after the first samples it needs.
  EXPECT_EQ(record->Find("fastblas")->samples, 5);
  EXPECT_THAT(record->Find("fastblas")->race, HasSubstr("settled after 5 samples"));
  // 4 ms against 1 ms: out after the minimum.
  EXPECT_EQ(record->Find("slowblas")->samples, 3);
  EXPECT_THAT(record->Find("slowblas")->race,
              HasSubstr("dropped after 3 samples: its best 4.000 ms cannot beat fastblas"));
  EXPECT_DOUBLE_EQ(record->budget_ms, 300);
  EXPECT_GT(record->measured_ms, 0);
  EXPECT_LE(prober_.ledger.timed_seconds, 0.3);
}

TEST_F(ArbitrateTest, EightNoisyCandidatesStayWithinTheBudget) {
  std::vector<Candidate> field = {CompiledCandidate("host", "toolchain 1")};
  // 2 ms per run at 64³ (the cost scales with the shape, so a small budget can cap it).
  const double per_mac = 2e-3 / (64.0 * 64 * 64);
  prober_.scripts["compiled"] = {0, per_mac, 0.05};
  for (int i = 0; i < 7; ++i) {
    const std::string id = absl::StrCat("blas", i);
    field.push_back(Delegate(id));
    // Close together and noisy (5 % jitter): nobody settles or drops quickly.
    prober_.scripts[id] = {0, per_mac * (1 + 0.002 * i), 0.05};
  }
  for (double budget : {0.3, 0.05}) {
    prober_.ledger = Ledger();
    context_.budget_s = budget;
    absl::StatusOr<DecisionRecord> record = Arbitrate(Matmul(64, 64, 64), field, context_);
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_LE(prober_.ledger.timed_seconds, budget) << budget;
    EXPECT_LE(record->measured_ms, budget * 1e3 + 1e-9) << budget;
    EXPECT_GT(prober_.ledger.timed_seconds, budget * 0.8) << budget;  // it used the budget
    int stopped = 0;
    for (const CandidateOutcome& o : record->candidates) {
      stopped += absl::StrContains(o.race, "budget ran out");
      EXPECT_GE(o.samples, 3) << o.candidate.id << " at " << budget;
    }
    EXPECT_GT(stopped, 0) << budget;
  }
}

TEST_F(ArbitrateTest, ASlowCandidatesEstimateComesFromItsProbeRunNotFromTheBudget) {
  // slowblas's run at the op's shape takes 250 ms of a 300 ms budget: timing it once more for
  // the estimate would leave the race 50 ms. Its accuracy probe's run is the estimate instead.
  prober_.scripts["slowblas"] = {0, 0.25 / (64.0 * 64 * 64)};
  absl::StatusOr<DecisionRecord> record = Arbitrate(Matmul(64, 64, 64), Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "fastblas");
  EXPECT_LT(record->measured_ms, 250);
  EXPECT_LE(prober_.ledger.timed_seconds, 0.3);
  EXPECT_THAT(record->measured_shape, HasSubstr("its runs would not fit the time budget"));
  for (const CandidateOutcome& o : record->candidates) {
    EXPECT_GE(o.samples, 3) << o.candidate.id;
  }
  EXPECT_THAT(record->Find("slowblas")->race, HasSubstr("dropped after 3 samples"));
}

TEST_F(ArbitrateTest, ADecisionNothingWasTimedForIsNotCached) {
  // 1 ms per run whatever the shape, a 1 ms budget: no candidate gets a sample.
  for (const char* id : {"compiled", "fastblas", "slowblas"}) prober_.scripts[id] = {1e-3, 0, 0};
  context_.budget_s = 1e-3;
  DecisionCache cache;
  context_.cache = &cache;
  absl::StatusOr<DecisionRecord> record = Arbitrate(Matmul(64, 64, 64), Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "compiled");
  EXPECT_THAT(record->reason, HasSubstr("ran out before any candidate was timed"));
  // One warm-up run (its estimate said it fits), then nothing more fits.
  EXPECT_LE(prober_.ledger.timed_seconds, 1e-3 + 1e-12);
  EXPECT_TRUE(cache.Records().empty());
  absl::StatusOr<DecisionRecord> again = Arbitrate(Matmul(64, 64, 64), Field(), context_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->source, "measured");  // measured again, not reused
}

TEST_F(ArbitrateTest, AShapeTooLongToTimeIsCappedAndTheRecordSaysWhere) {
  // 1 ns per multiply-add: one run of 4096³ takes 69 s.
  for (const char* id : {"compiled", "fastblas", "slowblas"}) {
    prober_.scripts[id] = {0, 1e-9};
  }
  prober_.scripts["fastblas"].seconds_per_mac = 0.5e-9;
  absl::StatusOr<DecisionRecord> record = Arbitrate(Matmul(4096, 4096, 4096), Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "fastblas");
  EXPECT_THAT(record->measured_shape,
              HasSubstr("(capped from 4096x4096x4096: probe buffers are limited to 64 MiB; its "
                        "runs would not fit the time budget)"));
  EXPECT_LE(prober_.ledger.timed_seconds, 0.3);
  // The minimum (check, warm-up and 3 samples for each of 3) fits half the budget.
  std::vector<std::string> sizes =
      absl::StrSplit(record->measured_shape.substr(0, record->measured_shape.find(' ')), 'x');
  double macs = 1;
  for (const std::string& size : sizes) macs *= std::stod(size);
  EXPECT_LE(5 * macs * 2.5e-9, 0.15);
}

// ---------------------------------------------------------------------------------------------
// Batch invariance.

TEST_F(ArbitrateTest, ABatchVariantDelegateIsRemovedAndTheRecordSaysWhichBatchSizesDiffer) {
  prober_.scripts["fastblas"].batch_variant_from_m = 256;  // another kernel from M = 256 on
  ArbitrationPoint point = Matmul(64, 64, 64);
  point.deterministic = true;
  point.batch_invariant = true;
  absl::StatusOr<DecisionRecord> record = Arbitrate(point, Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  const CandidateOutcome* variant = record->Find("fastblas");
  EXPECT_EQ(variant->gate, "batch invariance");
  EXPECT_THAT(variant->reason,
              HasSubstr("rows at batch sizes 1, 7, 64, 255 differ from the same rows at batch "
                        "size 257"));
  EXPECT_EQ(variant->samples, 0);
  EXPECT_THAT(record->Find("slowblas")->batch_invariance,
              HasSubstr("proven: rows bitwise identical at batch sizes 1, 7, 64, 255, 256, 257"));
  EXPECT_EQ(record->Find("compiled")->batch_invariance, "by construction");
  EXPECT_EQ(record->winner, "compiled");  // 2 ms against slowblas's 4 ms
  // The level is in the key: a run-to-run record is another decision.
  ArbitrationPoint run_to_run = point;
  run_to_run.batch_invariant = false;
  EXPECT_NE(KeysFor(point, Field(), "d", "t").base, KeysFor(run_to_run, Field(), "d", "t").base);
  // Forced onto the variant delegate: the compile fails naming the gate.
  point.forced = "fastblas";
  point.forced_by = "option `matmul_delegate`";
  EXPECT_THAT(Arbitrate(point, Field(), context_).status().message(),
              HasSubstr("'fastblas' (option `matmul_delegate`) is rejected by the batch "
                        "invariance gate: rows at batch sizes"));
}

TEST_F(ArbitrateTest, WithoutProbesADelegateCannotProveBatchInvariance) {
  prober_.unavailable = "no sm_90 device to probe on (found: none)";
  ArbitrationPoint point = Matmul(64, 64, 64);
  point.batch_invariant = true;
  absl::StatusOr<DecisionRecord> record = Arbitrate(point, Field(), context_);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->winner, "compiled");
  EXPECT_EQ(record->Find("fastblas")->gate, "batch invariance");
  EXPECT_THAT(record->Find("fastblas")->reason, HasSubstr("probes cannot run here"));
  point.forced = "fastblas";
  point.forced_by = "attribute `delegate`";
  EXPECT_THAT(Arbitrate(point, Field(), context_).status().message(),
              HasSubstr("rejected by the batch invariance gate"));
}

// ---------------------------------------------------------------------------------------------
// Pinned replay.

TEST(PlanTest, RecordsRoundTripThroughThePlanFormatAndDamageIsNamed) {
  DecisionRecord record;
  record.point = Matmul(64, 64, 64);
  record.point.device = "machine A";
  record.winner = "fastblas";
  record.source = "measured";
  record.key = std::string(64, 'a');
  CandidateOutcome winner;
  winner.candidate = Delegate("fastblas");
  record.candidates.push_back(winner);
  DecisionRecord other = record;
  other.point = Matmul(8, 8, 8);
  other.winner = "compiled";
  const Plan plan = Plan::FromRecords({record, other, record});
  ASSERT_EQ(plan.size(), 2u);
  absl::StatusOr<Plan> back = Plan::Parse(plan.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToJson(), plan.ToJson());
  EXPECT_EQ(back->Digest(), plan.Digest());
  ArbitrationPoint elsewhere = Matmul(60, 64, 64);  // same bucket, another machine
  elsewhere.device = "machine B";
  ASSERT_NE(back->Find(elsewhere), nullptr);
  EXPECT_EQ(back->Find(elsewhere)->winner, "fastblas");
  EXPECT_EQ(back->Find(elsewhere)->identity, "fastblas v1");
  ArbitrationPoint deterministic = elsewhere;
  deterministic.deterministic = true;
  EXPECT_EQ(back->Find(deterministic), nullptr);  // another level, another point

  auto parse_error = [](const std::string& text) {
    return std::string(Plan::Parse(text, "p.json").status().message());
  };
  EXPECT_THAT(parse_error("{"), HasSubstr("p.json: not a Tessera plan: not valid JSON"));
  EXPECT_THAT(parse_error("[]"), HasSubstr("expected a JSON object"));
  EXPECT_THAT(parse_error(R"({"format": "x", "version": 1, "decisions": []})"),
              HasSubstr("\"format\" must be \"tessera-jit-plan\""));
  EXPECT_THAT(parse_error(R"({"format": "tessera-jit-plan", "version": 2, "decisions": []})"),
              HasSubstr("\"version\" must be 1"));
  std::string missing = plan.ToJson();
  missing.replace(missing.find("\"winner\""), 8, "\"winnr\"");
  EXPECT_THAT(parse_error(missing), HasSubstr("decision 1: \"winner\" missing or not a string"));
  std::string conflict = Plan::FromRecords({record}).ToJson();
  const size_t open = conflict.find('{', conflict.find('['));
  const size_t close = conflict.rfind('}', conflict.rfind(']'));
  std::string entry = conflict.substr(open, close - open + 1);
  std::string changed = entry;
  changed.replace(changed.find("\"fastblas\""), 10, "\"slowblas\"");
  conflict.insert(close + 1, ",\n" + changed);
  EXPECT_THAT(parse_error(conflict),
              HasSubstr("entries 1 and 2 pin different candidates ('fastblas', 'slowblas')"));
  // One candidate, two identities: refused too.
  std::string identities = Plan::FromRecords({record}).ToJson();
  std::string reidentified = entry;
  reidentified.replace(reidentified.find("fastblas v1"), 11, "fastblas v2");
  identities.insert(identities.rfind('}', identities.rfind(']')) + 1, ",\n" + reidentified);
  EXPECT_THAT(parse_error(identities),
              HasSubstr("pin 'fastblas' for one point (tile.matmul 64x64x64) with different "
                        "identities ('fastblas v1', 'fastblas v2')"));
  // Nested deeper than a plan can be: refused before the (recursive) parser sees it.
  EXPECT_THAT(parse_error(std::string(1 << 20, '[')), HasSubstr("nested deeper than 16 levels"));
  EXPECT_THAT(parse_error(R"({"format": "[[[[[[[[[[[[[[[[[[[[", "version": 1, "decisions": []})"),
              HasSubstr("\"format\" must be"));  // brackets in strings do not count
  EXPECT_EQ(Plan::Load("/nonexistent/plan.json").status().code(), absl::StatusCode::kNotFound);
  // Not a regular file, or too large: never read.
  EXPECT_THAT(std::string(Plan::Load("/dev/zero").status().message()),
              HasSubstr("'/dev/zero' is not a regular file"));
  EXPECT_THAT(std::string(Plan::Load("/tmp").status().message()),
              HasSubstr("is not a regular file"));
}

TEST_F(ArbitrateTest, ReplayTakesThePinnedCandidateWithNothingProbed) {
  DecisionCache cache;
  context_.cache = &cache;
  absl::StatusOr<DecisionRecord> measured = Arbitrate(Matmul(64, 64, 64), Field(), context_);
  ASSERT_TRUE(measured.ok());
  ASSERT_EQ(measured->winner, "fastblas");
  const Plan plan = Plan::FromRecords({*measured});
  // On a machine where slowblas would now win, the plan still pins fastblas.
  ScriptedProber other;
  other.scripts["fastblas"] = {9e-3};
  other.scripts["slowblas"] = {1e-3};
  ArbitrationContext replay;
  replay.prober = &other;
  replay.toolchain = "toolchain 1";
  replay.plan = &plan;
  replay.cache = &cache;
  absl::StatusOr<DecisionRecord> pinned = Arbitrate(Matmul(64, 64, 64), Field(), replay);
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(pinned->winner, "fastblas");
  EXPECT_EQ(pinned->source, "pinned");
  EXPECT_THAT(pinned->reason, HasSubstr("pinned by the plan <plan> (decided: measured"));
  EXPECT_EQ(pinned->Find("slowblas")->gate, "plan");
  EXPECT_EQ(other.prepares, 0);
  EXPECT_EQ(cache.stats().stores, 1u);  // the replay stored nothing

  // A rebuilt library: still pinned, and the record says what changed.
  std::vector<Candidate> rebuilt = Field();
  rebuilt[1].identity = "fastblas v2";
  pinned = Arbitrate(Matmul(64, 64, 64), rebuilt, replay);
  ASSERT_TRUE(pinned.ok());
  EXPECT_THAT(pinned->reason, HasSubstr("its identity changed since: fastblas v1 → fastblas v2"));

  // The pinned candidate is gone here: an error naming the gate, never another choice.
  std::vector<Candidate> gone = Field();
  gone[1].unavailable = "library 'fastblas' is not registered";
  EXPECT_THAT(Arbitrate(Matmul(64, 64, 64), gone, replay).status().message(),
              HasSubstr("t.mlir:3:3: error: replay: the plan pins 'fastblas' for tile.matmul "
                        "(shape 64x64x64, f32,f32->f32, plain) in @mm (plan <plan>), which the "
                        "availability gate removes: library 'fastblas' is not registered"));

  // A point the plan lacks: the compiled lowering, or in strict mode an error naming it.
  absl::StatusOr<DecisionRecord> missing = Arbitrate(Matmul(512, 512, 512), Field(), replay);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->winner, "compiled");
  EXPECT_EQ(missing->source, "replay: not in the plan");
  replay.plan_strict = true;
  absl::Status strict = Arbitrate(Matmul(512, 512, 512), Field(), replay).status();
  EXPECT_EQ(strict.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(strict.message(),
              HasSubstr("t.mlir:3:3: error: strict replay: tile.matmul (shape 512x512x512, "
                        "f32,f32->f32, plain) in @mm (plan <plan>) is not in the plan"));
  EXPECT_EQ(other.prepares, 0);
  // A point with nothing to choose needs no entry, even in strict mode.
  std::vector<Candidate> sole = Field();
  sole[1].unavailable = sole[2].unavailable = "not registered";
  EXPECT_EQ(Arbitrate(Matmul(512, 512, 512), sole, replay)->source, "sole candidate");
}

TEST(DecisionRecordTest, AKernelVariantWinningIsNotADelegation) {
  DecisionRecord record;
  CandidateOutcome compiled, variant, delegate;
  compiled.candidate = CompiledCandidate("nvptx", "t");
  variant.candidate = CompiledCandidate("nvptx", "t");
  variant.candidate.id = "compiled.mma_sync";
  delegate.candidate = Delegate("cublas");
  record.candidates = {compiled, variant, delegate};
  record.winner = "compiled";
  EXPECT_FALSE(record.Delegated());
  record.winner = "compiled.mma_sync";
  EXPECT_FALSE(record.Delegated());
  record.winner = "cublas";
  EXPECT_TRUE(record.Delegated());
  record.winner = "";
  EXPECT_FALSE(record.Delegated());
}

TEST(DecisionRecordTest, JsonRoundTripsAndDamageIsDataLoss) {
  DecisionRecord record;
  record.key = "k";
  record.base_key = "b";
  record.point = Matmul(3, 4, 5);
  record.point.forced = "x";
  record.shape_bucket = "4x4x8";
  CandidateOutcome outcome;
  outcome.candidate = Delegate("fastblas");
  outcome.median_s = 1.5e-3;
  outcome.samples = 9;
  outcome.gate = "accuracy";
  outcome.reason = "too far \"off\"";
  record.candidates.push_back(outcome);
  record.winner = "compiled";
  record.separation = 0.25;
  absl::StatusOr<DecisionRecord> back = RecordFromJson(ToJson(record));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ToJson(*back), ToJson(record));
  EXPECT_EQ(back->point.shape, (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(back->Find("fastblas")->reason, "too far \"off\"");
  absl::StatusOr<std::vector<DecisionRecord>> list = RecordsFromJson(ToJson({record, record}));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 2u);
  EXPECT_EQ(RecordFromJson("{\"key\": 1}").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(RecordFromJson("{\"key\": \"k\"").status().message(), HasSubstr("not valid JSON"));
  EXPECT_THAT(FormatRecord(record), AllOf(HasSubstr("tile.matmul at t.mlir:3:3 in @mm"),
                                          HasSubstr("removed by accuracy: too far")));
}

TEST(DecisionCacheTest, ADamagedFileIsAMissAndIsRemoved) {
  const std::string dir = ::testing::TempDir() + "/decisions_damaged";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/base");
  std::FILE* file = std::fopen((dir + "/base/key.json").c_str(), "w");
  std::fputs("{\"key\": \"key\", truncated", file);
  std::fclose(file);
  DecisionCache cache(dir);
  DecisionCache::Lookup lookup = cache.Find("key", "base");
  EXPECT_FALSE(lookup.fresh);
  EXPECT_FALSE(lookup.stale);
  EXPECT_EQ(cache.stats().damaged, 1u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/base/key.json"));
}

TEST(DecisionKeysTest, EachComponentChangesTheKey) {
  const std::vector<Candidate> field = Field();
  const DecisionKeys base = KeysFor(Matmul(64, 64, 64), field, "cpu", "t1");
  EXPECT_EQ(KeysFor(Matmul(50, 64, 64), field, "cpu", "t1").full, base.full);  // same bucket
  EXPECT_NE(KeysFor(Matmul(65, 64, 64), field, "cpu", "t1").base, base.base);
  EXPECT_NE(KeysFor(Matmul(64, 64, 64), field, "gpu", "t1").base, base.base);
  ArbitrationPoint deterministic = Matmul(64, 64, 64);
  deterministic.deterministic = true;
  EXPECT_NE(KeysFor(deterministic, field, "cpu", "t1").base, base.base);
  // Toolchain and identities change the key, not the base key.
  const DecisionKeys toolchain = KeysFor(Matmul(64, 64, 64), field, "cpu", "t2");
  EXPECT_EQ(toolchain.base, base.base);
  EXPECT_NE(toolchain.full, base.full);
  std::vector<Candidate> changed = field;
  changed[1].identity = "fastblas v2";
  EXPECT_NE(KeysFor(Matmul(64, 64, 64), changed, "cpu", "t1").full, base.full);
}

}  // namespace
}  // namespace tessera::arbiter
