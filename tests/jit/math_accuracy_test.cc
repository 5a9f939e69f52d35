// The host target's math functions over the whole f32 range: every function a tile.map body may
// call is compiled for the host and run on a sweep of f32 bit patterns (every 251st pattern of
// both signs, plus the special values), against the float64 C library. Each must stay within
// 4 ulp of the correctly rounded result and give the special values exactly. These are the
// functions tessera-approximate-math replaces by polynomial approximations (docs/compiler.md
// lists the measured errors); a function that fails here must keep its libm call.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "tests/jit/host_tensor.h"

namespace tessera::jit {
namespace {

using ::tessera::testing::HostTensor;

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// The distance of `actual` from the exact `expected` in units of the last place of the f32
/// nearest to `expected` (subnormal spacing below FLT_MIN). Infinite when only one overflows.
double UlpError(float actual, double expected) {
  if (std::isnan(expected)) return std::isnan(actual) ? 0 : INFINITY;
  if (std::isnan(actual)) return INFINITY;
  const double largest = std::numeric_limits<float>::max();
  if (std::fabs(expected) > largest) {
    // Beyond FLT_MAX the correctly rounded result is ±inf (or FLT_MAX within half an ulp).
    if (std::isinf(actual) && std::signbit(actual) == std::signbit(expected)) return 0;
    return std::fabs(actual) == largest ? 1 : INFINITY;
  }
  if (std::isinf(actual)) return INFINITY;
  const double magnitude = std::max(std::fabs(expected), double{FLT_MIN});
  const double ulp = std::ldexp(1.0, std::ilogb(magnitude) - 23);
  return std::fabs(double{actual} - expected) / ulp;
}

struct MathFunction {
  std::string name;  // the math op, e.g. "exp"
  std::function<double(double)> reference;
};

std::string MapSource(const std::string& op) {
  return absl::StrReplaceAll(R"mlir(
func.func @f(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    %r = math.OP %v : f32
    tile.yield %r : f32
  }
  return
}
)mlir",
                             {{"OP", op}});
}

std::vector<float> Inputs() {
  std::vector<float> inputs;
  for (uint64_t bits = 0; bits < 0x7F800000u; bits += 251) {
    inputs.push_back(FromBits(static_cast<uint32_t>(bits)));
    inputs.push_back(-FromBits(static_cast<uint32_t>(bits)));
  }
  for (float special : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX,
                        FLT_TRUE_MIN, -FLT_TRUE_MIN, 1.0f, -1.0f, 0.5f, 2.0f}) {
    inputs.push_back(special);
  }
  return inputs;
}

class MathAccuracyTest : public ::testing::TestWithParam<MathFunction> {};

TEST_P(MathAccuracyTest, WithinFourUlpOverTheWholeRangeAndSpecialValuesExact) {
  const MathFunction& function = GetParam();
  CompileOptions options;
  options.target = Target::kHost;
  auto module = Compile(MapSource(function.name), options);
  ASSERT_TRUE(module.ok()) << module.status();
  auto entry = (*module)->host->Lookup("f");
  ASSERT_TRUE(entry.ok()) << entry.status();

  std::vector<float> inputs = Inputs();
  const int64_t n = static_cast<int64_t>(inputs.size());
  HostTensor<float> x({n}), y({n});
  x.data() = inputs;
  void* args[] = {x.descriptor(), y.descriptor()};
  (*entry)(args);

  double worst = 0;
  float worst_input = 0;
  int special_failures = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double expected = function.reference(inputs[i]);
    const double error = UlpError(y[i], expected);
    if (error > worst) {
      worst = error;
      worst_input = inputs[i];
    }
    // Special results — NaN, infinities, signed zeros — must be exact.
    const bool special = std::isnan(expected) || std::isinf(expected) || expected == 0;
    if (special && !(std::isnan(expected)
                         ? std::isnan(y[i])
                         : (y[i] == expected && std::signbit(y[i]) == std::signbit(expected)))) {
      if (++special_failures <= 5) {
        ADD_FAILURE() << function.name << "(" << absl::StrFormat("%a", inputs[i])
                      << ") = " << absl::StrFormat("%a", y[i]) << ", expected "
                      << absl::StrFormat("%a", expected);
      }
    }
  }
  std::printf("%-6s max error %.2f ulp at %a over %lld inputs\n", function.name.c_str(), worst,
              worst_input, static_cast<long long>(n));
  EXPECT_LE(worst, 4.0) << function.name << " at " << absl::StrFormat("%a", worst_input) << ": "
                        << absl::StrFormat("%a", y[0]);
  EXPECT_EQ(special_failures, 0) << function.name;
}

INSTANTIATE_TEST_SUITE_P(
    AllApproximated, MathAccuracyTest,
    ::testing::Values(MathFunction{"exp", [](double x) { return std::exp(x); }},
                      MathFunction{"log", [](double x) { return std::log(x); }},
                      MathFunction{"log2", [](double x) { return std::log2(x); }},
                      MathFunction{"log1p", [](double x) { return std::log1p(x); }},
                      MathFunction{"tanh", [](double x) { return std::tanh(x); }},
                      MathFunction{"erf", [](double x) { return std::erf(x); }},
                      MathFunction{"expm1", [](double x) { return std::expm1(x); }},
                      MathFunction{"atan", [](double x) { return std::atan(x); }},
                      MathFunction{"sin", [](double x) { return std::sin(x); }},
                      MathFunction{"cos", [](double x) { return std::cos(x); }}),
    [](const ::testing::TestParamInfo<MathFunction>& info) { return info.param.name; });

}  // namespace
}  // namespace tessera::jit
