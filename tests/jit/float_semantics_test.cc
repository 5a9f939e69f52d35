// Float semantics on the host target that must not depend on the CPU's instruction set:
// maximumf/minimumf order -0.0 below +0.0 and propagate NaN (also inside reductions), and bf16
// arithmetic in a tile.map body keeps subnormal results (an AVX512-BF16 conversion would flush
// them) and rounds after every operation. References are plain C++ on the same bf16-exact inputs.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "runtime/soft_float.h"
#include "tests/jit/host_tensor.h"

namespace tessera::jit {
namespace {

using ::tessera::testing::BfloatToFloat;
using ::tessera::testing::FloatToBfloat;
using ::tessera::testing::HostTensor;

std::unique_ptr<CompiledModule> CompileForHost(const std::string& source) {
  CompileOptions options;
  options.target = Target::kHost;
  auto compiled = Compile(source, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? std::move(compiled).value() : nullptr;
}

void Invoke(const CompiledModule& module, const std::string& name, std::vector<void*> args) {
  auto entry = module.host->Lookup(name);
  ASSERT_TRUE(entry.ok()) << entry.status();
  (*entry)(args.data());
}

/// Same value and, for zeros, the same sign; NaN matches NaN.
void ExpectIdentical(float actual, float expected, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": got " << actual;
    return;
  }
  EXPECT_EQ(actual, expected) << what;
  EXPECT_EQ(std::signbit(actual), std::signbit(expected)) << what << ": got " << actual;
}

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(FloatSemanticsTest, MaximumAndMinimumOrderSignedZerosAndPropagateNan) {
  auto module = CompileForHost(R"mlir(
func.func @maxmin(%a: memref<?xf32>, %b: memref<?xf32>, %hi: memref<?xf32>, %lo: memref<?xf32>) {
  tile.map ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%hi, %lo : memref<?xf32>, memref<?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %max = arith.maximumf %x, %y : f32
    %min = arith.minimumf %x, %y : f32
    tile.yield %max, %min : f32, f32
  }
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  // (a, b, max, min); 37 pairs so both the vector body and the scalar tail see each case.
  const std::vector<std::vector<float>> cases = {
      {0.0f, -0.0f, 0.0f, -0.0f}, {-0.0f, 0.0f, 0.0f, -0.0f}, {-0.0f, -0.0f, -0.0f, -0.0f},
      {kNan, 1.0f, kNan, kNan},   {1.0f, kNan, kNan, kNan},   {-kInf, 3.0f, 3.0f, -kInf},
      {2.0f, -5.0f, 2.0f, -5.0f}, {kInf, kNan, kNan, kNan},   {-0.0f, kInf, kInf, -0.0f}};
  const int64_t n = 37;
  HostTensor<float> a({n}), b({n}), hi({n}), lo({n});
  for (int64_t i = 0; i < n; ++i) {
    a[i] = cases[i % cases.size()][0];
    b[i] = cases[i % cases.size()][1];
  }
  Invoke(*module, "maxmin", {a.descriptor(), b.descriptor(), hi.descriptor(), lo.descriptor()});
  for (int64_t i = 0; i < n; ++i) {
    const auto& c = cases[i % cases.size()];
    const std::string what = "pair " + std::to_string(i) + " (" + std::to_string(c[0]) + ", " +
                             std::to_string(c[1]) + ")";
    ExpectIdentical(hi[i], c[2], "maximumf " + what);
    ExpectIdentical(lo[i], c[3], "minimumf " + what);
  }
}

TEST(FloatSemanticsTest, MaxAndMinReductionsOrderSignedZeros) {
  auto module = CompileForHost(R"mlir(
func.func @extremes(%x: memref<?x?xf32>, %hi: memref<?xf32>, %lo: memref<?xf32>) {
  tile.reduce max %x -> %hi axis = 1 : memref<?x?xf32> -> memref<?xf32>
  tile.reduce min %x -> %lo axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  // Row r: r copies of -0.0 around one +0.0 — lengths that fill vector lanes and tails.
  for (int64_t cols : {2, 3, 33, 100}) {
    HostTensor<float> x({3, cols}), hi({3}), lo({3});
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t c = 0; c < cols; ++c) x[r * cols + c] = (c == (r * 7) % cols) ? 0.0f : -0.0f;
    }
    Invoke(*module, "extremes", {x.descriptor(), hi.descriptor(), lo.descriptor()});
    for (int64_t r = 0; r < 3; ++r) {
      ExpectIdentical(hi[r], 0.0f,
                      "max of row " + std::to_string(r) + " of " + std::to_string(cols));
      ExpectIdentical(lo[r], -0.0f,
                      "min of row " + std::to_string(r) + " of " + std::to_string(cols));
    }
  }
}

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// IEEE 754-2019 maximum/minimum (arith.maximumf/minimumf): NaN wins, +0 is above -0.
float IeeeExtreme(float a, float b, bool max) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (a == b) return (std::signbit(a) == max) ? b : a;  // max: the +0; min: the -0
  return (a > b) == max ? a : b;
}

TEST(FloatSemanticsTest, MaxAndMinReductionsMatchIeeeMaximumOnGeneratedRows) {
  auto module = CompileForHost(R"mlir(
func.func @rows(%x: memref<?x?xf32>, %hi: memref<?xf32>, %lo: memref<?xf32>) {
  tile.reduce max %x -> %hi axis = 1 : memref<?x?xf32> -> memref<?xf32>
  tile.reduce min %x -> %lo axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}
func.func @columns(%x: memref<?x?xf32>, %hi: memref<?xf32>, %lo: memref<?xf32>) {
  tile.reduce max %x -> %hi axis = 0 : memref<?x?xf32> -> memref<?xf32>
  tile.reduce min %x -> %lo axis = 0 : memref<?x?xf32> -> memref<?xf32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float pool[] = {
      -0.0f, 0.0f, -0.0f,   0.0f,   -1.0f, 1.0f,  -inf,
      inf,   nan,  -1e-45f, 1e-45f, -3.5f, 2.25f, std::numeric_limits<float>::lowest()};
  // A few rows per shape drawn mostly from one sign class, so zero results, NaN in the vector
  // body or the tail, and all-infinite rows all occur.
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  // 23 rows: the column reductions' streamed loop takes whole groups of rows and the rest.
  for (int64_t cols : {0, 1, 7, 31, 32, 33, 64, 95, 200}) {
    const int64_t rows = 23;
    HostTensor<float> x({rows, cols}), hi({rows}), lo({rows}), chi({cols}), clo({cols});
    for (int64_t r = 0; r < rows; ++r) {
      const uint32_t kind = r % 6;  // 0: zeros and negatives, 1: zeros and positives, 2: any,
                                    // 3: any but NaN, 4: only -0, 5: only +0
      for (int64_t c = 0; c < cols; ++c) {
        float v = pool[next() % (sizeof(pool) / sizeof(pool[0]))];
        if (kind == 0 && (v > 0 || std::isnan(v))) v = -0.0f;
        if (kind == 1 && (v < 0 || std::isnan(v))) v = 0.0f;
        if (kind == 3 && std::isnan(v)) v = -0.0f;
        if (kind == 4) v = -0.0f;
        if (kind == 5) v = 0.0f;
        x[r * cols + c] = v;
      }
    }
    Invoke(*module, "rows", {x.descriptor(), hi.descriptor(), lo.descriptor()});
    Invoke(*module, "columns", {x.descriptor(), chi.descriptor(), clo.descriptor()});
    for (int64_t r = 0; r < rows; ++r) {
      float want_hi = -inf, want_lo = inf;
      for (int64_t c = 0; c < cols; ++c) {
        want_hi = IeeeExtreme(want_hi, x[r * cols + c], true);
        want_lo = IeeeExtreme(want_lo, x[r * cols + c], false);
      }
      const std::string what = "row " + std::to_string(r) + " of " + std::to_string(cols);
      ExpectIdentical(hi[r], want_hi, "max of " + what);
      ExpectIdentical(lo[r], want_lo, "min of " + what);
      // A NaN result over the innermost axis is the canonical quiet NaN.
      if (std::isnan(want_hi)) EXPECT_EQ(Bits(hi[r]), 0x7FC00000u) << "max of " << what;
      if (std::isnan(want_lo)) EXPECT_EQ(Bits(lo[r]), 0x7FC00000u) << "min of " << what;
    }
    for (int64_t c = 0; c < cols; ++c) {
      float want_hi = -inf, want_lo = inf;
      for (int64_t r = 0; r < rows; ++r) {
        want_hi = IeeeExtreme(want_hi, x[r * cols + c], true);
        want_lo = IeeeExtreme(want_lo, x[r * cols + c], false);
      }
      const std::string what = "column " + std::to_string(c) + " of " + std::to_string(cols);
      ExpectIdentical(chi[c], want_hi, "max of " + what);
      ExpectIdentical(clo[c], want_lo, "min of " + what);
    }
  }
}

TEST(FloatSemanticsTest, Bf16HelpersRoundToNearestEvenOnce) {
  auto bits = [](float value) {
    uint32_t b;
    std::memcpy(&b, &value, sizeof(b));
    return b;
  };
  auto from = [](uint32_t b) {
    float value;
    std::memcpy(&value, &b, sizeof(value));
    return value;
  };
  EXPECT_EQ(runtime::FloatToBf16Bits(from(0x3F808000u)), 0x3F80u);  // a tie goes to even…
  EXPECT_EQ(runtime::FloatToBf16Bits(from(0x3F818000u)), 0x3F82u);  // …up or down
  EXPECT_EQ(runtime::FloatToBf16Bits(from(0x3F808001u)), 0x3F81u);
  EXPECT_EQ(runtime::FloatToBf16Bits(from(0x00012345u)), 0x0001u);  // subnormals kept
  EXPECT_EQ(runtime::FloatToBf16Bits(from(0x7F800001u)), 0x7FC0u);  // a signalling NaN turns quiet
  EXPECT_EQ(runtime::FloatToBf16Bits(-std::numeric_limits<float>::infinity()), 0xFF80u);
  EXPECT_EQ(runtime::FloatToBf16Bits(std::numeric_limits<float>::max()), 0x7F80u);  // rounds to inf
  EXPECT_EQ(bits(1.0f) >> 16, runtime::FloatToBf16Bits(1.0f));
  // 1 + 2^-8 + 2^-30: just above a bf16 tie. Through f32 with two roundings to nearest it
  // would be the tie (and go down to 1.0); one rounding goes up.
  EXPECT_EQ(runtime::DoubleToBf16Bits(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)), 0x3F81u);
  EXPECT_EQ(runtime::DoubleToBf16Bits(1.0 + std::ldexp(1.0, -8)), 0x3F80u);
  EXPECT_EQ(runtime::DoubleToBf16Bits(1e300), 0x7F80u);
  EXPECT_EQ(runtime::DoubleToBf16Bits(-0.0), 0x8000u);
  EXPECT_NE(runtime::SoftFloatHelper("__truncsfbf2"), nullptr);
  EXPECT_EQ(runtime::SoftFloatHelper("__truncsfhf2"), nullptr);  // libgcc's
}

TEST(FloatSemanticsTest, Bf16ScalarsLinkOnEveryCpu) {
  // Without AVX512-BF16, LLVM moves a bf16 scalar through f32 and __truncsfbf2, which libgcc 12
  // lacks: the host code must still link (Tessera resolves its own helper).
  auto module = CompileForHost(R"mlir(
func.func @scale(%s: bf16, %x: memref<?xbf16>, %y: memref<?xbf16>) {
  tile.map ins(%s, %x : bf16, memref<?xbf16>) outs(%y : memref<?xbf16>) {
  ^bb0(%a: bf16, %v: bf16):
    %r = arith.mulf %a, %v : bf16
    tile.yield %r : bf16
  }
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
}

TEST(FloatSemanticsTest, Bf16ArithmeticKeepsSubnormalResults) {
  auto module = CompileForHost(R"mlir(
func.func @tiny(%a: memref<?xbf16>, %b: memref<?xbf16>, %sum: memref<?xbf16>,
                %product: memref<?xbf16>, %quotient: memref<?xbf16>) {
  tile.map ins(%a, %b : memref<?xbf16>, memref<?xbf16>)
      outs(%sum, %product, %quotient : memref<?xbf16>, memref<?xbf16>, memref<?xbf16>) {
  ^bb0(%x: bf16, %y: bf16):
    %s = arith.subf %x, %y : bf16
    %p = arith.mulf %x, %y : bf16
    %q = arith.divf %x, %y : bf16
    tile.yield %s, %p, %q : bf16, bf16, bf16
  }
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  // a − b, a·b and a/b all land in bf16's subnormal range (below 2^-126).
  const std::vector<std::pair<float, float>> inputs = {
      {0x1.8p-126f, 0x1p-126f},   {0x1p-126f, 0.5f},          {0x1p-125f, 8.0f},
      {-0x1.4p-126f, -0x1p-126f}, {0x1.02p-120f, 0x1.fep+5f}, {0x1p-130f, 0.75f}};
  const int64_t n = 35;
  HostTensor<uint16_t> a({n}), b({n}), sum({n}), product({n}), quotient({n});
  for (int64_t i = 0; i < n; ++i) {
    a[i] = FloatToBfloat(inputs[i % inputs.size()].first);
    b[i] = FloatToBfloat(inputs[i % inputs.size()].second);
  }
  Invoke(*module, "tiny",
         {a.descriptor(), b.descriptor(), sum.descriptor(), product.descriptor(),
          quotient.descriptor()});
  int subnormal_results = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float x = BfloatToFloat(a[i]);
    const float y = BfloatToFloat(b[i]);
    // The correctly rounded bf16 result: the f32 result (exact or once rounded) rounded to bf16.
    const uint16_t expected[] = {FloatToBfloat(x - y), FloatToBfloat(x * y), FloatToBfloat(x / y)};
    const uint16_t actual[] = {sum[i], product[i], quotient[i]};
    const char* names[] = {"subf", "mulf", "divf"};
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(actual[k], expected[k])
          << names[k] << "(" << x << ", " << y << ") at " << i << ": got "
          << BfloatToFloat(actual[k]) << ", expected " << BfloatToFloat(expected[k]);
      const float value = BfloatToFloat(expected[k]);
      if (value != 0 && std::fabs(value) < 0x1p-126f) ++subnormal_results;
    }
  }
  EXPECT_GE(subnormal_results, n / 2);  // the cases really are subnormal
}

TEST(FloatSemanticsTest, Bf16ChainsRoundAfterEveryOperation) {
  // Each bf16 result is rounded to bf16 before the next operation uses it: the product
  // 1.0078125² = 1.01568… rounds to 1.015625, so a·b + c is exactly 0 (one rounding at the end
  // gave 2^-14), and 1 + 2^-8 + 2^-8 stays 1 (each sum is a tie rounding to even; one rounding
  // gave 1.0078125).
  auto module = CompileForHost(R"mlir(
func.func @chains(%a: memref<?xbf16>, %b: memref<?xbf16>, %c: memref<?xbf16>, %step: bf16,
                  %fused: memref<?xbf16>, %sums: memref<?xbf16>) {
  tile.map ins(%a, %b, %c, %step : memref<?xbf16>, memref<?xbf16>, memref<?xbf16>, bf16)
      outs(%fused, %sums : memref<?xbf16>, memref<?xbf16>) {
  ^bb0(%x: bf16, %w: bf16, %z: bf16, %d: bf16):
    %m = arith.mulf %x, %w : bf16
    %r = arith.addf %m, %z : bf16
    %one = arith.constant 1.0 : bf16
    %s1 = arith.addf %one, %d : bf16
    %s2 = arith.addf %s1, %d : bf16
    tile.yield %r, %s2 : bf16, bf16
  }
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  for (const int64_t n : {1, 7, 67}) {  // the scalar tail alone, and vector bodies with a tail
    HostTensor<uint16_t> a({n}), b({n}), c({n}), fused({n}), sums({n});
    for (int64_t i = 0; i < n; ++i) {
      a[i] = b[i] = FloatToBfloat(1.0078125f);
      c[i] = FloatToBfloat(-1.015625f);
    }
    uint16_t step = FloatToBfloat(0x1p-8f);
    Invoke(*module, "chains",
           {a.descriptor(), b.descriptor(), c.descriptor(), &step, fused.descriptor(),
            sums.descriptor()});
    for (int64_t i = 0; i < n; ++i) {
      ExpectIdentical(BfloatToFloat(fused[i]), 0.0f, "a*b+c at " + std::to_string(i));
      ExpectIdentical(BfloatToFloat(sums[i]), 1.0f, "1+2^-8+2^-8 at " + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace tessera::jit
