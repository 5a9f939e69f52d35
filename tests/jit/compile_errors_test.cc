// Bad input to the compiler gets a status with the right code and a message naming the
// location and what was expected — never an abort.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/compiler.h"

namespace tessera::jit {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

absl::Status CompileStatus(const std::string& source, Target target = Target::kHost,
                           const std::string& arch = "sm_90") {
  CompileOptions options;
  options.target = target;
  options.arch = arch;
  options.source_name = "bad.mlir";
  auto compiled = Compile(source, options);
  return compiled.status();
}

TEST(CompileErrorsTest, MalformedIrIsInvalidArgumentWithLocation) {
  absl::Status status = CompileStatus("func.func @f(%x: memref<4xf32> {\n  return\n}\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("invalid Tessera IR"), HasSubstr("bad.mlir:3:2: error:")));
}

TEST(CompileErrorsTest, VerifierFailureNamesTheOpAndLocation) {
  absl::Status status = CompileStatus(R"mlir(
func.func @f(%a: memref<16x64xf32>, %b: memref<32x8xf32>, %c: memref<16x8xf32>) {
  tile.matmul %a, %b -> %c : memref<16x64xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}
)mlir");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("bad.mlir:3:3: error: 'tile.matmul' op expected K of A (64) to equal K "
                        "of B (32)"));
}

TEST(CompileErrorsTest, UnknownOpIsInvalidArgumentWithLocation) {
  absl::Status status = CompileStatus(R"mlir(
func.func @f(%x: memref<4xf32>) {
  tile.conv %x : memref<4xf32>
  return
}
)mlir");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("bad.mlir:3:3: error: custom op 'tile.conv' is unknown"));
}

TEST(CompileErrorsTest, UnsupportedArchIsUnimplemented) {
  absl::Status status = CompileStatus("func.func @f() { return }", Target::kNvptx, "sm_70");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("unsupported arch 'sm_70'"), HasSubstr("sm_90")));
}

TEST(CompileErrorsTest, BadOptLevelIsInvalidArgument) {
  CompileOptions options;
  options.opt_level = 7;
  auto compiled = Compile("func.func @f() { return }", options);
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(compiled.status().message(), HasSubstr("opt_level must be 0, 1, 2 or 3, found 7"));
}

TEST(CompileErrorsTest, MissingToolkitIsFailedPrecondition) {
  CompileOptions options;
  options.target = Target::kNvptx;
  options.cuda_toolkit = "/nonexistent/cuda";
  auto compiled = Compile("func.func @f() { return }", options);
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("/nonexistent/cuda/nvvm/libdevice/libdevice.10.bc is missing"));
}

constexpr char kNondeterministicDelegate[] = R"mlir(
func.func @gemm(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>)
    attributes {tessera.deterministic} {
  tessera_nvidia.kernel_call %a, %b, %c {callee = "cublasGemmEx", arch = "sm_80+",
      binding = "c_abi", provenance = "vendor_library", accuracy = "tolerance_bounded",
      tolerance = 1.0e-3, determinism = "nondeterministic"}
      : (memref<4x4xf32>, memref<4x4xf32>, memref<4x4xf32>) -> ()
  return
}
)mlir";

TEST(CompileErrorsTest, NondeterministicDelegateIsRefusedBeforeAnythingElse) {
  for (Target target : {Target::kHost, Target::kNvptx}) {
    absl::Status status = CompileStatus(kNondeterministicDelegate, target);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                AllOf(HasSubstr("stage 'contracts'"),
                      HasSubstr("bad.mlir:4:3: error: 'tessera_nvidia.kernel_call' op "
                                "nondeterministic delegate 'cublasGemmEx'"),
                      HasSubstr("in deterministic function @gemm"), HasSubstr("remedy:"),
                      HasSubstr("bad.mlir:2:1: note: @gemm is declared")));
  }
}

TEST(CompileErrorsTest, DeterministicCompileCoversUndeclaredFunctions) {
  std::string source = kNondeterministicDelegate;
  source.replace(source.find("    attributes {tessera.deterministic} {"),
                 std::string("    attributes {tessera.deterministic} {").size(), "{");
  CompileOptions options;
  options.deterministic = true;
  auto compiled = Compile(source, options);
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("compile without the deterministic requirement"));
}

TEST(CompileErrorsTest, UnregisteredDelegateIsACompileError) {
  absl::Status status = CompileStatus(R"mlir(
func.func @gemm(%a: memref<4x4xf32>) {
  tessera_nvidia.kernel_call %a {callee = "cblas_sgemm", arch = "host",
      binding = "c_abi", provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic"} : (memref<4x4xf32>) -> ()
  return
}
)mlir");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("bad.mlir:3:3"),
                    HasSubstr("'cblas_sgemm' not found in registered libraries (searched: none "
                              "registered)")));
}

constexpr char kExp2[] = R"mlir(
func.func @exp2(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    %e = tessera_nvidia.inline_ptx %v {ptx = "ex2.approx.ftz.f32 $0, $1;", constraints = "=f,f",
        arch = "sm_80+", accuracy = "tolerance_bounded", tolerance_rel = 1.0e-6,
        determinism = "deterministic"} : (f32) -> f32
    tile.yield %e : f32
  }
  return
}
)mlir";

TEST(CompileErrorsTest, InlinePtxOnTheHostNamesTheTargetItNeeds) {
  absl::Status status = CompileStatus(kExp2);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("bad.mlir:5:10: error: 'tessera_nvidia.inline_ptx' needs the nvptx "
                        "target (its PTX runs only on NVIDIA GPUs); this compile targets host"));
}

TEST(CompileErrorsTest, InlinePtxInHostCodeIsRefusedByTheCompile) {
  absl::Status status = CompileStatus(R"mlir(
func.func @f(%x: f32) -> f32 {
  %y = tessera_nvidia.inline_ptx %x {ptx = "mov.f32 $0, $1;", constraints = "=f,f",
      arch = "sm_80+", accuracy = "reference_exact", determinism = "deterministic"} : (f32) -> f32
  return %y : f32
}
)mlir",
                                      Target::kNvptx);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("bad.mlir:3:8"), HasSubstr("expected to be in device code")));
}

TEST(CompileErrorsTest, ArchEnvelopeMustIncludeTheCompileArch) {
  std::string source = kExp2;
  source.replace(source.find("sm_80+"), 6, "sm_90a");
  absl::Status status = CompileStatus(source, Target::kNvptx, "sm_90");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("bad.mlir:5:10: error: delegate 'inline_ptx' declares arch = \"sm_90a\" "
                        "(sm_90a only), which does not include this compile's nvptx sm_90"));
  EXPECT_TRUE(CompileStatus(source, Target::kNvptx, "sm_90a").ok());
  // `sm_100` means exactly that GPU (and its `a` set); `sm_80+` any newer one.
  source.replace(source.find("sm_90a"), 6, "sm_100");
  EXPECT_TRUE(CompileStatus(source, Target::kNvptx, "sm_100a").ok());
  EXPECT_THAT(CompileStatus(source, Target::kNvptx, "sm_103").message(),
              HasSubstr("declares arch = \"sm_100\" (sm_100 (or sm_100a) only), which does not "
                        "include this compile's nvptx sm_103"));
  EXPECT_THAT(CompileStatus(kExp2, Target::kNvptx, "sm_75").message(),
              HasSubstr("(sm_80 or newer), which does not include this compile's nvptx sm_75"));
  EXPECT_TRUE(CompileStatus(kExp2, Target::kNvptx, "sm_121a").ok());
}

TEST(CompileErrorsTest, HostEnvelopeCannotServeAGpuCompile) {
  absl::Status status = CompileStatus(R"mlir(
func.func @fill(%x: memref<?xf32>, %n: i32) {
  tessera_nvidia.kernel_call %x, %n {callee = "my_fill", arch = "host", binding = "c_abi",
      provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", signature = (memref<?xf32>, i32) -> ()}
      : (memref<?xf32>, i32) -> ()
  return
}
)mlir",
                                      Target::kNvptx);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("bad.mlir:3:3: error: delegate 'my_fill' declares arch = \"host\" (the "
                        "host target only), which does not include this compile's nvptx sm_90 (a "
                        "host C-ABI delegate: compile for target 'host')"));
}

TEST(CompileErrorsTest, PtxTheAssemblerRejectsIsTheUsersError) {
  std::string source = kExp2;
  source.replace(source.find("ex2.approx.ftz.f32 $0, $1;"), 26, "ex3.nonsense.f32 $0, $1;");
  absl::Status status = CompileStatus(source, Target::kNvptx, "sm_90");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("nvJitLink rejected gpu.module @tessera_kernels_exp2_map_0, "
                              "which holds inline PTX"),
                    HasSubstr("ex3")));
}

TEST(CompileErrorsTest, RawInlineAsmInAGpuModuleIsRefused) {
  absl::Status status = CompileStatus(R"mlir(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {tessera.determinism = "deterministic"} {
      %x = llvm.inline_asm "mov.b32 $0, $9;", "=r" : () -> i32
      gpu.return
    }
  }
}
)mlir",
                                      Target::kNvptx);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("bad.mlir:5:12: error: 'llvm.inline_asm' is not allowed in a gpu.module; "
                        "write the PTX as tessera_nvidia.inline_ptx"));
}

TEST(CompileErrorsTest, EveryListedArchCompilesAndOthersAreRefused) {
  std::string any_gpu = kExp2;
  any_gpu.replace(any_gpu.find("sm_80+"), 6, "sm_75+");
  for (const std::string& arch : SupportedArchs()) {
    absl::Status status = CompileStatus(any_gpu, Target::kNvptx, arch);
    EXPECT_TRUE(status.ok()) << arch << ": " << status;
  }
  for (const char* arch : {"sm_70", "sm_101", "sm_88", "sm_90a+", "compute_90", ""}) {
    absl::Status status = CompileStatus(kExp2, Target::kNvptx, arch);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << arch;
    EXPECT_THAT(status.message(), HasSubstr("sm_121a")) << arch;
  }
}

TEST(CompileErrorsTest, HostCodeCannotReachProcessSymbols) {
  absl::Status status = CompileStatus(R"mlir(
func.func private @getpid() -> i32
func.func @leak() -> i32 {
  %pid = func.call @getpid() : () -> i32
  return %pid : i32
}
)mlir");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(":2:1: error: @getpid is an external declaration; host code may only call "
                        "functions defined in the module"));
}

TEST(CompileErrorsTest, RawGpuKernelsNeedTheNvptxTarget) {
  absl::Status status = CompileStatus(R"mlir(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @noop() kernel {
      gpu.return
    }
  }
}
)mlir");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("bad.mlir:3:3"), HasSubstr("need a GPU"),
                                      HasSubstr("target 'nvptx'")));
}

TEST(CompileErrorsTest, EntryReturningAMemrefIsRejected) {
  absl::Status status = CompileStatus(R"mlir(
func.func @f(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}
)mlir");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("bad.mlir:2:1"), HasSubstr("must return nothing or one scalar")));
}

// A memref in host code is a function argument or an allocation: whatever chooses, carries or
// returns one would hide which argument an op writes (read-only tensors, overlap rules).
TEST(CompileErrorsTest, MemrefsOfUnknownProvenanceAreRejected) {
  struct Case {
    const char* source;
    const char* expected;
  } cases[] = {
      {R"mlir(
func.func @f(%x: memref<4xf32>, %y: memref<4xf32>, %c: i1) {
  %m = scf.if %c -> memref<4xf32> {
    scf.yield %x : memref<4xf32>
  } else {
    scf.yield %y : memref<4xf32>
  }
  %v = arith.constant 1.0 : f32
  %i = arith.constant 0 : index
  memref.store %v, %m[%i] : memref<4xf32>
  return
}
)mlir",
       "bad.mlir:3:8: error: 'scf.if' produces a memref (memref<4xf32>)"},
      {R"mlir(
func.func @f(%x: memref<4xf32>, %y: memref<4xf32>, %c: i1) {
  %m = arith.select %c, %x, %y : memref<4xf32>
  return
}
)mlir",
       "bad.mlir:3:8: error: 'arith.select' produces a memref (memref<4xf32>)"},
      {R"mlir(
func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) {
  %lo = arith.constant 0 : index
  %hi = arith.constant 2 : index
  %step = arith.constant 1 : index
  %m = scf.for %i = %lo to %hi step %step iter_args(%b = %x) -> (memref<4xf32>) {
    scf.yield %y : memref<4xf32>
  }
  return
}
)mlir",
       "bad.mlir:6:8: error: 'scf.for' produces a memref (memref<4xf32>)"},
      {R"mlir(
func.func @f(%x: memref<4xf32>) {
  cf.br ^next(%x : memref<4xf32>)
^next(%m: memref<4xf32>):
  return
}
)mlir",
       "bad.mlir:4:7: error: a block of @f takes a memref argument (memref<4xf32>)"},
      {R"mlir(
func.func private @pick(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}
func.func @f(%x: memref<4xf32>) {
  %m = func.call @pick(%x) : (memref<4xf32>) -> memref<4xf32>
  return
}
)mlir",
       "bad.mlir:6:8: error: 'func.call' produces a memref (memref<4xf32>)"},
  };
  for (const Case& c : cases) {
    absl::Status status = CompileStatus(c.source);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.expected;
    EXPECT_THAT(
        status.message(),
        AllOf(HasSubstr(c.expected), HasSubstr("a memref in host code is a function argument or a "
                                               "memref.alloc/alloca result")));
  }
}

TEST(CompileErrorsTest, UnrankedArgumentIsRejected) {
  absl::Status status = CompileStatus(R"mlir(
func.func @f(%x: memref<*xf32>) {
  return
}
)mlir");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("argument #0 of @f has type memref<*xf32>"));
}

}  // namespace
}  // namespace tessera::jit
