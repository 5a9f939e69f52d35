// The host matmul's documented order, bit for bit: every element of C sums its K products in
// ascending order from zero — under policy f32 each product rounded to f32 and then added,
// under policy fma each step one rounding (std::fma) — whichever kernel serves the shape: the
// row kernel (fewer rows than a register tile), the register tile on packed A and B (K = 257),
// and the tile reading small A and B where they are (the last row and column panels' tiles
// overlapping the panels before them: 29 rows, 37 and 70 columns — AVX-512's 64-column tile
// too; K = 256 and K·N = 4096 at the bounds; K = 0); with and without transposes; f32 and bf16
// storage (converted exactly, then the same order); for this machine's CPU and for baseline
// x86-64 (the SSE2 tile); batched, with B shared or broadcast. (The _fma kernels' fallback for
// CPUs without FMA3 is checked in tests/runtime/matmul_ukernels_test.)
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "tests/jit/host_tensor.h"

namespace tessera::jit {
namespace {

using ::tessera::testing::BfloatToFloat;
using ::tessera::testing::FillUniform;
using ::tessera::testing::FloatToBfloat;
using ::tessera::testing::HostTensor;

/// One step of the documented order: sum + x·y, the product rounded and then the sum (policy
/// f32), or fma(x, y, sum), one rounding (policy fma).
float Step(const std::string& policy, float sum, float x, float y) {
  if (policy == "fma") return std::fma(x, y, sum);
  const float product = x * y;
  return sum + product;
}

struct OrderCase {
  std::string policy;   // "f32" or "fma"
  std::string element;  // "f32" or "bf16"
  bool transpose_a, transpose_b;
};

/// C = op(A)·op(B) with `c`'s policy, storage and transposes, compiled for `host_cpu` (empty:
/// this machine's CPU).
std::unique_ptr<CompiledModule> CompileMatmul(const OrderCase& c, const std::string& host_cpu) {
  const std::string attrs = c.transpose_a && c.transpose_b ? " {transpose_a, transpose_b}"
                            : c.transpose_a                ? " {transpose_a}"
                            : c.transpose_b                ? " {transpose_b}"
                                                           : "";
  const std::string operand = absl::StrCat("memref<?x?x", c.element, ">");
  CompileOptions options;
  options.target = Target::kHost;
  options.host_cpu = host_cpu;
  auto compiled = Compile(
      absl::StrCat("func.func @mm(%a: ", operand, ", %b: ", operand,
                   ", %c: memref<?x?xf32>) {\n  tile.matmul %a, %b -> %c policy(", c.policy, ")",
                   attrs, " : ", operand, ", ", operand, " -> memref<?x?xf32>\n  return\n}\n"),
      options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? std::move(compiled).value() : nullptr;
}

/// An operand of `rows` × `columns` in `element` storage, and its values as f32 (exact).
struct Operand {
  HostTensor<float> f32;
  HostTensor<uint16_t> bf16;
  std::vector<float> values;

  Operand(const std::string& element, int64_t rows, int64_t columns, uint32_t seed)
      : f32(std::vector<int64_t>{element == "f32" ? rows : 0, columns}),
        bf16(std::vector<int64_t>{element == "bf16" ? rows : 0, columns}),
        values(static_cast<size_t>(rows * columns)) {
    FillUniform(values, seed, -3.0f, 3.0f);
    for (size_t i = 0; i < values.size(); ++i) {
      if (element == "bf16") {
        bf16[i] = FloatToBfloat(values[i]);
        values[i] = BfloatToFloat(bf16[i]);
      } else {
        f32[i] = values[i];
      }
    }
  }
  void* descriptor(const std::string& element) {
    return element == "bf16" ? bf16.descriptor() : f32.descriptor();
  }
};

TEST(MatmulOrderTest, EachElementSumsItsProductsInAscendingKOrderUnderEachPolicy) {
  // Whole tiles written into C and partial ones through the epilogue; A packed on the stack
  // (K · 6 ≤ 8192) and on the heap (K = 1400).
  const std::vector<std::array<int64_t, 3>> shapes = {
      {1, 70, 257}, {5, 70, 257}, {29, 70, 257}, {29, 37, 50},  {29, 70, 50},  {6, 16, 256},
      {6, 64, 64},  {7, 9, 3},    {7, 20, 0},    {12, 16, 300}, {13, 20, 1400}};
  for (const std::string cpu : {"", "x86-64"}) {
    for (const std::string policy : {"f32", "fma"}) {
      for (const std::string element : {"f32", "bf16"}) {
        for (const bool transpose_a : {false, true}) {
          for (const bool transpose_b : {false, true}) {
            const OrderCase c{policy, element, transpose_a, transpose_b};
            auto module = CompileMatmul(c, cpu);
            ASSERT_NE(module, nullptr);
            auto entry = module->host->Lookup("mm");
            ASSERT_TRUE(entry.ok()) << entry.status();
            for (const auto& [m, n, k] : shapes) {
              Operand a(element, transpose_a ? k : m, transpose_a ? m : k, 21);
              Operand b(element, transpose_b ? n : k, transpose_b ? k : n, 22);
              HostTensor<float> out({m, n});
              void* args[] = {a.descriptor(element), b.descriptor(element), out.descriptor()};
              (*entry)(args);
              for (int64_t i = 0; i < m; ++i) {
                for (int64_t j = 0; j < n; ++j) {
                  float sum = 0.0f;
                  for (int64_t kk = 0; kk < k; ++kk) {
                    const float x = a.values[transpose_a ? kk * m + i : i * k + kk];
                    const float y = b.values[transpose_b ? j * k + kk : kk * n + j];
                    sum = Step(policy, sum, x, y);
                  }
                  ASSERT_EQ(out[i * n + j], sum)
                      << "C[" << i << "][" << j << "] of " << m << "x" << n << "x" << k
                      << ", policy " << policy << ", " << element
                      << (transpose_a ? ", transpose_a" : "")
                      << (transpose_b ? ", transpose_b" : "") << ", cpu '" << cpu << "'";
                }
              }
            }
          }
        }
      }
    }
  }
}

// Batched: C[3][13][20] = A[3][13][40] · B, B of rank 2 shared by every batch (packed once, or
// read in place: K·N = 800) and of rank 3 broadcast from one batch.
TEST(MatmulOrderTest, EveryBatchSumsInAscendingKOrderWithASharedOrBroadcastB) {
  const int64_t batches = 3, m = 13, n = 20, k = 40;
  for (const std::string policy : {"f32", "fma"}) {
    for (const std::string b_type : {"memref<?x?xf32>", "memref<1x?x?xf32>"}) {
      CompileOptions options;
      options.target = Target::kHost;
      auto compiled = Compile(
          absl::StrCat("func.func @mm(%a: memref<?x?x?xf32>, %b: ", b_type,
                       ", %c: memref<?x?x?xf32>) {\n  tile.matmul %a, %b -> %c policy(", policy,
                       ") : memref<?x?x?xf32>, ", b_type, " -> memref<?x?x?xf32>\n  return\n}\n"),
          options);
      ASSERT_TRUE(compiled.ok()) << compiled.status();
      auto entry = (*compiled)->host->Lookup("mm");
      ASSERT_TRUE(entry.ok()) << entry.status();
      HostTensor<float> a({batches, m, k}), c({batches, m, n});
      HostTensor<float> b(b_type == "memref<?x?xf32>" ? std::vector<int64_t>{k, n}
                                                      : std::vector<int64_t>{1, k, n});
      FillUniform(a.data(), 31, -3.0f, 3.0f);
      FillUniform(b.data(), 32, -3.0f, 3.0f);
      void* args[] = {a.descriptor(), b.descriptor(), c.descriptor()};
      (*entry)(args);
      for (int64_t batch = 0; batch < batches; ++batch) {
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (int64_t kk = 0; kk < k; ++kk) {
              const float x = a[(batch * m + i) * k + kk], y = b[kk * n + j];
              sum = Step(policy, sum, x, y);
            }
            ASSERT_EQ(c[(batch * m + i) * n + j], sum)
                << "C[" << batch << "][" << i << "][" << j << "], policy " << policy << ", B "
                << b_type;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera::jit
