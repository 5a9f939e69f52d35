// The host matmul's documented order, bit for bit: every element of C sums its K products in
// ascending order from zero — under policy f32 each product rounded to f32 and then added,
// under policy fma each step one rounding (std::fma) — whichever kernel serves the shape: the
// row kernel (fewer rows than a register tile), the register tile on packed A and B (K = 257),
// and the tile reading small A and B where they are (the last row and column panels' tiles
// overlapping the panels before them: 29 rows, 37 columns; K = 256 and K·N = 4096 at the
// bounds); with and without transposes; f32 and bf16 storage (converted exactly, then the same
// order); for this machine's CPU and for baseline x86-64 (the SSE2 tile, and std::fma where a
// CPU has no FMA3).
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
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 70, 257}, {5, 70, 257}, {29, 70, 257},
                                                      {29, 37, 50}, {6, 16, 256}, {7, 9, 3}};
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
                    if (policy == "fma") {
                      sum = std::fma(x, y, sum);
                    } else {
                      const float product = x * y;
                      sum = sum + product;
                    }
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

}  // namespace
}  // namespace tessera::jit
