// Key completeness: every input that can change a compiled module, perturbed alone, changes
// the module key; inputs that cannot (spelling, locations, dump flags, the source's name) do
// not.
#include "service/module_key.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "arbiter/plan.h"
#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "jit/delegates/registry.h"
#include "tests/service/sources.h"

namespace tessera::service {
namespace {

namespace fs = std::filesystem;

/// One request: source text, options, toolchain.
struct Request {
  std::string source = kSaxpy;
  jit::CompileOptions options;
  ToolchainIdentity toolchain = ToolchainIdentity::Current();
};

std::string Digest(const Request& request) {
  auto canonical = jit::CanonicalSource(request.source);
  EXPECT_TRUE(canonical.ok()) << canonical.status();
  if (!canonical.ok()) return "";
  return ModuleKey(*canonical, request.options, ToolchainFor(request.toolchain, request.options))
      .digest;
}

Request Nvptx() {
  Request request;
  request.options.target = runtime::Target::kNvptx;
  return request;
}

/// A copy of the CUDA toolkit's parts a compile reads, with `version` and `libdevice` bytes.
std::string FakeToolkit(const std::string& name, const std::string& version,
                        const std::string& libdevice) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path root = fs::path(tmp != nullptr ? tmp : "/tmp") / ("toolkit_" + name);
  fs::remove_all(root);
  fs::create_directories(root / "nvvm" / "libdevice");
  std::ofstream(root / "version.json")
      << R"({ "cuda" : { "name" : "CUDA SDK", "version" : ")" << version << "\" } }\n";
  std::ofstream(root / "nvvm" / "libdevice" / "libdevice.10.bc") << libdevice;
  return root.string();
}

struct Perturbation {
  const char* what;
  std::function<Request()> base;
  std::function<void(Request&)> change;
};

/// A plan pinning `winner` for a 64³ matmul.
std::shared_ptr<const arbiter::Plan> PlanPinning(const std::string& winner) {
  arbiter::DecisionRecord record;
  record.point.op = "tile.matmul";
  record.point.target = "host";
  record.point.shape = {64, 64, 64};
  record.winner = winner;
  return std::make_shared<const arbiter::Plan>(arbiter::Plan::FromRecords({record}));
}

std::shared_ptr<jit::delegates::DelegateRegistry> OpenBlas() {
  auto registry = std::make_shared<jit::delegates::DelegateRegistry>();
  EXPECT_TRUE(registry->RegisterDefaultLibraries(runtime::Target::kHost).ok());
  return registry;
}

TEST(ModuleKeyTest, EveryInputThatShapesTheOutputChangesTheKey) {
  auto host = [] { return Request(); };
  auto with_blas = [] {
    Request request;
    request.options.delegates = OpenBlas();
    return request;
  };
  const std::vector<Perturbation> perturbations = {
      {"IR: an op", host,
       [](Request& r) {
         r.source = absl::StrReplaceAll(r.source, {{"arith.addf", "arith.subf"}});
       }},
      {"IR: a type", host,
       [](Request& r) { r.source = absl::StrReplaceAll(r.source, {{"f32", "f64"}}); }},
      {"IR: a function name", host,
       [](Request& r) { r.source = absl::StrReplaceAll(r.source, {{"@saxpy", "@axpy"}}); }},
      {"IR: operand order", host,
       [](Request& r) {
         r.source = absl::StrReplaceAll(r.source, {{"arith.addf %ax, %yi", "arith.addf %yi, %ax"}});
       }},
      {"target", host, [](Request& r) { r.options.target = runtime::Target::kNvptx; }},
      {"arch sm_90 → sm_80", Nvptx, [](Request& r) { r.options.arch = "sm_80"; }},
      {"arch sm_90 → sm_90a", Nvptx, [](Request& r) { r.options.arch = "sm_90a"; }},
      {"opt_level", host, [](Request& r) { r.options.opt_level = 3; }},
      {"deterministic", host, [](Request& r) { r.options.deterministic = true; }},
      {"link_cubin", Nvptx, [](Request& r) { r.options.link_cubin = false; }},
      {"matmul_delegate", host, [](Request& r) { r.options.matmul_delegate = "compiled"; }},
      {"batch_invariant", host, [](Request& r) { r.options.batch_invariant = true; }},
      {"a plan", host, [](Request& r) { r.options.plan = PlanPinning("openblas"); }},
      {"what the plan pins",
       [] {
         Request r;
         r.options.plan = PlanPinning("openblas");
         return r;
       },
       [](Request& r) { r.options.plan = PlanPinning("compiled"); }},
      {"strict replay",
       [] {
         Request r;
         r.options.plan = PlanPinning("openblas");
         return r;
       },
       [](Request& r) { r.options.plan_strict = true; }},
      {"toolchain: tessera build", host, [](Request& r) { r.toolchain.tessera += "x"; }},
      {"toolchain: llvm", host, [](Request& r) { r.toolchain.llvm = "99.0.0"; }},
      {"toolchain: cuda headers", host, [](Request& r) { r.toolchain.cuda = "99.0"; }},
      {"toolchain: nvjitlink", host, [](Request& r) { r.toolchain.nvjitlink = "99.0"; }},
      // The cache stores host machine code: another CPU (or feature set) is another module.
      {"toolchain: host CPU", host,
       [](Request& r) { r.toolchain.host_cpu = "znver4+0123456789abcdef"; }},
      {"toolchain: host CPU (nvptx launch code)", Nvptx,
       [](Request& r) { r.toolchain.host_cpu = "znver4+0123456789abcdef"; }},
      // Code for a named CPU (a package's) is not this machine's, nor another named CPU's.
      {"a named host CPU", host, [](Request& r) { r.options.host_cpu = "x86-64-v3"; }},
      // … and its Tile ops were decided on this machine (measured here, or not at all).
      {"the machine that decided a named CPU's code",
       [] {
         Request r;
         r.options.host_cpu = "x86-64-v3";
         return r;
       },
       [](Request& r) { r.toolchain.host_cpu = "znver4+0123456789abcdef"; }},
      {"another named host CPU",
       [] {
         Request r;
         r.options.host_cpu = "x86-64-v2";
         return r;
       },
       [](Request& r) { r.options.host_cpu = "x86-64-v3"; }},
      {"CUDA toolkit version",
       [] {
         Request r = Nvptx();
         r.options.cuda_toolkit = FakeToolkit("a", "13.0.1", "libdevice");
         return r;
       },
       [](Request& r) { r.options.cuda_toolkit = FakeToolkit("b", "13.0.2", "libdevice"); }},
      {"libdevice",
       [] {
         Request r = Nvptx();
         r.options.cuda_toolkit = FakeToolkit("c", "13.0.1", "libdevice one");
         return r;
       },
       [](Request& r) { r.options.cuda_toolkit = FakeToolkit("d", "13.0.1", "libdevice two"); }},
      {"a registered delegate", host, [](Request& r) { r.options.delegates = OpenBlas(); }},
      {"a declared provider", with_blas,
       [](Request& r) {
         auto registry = OpenBlas();
         jit::delegates::MatmulProvider provider;
         provider.name = "mygemm";
         provider.library = "openblas";
         provider.target = runtime::Target::kHost;
         provider.callee = "cblas_sgemm";
         provider.abi = "cblas_sgemm";
         provider.arch = "host";
         provider.covers = "root_only";
         provider.determinism = "deterministic";
         provider.accuracy = "reference_exact";
         absl::Status status = registry->DeclareMatmulProvider(provider);
         EXPECT_TRUE(status.ok()) << status;
         r.options.delegates = registry;
       }},
  };
  for (const Perturbation& perturbation : perturbations) {
    Request base = perturbation.base();
    Request changed = base;
    perturbation.change(changed);
    EXPECT_NE(Digest(base), Digest(changed)) << perturbation.what << " does not change the key";
    // The request text (the parse-free index in memory and on disk) must change too, or a
    // fresh process would find the old entry through it.
    EXPECT_NE(RequestText(base.source, base.options, ToolchainFor(base.toolchain, base.options)),
              RequestText(changed.source, changed.options,
                          ToolchainFor(changed.toolchain, changed.options)))
        << perturbation.what << " does not change the request text";
  }
}

TEST(ModuleKeyTest, WhatCannotChangeTheOutputLeavesTheKeyAlone) {
  const std::vector<Perturbation> perturbations = {
      {"whitespace", [] { return Request(); },
       [](Request& r) {
         r.source = absl::StrReplaceAll(r.source, {{"  ", "\t \t"}, {"\n", "\n\n"}});
       }},
      {"comments", [] { return Request(); },
       [](Request& r) {
         r.source = "// saxpy\n" + absl::StrReplaceAll(r.source, {{"return", "return // done"}});
       }},
      {"SSA names", [] { return Request(); },
       [](Request& r) {
         r.source = absl::StrReplaceAll(r.source, {{"%alpha", "%s"}, {"%ax", "%t"}, {"%xi", "%p"}});
       }},
      {"location info", [] { return Request(); },
       [](Request& r) {
         r.source = absl::StrReplaceAll(
             r.source,
             {{"tile.yield %r : f32", "tile.yield %r : f32 loc(\"elsewhere.mlir\":7:9)"}});
       }},
      {"dump_stages", [] { return Request(); }, [](Request& r) { r.options.dump_stages = true; }},
      // A budget changes how precisely a decision is measured, not what it means (a cached
      // decision is reused whatever budget made it).
      {"arbitration_budget_ms", [] { return Request(); },
       [](Request& r) { r.options.arbitration_budget_ms = 50; }},
      // A module with pending decisions is never stored; the measuring compile's module is
      // the one without the option.
      {"background decisions", [] { return Request(); },
       [](Request& r) {
         r.options.background_decisions = true;
         r.options.background_deterministic = true;
       }},
      {"source_name", [] { return Request(); },
       [](Request& r) { r.options.source_name = "a.mlir"; }},
      {"arch on the host target", [] { return Request(); },
       [](Request& r) { r.options.arch = "sm_80"; }},
      {"native, which is the default host CPU", [] { return Request(); },
       [](Request& r) { r.options.host_cpu = "native"; }},
      // (nvptx launch code is always this machine's.)
      {"a host CPU on the nvptx target", Nvptx,
       [](Request& r) { r.options.host_cpu = "x86-64-v3"; }},
      {"the CUDA toolkit on the host target", [] { return Request(); },
       [](Request& r) { r.options.cuda_toolkit = FakeToolkit("e", "1.0", "other"); }},
  };
  for (const Perturbation& perturbation : perturbations) {
    Request base = perturbation.base();
    Request changed = base;
    perturbation.change(changed);
    EXPECT_EQ(Digest(base), Digest(changed)) << perturbation.what << " changes the key";
  }
}

// A new field in CompileOptions must be decided on: does it change the output? Then it goes
// into the key (service/module_key.cc) and into the test above; if not, into the test below
// it. Then add it here too. (The same members as CompileOptions, so the sizes agree on any
// ABI until one is added there.)
struct KnownCompileOptions {
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
  std::shared_ptr<const jit::delegates::DelegateRegistry> delegates;
  std::string matmul_delegate;
  std::shared_ptr<arbiter::DecisionCache> decisions;
  double arbitration_budget_ms;
  std::shared_ptr<const arbiter::Plan> plan;
  bool plan_strict;
  bool background_decisions;
  bool background_deterministic;
};
static_assert(sizeof(jit::CompileOptions) == sizeof(KnownCompileOptions),
              "CompileOptions changed: decide whether the new field belongs in the module key");

TEST(ModuleKeyTest, TheBuildIdentityIsAHashOfTheSources) {
  const std::string& identity = jit::Toolchain::Current().tessera;
  ASSERT_EQ(identity.size(), 16u);
  EXPECT_EQ(identity.find_first_not_of("0123456789abcdef"), std::string::npos) << identity;
}

}  // namespace
}  // namespace tessera::service
