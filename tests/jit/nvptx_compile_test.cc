// The nvptx target without a GPU: every Tile op, a chain, f16/bf16 storage and a raw gpu.module
// Over 600 lines: every Tile op and kernel variant through ptxas and nvJitLink, sharing the toolkit
// fixture.
// kernel compile to PTX that the toolkit's ptxas (an independent assembler) accepts for the
// target arch, with the expected .entry names, and to a cubin linked in process by nvJitLink;
// every kernel variant has its instructions and assembles without spills; without a GPU the
// arbiter keeps the baseline and lists the variants unprobed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "dialect/ArchEnvelope.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "jit/internal_compile.h"
#include "runtime/thread_pool.h"

namespace tessera::jit {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::unique_ptr<CompiledModule> CompileForGpu(const std::string& source, const std::string& arch,
                                              bool dump_stages = false) {
  CompileOptions options;
  options.target = Target::kNvptx;
  options.arch = arch;
  options.dump_stages = dump_stages;
  auto compiled = Compile(source, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? std::move(compiled).value() : nullptr;
}

/// Runs `ptxas -arch=<arch>` on `ptx`; returns its exit status and output.
std::pair<int, std::string> Ptxas(const std::string& ptx, const std::string& arch,
                                  const std::string& flags = "") {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = tmp != nullptr ? tmp : "/tmp";
  std::string path = absl::StrCat(dir, "/kernel_", arch, ".ptx");
  std::string log = absl::StrCat(dir, "/ptxas_", arch, ".log");
  std::ofstream(path) << ptx;
  std::string command = absl::StrCat("/usr/local/cuda/bin/ptxas -arch=", arch, " ", flags, " ",
                                     path, " -o /dev/null > ", log, " 2>&1");
  int status = std::system(command.c_str());
  std::ifstream in(log);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {status, output};
}

void ExpectValidImage(const DeviceImage& image, const std::string& arch) {
  EXPECT_THAT(image.ptx, HasSubstr(absl::StrCat(".target ", arch)));
  EXPECT_THAT(image.ptx, Not(HasSubstr("__nv_")))  // libdevice was linked in
      << "unresolved libdevice call";
  auto [status, output] = Ptxas(image.ptx, arch);
  EXPECT_EQ(status, 0) << "ptxas rejected the PTX:\n" << output;
  ASSERT_GE(image.cubin.size(), 4u);
  EXPECT_EQ(image.cubin.substr(0, 4),
            "\x7f"
            "ELF");
}

/// The IR a compile recorded after stage `name`.
std::string Stage(const CompiledModule& module, const std::string& name) {
  for (const auto& [stage, ir] : module.stages) {
    if (stage == name) return ir;
  }
  ADD_FAILURE() << "no stage " << name;
  return "";
}

constexpr char kAllOps[] = R"mlir(
func.func @ops(%x: memref<?x?xf32>, %w: memref<?x?xf32>, %bias: memref<?xf32>,
               %h: memref<?x?xf32>, %p: memref<?x?xf32>, %r: memref<?xf32>, %alpha: f32) {
  tile.matmul %x, %w -> %h bias(%bias : memref<?xf32>) activation(gelu)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  tile.softmax %h -> %p : memref<?x?xf32> -> memref<?x?xf32>
  tile.reduce mean %p -> %r axis = 1 : memref<?x?xf32> -> memref<?xf32>
  tile.map ins(%h, %alpha : memref<?x?xf32>, f32) outs(%p : memref<?x?xf32>) {
  ^bb0(%v: f32, %a: f32):
    %e = math.tanh %v : f32
    %s = arith.mulf %e, %a : f32
    tile.yield %s : f32
  }
  return
}
)mlir";

class NvptxArchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NvptxArchTest, EveryTileOpCompilesToAssemblablePtxAndCubin) {
  auto module = CompileForGpu(kAllOps, GetParam());
  ASSERT_NE(module, nullptr);
  // Each kernel is an image of its own (compiled and linked in parallel).
  std::vector<std::string> names, kernels;
  for (const DeviceImage& image : module->device_images) {
    names.push_back(image.module_name);
    ASSERT_EQ(image.kernels.size(), 1u) << image.module_name;
    kernels.push_back(image.kernels[0]);
    EXPECT_EQ(image.module_name, "tessera_kernels_" + image.kernels[0]);
    ExpectValidImage(image, GetParam());
    // The host side loads each image and launches its kernel from the entry function.
    EXPECT_THAT(module->host_llvm_ir, HasSubstr(image.module_name + "_load"));
  }
  EXPECT_THAT(kernels, ElementsAre("ops_matmul_0", "ops_softmax_1", "ops_reduce_2", "ops_map_3"));
  EXPECT_THAT(module->host_llvm_ir, HasSubstr("mgpuLaunchKernel"));
}

TEST_P(NvptxArchTest, HalfAndBfloatStorageCompile) {
  auto module = CompileForGpu(R"mlir(
func.func @mixed(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>,
                 %x: memref<?x?xbf16>, %y: memref<?x?xbf16>, %s: memref<?xf32>) {
  tile.matmul %a, %b -> %c activation(silu) {transpose_b}
      : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>
  tile.softmax %x -> %y : memref<?x?xbf16> -> memref<?x?xbf16>
  tile.reduce max %y -> %s axis = 1 : memref<?x?xbf16> -> memref<?xf32>
  return
}
)mlir",
                              GetParam());
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->device_images.size(), 3u);  // one image per kernel
  for (const DeviceImage& image : module->device_images) ExpectValidImage(image, GetParam());
}

TEST_P(NvptxArchTest, InlinePtxLandsInTheKernelAndAssembles) {
  auto module = CompileForGpu(R"mlir(
func.func @fast(%x: memref<?xf32>, %y: memref<?xf32>, %bits: memref<?xi32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y, %bits : memref<?xf32>, memref<?xi32>) {
  ^bb0(%v: f32):
    %e = tessera_nvidia.inline_ptx %v {ptx = "ex2.approx.ftz.f32 $0, $1;", constraints = "=f,f",
        arch = "sm_75+", accuracy = "tolerance_bounded", tolerance_rel = 1.0e-6,
        determinism = "deterministic"} : (f32) -> f32
    %b = tessera_nvidia.inline_ptx %e {ptx = "mov.b32 $0, $1;", constraints = "=r,f",
        arch = "sm_75+", accuracy = "reference_exact", determinism = "deterministic"}
        : (f32) -> i32
    tile.yield %e, %b : f32, i32
  }
  return
}
)mlir",
                              GetParam());
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->device_images.size(), 1u);
  EXPECT_THAT(module->device_images[0].ptx,
              AllOf(HasSubstr("ex2.approx.ftz.f32"), HasSubstr("mov.b32")));
  ExpectValidImage(module->device_images[0], GetParam());
}

/// What `ptxas -v` reports for one kernel.
struct KernelResources {
  int registers = -1;
  int spill_bytes = -1;  ///< spill stores + spill loads
  int max_threads = -1;  ///< .maxntid x*y*z
};

/// Resources of every kernel in `image` for `arch`, by entry name.
std::map<std::string, KernelResources> Resources(const DeviceImage& image,
                                                 const std::string& arch) {
  auto [status, output] = Ptxas(image.ptx, arch, "-v");
  EXPECT_EQ(status, 0) << "ptxas rejected the PTX:\n" << output;
  std::map<std::string, KernelResources> resources;
  std::string current;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (size_t at = line.find("Compiling entry function '"); at != std::string::npos) {
      at += std::strlen("Compiling entry function '");
      current = line.substr(at, line.find('\'', at) - at);
    }
    int stores = 0, loads = 0, frame = 0;
    if (std::sscanf(line.c_str(),
                    " %d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &frame,
                    &stores, &loads) == 3) {
      resources[current].spill_bytes = stores + loads;
    }
    if (size_t at = line.find("Used "); at != std::string::npos && !current.empty()) {
      resources[current].registers = std::atoi(line.c_str() + at + 5);
    }
  }
  for (auto& [name, r] : resources) {
    const size_t entry = image.ptx.find(".entry " + name + "(");
    const size_t bound = image.ptx.find(".maxntid ", entry);
    int x = 0, y = 0, z = 0;
    if (entry != std::string::npos && bound != std::string::npos &&
        std::sscanf(image.ptx.c_str() + bound, ".maxntid %d, %d, %d", &x, &y, &z) == 3) {
      r.max_threads = x * y * z;
    }
  }
  return resources;
}

// Every kernel variant (KernelSchedules.h), forced, for every arch it applies to: the
// instructions that make it a variant are in the PTX, and ptxas assembles it with no local-
// memory spills and registers within its launch bounds (a block's registers fit the SM's
// 64 Ki).
constexpr char kVariants[] = R"mlir(
func.func @v(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %s: memref<?xf32>, %m: memref<?xf32>,
             %p: memref<?x?xf32>, %q: memref<?x?xf32>, %hx: memref<?x?xf16>, %hy: memref<?x?xf16>,
             %t: memref<?x?x?x64xbf16>, %l: memref<?x?x?xf32>, %bias: memref<1x?x?x?xf32>,
             %da: memref<?x?x?x64xbf16>, %db: memref<?x?x?x64xbf16>, %dc: memref<?x?x?x64xbf16>) {
  tile.map ins(%x, %y : memref<?x?xf32>, memref<?x?xf32>) outs(%p : memref<?x?xf32>)
      attributes {tessera.candidate = "compiled.vectorized"} {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    %r = arith.addf %e, %b : f32
    tile.yield %r : f32
  }
  tile.map ins(%hx : memref<?x?xf16>) outs(%hy : memref<?x?xf16>)
      attributes {tessera.candidate = "compiled.vectorized"} {
  ^bb0(%a: f16):
    %r = arith.mulf %a, %a : f16
    tile.yield %r : f16
  }
  tile.reduce sum %x -> %s axis = 1 {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?xf32>
  tile.reduce max %x -> %m axis = 0 {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?xf32>
  tile.softmax %x -> %p {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?x?xf32>
  tile.softmax %x -> %q {tessera.candidate = "compiled.online"} : memref<?x?xf32> -> memref<?x?xf32>
  tile.norm rms %x residual(%y : memref<?x?xf32>) -> %p residual_out(%q : memref<?x?xf32>) weight(%s : memref<?xf32>) {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?x?xf32>
  tile.norm layer %x -> %p weight(%s : memref<?xf32>) bias(%m : memref<?xf32>) {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?x?xf32>
  tile.attention_backward %t, %t, %t, %t, %t, %l -> %da, %db, %dc bias(%bias : memref<1x?x?x?xf32>)
      causal window(128, 0) softcap(30.0) dropout(0.1, 7) {tessera.candidate = "compiled.warp_per_row"}
      : memref<?x?x?x64xbf16>, memref<?x?x?x64xbf16>, memref<?x?x?x64xbf16>, memref<?x?x?x64xbf16>,
        memref<?x?x?x64xbf16>, memref<?x?x?xf32>
        -> memref<?x?x?x64xbf16>, memref<?x?x?x64xbf16>, memref<?x?x?x64xbf16>
  return
}
)mlir";

constexpr char kMmaVariants[] = R"mlir(
func.func @mm(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>, %bias: memref<?xf32>,
              %ba: memref<?x?xbf16>, %bb: memref<?x?xbf16>, %bc: memref<?x?xbf16>,
              %fa: memref<?x?xf32>, %fb: memref<?x?xf32>, %fc: memref<?x?xf32>,
              %qa: memref<?x?x?xbf16>, %qb: memref<?x?xbf16>, %qc: memref<?x?x?xbf16>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(relu) {delegate = "compiled.mma_sync"}
      : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>
  tile.matmul %ba, %bb -> %bc {tessera.candidate = "compiled.mma_sync", transpose_b}
      : memref<?x?xbf16>, memref<?x?xbf16> -> memref<?x?xbf16>
  tile.matmul %fa, %fb -> %fc policy(tf32) {tessera.candidate = "compiled.mma_sync", transpose_a}
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(gelu) {tessera.candidate = "compiled.mma_async"}
      : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>
  tile.matmul %qa, %qb -> %qc {tessera.candidate = "compiled.mma_async"}
      : memref<?x?x?xbf16>, memref<?x?xbf16> -> memref<?x?x?xbf16>
  tile.matmul %fa, %fb -> %fc policy(tf32) {tessera.candidate = "compiled.mma_async"}
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir";

void ExpectNoSpillsWithinBounds(const CompiledModule& module, const std::string& arch) {
  for (const DeviceImage& image : module.device_images) {
    for (const auto& [name, r] : Resources(image, arch)) {
      EXPECT_EQ(r.spill_bytes, 0) << name << " on " << arch;
      EXPECT_GT(r.registers, 0) << name << " on " << arch;
      EXPECT_LE(r.registers, 255) << name << " on " << arch;
      ASSERT_GT(r.max_threads, 0) << name << " has no .maxntid";
      EXPECT_LE(r.registers * r.max_threads, 65536) << name << " on " << arch;
    }
  }
}

std::string AllPtx(const CompiledModule& module) {
  std::string ptx;
  for (const DeviceImage& image : module.device_images) ptx += image.ptx;
  return ptx;
}

TEST_P(NvptxArchTest, KernelVariantsHaveTheirInstructionsAndAssembleWithoutSpills) {
  auto module = CompileForGpu(kVariants, GetParam());
  ASSERT_NE(module, nullptr);
  std::vector<std::string> kernels;
  for (const DeviceImage& image : module->device_images) {
    for (const std::string& kernel : image.kernels) kernels.push_back(kernel);
  }
  // The vectorized maps keep the baseline for unaligned or mismatched operands.
  // So do the row reductions read with 128-bit loads: each has its element-wise kernel beside.
  EXPECT_THAT(kernels, ElementsAre("v_map_vectorized_0", "v_map_1", "v_map_vectorized_2", "v_map_3",
                                   "v_reduce_warp_per_row_vector_4", "v_reduce_warp_per_row_5",
                                   "v_reduce_warp_per_row_6", "v_softmax_warp_per_row_vector_7",
                                   "v_softmax_warp_per_row_8", "v_softmax_online_9",
                                   "v_norm_warp_per_row_10", "v_norm_warp_per_row_11",
                                   "v_attention_backward_dq_warp_per_row_12",
                                   "v_attention_backward_dkv_warp_per_row_13"));
  for (const DeviceImage& image : module->device_images) {
    const std::string& kernel = image.kernels[0];
    if (kernel.find("map_vectorized") != std::string::npos) {
      EXPECT_THAT(image.ptx, AllOf(HasSubstr("ld.global.v4."), HasSubstr("st.global.v4.")))
          << kernel;
    }
    if (kernel.find("warp_per_row") != std::string::npos) {
      EXPECT_THAT(image.ptx, AllOf(HasSubstr("shfl.sync.bfly.b32"), Not(HasSubstr(".shared"))))
          << kernel;
    }
    if (kernel.find("_vector_") != std::string::npos) {
      EXPECT_THAT(image.ptx, HasSubstr("ld.global.v4.")) << kernel;
    }
    if (kernel.find("online") != std::string::npos) {
      EXPECT_THAT(image.ptx, AllOf(HasSubstr("bar.sync"), Not(HasSubstr("atom."))));
    }
    EXPECT_THAT(image.ptx, AllOf(Not(HasSubstr("atom.")),           // deterministic: no atomics
                                 Not(HasSubstr(".minnctapersm"))))  // ptxas sizes registers
        << kernel;
    ExpectValidImage(image, GetParam());
  }
  ExpectNoSpillsWithinBounds(*module, GetParam());
}

TEST_P(NvptxArchTest, TensorCoreMatmulsUseMmaSyncOnSm80AndNewer) {
  std::optional<GpuArch> arch = ParseGpuArch(GetParam());
  ASSERT_TRUE(arch.has_value());
  CompileOptions options;
  options.target = Target::kNvptx;
  options.arch = GetParam();
  auto compiled = Compile(kMmaVariants, options);
  if (arch->version < 80) {
    ASSERT_FALSE(compiled.ok());
    EXPECT_THAT(compiled.status().message(),
                AllOf(HasSubstr("tile.matmul: the forced candidate 'compiled.mma_sync' (attribute "
                                "`delegate`) is rejected by the applicability gate: mma.sync "
                                "with f32 accumulators needs sm_80 or newer"),
                      HasSubstr(GetParam())));
    return;
  }
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string ptx = AllPtx(**compiled);
  EXPECT_THAT(ptx, AllOf(HasSubstr("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
                         HasSubstr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
                         HasSubstr("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
                         Not(HasSubstr("atom."))));
  // Every tensor-core kernel: one block per SM is enough (its accumulators stay in
  // registers), 16-byte aligned shared tiles, and 16-bit fragments from ldmatrix (.trans for
  // B); each kernel image holds one kernel, in source order: f16, bf16, tf32 mma_sync, then
  // each mma_async (f16, bf16, tf32) followed by its mma_sync fallback.
  int async_kernels = 0;
  for (const DeviceImage& image : (*compiled)->device_images) {
    ExpectValidImage(image, GetParam());
    const std::string& kernel = image.kernels[0];
    EXPECT_THAT(image.ptx, AllOf(HasSubstr(".minnctapersm 1"), HasSubstr(".shared .align 16")))
        << kernel;
    if (image.ptx.find("tf32.tf32") == std::string::npos) {
      EXPECT_THAT(image.ptx, AllOf(HasSubstr("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
                                   HasSubstr("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16")))
          << kernel;
    }
    // mma_async: its kernels copy with cp.async into the stages and wait for all but the
    // newest group.
    if (kernel.find("mma_async") == std::string::npos) continue;
    ++async_kernels;
    EXPECT_THAT(image.ptx,
                AllOf(HasSubstr("cp.async.cg.shared.global"), HasSubstr("cp.async.commit_group"),
                      HasSubstr("cp.async.wait_group \t1"), HasSubstr("mma.sync.aligned")))
        << kernel;
  }
  EXPECT_EQ(async_kernels, 3);
  ExpectNoSpillsWithinBounds(**compiled, GetParam());
  // Transposed operands are not staged by copies: forcing mma_async there is refused.
  auto transposed = Compile(R"mlir(
func.func @t(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c {tessera.candidate = "compiled.mma_async", transpose_b}
      : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>
  return
}
)mlir",
                            options);
  ASSERT_FALSE(transposed.ok());
  EXPECT_THAT(transposed.status().message(),
              HasSubstr("the forced candidate 'compiled.mma_async' (attribute "
                        "`tessera.candidate`) is rejected by the applicability gate: its copies "
                        "stage A and B as stored: it needs neither transposed"));
}

// Every arch the compiler lists, Turing to Blackwell.
INSTANTIATE_TEST_SUITE_P(Archs, NvptxArchTest, ::testing::ValuesIn(SupportedArchs()));

/// The decision record of the point at `op` (by op name, in order) in `module`.
const arbiter::DecisionRecord* Decision(const CompiledModule& module, const std::string& op,
                                        int nth = 0) {
  for (const arbiter::DecisionRecord& record : module.decisions) {
    if (record.point.op == op && nth-- == 0) return &record;
  }
  return nullptr;
}

const arbiter::CandidateOutcome* Outcome(const arbiter::DecisionRecord& record,
                                         const std::string& id) {
  for (const arbiter::CandidateOutcome& o : record.candidates) {
    if (o.candidate.id == id) return &o;
  }
  return nullptr;
}

TEST(KernelVariantArbitrationTest, WithoutAGpuTheBaselineStaysAndEveryVariantIsListedUnprobed) {
  auto module = CompileForGpu(R"mlir(
func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %s: memref<?xi64>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  tile.reduce argmax %x -> %s axis = 1 : memref<?x?xf32> -> memref<?xi64>
  return
}
)mlir",
                              "sm_90");
  ASSERT_NE(module, nullptr);
  const arbiter::DecisionRecord* softmax = Decision(*module, "tile.softmax");
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->winner, "compiled");
  for (const char* id : {"compiled.warp_per_row", "compiled.online"}) {
    const arbiter::CandidateOutcome* o = Outcome(*softmax, id);
    ASSERT_NE(o, nullptr) << id;
    EXPECT_EQ(o->gate, "") << id;
    EXPECT_THAT(o->reason, HasSubstr("not probed")) << id;
    EXPECT_EQ(o->candidate.Tier(), "generated");
    EXPECT_EQ(o->candidate.determinism, "deterministic");
    EXPECT_THAT(o->candidate.batch_invariance, HasSubstr("fixed order"));
  }
  const arbiter::DecisionRecord* argmax = Decision(*module, "tile.reduce");
  ASSERT_NE(argmax, nullptr);
  const arbiter::CandidateOutcome* warp = Outcome(*argmax, "compiled.warp_per_row");
  ASSERT_NE(warp, nullptr);
  EXPECT_EQ(warp->gate, "applicability");
  EXPECT_THAT(warp->reason, HasSubstr("argmax and argmin"));
  // The baseline kernels ran.
  EXPECT_THAT(AllPtx(*module),
              AllOf(HasSubstr(".entry f_softmax_0("), HasSubstr(".entry f_reduce_1(")));
}

TEST(KernelVariantArbitrationTest, TheForcedCandidateOptionForcesEveryTileOp) {
  // How the arbiter's probe compiles select a candidate for any op kind.
  CompileOptions options;
  options.target = Target::kNvptx;
  options.arch = "sm_90";
  options.link_cubin = false;
  InternalCompileOptions internal;
  internal.forced_candidate = "compiled.warp_per_row";
  auto module = CompileInternal(R"mlir(
func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %s: memref<?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  tile.reduce sum %x -> %s axis = 1 {tessera.candidate = "compiled"} : memref<?x?xf32> -> memref<?xf32>
  return
}
)mlir",
                                options, internal);
  ASSERT_TRUE(module.ok()) << module.status();
  const arbiter::DecisionRecord* softmax = Decision(**module, "tile.softmax");
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->winner, "compiled.warp_per_row");
  EXPECT_EQ(softmax->point.forced_by, "option `forced_candidate`");
  // The op's own attribute wins over the option.
  const arbiter::DecisionRecord* reduce = Decision(**module, "tile.reduce");
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->winner, "compiled");
  EXPECT_EQ(reduce->point.forced_by, "attribute `tessera.candidate`");
  // The forced variant: its 128-bit-load kernel and, beside it, the element-wise one.
  EXPECT_THAT(AllPtx(**module),
              AllOf(HasSubstr(".entry f_softmax_warp_per_row_vector_0("),
                    HasSubstr(".entry f_softmax_warp_per_row_1("), HasSubstr("shfl.sync.bfly"),
                    HasSubstr(".entry f_reduce_2(")));
}

TEST(KernelVariantArbitrationTest, ForcedVariantsAreCheckedAndAScheduleInTheInputIsNotTrusted) {
  CompileOptions options;
  options.target = Target::kNvptx;
  options.arch = "sm_90";
  // A broadcast operand of lower rank: the vectorized map does not apply. (One of the same
  // rank that broadcasts at run time takes the baseline kernel then.)
  auto broadcast = Compile(R"mlir(
func.func @f(%x: memref<?x?xf32>, %b: memref<?xf32>, %y: memref<?x?xf32>) {
  tile.map ins(%x, %b : memref<?x?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>)
      attributes {tessera.candidate = "compiled.vectorized"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.mulf %u, %v : f32
    tile.yield %s : f32
  }
  return
}
)mlir",
                           options);
  ASSERT_FALSE(broadcast.ok());
  EXPECT_THAT(broadcast.status().message(),
              AllOf(HasSubstr(":3:3: error: tile.map: the forced candidate 'compiled.vectorized'"),
                    HasSubstr("applicability gate: it needs operands of the output's shape")));
  // An unknown id lists the candidates.
  auto unknown = Compile(R"mlir(
func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y {tessera.candidate = "compiled.fast"} : memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir",
                         options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("the forced candidate 'compiled.fast' (attribute `tessera.candidate`) is "
                        "unknown; candidates: compiled, compiled.warp_per_row, compiled.online"));
  // tessera_jit.schedule is arbitration's to write: one in the input is dropped.
  auto injected = Compile(R"mlir(
func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y {tessera_jit.schedule = "online"} : memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir",
                          options);
  if (injected.ok()) {
    EXPECT_THAT(AllPtx(**injected),
                AllOf(HasSubstr(".entry f_softmax_0("), Not(HasSubstr("online"))));
  } else {
    EXPECT_THAT(injected.status().message(), HasSubstr("tessera_jit.schedule"));
  }
  // A batch-invariant compile keeps a variant: its invariance holds by construction.
  options.batch_invariant = true;
  auto invariant = Compile(R"mlir(
func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y {tessera.candidate = "compiled.online"} : memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir",
                           options);
  ASSERT_TRUE(invariant.ok()) << invariant.status();
  const arbiter::DecisionRecord* record = Decision(**invariant, "tile.softmax");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->winner, "compiled.online");
  EXPECT_EQ(Outcome(*record, "compiled.online")->batch_invariance, "by construction");
  EXPECT_THAT(AllPtx(**invariant), HasSubstr(".entry f_softmax_online_0("));
}

TEST(KernelVariantArbitrationTest, AHostCompileOfTheSameSourceRunsItsOwnLowering) {
  CompileOptions options;
  options.target = Target::kHost;
  auto compiled = Compile(R"mlir(
func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y {tessera.candidate = "compiled.online"} : memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir",
                          options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const arbiter::DecisionRecord* record = Decision(**compiled, "tile.softmax");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->winner, "compiled");
  EXPECT_THAT(record->point.forced_by, HasSubstr("a GPU schedule: the host target's lowering"));
}

TEST(NvptxCompileTest, F16AccumulationPolicyCompilesForSm75) {
  auto module = CompileForGpu(R"mlir(
func.func @half(%a: memref<64x32xf16>, %b: memref<32x48xf16>, %c: memref<64x48xf16>) {
  tile.matmul %a, %b -> %c policy(f16) : memref<64x32xf16>, memref<32x48xf16> -> memref<64x48xf16>
  return
}
)mlir",
                              "sm_75");
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->device_images.size(), 1u);
  ExpectValidImage(module->device_images[0], "sm_75");
}

TEST(NvptxCompileTest, RawGpuModuleKernelCompiles) {
  auto module = CompileForGpu(R"mlir(
module attributes {gpu.container_module} {
  gpu.module @handwritten {
    gpu.func @scale(%x: memref<?xf32>, %factor: f32) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %n = memref.dim %x, %c0 : memref<?xf32>
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %s = arith.mulf %v, %factor : f32
        memref.store %s, %x[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
  func.func @run(%x: memref<?xf32>, %factor: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    %blocks = arith.ceildivui %n, %c128 : index
    gpu.launch_func @handwritten::@scale blocks in (%blocks, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%x : memref<?xf32>, %factor : f32)
    return
  }
}
)mlir",
                              "sm_90");
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->device_images.size(), 1u);
  EXPECT_EQ(module->device_images[0].module_name, "handwritten");
  EXPECT_THAT(module->device_images[0].kernels, ElementsAre("scale"));
  ExpectValidImage(module->device_images[0], "sm_90");
}

TEST(NvptxCompileTest, StagesAreDumpedOnRequest) {
  auto module = CompileForGpu(kAllOps, "sm_90", /*dump_stages=*/true);
  ASSERT_NE(module, nullptr);
  std::vector<std::string> names;
  for (const auto& [name, ir] : module->stages) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("arbitrate", "contracts", "delegates", "tile-to-gpu", "nvvm",
                                 "host-llvm", "ptx"));
  EXPECT_THAT(Stage(*module, "tile-to-gpu"), HasSubstr("gpu.func @ops_matmul_0"));
  EXPECT_THAT(Stage(*module, "nvvm"), HasSubstr("nvvm."));
  EXPECT_THAT(Stage(*module, "ptx"), HasSubstr("gpu.binary @tessera_kernels_ops_matmul_0"));
}

TEST(NvptxCompileTest, EveryStepOfTheCompileIsTimed) {
  for (bool link_cubin : {true, false}) {
    CompileOptions options;
    options.target = Target::kNvptx;
    options.link_cubin = link_cubin;
    auto module = Compile(kAllOps, options);
    ASSERT_TRUE(module.ok()) << module.status();
    std::vector<std::string> names;
    for (const auto& [name, ms] : (*module)->stage_ms) {
      names.push_back(name);
      EXPECT_GE(ms, 0.0) << name;
    }
    if (link_cubin) {
      EXPECT_THAT(names, ElementsAre("parse", "arbitrate", "contracts", "delegates", "tile-to-gpu",
                                     "nvvm", "host-llvm", "ptx", "cubin", "host-object"));
    } else {
      // PTX only: nvJitLink never runs, and the images hold no cubin.
      EXPECT_THAT(names, ElementsAre("parse", "arbitrate", "contracts", "delegates", "tile-to-gpu",
                                     "nvvm", "host-llvm", "ptx", "host-object"));
      for (const DeviceImage& image : (*module)->device_images) {
        EXPECT_TRUE(image.cubin.empty());
        auto [status, output] = Ptxas(image.ptx, "sm_90");
        EXPECT_EQ(status, 0) << output;
      }
    }
  }
}

TEST(NvptxCompileTest, KernelsCallNoFunctionsAndMatmulReadsSharedMemoryAsVectors) {
  // The kernel pipeline inlines libdevice (softmax calls expf) and, after unrolling the
  // matmul's K step, GVN and the load/store vectorizer read the A row four floats at a time.
  auto module = CompileForGpu(kAllOps, "sm_90");
  ASSERT_NE(module, nullptr);
  std::string ptx;
  for (const DeviceImage& image : module->device_images) ptx += image.ptx;
  EXPECT_THAT(ptx, Not(HasSubstr("call.uni")));
  EXPECT_THAT(ptx, Not(HasSubstr(".func ")));
  EXPECT_THAT(ptx, HasSubstr("ld.shared.v4.b32"));
}

TEST(NvptxCompileTest, KernelsCompiledInParallelMatchThoseCompiledOneByOne) {
  // Each kernel's PTX and cubin are made on the compiling thread's pool; the result must not
  // depend on how many threads it has.
  auto images = [](int threads) {
    runtime::ThreadPool pool(threads);
    runtime::ScopedThreadPool scope(&pool);
    auto module = CompileForGpu(kAllOps, "sm_90");
    return module != nullptr ? module->device_images : std::vector<DeviceImage>();
  };
  const std::vector<DeviceImage> serial = images(1);
  const std::vector<DeviceImage> parallel = images(4);
  ASSERT_EQ(serial.size(), 4u);
  ASSERT_EQ(parallel.size(), serial.size());
  for (size_t i = 0; i < serial.size(); ++i) {
    EXPECT_EQ(parallel[i].module_name, serial[i].module_name);
    EXPECT_EQ(parallel[i].ptx, serial[i].ptx) << serial[i].module_name;
    EXPECT_EQ(parallel[i].cubin, serial[i].cubin) << serial[i].module_name;
  }
}

TEST(NvptxCompileTest, EmptyProblemsLaunchNothing) {
  // Every launch sits behind a size check: CUDA rejects a zero-sized grid.
  auto module = CompileForGpu(kAllOps, "sm_90", /*dump_stages=*/true);
  ASSERT_NE(module, nullptr);
  const std::string gpu_stage = Stage(*module, "tile-to-gpu");
  size_t launches = 0;
  for (size_t at = gpu_stage.find("gpu.launch_func"); at != std::string::npos;
       at = gpu_stage.find("gpu.launch_func", at + 1)) {
    ++launches;
  }
  EXPECT_EQ(launches, 4u);
  EXPECT_EQ(std::count(gpu_stage.begin(), gpu_stage.end(), '\n') > 0, true);
  EXPECT_THAT(gpu_stage, HasSubstr("scf.if"));
}

}  // namespace
}  // namespace tessera::jit

namespace tessera::jit {
namespace {

TEST(NvptxHostCodeTest, DeviceLaunchingHostCodeLinksAgainstTheRuntimeOnly) {
  auto module = CompileForGpu(kAllOps, "sm_90");
  ASSERT_NE(module, nullptr);
  auto host = LoadHostCode(*module);
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_TRUE((*host)->Lookup("ops").ok());
}

TEST(NvptxHostCodeTest, HostTargetCodeReloadsFromItsText) {
  CompileOptions options;
  auto module = Compile(R"mlir(
func.func @twice(%x: f32) -> f32 {
  %r = arith.addf %x, %x : f32
  return %r : f32
}
)mlir",
                        options);
  ASSERT_TRUE(module.ok()) << module.status();
  auto host = LoadHostCode(**module);
  ASSERT_TRUE(host.ok()) << host.status();
  auto entry = (*host)->Lookup("twice");
  ASSERT_TRUE(entry.ok()) << entry.status();
  float x = 1.25f, result = 0.0f;
  void* args[] = {&x, &result};
  (*entry)(args);
  EXPECT_EQ(result, 2.5f);
}

TEST(NvptxHostCodeTest, CanonicalSourceIgnoresSpellingButNotMeaning) {
  auto a = CanonicalSource(
      "func.func @f(%a: f32) -> f32 {\n  %s = arith.addf %a, %a : f32\n  return %s : f32\n}");
  auto b = CanonicalSource(
      "// a comment\nfunc.func @f(%x: f32)->f32{%y=arith.addf %x,%x:f32\n return %y:f32}");
  auto c = CanonicalSource(
      "func.func @f(%a: f32) -> f32 {\n  %s = arith.mulf %a, %a : f32\n  return %s : f32\n}");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ(CanonicalSource("func.func @f(").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::jit
