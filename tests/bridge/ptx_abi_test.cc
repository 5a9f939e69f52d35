// The bridge's name-keyed launch geometry for registered PTX against the original bridge's
// (runtime/cuda/tessera_nvidia_ptx_launch.cpp): sizes, copies, parameters, grids, refusals.
#include "bridge/ptx_abi.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::bridge {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

PtxLaunchPlan Plan(const std::string& name, size_t buffers, std::vector<int64_t> dims) {
  PtxLaunchPlan plan;
  std::string why;
  EXPECT_TRUE(PlanPtxLaunch(name, buffers, dims.data(), dims.size(), plan, why)) << why;
  return plan;
}

std::string Refusal(const std::string& name, size_t buffers, std::vector<int64_t> dims) {
  PtxLaunchPlan plan;
  std::string why;
  EXPECT_FALSE(PlanPtxLaunch(name, buffers, dims.data(), dims.size(), plan, why)) << name;
  return why;
}

TEST(PtxAbi, DirectMatmulsAreRaggedColumnMajorGridsWithI64Dims) {
  // M = 17, N = 9, K = 33: grid (ceil(N/8), ceil(M/16)), one warp, A/B 2 bytes, D f32.
  PtxLaunchPlan f16 = Plan("tessera_tile_matmul_direct_f16", 3, {17, 9, 33});
  EXPECT_THAT(f16.buffer_bytes, ElementsAre(17 * 33 * 2, 33 * 9 * 2, 17 * 9 * 4));
  EXPECT_THAT(f16.copied_back, ElementsAre(false, false, true));
  EXPECT_TRUE(f16.dims_as_i64);
  EXPECT_TRUE(f16.pass_dims);
  EXPECT_EQ(f16.grid_x, 2u);
  EXPECT_EQ(f16.grid_y, 2u);
  EXPECT_EQ(f16.block_x, 32u);
  PtxLaunchPlan f64 = Plan("tessera_tile_matmul_direct_f64", 3, {17, 9, 33});
  EXPECT_THAT(f64.buffer_bytes, ElementsAre(17 * 33 * 8, 33 * 9 * 8, 17 * 9 * 8));
  EXPECT_EQ(f64.grid_y, 3u);  // 8-row tiles
  EXPECT_THAT(Plan("tessera_tile_matmul_direct_tf32", 3, {1, 1, 1}).buffer_bytes,
              ElementsAre(4, 4, 4));
  for (const char* name : {"tessera_tile_matmul_direct_e4m3", "tessera_tile_matmul_direct_e5m2",
                           "tessera_tile_matmul_direct_s8"}) {
    EXPECT_THAT(Plan(name, 3, {2, 3, 4}).buffer_bytes, ElementsAre(8, 12, 24)) << name;
  }
  PtxLaunchPlan shared = Plan("tessera_tile_matmul_shared_bf16", 3, {33, 65, 7});
  EXPECT_EQ(shared.grid_x, 3u);  // ceil(65 / 32)
  EXPECT_EQ(shared.grid_y, 2u);  // ceil(33 / 32)
  EXPECT_EQ(shared.block_x, 128u);
}

TEST(PtxAbi, AlignedGemmsTakeI32DimsAndARowMajorGrid) {
  PtxLaunchPlan gemm = Plan("tessera_mma_gemm_bf16", 3, {32, 16, 64});
  EXPECT_FALSE(gemm.dims_as_i64);
  EXPECT_EQ(gemm.grid_x, 2u);  // M / 16
  EXPECT_EQ(gemm.grid_y, 2u);  // N / 8
  EXPECT_THAT(Refusal("tessera_mma_gemm_f16", 3, {17, 8, 16}), HasSubstr("M % 16 == 0"));
  PtxLaunchPlan tile = Plan("tessera_mma_m16n8k16_bf16", 3, {16, 8, 16});
  EXPECT_FALSE(tile.pass_dims);
  EXPECT_THAT(tile.buffer_bytes, ElementsAre(512, 256, 512));
  EXPECT_THAT(Refusal("tessera_mma_m16n8k16_bf16", 3, {16, 8, 32}), HasSubstr("{16, 8, 16}"));
}

TEST(PtxAbi, FusedMatmulsSizeBiasAndResidualFromTheName) {
  PtxLaunchPlan both = Plan("tessera_tile_matmul_fused_f16_b1_r1_relu", 5, {5, 3, 7});
  EXPECT_THAT(both.buffer_bytes, ElementsAre(5 * 7 * 2, 7 * 3 * 2, 3 * 4, 5 * 3 * 4, 5 * 3 * 4));
  EXPECT_THAT(both.copied_back, ElementsAre(false, false, false, false, true));
  EXPECT_EQ(both.block_x, 128u);
  PtxLaunchPlan residual = Plan("tessera_tile_matmul_fused_e4m3_b0_r1_none", 4, {5, 3, 7});
  EXPECT_THAT(residual.buffer_bytes, ElementsAre(35, 21, 60, 60));
  EXPECT_EQ(residual.block_x, 32u);  // direct: one warp per 16 x 8 tile
  EXPECT_THAT(Refusal("tessera_tile_matmul_fused_f16_b1_r0_gelu", 5, {5, 3, 7}),
              HasSubstr("takes 4 buffer(s) and 3 dim(s); the call passes 5 and 3"));
}

TEST(PtxAbi, RowKernelsAndReductions) {
  PtxLaunchPlan softmax = Plan("tessera_tile_softmax_bf16", 2, {300, 5});
  EXPECT_THAT(softmax.buffer_bytes, ElementsAre(3000, 3000));
  EXPECT_THAT(softmax.copied_back, ElementsAre(false, true));
  EXPECT_EQ(softmax.grid_x, 3u);
  EXPECT_EQ(softmax.block_x, 128u);
  EXPECT_THAT(Plan("tessera_tile_norm_rmsnorm_f32_axis_last", 2, {1, 1}).buffer_bytes,
              ElementsAre(4, 4));
  PtxLaunchPlan reduce = Plan("tessera_tile_reduce_sum_f16_serial", 2, {3, 5, 7});
  EXPECT_THAT(reduce.buffer_bytes, ElementsAre(3 * 5 * 7 * 2, 3 * 7 * 4));
  EXPECT_EQ(reduce.grid_x, 1u);
  EXPECT_EQ(Plan("tessera_tile_reduce_max_f32_cooperative_128", 2, {3, 5, 7}).grid_x, 21u);
  // Whole words: a storage type at the end of the name, a schedule without its width.
  EXPECT_THAT(Plan("tessera_tile_reduce_max_f16", 2, {3, 5, 7}).buffer_bytes,
              ElementsAre(3 * 5 * 7 * 2, 3 * 7 * 4));
  EXPECT_THAT(Plan("tessera_tile_norm_rms_bf16", 2, {4, 6}).buffer_bytes, ElementsAre(48, 48));
  EXPECT_EQ(Plan("tessera_tile_reduce_mean_bf16_cooperative", 2, {3, 5, 7}).grid_x, 21u);
  // No storage word (or two): nothing can be sized.
  EXPECT_THAT(Refusal("tessera_tile_reduce_sum", 2, {3, 5, 7}),
              HasSubstr("names no single storage type"));
  EXPECT_THAT(Refusal("tessera_tile_norm_f16_f32", 2, {3, 5}),
              HasSubstr("names no single storage type"));
}

TEST(PtxAbi, EveryDimIsCheckedBeforeAnythingIsSized) {
  EXPECT_THAT(Refusal("tessera_tile_softmax_f32", 2, {0, 5}), HasSubstr("dim #0 is 0"));
  EXPECT_THAT(Refusal("tessera_tile_softmax_f32", 2, {4, -1}), HasSubstr("dim #1 is -1"));
  EXPECT_THAT(Refusal("tessera_tile_softmax_f32", 2, {int64_t{1} << 31, 1}),
              HasSubstr("[1, 2^31)"));
  EXPECT_THAT(Refusal("tessera_tile_softmax_f32", 2, {int64_t{1} << 20, int64_t{1} << 20}),
              HasSubstr("more than 2^31 elements"));
  EXPECT_THAT(Refusal("tessera_tile_reduce_sum_f32", 2, {1 << 16, 1 << 16, 4}),
              HasSubstr("more than 2^31 elements"));
  EXPECT_THAT(Refusal("tessera_tile_matmul_direct_f16", 3, {int64_t{1} << 30, 1, 3}),
              HasSubstr("more than 2^31 elements"));
  // 2^26 rows of 16: a grid.y of 2^22 blocks is past the device's 65535.
  EXPECT_THAT(Refusal("tessera_tile_matmul_direct_f16", 3, {int64_t{1} << 26, 1, 1}),
              HasSubstr("past the device's limits"));
  EXPECT_THAT(Refusal("tessera_tile_softmax_f32", 1, {4, 4}), HasSubstr("takes 2 buffer(s)"));
  PtxLaunchPlan plan;
  std::string why;
  EXPECT_FALSE(PlanPtxLaunch("tessera_tile_softmax_f32", 2, nullptr, 2, plan, why));
  EXPECT_THAT(why, HasSubstr("dims is NULL"));
}

TEST(PtxAbi, TheOriginalsOtherAbisAreRefusedByName) {
  EXPECT_THAT(Refusal("tessera_tile_attention_f16_causal", 4, {1, 1, 1, 1}),
              HasSubstr("tessera_tile_attention_* launch ABI is not carried"));
  EXPECT_THAT(Refusal("tessera_tile_matmul_nvfp4", 5, {16, 8, 64}),
              HasSubstr("tessera_tile_matmul_nvfp4* launch ABI is not carried"));
  EXPECT_THAT(Refusal("tessera_cuda_dynamic_smem_probe", 1, {1}), HasSubstr("not carried"));
  EXPECT_THAT(Refusal("my_kernel", 1, {1}), HasSubstr("no launch ABI is known"));
}

}  // namespace
}  // namespace tessera::bridge
