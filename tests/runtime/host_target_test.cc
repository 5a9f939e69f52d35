// Host code for a named CPU (runtime/host_target.h): what runs where, and that code generated for
// any x86-64 level gives the documented results — the matmul bit for bit the ascending-K sum,
// whatever vector width sized its register tile. Code for a CPU whose features this machine
// lacks is compiled but not linked, and its Tile ops are not measured.
#include "runtime/host_target.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/codegen/toolchain.h"
#include "jit/compiler.h"
#include "tests/jit/host_tensor.h"

namespace tessera::runtime {
namespace {

using ::tessera::testing::FillUniform;
using ::tessera::testing::HostTensor;
using ::testing::HasSubstr;

TEST(HostTargetTest, NamesResolveToTheirVectorWidth) {
  for (const char* name : {"", "native"}) {
    auto target = ResolveHostTarget(name);
    ASSERT_TRUE(target.ok()) << target.status();
    EXPECT_EQ(target->id, HostCpu());
    EXPECT_EQ(target->vector_bits, ThisMachineHostTarget().vector_bits);
  }
  const std::vector<std::pair<std::string, int64_t>> named = {
      {"x86-64", 128},    {"x86-64-v2", 128},      {"x86-64-v3", 256}, {"haswell", 256},
      {"x86-64-v4", 512}, {"skylake-avx512", 512}, {"znver4", 512}};
  for (const auto& [name, bits] : named) {
    auto target = ResolveHostTarget(name);
    ASSERT_TRUE(target.ok()) << name << ": " << target.status();
    EXPECT_EQ(target->id, name);
    EXPECT_EQ(target->cpu, name);
    EXPECT_EQ(target->vector_bits, bits) << name;
  }
  for (const char* bad : {"bogus", "i386", "pentium4m", "x86-64-v9", "znver3+0123"}) {
    auto target = ResolveHostTarget(bad);
    EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(target.status().message(), HasSubstr("x86-64-v3")) << bad;
  }
}

TEST(HostTargetTest, WhatRunsHere) {
  EXPECT_TRUE(CheckHostCodeRunsHere(HostCpu()).ok());
  EXPECT_TRUE(CheckHostCodeRunsHere("x86-64").ok()) << "every x86-64 CPU runs baseline code";
  // Another machine's exact identity never matches.
  auto other = CheckHostCodeRunsHere("znver9+0123456789abcdef");
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.message(), HasSubstr("this machine's is " + HostCpu()));
  // AMX is Intel's and MWAITX AMD's: no CPU runs both of these.
  int refused = 0;
  for (const char* cpu : {"graniterapids", "znver5"}) {
    absl::Status status = CheckHostCodeRunsHere(cpu);
    if (status.ok()) continue;
    ++refused;
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("generated for CPU ", cpu)));
    EXPECT_THAT(status.message(), HasSubstr("lacks its features"));
    auto missing = MissingHostFeatures(cpu);
    ASSERT_TRUE(missing.ok());
    EXPECT_FALSE(missing->empty());
  }
  EXPECT_GE(refused, 1);
  EXPECT_GT(HostFeatureCount("x86-64-v3"), HostFeatureCount("x86-64"));
  EXPECT_EQ(HostFeatureCount(HostCpu()), 0);
}

constexpr char kMatmul[] = R"mlir(
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir";

// Each level's register tile (128-, 256- and 512-bit vectors) keeps one ascending-K dot product
// per element, so every level that runs here gives the same bits; one that cannot run here is
// still compiled (for a package), with every Tile op on its compiled lowering.
TEST(HostTargetTest, EveryX86LevelComputesTheAscendingKMatmulBitForBit) {
  for (const char* cpu : {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "native"}) {
    SCOPED_TRACE(cpu);
    jit::CompileOptions options;
    options.host_cpu = cpu;
    options.source_name = "matmul.mlir";
    auto module = jit::Compile(kMatmul, options);
    ASSERT_TRUE(module.ok()) << module.status();
    const std::string id = ResolveHostTarget(cpu)->id;
    EXPECT_EQ((*module)->host_object.cpu, id);
    EXPECT_FALSE((*module)->host_object.object.empty());
    if (!CheckHostCodeRunsHere(id).ok()) {
      EXPECT_EQ((*module)->host, nullptr) << "code this CPU cannot run was linked";
      ASSERT_EQ((*module)->decisions.size(), 1u);
      EXPECT_EQ((*module)->decisions[0].winner, "compiled");
      continue;
    }
    ASSERT_NE((*module)->host, nullptr);
    auto entry = (*module)->host->Lookup("mm");
    ASSERT_TRUE(entry.ok()) << entry.status();
    for (const int64_t m : {int64_t{1}, int64_t{5}, int64_t{37}}) {
      const int64_t n = 70, k = 131;
      HostTensor<float> a({m, k}), b({k, n}), c({m, n});
      FillUniform(a.data(), 31, -3.0f, 3.0f);
      FillUniform(b.data(), 32, -3.0f, 3.0f);
      void* args[] = {a.descriptor(), b.descriptor(), c.descriptor()};
      (*entry)(args);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          float sum = 0.0f;
          for (int64_t kk = 0; kk < k; ++kk) {
            const float product = a[i * k + kk] * b[kk * n + j];
            sum = sum + product;
          }
          ASSERT_EQ(c[i * n + j], sum) << "C[" << i << "][" << j << "] of " << m << " rows";
        }
      }
    }
  }
}

TEST(HostTargetTest, AnUnknownCpuIsRefusedBeforeCompiling) {
  jit::CompileOptions options;
  options.host_cpu = "pentium-9000";
  auto module = jit::Compile(kMatmul, options);
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(module.status().message(), HasSubstr("unknown host CPU 'pentium-9000'"));
}

}  // namespace
}  // namespace tessera::runtime
