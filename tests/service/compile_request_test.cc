// A caller's compile request reaches the compiler whole: every field set away from its default
// arrives in jit::CompileOptions, and the delegates arrive as the registry behind them.
#include "service/compile_request.h"

#include <memory>

#include "arbiter/decision_cache.h"
#include "arbiter/plan.h"
#include "gtest/gtest.h"
#include "jit/compile_options.h"
#include "service/delegates.h"

namespace tessera::service {
namespace {

/// CompileRequest's fields as this test knows them: a new one must be converted and tested.
struct KnownRequest {
  runtime::Target target;
  std::string arch;
  std::string host_cpu;
  int opt_level;
  bool deterministic;
  bool batch_invariant;
  bool link_cubin;
  bool dump_stages;
  std::string source_name;
  std::string cuda_toolkit;
  std::shared_ptr<const Delegates> delegates;
  std::string matmul_delegate;
  std::shared_ptr<arbiter::DecisionCache> decisions;
  double arbitration_budget_ms;
  std::shared_ptr<const arbiter::Plan> plan;
  bool plan_strict;
  bool background_decisions;
  bool background_deterministic;
};
static_assert(sizeof(CompileRequest) == sizeof(KnownRequest),
              "CompileRequest changed: convert the new field in ToCompileOptions and test it");

TEST(CompileRequestTest, EveryFieldReachesTheCompilerOptions) {
  const jit::CompileOptions defaults;
  const CompileRequest unset;
  const jit::CompileOptions from_unset = ToCompileOptions(unset);
  EXPECT_EQ(from_unset.target, defaults.target);
  EXPECT_EQ(from_unset.arch, defaults.arch);
  EXPECT_EQ(from_unset.opt_level, defaults.opt_level);
  EXPECT_EQ(from_unset.link_cubin, defaults.link_cubin);
  EXPECT_EQ(from_unset.source_name, defaults.source_name);
  EXPECT_EQ(from_unset.arbitration_budget_ms, defaults.arbitration_budget_ms);
  EXPECT_EQ(from_unset.delegates, nullptr);

  CompileRequest request;
  request.target = runtime::Target::kNvptx;
  request.arch = "sm_80";
  request.host_cpu = "x86-64-v3";
  request.opt_level = 3;
  request.deterministic = true;
  request.batch_invariant = true;
  request.link_cubin = false;
  request.dump_stages = true;
  request.source_name = "a.mlir";
  request.cuda_toolkit = "/opt/cuda";
  auto delegates = std::make_shared<Delegates>();
  request.delegates = delegates;
  request.matmul_delegate = "compiled";
  request.decisions = std::make_shared<arbiter::DecisionCache>();
  request.arbitration_budget_ms = 42;
  request.plan = std::make_shared<arbiter::Plan>();
  request.plan_strict = true;
  request.background_decisions = true;
  request.background_deterministic = true;

  const jit::CompileOptions options = ToCompileOptions(request);
  EXPECT_EQ(options.target, runtime::Target::kNvptx);
  EXPECT_EQ(options.arch, "sm_80");
  EXPECT_EQ(options.host_cpu, "x86-64-v3");
  EXPECT_EQ(options.opt_level, 3);
  EXPECT_TRUE(options.deterministic);
  EXPECT_TRUE(options.batch_invariant);
  EXPECT_FALSE(options.link_cubin);
  EXPECT_TRUE(options.dump_stages);
  EXPECT_EQ(options.source_name, "a.mlir");
  EXPECT_EQ(options.cuda_toolkit, "/opt/cuda");
  EXPECT_EQ(options.delegates, delegates->registry());
  EXPECT_NE(options.delegates, nullptr);
  EXPECT_EQ(options.matmul_delegate, "compiled");
  EXPECT_EQ(options.decisions, request.decisions);
  EXPECT_EQ(options.arbitration_budget_ms, 42);
  EXPECT_EQ(options.plan, request.plan);
  EXPECT_TRUE(options.plan_strict);
  EXPECT_TRUE(options.background_decisions);
  EXPECT_TRUE(options.background_deterministic);
}

}  // namespace
}  // namespace tessera::service
