// runtime/ukernels/matmul_f32.h against plain C++: each register tile and row kernel the CPU
// can run and the packing of A and B (strides, transposes, padding) give, bit for bit, the
// f32 sum of each element's products in ascending K order from zero — each product rounded,
// then added (policy f32), or fused, std::fma (the `_fma` kernels, policy fma).
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/ukernels/matmul_f32.h"

namespace tessera::runtime {
namespace {

std::vector<float> Uniform(size_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  std::vector<float> out(count);
  for (float& x : out) x = value(engine);
  return out;
}

/// Σ_{kk ascending} x(kk) · y(kk) from zero: each product rounded, then added, or (`fused`)
/// each step one rounding, std::fma.
template <typename X, typename Y>
float AscendingDot(int64_t k, X x, Y y, bool fused = false) {
  float sum = 0.0f;
  for (int64_t kk = 0; kk < k; ++kk) {
    if (fused) {
      sum = std::fma(x(kk), y(kk), sum);
    } else {
      const float product = x(kk) * y(kk);
      sum = sum + product;
    }
  }
  return sum;
}

using Tile = void (*)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*,
                      int64_t);

struct TileVariant {
  std::string name;
  Tile tile;
  int64_t columns;
  bool runs_here;
  bool fused;
};

std::vector<TileVariant> Variants() {
  __builtin_cpu_init();
  return {{"6x8_sse2", &tessera_uk_matmul_f32_tile_6x8_sse2, 8, true, false},
          {"6x16_avx", &tessera_uk_matmul_f32_tile_6x16_avx, 16, __builtin_cpu_supports("avx") != 0,
           false},
          {"6x64_avx512f", &tessera_uk_matmul_f32_tile_6x64_avx512f, 64,
           __builtin_cpu_supports("avx512f") != 0, false},
          {"6x8_sse2_fma", &tessera_uk_matmul_f32_tile_6x8_sse2_fma, 8, true, true},
          {"6x16_avx_fma", &tessera_uk_matmul_f32_tile_6x16_avx_fma, 16,
           __builtin_cpu_supports("avx") != 0, true},
          {"6x64_avx512f_fma", &tessera_uk_matmul_f32_tile_6x64_avx512f_fma, 64,
           __builtin_cpu_supports("avx512f") != 0, true},
          // What the 6x8 and 6x16 _fma tiles run on a CPU without FMA3.
          {"6x8 without FMA3",
           +[](const float* a, int64_t am, int64_t ak, const float* b, int64_t bk, int64_t k,
               float* tile,
               int64_t stride) { FusedTileWithoutFma3(a, am, ak, b, bk, k, 8, tile, stride); },
           8, true, true},
          {"6x16 without FMA3",
           +[](const float* a, int64_t am, int64_t ak, const float* b, int64_t bk, int64_t k,
               float* tile,
               int64_t stride) { FusedTileWithoutFma3(a, am, ak, b, bk, k, 16, tile, stride); },
           16, true, true}};
}

TEST(MatmulUkernelsTest, EveryTileSumsInAscendingKOrderBitForBit) {
  // A and B as the host matmul hands them over: packed (A k-major, B a panel of NR columns),
  // or read where they are — A row-major or transposed inside a wider matrix, B's rows at a
  // stride wider than the tile; the tile written to a scratch tile (rows NR apart) or into C
  // (rows further apart, nothing between them touched).
  struct Layout {
    const char* name;
    int64_t stride_am, stride_ak;  // with k; stride_bk below is NR + extra_b
    int64_t extra_b;
  };
  for (const TileVariant& variant : Variants()) {
    if (!variant.runs_here) {
      std::cout << "[ SKIPPED  ] " << variant.name << ": this CPU lacks its instruction set\n";
      continue;
    }
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{257}}) {
      const int64_t nr = variant.columns;
      const Layout layouts[] = {{"packed", 1, 6, 0},
                                {"A row-major, B rows of 3·NR + 5", k + 3, 1, 2 * nr + 5},
                                {"A transposed (stride 11)", 1, 11, 1}};
      for (const Layout& layout : layouts) {
        const int64_t stride_bk = nr + layout.extra_b;
        const int64_t a_size = 5 * layout.stride_am + (k > 0 ? k - 1 : 0) * layout.stride_ak + 1;
        std::vector<float> a = Uniform(static_cast<size_t>(a_size), 1);
        std::vector<float> b = Uniform(static_cast<size_t>(stride_bk * k + nr), 2);
        for (int64_t stride_tile : {nr, 2 * nr + 3}) {
          std::vector<float> tile(static_cast<size_t>(6 * stride_tile), -1.0f);
          variant.tile(a.data(), layout.stride_am, layout.stride_ak, b.data(), stride_bk, k,
                       tile.data(), stride_tile);
          for (int64_t r = 0; r < 6; ++r) {
            for (int64_t c = 0; c < stride_tile; ++c) {
              const float expected =
                  c >= nr ? -1.0f  // between C's tile rows: untouched
                          : AscendingDot(
                                k,
                                [&](int64_t kk) {
                                  return a[r * layout.stride_am + kk * layout.stride_ak];
                                },
                                [&](int64_t kk) { return b[kk * stride_bk + c]; }, variant.fused);
              ASSERT_EQ(tile[r * stride_tile + c], expected)
                  << variant.name << " " << layout.name << " k=" << k
                  << " stride_tile=" << stride_tile << " [" << r << "][" << c << "]";
            }
          }
        }
      }
    }
  }
}

TEST(MatmulUkernelsTest, PackingPadsAndHonoursStrides) {
  // B is 5 x 11 stored transposed (element [kk][j] at j * 5 + kk); panels of 8 columns.
  const int64_t k = 5, n = 11, nr = 8;
  std::vector<float> b = Uniform(static_cast<size_t>(k * n), 3);
  std::vector<float> packed(static_cast<size_t>(2 * k * nr), -1.0f);
  for (int64_t panel = 0; panel < 2; ++panel) {
    tessera_uk_matmul_f32_pack_b(b.data(), /*stride_k=*/1, /*stride_n=*/k, k, n, panel, nr,
                                 packed.data());
  }
  for (int64_t panel = 0; panel < 2; ++panel) {
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t c = 0; c < nr; ++c) {
        const int64_t j = panel * nr + c;
        const float expected = j < n ? b[j * k + kk] : 0.0f;
        ASSERT_EQ(packed[(panel * k + kk) * nr + c], expected) << panel << " " << kk << " " << c;
      }
    }
  }
  // 4 of 6 rows of a 4 x 3 A (row-major): rows past 4 are zero.
  const int64_t rows = 4, mr = 6, ka = 3;
  std::vector<float> a = Uniform(static_cast<size_t>(rows * ka), 4);
  std::vector<float> packed_a(static_cast<size_t>(mr * ka), -1.0f);
  tessera_uk_matmul_f32_pack_a(a.data(), /*stride_m=*/ka, /*stride_k=*/1, rows, ka, mr,
                               packed_a.data());
  for (int64_t kk = 0; kk < ka; ++kk) {
    for (int64_t r = 0; r < mr; ++r) {
      ASSERT_EQ(packed_a[kk * mr + r], r < rows ? a[r * ka + kk] : 0.0f) << kk << " " << r;
    }
  }
}

using Row = void (*)(const float*, int64_t, const float*, int64_t, int64_t, int64_t, int64_t,
                     float*);

TEST(MatmulUkernelsTest, EveryRowKernelSumsInAscendingKOrderForContiguousAndStridedB) {
  __builtin_cpu_init();
  const struct {
    const char* name;
    Row row;
    bool runs_here;
    bool fused;
  } variants[] = {
      {"row_sse2", &tessera_uk_matmul_f32_row_sse2, true, false},
      {"row_avx", &tessera_uk_matmul_f32_row_avx, __builtin_cpu_supports("avx") != 0, false},
      {"row_avx512f", &tessera_uk_matmul_f32_row_avx512f, __builtin_cpu_supports("avx512f") != 0,
       false},
      {"row_sse2_fma", &tessera_uk_matmul_f32_row_sse2_fma, true, true},
      {"row_avx_fma", &tessera_uk_matmul_f32_row_avx_fma, __builtin_cpu_supports("avx") != 0, true},
      {"row_avx512f_fma", &tessera_uk_matmul_f32_row_avx512f_fma,
       __builtin_cpu_supports("avx512f") != 0, true},
      {"row without FMA3", &FusedRowWithoutFma3, true, true},
  };
  const int64_t k = 129, n = 37;
  std::vector<float> a = Uniform(static_cast<size_t>(2 * k), 5);  // A row at stride 2
  std::vector<float> b = Uniform(static_cast<size_t>(k * n), 6);
  for (const auto& variant : variants) {
    if (!variant.runs_here) {
      std::cout << "[ SKIPPED  ] " << variant.name << ": this CPU lacks its instruction set\n";
      continue;
    }
    for (bool transposed : {false, true}) {
      const int64_t stride_k = transposed ? 1 : n, stride_n = transposed ? k : 1;
      std::vector<float> acc(static_cast<size_t>(n), -1.0f);
      variant.row(a.data(), 2, b.data(), stride_k, stride_n, k, n, acc.data());
      for (int64_t j = 0; j < n; ++j) {
        const float expected = AscendingDot(
            k, [&](int64_t kk) { return a[kk * 2]; },
            [&](int64_t kk) { return b[kk * stride_k + j * stride_n]; }, variant.fused);
        ASSERT_EQ(acc[j], expected) << variant.name << " transposed=" << transposed << " j=" << j;
      }
    }
  }
}

TEST(MatmulUkernelsTest, EverySymbolIsListedForTheLoader) {
  const RuntimeSymbolList symbols = MatmulUkernelSymbols();
  EXPECT_EQ(symbols.size(), 14u);
  for (const auto& [name, address] : symbols) {
    EXPECT_EQ(name.rfind("tessera_uk_matmul_f32_", 0), 0u) << name;
    EXPECT_NE(address, nullptr) << name;
  }
}

}  // namespace
}  // namespace tessera::runtime
