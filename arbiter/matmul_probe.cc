#include "arbiter/matmul_probe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "arbiter/element_storage.h"

namespace tessera::arbiter {
namespace {

double Activate(double x, const std::string& activation) {
  if (activation == "relu") return x > 0 ? x : 0;
  if (activation == "gelu") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (activation == "silu") return x / (1 + std::exp(-x));
  return x;
}

void Fill(std::vector<float>& values, size_t count, bool grid, std::mt19937& generator) {
  values.resize(count);
  if (grid) {
    std::uniform_int_distribution<int> distribution(-128, 127);
    for (float& value : values) value = static_cast<float>(distribution(generator)) / 128.0f;
    return;
  }
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  for (float& value : values) value = distribution(generator);
}

}  // namespace

bool MatmulProblem::Narrow() const {
  return input_element != "f32" || result_element != "f32" ||
         (numeric_policy != "f32" && numeric_policy != "fma");
}

std::string MatmulProblem::ShapeText() const { return absl::StrCat(m, "x", n, "x", k); }

MatmulProblem ProblemFor(const ArbitrationPoint& point, int64_t m, int64_t n, int64_t k) {
  MatmulProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.transpose_a = point.transpose_a;
  problem.transpose_b = point.transpose_b;
  problem.bias = point.bias;
  problem.activation = point.activation;
  auto element = [&](size_t index) {
    return point.element_types.size() > index ? point.element_types[index] : std::string("f32");
  };
  problem.input_element = element(0);
  problem.result_element = element(2);
  problem.numeric_policy = point.numeric_policy.empty() ? "f32" : point.numeric_policy;
  return problem;
}

MatmulInputs MakeInputs(const MatmulProblem& problem, uint32_t seed) {
  MatmulInputs inputs;
  inputs.problem = problem;
  std::mt19937 generator(seed);
  const bool grid = problem.Narrow();
  Fill(inputs.a, static_cast<size_t>(problem.m * problem.k), grid, generator);
  Fill(inputs.b, static_cast<size_t>(problem.k * problem.n), grid, generator);
  if (problem.bias) Fill(inputs.bias, static_cast<size_t>(problem.n), grid, generator);
  return inputs;
}

std::vector<double> ReferenceMatmul(const MatmulInputs& in) {
  const MatmulProblem& p = in.problem;
  std::vector<double> out(static_cast<size_t>(p.m * p.n));
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < p.k; ++l) {
        const double a = in.a[p.transpose_a ? l * p.m + i : i * p.k + l];
        const double b = in.b[p.transpose_b ? j * p.k + l : l * p.n + j];
        sum += a * b;
      }
      if (p.bias) sum += in.bias[j];
      out[i * p.n + j] = Activate(sum, p.activation);
    }
  }
  return out;
}

AccuracyBudget ResultBudget(const AccuracyBudget& budget, const MatmulProblem& problem) {
  AccuracyBudget widened = budget;
  if (problem.result_element != "f32") widened.rtol += StorageUlp(problem.result_element);
  return widened;
}

std::string ProbeCoverage(const ArbitrationPoint& point) {
  constexpr char kCovered[] =
      "the arbiter's probes run dense row-major operands in f32, f16 or bf16";
  if (point.layout != "row-major") return absl::StrCat(kCovered, "; this op's are ", point.layout);
  for (const std::string& element : point.element_types) {
    if (StorageBytes(element) == 0) {
      return absl::StrCat(kCovered, "; this op has ", element, " operands");
    }
  }
  if (point.op != "tile.matmul") {
    if (point.probe_source.empty()) {
      return absl::StrCat("no probe function was made for this ", point.op);
    }
    return "";
  }
  if (!point.numeric_policy.empty() && point.numeric_policy != "f32" &&
      point.numeric_policy != "tf32" && point.numeric_policy != "fma") {
    return absl::StrCat("the arbiter's probes check the f32, tf32 and fma policies; this op's is ",
                        point.numeric_policy,
                        " (an f16 accumulator is beyond budgets relative to a double reference)");
  }
  return "";
}

AccuracyCheck CheckAccuracy(const std::vector<float>& out, const std::vector<double>& ref,
                            const AccuracyBudget& budget) {
  AccuracyCheck check;
  if (out.size() != ref.size()) {
    check.ratio = std::numeric_limits<double>::infinity();
    check.max_abs_error = std::numeric_limits<double>::infinity();
    return check;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const double error = std::fabs(static_cast<double>(out[i]) - ref[i]);
    const double bound = budget.atol + budget.rtol * std::fabs(ref[i]);
    double ratio = 0;
    if (!std::isfinite(error)) {
      ratio = std::numeric_limits<double>::infinity();
    } else if (error > 0) {
      ratio = bound > 0 ? error / bound : std::numeric_limits<double>::infinity();
    }
    if (ratio > check.ratio || check.worst_index < 0) {
      check.ratio = ratio;
      check.max_abs_error = std::isfinite(error) ? error : std::numeric_limits<double>::infinity();
      check.worst_index = static_cast<int64_t>(i);
      check.allowed = bound;
    }
  }
  return check;
}

std::vector<MatmulProblem> AccuracyProbes(const ArbitrationPoint& point) {
  auto size = [&](size_t index, int64_t dynamic, int64_t clip) {
    const int64_t value = point.shape.size() > index ? point.shape[index] : -1;
    return value < 0 ? dynamic : std::max<int64_t>(1, std::min(value, clip));
  };
  return {ProblemFor(point, size(0, 64, 64), size(1, 64, 64), size(2, 256, 4096)),
          ProblemFor(point, 7, 13, 5), ProblemFor(point, 16, 16, 4096)};
}

double Macs(const MatmulProblem& p) {
  return static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
}

MatmulProblem TimedProblem(const ArbitrationPoint& point, double max_macs,
                           std::string* capped_why) {
  auto size = [&](size_t index) {
    const int64_t value = point.shape.size() > index ? point.shape[index] : -1;
    return value < 0 ? int64_t{256} : std::max<int64_t>(value, 1);
  };
  int64_t m = size(0), n = size(1), k = size(2);
  const std::string requested = absl::StrCat(m, "x", n, "x", k);
  auto bytes = [&] {
    const double dm = static_cast<double>(m), dn = static_cast<double>(n),
                 dk = static_cast<double>(k);
    return 4.0 * (dm * dk + dk * dn + dm * dn);
  };
  auto macs = [&] {
    return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  };
  bool over_bytes = false;
  bool over_time = false;
  for (;;) {
    const bool too_big = bytes() > kTimedProblemBudgetBytes;
    const bool too_long = macs() > max_macs;
    if ((!too_big && !too_long) || (m == 1 && n == 1 && k == 1)) break;
    over_bytes |= too_big;
    over_time |= too_long && !too_big;
    int64_t& largest = m >= n && m >= k ? m : (n >= k ? n : k);
    largest = std::max<int64_t>(1, largest / 2);
  }
  if ((over_bytes || over_time) && capped_why != nullptr) {
    std::vector<std::string> why;
    if (over_bytes) why.push_back("probe buffers are limited to 64 MiB");
    if (over_time) why.push_back("its runs would not fit the time budget");
    *capped_why = absl::StrCat("capped from ", requested, ": ", absl::StrJoin(why, "; "));
  }
  return ProblemFor(point, m, n, k);
}

}  // namespace tessera::arbiter
