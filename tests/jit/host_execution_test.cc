// Every Tile op, and a chain of them, compiled for the host target and run through ORC, against
// plain C++ references on random inputs across shapes (ragged, size 1, empty). Tolerances are
// stated per test; the bitwise order test of streamed reduce rows sits beside the op it pins (the
// matmul's order: matmul_order_test).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "tests/jit/host_tensor.h"

namespace tessera::jit {
namespace {

using ::tessera::testing::FillUniform;
using ::tessera::testing::HostTensor;

/// `host_cpu` empty: this machine's CPU.
std::unique_ptr<CompiledModule> CompileForHost(const std::string& source,
                                               const std::string& host_cpu = "") {
  CompileOptions options;
  options.target = Target::kHost;
  options.host_cpu = host_cpu;
  options.source_name = "test.mlir";
  auto compiled = Compile(source, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? std::move(compiled).value() : nullptr;
}

runtime::PackedEntry Entry(const CompiledModule& module, const std::string& name) {
  auto entry = module.host->Lookup(name);
  EXPECT_TRUE(entry.ok()) << entry.status();
  return entry.ok() ? *entry : nullptr;
}

/// |actual − expected| ≤ atol + rtol·|expected|, with NaN matching NaN and equal infinities.
void ExpectClose(const std::vector<float>& actual, const std::vector<float>& expected, float atol,
                 float rtol, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << what << " at " << i;
      continue;
    }
    if (std::isinf(expected[i])) {
      EXPECT_EQ(actual[i], expected[i]) << what << " at " << i;
      continue;
    }
    EXPECT_LE(std::fabs(actual[i] - expected[i]), atol + rtol * std::fabs(expected[i]))
        << what << " at " << i << ": got " << actual[i] << ", expected " << expected[i];
  }
}

// ---------------------------------------------------------------------------------------------
// tile.map

constexpr char kSaxpy[] = R"mlir(
func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}
)mlir";

TEST(HostExecutionTest, MapSaxpyMatchesReferenceAcrossSizes) {
  auto module = CompileForHost(kSaxpy);
  ASSERT_NE(module, nullptr);
  runtime::PackedEntry saxpy = Entry(*module, "saxpy");
  for (int64_t n : {0, 1, 7, 256, 1000, 1025}) {
    HostTensor<float> x({n}), y({n}), out({n});
    FillUniform(x.data(), 1);
    FillUniform(y.data(), 2);
    float alpha = 1.75f;
    void* args[] = {&alpha, x.descriptor(), y.descriptor(), out.descriptor()};
    saxpy(args);
    std::vector<float> expected(n);
    for (int64_t i = 0; i < n; ++i) expected[i] = alpha * x[i] + y[i];
    ExpectClose(out.data(), expected, 1e-6f, 1e-6f, absl::StrCat("saxpy n=", n));
  }
}

TEST(HostExecutionTest, MapWithTwoOutputsWritesValuesAndMask) {
  auto module = CompileForHost(R"mlir(
func.func @clip(%x: memref<?x?xf32>, %limit: f32, %clipped: memref<?x?xf32>, %mask: memref<?x?xi1>) {
  tile.map ins(%x, %limit : memref<?x?xf32>, f32) outs(%clipped, %mask : memref<?x?xf32>, memref<?x?xi1>) {
  ^bb0(%v: f32, %l: f32):
    %over = arith.cmpf ogt, %v, %l : f32
    %r = arith.select %over, %l, %v : f32
    tile.yield %r, %over : f32, i1
  }
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  HostTensor<float> x({5, 13}), clipped({5, 13});
  HostTensor<uint8_t> mask({5, 13});
  FillUniform(x.data(), 3);
  float limit = 0.25f;
  void* args[] = {x.descriptor(), &limit, clipped.descriptor(), mask.descriptor()};
  Entry(*module, "clip")(args);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(clipped[i], x[i] > limit ? limit : x[i]) << i;
    EXPECT_EQ(mask[i] & 1, x[i] > limit ? 1 : 0) << i;
  }
}

TEST(HostExecutionTest, MapOnHalfStorageComputesInF32) {
  auto module = CompileForHost(R"mlir(
func.func @tanh_half(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  tile.map ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf16>) {
  ^bb0(%h: f16):
    %v = arith.extf %h : f16 to f32
    %t = math.tanh %v : f32
    %r = arith.truncf %t : f32 to f16
    tile.yield %r : f16
  }
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  HostTensor<uint16_t> x({3, 9}), y({3, 9});
  std::vector<float> values(x.size());
  FillUniform(values, 4, -3.0f, 3.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = testing::FloatToHalf(values[i]);
  void* args[] = {x.descriptor(), y.descriptor()};
  Entry(*module, "tanh_half")(args);
  for (size_t i = 0; i < x.size(); ++i) {
    float expected = std::tanh(testing::HalfToFloat(x[i]));
    // One f16 rounding of the f32 result: within half an ulp of f16 (2^-11 relative).
    EXPECT_NEAR(testing::HalfToFloat(y[i]), expected, 1e-3f) << i;
  }
}

// ---------------------------------------------------------------------------------------------
// tile.reduce

struct ReduceCase {
  const char* kind;
  int64_t axis;
  bool keepdims;
};

float ReduceReference(const char* kind, const std::vector<float>& values) {
  std::string k = kind;
  double accumulator = k == "prod"  ? 1.0
                       : k == "max" ? -std::numeric_limits<double>::infinity()
                       : k == "min" ? std::numeric_limits<double>::infinity()
                                    : 0.0;
  for (float v : values) {
    if (k == "sum" || k == "mean") accumulator += v;
    if (k == "prod") accumulator *= v;
    if (k == "max") accumulator = std::max<double>(accumulator, v);
    if (k == "min") accumulator = std::min<double>(accumulator, v);
  }
  if (k == "mean") {
    return values.empty() ? std::numeric_limits<float>::quiet_NaN()
                          : static_cast<float>(accumulator / values.size());
  }
  return static_cast<float>(accumulator);
}

class HostReduceTest : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(HostReduceTest, MatchesReferenceAcrossShapes) {
  const ReduceCase& c = GetParam();
  std::string output_type =
      c.keepdims ? (c.axis == 0 ? "memref<1x?xf32>" : "memref<?x1xf32>") : "memref<?xf32>";
  std::string source = absl::StrCat("func.func @reduce(%x: memref<?x?xf32>, %y: ", output_type,
                                    ") {\n  tile.reduce ", c.kind, " %x -> %y axis = ", c.axis,
                                    c.keepdims ? " keepdims" : "", " : memref<?x?xf32> -> ",
                                    output_type, "\n  return\n}\n");
  auto module = CompileForHost(source);
  ASSERT_NE(module, nullptr);
  runtime::PackedEntry reduce = Entry(*module, "reduce");
  const std::vector<std::vector<int64_t>> shapes = {{1, 1},   {3, 5}, {17, 1},
                                                    {1, 300}, {4, 0}, {0, 3}};
  for (const auto& shape : shapes) {
    const int64_t rows = shape[0];
    const int64_t cols = shape[1];
    HostTensor<float> x({rows, cols});
    // Values near 1 keep prod finite over a few hundred elements.
    FillUniform(x.data(), 5, std::string(c.kind) == "prod" ? 0.9f : -2.0f,
                std::string(c.kind) == "prod" ? 1.1f : 2.0f);
    const int64_t kept = c.axis == 0 ? cols : rows;
    std::vector<int64_t> output_shape =
        c.keepdims ? (c.axis == 0 ? std::vector<int64_t>{1, kept} : std::vector<int64_t>{kept, 1})
                   : std::vector<int64_t>{kept};
    HostTensor<float> y(output_shape);
    void* args[] = {x.descriptor(), y.descriptor()};
    reduce(args);
    std::vector<float> expected(kept);
    for (int64_t o = 0; o < kept; ++o) {
      std::vector<float> slice;
      const int64_t length = c.axis == 0 ? rows : cols;
      for (int64_t r = 0; r < length; ++r) {
        slice.push_back(c.axis == 0 ? x[r * cols + o] : x[o * cols + r]);
      }
      expected[o] = ReduceReference(c.kind, slice);
    }
    // f32 accumulation in order vs a double reference: 1e-5 relative plus 1e-5 absolute.
    ExpectClose(y.data(), expected, 1e-5f, 1e-5f,
                absl::StrCat(c.kind, " axis=", c.axis, " shape=", rows, "x", cols));
  }
}

INSTANTIATE_TEST_SUITE_P(KindsAndAxes, HostReduceTest,
                         ::testing::Values(ReduceCase{"sum", 1, false}, ReduceCase{"sum", 0, true},
                                           ReduceCase{"mean", 1, true},
                                           ReduceCase{"mean", 0, false},
                                           ReduceCase{"max", 1, false}, ReduceCase{"max", 0, false},
                                           ReduceCase{"min", 1, false}, ReduceCase{"min", 0, true},
                                           ReduceCase{"prod", 1, false},
                                           ReduceCase{"prod", 0, false}),
                         [](const ::testing::TestParamInfo<ReduceCase>& info) {
                           return absl::StrCat(info.param.kind, "_axis", info.param.axis,
                                               info.param.keepdims ? "_keepdims" : "");
                         });

TEST(HostExecutionTest, ReduceMiddleAxisOfRank3WithKeepdims) {
  auto module = CompileForHost(R"mlir(
func.func @reduce3(%x: memref<2x5x3xf32>, %y: memref<2x1x3xf32>) {
  tile.reduce sum %x -> %y axis = 1 keepdims : memref<2x5x3xf32> -> memref<2x1x3xf32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  HostTensor<float> x({2, 5, 3}), y({2, 1, 3});
  FillUniform(x.data(), 6);
  void* args[] = {x.descriptor(), y.descriptor()};
  Entry(*module, "reduce3")(args);
  std::vector<float> expected(6, 0.0f);
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 5; ++b) {
      for (int c = 0; c < 3; ++c) expected[a * 3 + c] += x[(a * 5 + b) * 3 + c];
    }
  }
  ExpectClose(y.data(), expected, 1e-6f, 1e-6f, "reduce3");
}

// A reduction over a leading axis streams the rows (in groups, then the rest one at a time):
// each output is still, bit for bit, the f32 fold of its column from the identity in ascending
// row order, for row counts around the group size and widths around the column block.
TEST(HostExecutionTest, StreamedReduceFoldsEachColumnInAscendingRowOrderBitForBit) {
  auto module = CompileForHost(R"mlir(
func.func @columns(%x: memref<?x?x?xf32>, %sum: memref<?x?xf32>, %prod: memref<?x?xf32>,
                   %arg: memref<?x?xi64>, %argmin: memref<?x?xi64>) {
  tile.reduce sum %x -> %sum axis = 1 : memref<?x?x?xf32> -> memref<?x?xf32>
  tile.reduce prod %x -> %prod axis = 1 : memref<?x?x?xf32> -> memref<?x?xf32>
  tile.reduce argmax %x -> %arg axis = 1 : memref<?x?x?xf32> -> memref<?x?xi64>
  tile.reduce argmin %x -> %argmin axis = 1 : memref<?x?x?xf32> -> memref<?x?xi64>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  for (int64_t rows : {1, 3, 4, 5, 8, 13, 257}) {
    for (int64_t cols : {1, 7, 257, 1030}) {
      const int64_t outer = 2;
      HostTensor<float> x({outer, rows, cols}), sum({outer, cols}), prod({outer, cols});
      HostTensor<int64_t> arg({outer, cols}), argmin({outer, cols});
      FillUniform(x.data(), static_cast<uint32_t>(rows * 31 + cols), 0.5f, 1.5f);
      // Ties: the first extreme must win, also across groups of rows.
      for (int64_t c = 0; c < cols; c += 3) x[(rows / 2) * cols + c] = x[c];
      void* args[] = {x.descriptor(), sum.descriptor(), prod.descriptor(), arg.descriptor(),
                      argmin.descriptor()};
      Entry(*module, "columns")(args);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < cols; ++c) {
          float want_sum = 0.0f, want_prod = 1.0f;
          int64_t want_arg = 0, want_argmin = 0;
          for (int64_t r = 0; r < rows; ++r) {
            const float v = x[(o * rows + r) * cols + c];
            want_sum += v;
            want_prod *= v;
            if (v > x[(o * rows + want_arg) * cols + c]) want_arg = r;
            if (v < x[(o * rows + want_argmin) * cols + c]) want_argmin = r;
          }
          const std::string what =
              std::to_string(rows) + "x" + std::to_string(cols) + " column " + std::to_string(c);
          ASSERT_EQ(sum[o * cols + c], want_sum) << "sum, " << what;
          ASSERT_EQ(prod[o * cols + c], want_prod) << "prod, " << what;
          ASSERT_EQ(arg[o * cols + c], want_arg) << "argmax, " << what;
          ASSERT_EQ(argmin[o * cols + c], want_argmin) << "argmin, " << what;
        }
      }
    }
  }
}

TEST(HostExecutionTest, ReduceHalfVectorToF32Scalar) {
  auto module = CompileForHost(R"mlir(
func.func @total(%x: memref<?xf16>, %y: memref<f32>) {
  tile.reduce sum %x -> %y axis = 0 : memref<?xf16> -> memref<f32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  HostTensor<uint16_t> x({777});
  HostTensor<float> y({});
  std::vector<float> values(777);
  FillUniform(values, 7);
  double expected = 0.0;
  for (size_t i = 0; i < values.size(); ++i) {
    x[i] = testing::FloatToHalf(values[i]);
    expected += testing::HalfToFloat(x[i]);
  }
  void* args[] = {x.descriptor(), y.descriptor()};
  Entry(*module, "total")(args);
  EXPECT_NEAR(y[0], expected, 1e-4);
}

// ---------------------------------------------------------------------------------------------
// tile.matmul

float Tf32(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return value;
  bits = (bits + 0x1000u) & ~0x1FFFu;
  std::memcpy(&value, &bits, 4);
  return value;
}

struct MatmulCase {
  int64_t m, n, k;
  bool transpose_a, transpose_b;
  std::string epilogue;  // "", "bias", "bias_relu", "bias_gelu", "silu"
  std::string policy;    // "", "tf32"
};

float Activate(const std::string& epilogue, float x) {
  if (epilogue == "bias_relu") return std::max(x, 0.0f);
  if (epilogue == "bias_gelu") return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
  if (epilogue == "silu") return x / (1.0f + std::exp(-x));
  return x;
}

class HostMatmulTest : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(HostMatmulTest, MatchesReference) {
  const MatmulCase& c = GetParam();
  const bool has_bias = c.epilogue.rfind("bias", 0) == 0;
  std::string activation = c.epilogue == "bias_relu"   ? " activation(relu)"
                           : c.epilogue == "bias_gelu" ? " activation(gelu)"
                           : c.epilogue == "silu"      ? " activation(silu)"
                                                       : "";
  std::string attrs;
  if (c.transpose_a && c.transpose_b)
    attrs = " {transpose_a, transpose_b}";
  else if (c.transpose_a)
    attrs = " {transpose_a}";
  else if (c.transpose_b)
    attrs = " {transpose_b}";
  std::string source = absl::StrCat(
      "func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>, %c: "
      "memref<?x?xf32>) {\n  tile.matmul %a, %b -> %c",
      has_bias ? " bias(%bias : memref<?xf32>)" : "", activation,
      c.policy.empty() ? "" : absl::StrCat(" policy(", c.policy, ")"), attrs,
      " : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>\n  return\n}\n");
  auto module = CompileForHost(source);
  ASSERT_NE(module, nullptr);
  HostTensor<float> a(c.transpose_a ? std::vector<int64_t>{c.k, c.m}
                                    : std::vector<int64_t>{c.m, c.k});
  HostTensor<float> b(c.transpose_b ? std::vector<int64_t>{c.n, c.k}
                                    : std::vector<int64_t>{c.k, c.n});
  HostTensor<float> bias({c.n}), out({c.m, c.n});
  FillUniform(a.data(), 8);
  FillUniform(b.data(), 9);
  FillUniform(bias.data(), 10);
  void* args[] = {a.descriptor(), b.descriptor(), bias.descriptor(), out.descriptor()};
  Entry(*module, "mm")(args);

  std::vector<float> expected(c.m * c.n);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0.0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        float x = c.transpose_a ? a[kk * c.m + i] : a[i * c.k + kk];
        float y = c.transpose_b ? b[j * c.k + kk] : b[kk * c.n + j];
        if (c.policy == "tf32") {
          x = Tf32(x);
          y = Tf32(y);
        }
        sum += static_cast<double>(x) * y;
      }
      float value = static_cast<float>(sum) + (has_bias ? bias[j] : 0.0f);
      expected[i * c.n + j] = Activate(c.epilogue, value);
    }
  }
  // f32 accumulation over K terms of magnitude ≤ 1: 1e-6·K absolute plus 1e-5 relative.
  ExpectClose(out.data(), expected, 1e-6f * static_cast<float>(c.k + 1), 1e-5f,
              absl::StrCat("matmul ", c.m, "x", c.n, "x", c.k));
}

INSTANTIATE_TEST_SUITE_P(Shapes, HostMatmulTest,
                         ::testing::Values(MatmulCase{1, 1, 1, false, false, "", ""},
                                           MatmulCase{17, 9, 33, false, false, "", ""},
                                           MatmulCase{64, 16, 32, false, false, "bias", ""},
                                           MatmulCase{29, 37, 50, false, false, "bias_relu", ""},
                                           MatmulCase{13, 31, 7, true, false, "bias_relu", ""},
                                           MatmulCase{8, 5, 300, false, true, "bias_gelu", ""},
                                           MatmulCase{6, 11, 19, true, true, "silu", ""},
                                           MatmulCase{20, 24, 129, false, false, "", "tf32"},
                                           MatmulCase{3, 4, 0, false, false, "bias_relu", ""},
                                           MatmulCase{0, 4, 5, false, false, "", ""}),
                         [](const ::testing::TestParamInfo<MatmulCase>& info) {
                           const MatmulCase& c = info.param;
                           return absl::StrCat(
                               "m", c.m, "n", c.n, "k", c.k, c.transpose_a ? "_ta" : "",
                               c.transpose_b ? "_tb" : "", c.epilogue.empty() ? "" : "_",
                               c.epilogue, c.policy.empty() ? "" : "_", c.policy);
                         });

TEST(HostExecutionTest, MatmulOnBfloatStorageAccumulatesInF32) {
  auto module = CompileForHost(R"mlir(
func.func @mm(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xbf16>, memref<?x?xbf16> -> memref<?x?xf32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  const int64_t m = 9, n = 10, k = 40;
  HostTensor<uint16_t> a({m, k}), b({k, n});
  HostTensor<float> c({m, n});
  std::vector<float> av(a.size()), bv(b.size());
  FillUniform(av, 11);
  FillUniform(bv, 12);
  for (size_t i = 0; i < av.size(); ++i) a[i] = testing::FloatToBfloat(av[i]);
  for (size_t i = 0; i < bv.size(); ++i) b[i] = testing::FloatToBfloat(bv[i]);
  void* args[] = {a.descriptor(), b.descriptor(), c.descriptor()};
  Entry(*module, "mm")(args);
  std::vector<float> expected(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        sum += static_cast<double>(testing::BfloatToFloat(a[i * k + kk])) *
               testing::BfloatToFloat(b[kk * n + j]);
      }
      expected[i * n + j] = static_cast<float>(sum);
    }
  }
  // Inputs are exact in f32; only f32 accumulation differs from the double reference.
  ExpectClose(c.data(), expected, 1e-5f, 1e-5f, "bf16 matmul");
}

// ---------------------------------------------------------------------------------------------
// tile.softmax

std::vector<float> SoftmaxReference(const std::vector<float>& x, int64_t length) {
  std::vector<float> y(x.size());
  for (size_t row = 0; length > 0 && row < x.size() / length; ++row) {
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t l = 0; l < length; ++l) max = std::max<double>(max, x[row * length + l]);
    double sum = 0;
    for (int64_t l = 0; l < length; ++l) sum += std::exp(x[row * length + l] - max);
    for (int64_t l = 0; l < length; ++l) {
      y[row * length + l] = static_cast<float>(std::exp(x[row * length + l] - max) / sum);
    }
  }
  return y;
}

TEST(HostExecutionTest, SoftmaxMatchesReferenceAndIsStable) {
  auto module = CompileForHost(R"mlir(
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  runtime::PackedEntry softmax = Entry(*module, "softmax");
  for (auto [rows, cols, scale] : std::vector<std::tuple<int64_t, int64_t, float>>{
           {1, 1, 1.0f}, {3, 10, 1.0f}, {4, 1000, 5.0f}, {2, 37, 1000.0f}, {0, 5, 1.0f}}) {
    HostTensor<float> x({rows, cols}), y({rows, cols});
    // Large logits (±1000) overflow exp without the max subtraction.
    FillUniform(x.data(), 13, -scale, scale);
    void* args[] = {x.descriptor(), y.descriptor()};
    softmax(args);
    ExpectClose(y.data(), SoftmaxReference(x.data(), cols), 1e-6f, 1e-5f,
                absl::StrCat("softmax ", rows, "x", cols, " scale ", scale));
  }
}

TEST(HostExecutionTest, SoftmaxOverLastAxisOfRank3) {
  auto module = CompileForHost(R"mlir(
func.func @softmax3(%x: memref<2x3x7xf32>, %y: memref<2x3x7xf32>) {
  tile.softmax %x -> %y : memref<2x3x7xf32> -> memref<2x3x7xf32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  HostTensor<float> x({2, 3, 7}), y({2, 3, 7});
  FillUniform(x.data(), 14, -4.0f, 4.0f);
  void* args[] = {x.descriptor(), y.descriptor()};
  Entry(*module, "softmax3")(args);
  ExpectClose(y.data(), SoftmaxReference(x.data(), 7), 1e-6f, 1e-5f, "softmax3");
}

// ---------------------------------------------------------------------------------------------
// A chain in one entry function: matmul + bias + relu → matmul + bias → softmax → reduce.

TEST(HostExecutionTest, MlpChainMatchesComposedReference) {
  auto module = CompileForHost(R"mlir(
func.func @mlp(%x: memref<?x24xf32>, %w1: memref<24x16xf32>, %b1: memref<16xf32>,
               %w2: memref<16x5xf32>, %b2: memref<5xf32>, %hidden: memref<?x16xf32>,
               %logits: memref<?x5xf32>, %probs: memref<?x5xf32>, %top: memref<?xf32>)
    attributes {tessera.deterministic} {
  tile.matmul %x, %w1 -> %hidden bias(%b1 : memref<16xf32>) activation(relu)
      : memref<?x24xf32>, memref<24x16xf32> -> memref<?x16xf32>
  tile.matmul %hidden, %w2 -> %logits bias(%b2 : memref<5xf32>)
      : memref<?x16xf32>, memref<16x5xf32> -> memref<?x5xf32>
  tile.softmax %logits -> %probs : memref<?x5xf32> -> memref<?x5xf32>
  tile.reduce max %probs -> %top axis = 1 : memref<?x5xf32> -> memref<?xf32>
  return
}
)mlir");
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->entries.size(), 1u);
  EXPECT_TRUE(module->entries[0].deterministic);
  for (int64_t batch : {1, 6}) {
    HostTensor<float> x({batch, 24}), w1({24, 16}), b1({16}), w2({16, 5}), b2({5});
    HostTensor<float> hidden({batch, 16}), logits({batch, 5}), probs({batch, 5}), top({batch});
    FillUniform(x.data(), 15);
    FillUniform(w1.data(), 16);
    FillUniform(b1.data(), 17);
    FillUniform(w2.data(), 18);
    FillUniform(b2.data(), 19);
    void* args[] = {x.descriptor(),      w1.descriptor(),    b1.descriptor(),
                    w2.descriptor(),     b2.descriptor(),    hidden.descriptor(),
                    logits.descriptor(), probs.descriptor(), top.descriptor()};
    Entry(*module, "mlp")(args);

    std::vector<float> h(batch * 16), l(batch * 5), expected_top(batch);
    for (int64_t i = 0; i < batch; ++i) {
      for (int j = 0; j < 16; ++j) {
        double s = 0;
        for (int k = 0; k < 24; ++k) s += static_cast<double>(x[i * 24 + k]) * w1[k * 16 + j];
        h[i * 16 + j] = std::max(static_cast<float>(s) + b1[j], 0.0f);
      }
      for (int j = 0; j < 5; ++j) {
        double s = 0;
        for (int k = 0; k < 16; ++k) s += static_cast<double>(h[i * 16 + k]) * w2[k * 5 + j];
        l[i * 5 + j] = static_cast<float>(s) + b2[j];
      }
    }
    std::vector<float> p = SoftmaxReference(l, 5);
    for (int64_t i = 0; i < batch; ++i) {
      expected_top[i] = *std::max_element(p.begin() + i * 5, p.begin() + (i + 1) * 5);
    }
    ExpectClose(probs.data(), p, 1e-5f, 1e-4f, "mlp probs");
    ExpectClose(top.data(), expected_top, 1e-5f, 1e-4f, "mlp top");
  }
}

TEST(HostExecutionTest, ScalarResultIsStoredAfterTheArguments) {
  auto module = CompileForHost(R"mlir(
func.func @scale(%x: f32, %n: index) -> f32 {
  %c = arith.index_cast %n : index to i64
  %f = arith.sitofp %c : i64 to f32
  %r = arith.mulf %x, %f : f32
  return %r : f32
}
)mlir");
  ASSERT_NE(module, nullptr);
  float x = 2.5f;
  int64_t n = 4;
  float result = 0.0f;
  void* args[] = {&x, &n, &result};
  Entry(*module, "scale")(args);
  EXPECT_EQ(result, 10.0f);
}

}  // namespace
}  // namespace tessera::jit
