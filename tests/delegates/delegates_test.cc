// Delegates: resolution only inside registered libraries and images, the C signature catalogue and
// declared signatures, identities, vendor GEMMs serving tile.matmul on the host (OpenBLAS)
// against the compiled matmul, covers/determinism gates, and cuda_kernel images (PTX, cubin,
// CUDA C++ through NVRTC) compiled for nvptx.
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/codegen/nvjitlink.h"
#include "jit/compiler.h"
#include "jit/delegates/registry.h"
#include "runtime/delegate_entry_points.h"
#include "service/compile_service.h"
#include "tests/jit/host_tensor.h"

namespace tessera::jit::delegates {
namespace {

using ::tessera::testing::FillUniform;
using ::tessera::testing::HostTensor;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return srcdir != nullptr ? absl::StrCat(srcdir, "/tessera_jit/", path) : path;
}

std::shared_ptr<DelegateRegistry> WithLibraryA() {
  auto registry = std::make_shared<DelegateRegistry>();
  EXPECT_TRUE(registry->RegisterLibrary("a", Runfile("tests/delegates/libtest_library_a.so")).ok());
  return registry;
}

absl::StatusOr<std::unique_ptr<CompiledModule>> CompileWith(
    const std::string& source, std::shared_ptr<const DelegateRegistry> registry,
    Target target = Target::kHost, bool deterministic = false,
    const std::string& matmul_delegate = "") {
  CompileOptions options;
  options.target = target;
  options.delegates = std::move(registry);
  options.deterministic = deterministic;
  options.matmul_delegate = matmul_delegate;
  options.source_name = "d.mlir";
  return Compile(source, options);
}

TEST(DelegateRegistryTest, ResolvesOnlySymbolsTheRegisteredLibraryDefines) {
  auto registry = WithLibraryA();
  auto fill = registry->ResolveCAbi("tessera_test_fill");
  ASSERT_TRUE(fill.ok()) << fill.status();
  EXPECT_NE(fill->address, nullptr);
  EXPECT_EQ(fill->library.name, "a");
  // libc is a dependency of the library, yet its symbols stay unreachable.
  for (const char* forbidden : {"system", "dlopen", "exit", "malloc", "getpid"}) {
    auto result = registry->ResolveCAbi(forbidden);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound) << forbidden;
    EXPECT_THAT(result.status().message(),
                AllOf(HasSubstr(absl::StrCat("'", forbidden,
                                             "' not found in registered libraries (searched: a (")),
                      HasSubstr("libtest_library_a.so")));
  }
  EXPECT_THAT(DelegateRegistry().ResolveCAbi("cblas_sgemm").status().message(),
              HasSubstr("(searched: none registered)"));
  EXPECT_EQ(registry->RegisterLibrary("a", "libopenblas.so.0").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(registry->RegisterLibrary("nope", "/no/such/lib.so").message(),
              HasSubstr("cannot load library 'nope' from /no/such/lib.so"));
}

TEST(DelegateRegistryTest, IdentityIsStableAndFollowsTheFile) {
  auto first = WithLibraryA()->Identities();
  auto second = WithLibraryA()->Identities();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].sha256, second[0].sha256);
  EXPECT_EQ(first[0].soname, "libtest_library_a.so");
  EXPECT_EQ(first[0].sha256.size(), 64u);
  DelegateRegistry other;
  ASSERT_TRUE(other.RegisterLibrary("a", Runfile("tests/delegates/libtest_library_b.so")).ok());
  EXPECT_NE(other.Identities()[0].sha256, first[0].sha256);

  DelegateRegistry blas;
  ASSERT_TRUE(blas.RegisterDefaultLibraries(Target::kHost).ok());
  auto openblas = blas.Identities().at(0);
  EXPECT_EQ(openblas.name, "openblas");
  EXPECT_THAT(openblas.version, HasSubstr("OpenBLAS"));
  EXPECT_EQ(openblas.soname, "libopenblas.so.0");
}

constexpr char kFill[] = R"mlir(
func.func @fill(%x: memref<?xf32>, %n: i32, %v: f32) {
  tessera_nvidia.kernel_call %x, %n, %v {callee = "tessera_test_fill", arch = "host",
      binding = "c_abi", provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", signature = (memref<?xf32>, i32, f32) -> ()}
      : (memref<?xf32>, i32, f32) -> ()
  return
}
)mlir";

TEST(DelegateCallTest, DeclaredSignatureCallRunsAndCountsADispatch) {
  auto module = CompileWith(kFill, WithLibraryA());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT((*module)->delegate_symbols, ::testing::ElementsAre("tessera_test_fill"));
  ASSERT_EQ((*module)->delegate_identities.size(), 1u);
  EXPECT_THAT((*module)->delegate_identities[0], HasSubstr("libtest_library_a.so"));
  HostTensor<float> x({6});
  int32_t n = 6;
  float v = 2.5f;
  void* args[] = {x.descriptor(), &n, &v};
  const uint64_t before = runtime::DelegateDispatchCount();
  (*(*module)->host->Lookup("fill"))(args);
  EXPECT_EQ(runtime::DelegateDispatchCount(), before + 1);
  for (float value : x.data()) EXPECT_EQ(value, 2.5f);
}

TEST(DelegateCallTest, UnregisteredCalleeIsACompileErrorListingTheSearch) {
  std::string source = kFill;
  source.replace(source.find("tessera_test_fill"), 17, "system");
  auto module = CompileWith(source, WithLibraryA());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(module.status().message()),
              AllOf(HasSubstr("d.mlir:3:3"),
                    HasSubstr("'system' not found in registered libraries (searched: a (")));
}

TEST(DelegateCallTest, AbiMismatchesNameThePosition) {
  std::string wrong = kFill;
  const std::string right = "signature = (memref<?xf32>, i32, f32)";
  wrong.replace(wrong.find(right), right.size(), "signature = (memref<?xf32>, f32, f32)");
  auto declared = CompileWith(wrong, WithLibraryA());
  EXPECT_THAT(declared.status().message(),
              HasSubstr("expected `signature` parameter #1 to be 'i32' (the operand's type), "
                        "found 'f32'"));
  std::string undeclared = kFill;
  const std::string declaration = ", signature = (memref<?xf32>, i32, f32) -> ()";
  undeclared.replace(undeclared.find(declaration), declaration.size(), "");
  EXPECT_THAT(CompileWith(undeclared, WithLibraryA()).status().message(),
              HasSubstr("'tessera_test_fill' is not in the ABI catalogue; declare its C "
                        "signature"));
  auto blas = std::make_shared<DelegateRegistry>();
  ASSERT_TRUE(blas->RegisterDefaultLibraries(Target::kHost).ok());
  auto catalogued = CompileWith(R"mlir(
func.func @bad(%a: memref<4x4xf16>, %n: i32, %s: f32) {
  tessera_nvidia.kernel_call %n, %n, %n, %n, %n, %n, %s, %a, %n, %a, %n, %s, %a, %n {
      callee = "cblas_sgemm", arch = "host", binding = "c_abi", provenance = "vendor_library",
      accuracy = "reference_exact", determinism = "deterministic"}
      : (i32, i32, i32, i32, i32, i32, f32, memref<4x4xf16>, i32, memref<4x4xf16>, i32, f32,
         memref<4x4xf16>, i32) -> ()
  return
}
)mlir",
                                blas);
  EXPECT_THAT(catalogued.status().message(),
              HasSubstr("operand #7 of 'cblas_sgemm': expected memref of f32 (float*), found "
                        "'memref<4x4xf16>'"));
  auto count = CompileWith(R"mlir(
func.func @few(%n: i32) {
  tessera_nvidia.kernel_call %n {callee = "cblas_sgemm", arch = "host", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic"} : (i32) -> ()
  return
}
)mlir",
                           blas);
  EXPECT_THAT(count.status().message(),
              HasSubstr("'cblas_sgemm' takes 14 operand(s) (its C signature in the ABI "
                        "catalogue), found 1"));
}

constexpr char kMatmul[] = R"mlir(
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c ATTRS : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir";

std::string MatmulSource(const std::string& attrs) {
  std::string source = kMatmul;
  source.replace(source.find("ATTRS"), 5, attrs);
  return source;
}

/// Runs @mm of `module` on A (m×k, or k×m transposed) and B (k×n, or n×k).
std::vector<float> RunMatmul(const CompiledModule& module, int64_t m, int64_t n, int64_t k, bool ta,
                             bool tb) {
  HostTensor<float> a(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k});
  HostTensor<float> b(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
  HostTensor<float> c({m, n});
  FillUniform(a.data(), 21);
  FillUniform(b.data(), 22);
  void* args[] = {a.descriptor(), b.descriptor(), c.descriptor()};
  (*module.host->Lookup("mm"))(args);
  return c.data();
}

TEST(MatmulDelegateTest, OpenBlasServesMatmulAndMatchesTheCompiledKernel) {
  auto blas = std::make_shared<DelegateRegistry>();
  ASSERT_TRUE(blas->RegisterDefaultLibraries(Target::kHost).ok());
  for (auto [ta, tb] : std::vector<std::pair<bool, bool>>{
           {false, false}, {true, false}, {false, true}, {true, true}}) {
    std::string attrs = ta && tb ? "{transpose_a, transpose_b}"
                        : ta     ? "{transpose_a}"
                        : tb     ? "{transpose_b}"
                                 : "";
    auto compiled = CompileWith(MatmulSource(attrs), nullptr);
    auto attribute = CompileWith(
        MatmulSource(absl::StrCat(attrs.empty() ? "{" : attrs.substr(0, attrs.size() - 1) + ", ",
                                  "delegate = \"openblas\"}")),
        blas);
    auto option = CompileWith(MatmulSource(attrs), blas, Target::kHost, false, "openblas");
    ASSERT_TRUE(compiled.ok() && attribute.ok() && option.ok())
        << compiled.status() << attribute.status() << option.status();
    EXPECT_THAT((*attribute)->delegate_symbols, ::testing::ElementsAre("cblas_sgemm"));
    for (auto [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {1, 1, 1}, {17, 9, 33}, {64, 48, 100}}) {
      std::vector<float> reference = RunMatmul(**compiled, m, n, k, ta, tb);
      std::vector<float> served = RunMatmul(**attribute, m, n, k, ta, tb);
      std::vector<float> forced = RunMatmul(**option, m, n, k, ta, tb);
      for (size_t i = 0; i < reference.size(); ++i) {
        // reference_exact: within the oracle's default budget, atol 1e-3 + rtol 1e-5.
        EXPECT_LE(std::fabs(served[i] - reference[i]), 1e-3 + 1e-5 * std::fabs(reference[i]));
        EXPECT_EQ(served[i], forced[i]);
      }
    }
  }
}

TEST(MatmulDelegateTest, CublasServesMatmulOnNvptxThroughTheRuntimeHandle) {
  auto registry = std::make_shared<DelegateRegistry>();
  ASSERT_TRUE(registry->RegisterDefaultLibraries(Target::kNvptx).ok());  // dlopen needs no GPU
  EXPECT_THAT(registry->Identities().at(0).version, HasSubstr("cuBLAS 13."));
  auto module =
      CompileWith(MatmulSource("{transpose_a}"), registry, Target::kNvptx, false, "cublas");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT((*module)->delegate_symbols, ::testing::ElementsAre("cublasSgemm_v2"));
  EXPECT_THAT((*module)->host_llvm_ir, AllOf(HasSubstr("call ptr @tessera_rt_cublas_handle()"),
                                             HasSubstr("call i32 @cublasSgemm_v2("),
                                             HasSubstr("call void @tessera_rt_delegate_status(")));
  EXPECT_TRUE((*module)->device_images.empty());  // no compiled kernel left for the matmul
  auto host = LoadHostCode(**module);  // cublasSgemm_v2 resolves in the registered library
  EXPECT_TRUE(host.ok()) << host.status();
}

// A library's pointers address one memory: host libraries never serve an nvptx compile and
// device libraries (cuBLAS) never a host compile, whatever envelope a call declares.
constexpr char kCblasCall[] = R"mlir(
func.func @mm(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  %row_major = arith.constant 101 : i32
  %no = arith.constant 111 : i32
  %n = arith.constant 4 : i32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  tessera_nvidia.kernel_call %row_major, %no, %no, %n, %n, %n, %one, %a, %n, %b, %n, %zero, %c,
      %n {callee = "cblas_sgemm", arch = "ARCH", binding = "c_abi",
      provenance = "vendor_library", accuracy = "reference_exact", determinism = "deterministic"}
      : (i32, i32, i32, i32, i32, i32, f32, memref<4x4xf32>, i32, memref<4x4xf32>, i32, f32,
         memref<4x4xf32>, i32) -> ()
  return
}
)mlir";

std::string CblasCall(const std::string& arch) {
  std::string source = kCblasCall;
  source.replace(source.find("ARCH"), 4, arch);
  return source;
}

TEST(PointerSpaceTest, RegistryKnowsWhichLibraryTakesWhichPointers) {
  EXPECT_EQ(InferPointerSpace("libcublas.so.13"), PointerSpace::kDevice);
  EXPECT_EQ(InferPointerSpace("libcublasLt.so.13"), PointerSpace::kDevice);
  EXPECT_EQ(InferPointerSpace("libcudnn.so.9"), PointerSpace::kDevice);
  EXPECT_EQ(InferPointerSpace("libopenblas.so.0"), PointerSpace::kHost);
  EXPECT_EQ(InferPointerSpace("libmkl_rt.so.2"), PointerSpace::kHost);
  auto registry = std::make_shared<DelegateRegistry>();
  ASSERT_TRUE(registry->RegisterDefaultLibraries(Target::kHost).ok());
  ASSERT_TRUE(registry->RegisterDefaultLibraries(Target::kNvptx).ok());
  for (const DelegateIdentity& identity : registry->Identities()) {
    EXPECT_EQ(identity.pointers,
              identity.name == "cublas" ? PointerSpace::kDevice : PointerSpace::kHost)
        << identity.ToString();
    EXPECT_THAT(identity.ToString(),
                HasSubstr(identity.name == "cublas" ? "(library, device pointers)"
                                                    : "(library, host pointers)"));
  }
}

TEST(PointerSpaceTest, HostLibraryCannotServeAnNvptxCompile) {
  auto registry = std::make_shared<DelegateRegistry>();
  ASSERT_TRUE(registry->RegisterDefaultLibraries(Target::kHost).ok());
  EXPECT_TRUE(CompileWith(CblasCall("host"), registry, Target::kHost).ok());
  auto refused = CompileWith(CblasCall("sm_80+"), registry, Target::kNvptx);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("d.mlir:8:3: error: 'cblas_sgemm' resolves in library 'openblas', which "
                        "takes host pointers: it cannot serve an nvptx compile, whose buffers "
                        "are device memory"));
}

TEST(PointerSpaceTest, DeviceLibraryCannotServeAHostCompile) {
  // Library a, declared as taking device pointers: a host compile refuses its callees.
  auto registry = std::make_shared<DelegateRegistry>();
  ASSERT_TRUE(registry
                  ->RegisterLibrary("a", Runfile("tests/delegates/libtest_library_a.so"),
                                    PointerSpace::kDevice)
                  .ok());
  auto refused = CompileWith(kFill, registry, Target::kHost);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("'tessera_test_fill' resolves in library 'a', which takes device "
                        "pointers: it cannot serve a host compile, whose buffers are host "
                        "memory"));
  // A matmul provider for the host target cannot come from it either.
  MatmulProvider provider;
  provider.name = "a_gemm";
  provider.library = "a";
  provider.target = Target::kHost;
  provider.callee = "tessera_test_fill";
  provider.abi = "cblas_sgemm";
  provider.arch = "host";
  provider.covers = "root_only";
  provider.determinism = "deterministic";
  provider.accuracy = "reference_exact";
  EXPECT_THAT(registry->DeclareMatmulProvider(provider).message(),
              HasSubstr("library 'a' takes device pointers, so it cannot serve the host target"));
  provider.arch = "sm_80+";
  EXPECT_THAT(registry->DeclareMatmulProvider(provider).message(),
              HasSubstr("arch 'sm_80+' does not fit the host target"));
  // The compiled lowering's ids are not a provider's: they would collide with its variants.
  provider.arch = "host";
  for (const char* name : {"compiled", "compiled.mma_sync", "compiled.anything"}) {
    provider.name = name;
    EXPECT_THAT(registry->DeclareMatmulProvider(provider).message(),
                HasSubstr(absl::StrCat("matmul provider '", name,
                                       "': 'compiled' and 'compiled.<schedule>' name the "
                                       "compiled lowering and its kernel variants")));
  }
  provider.name = "compiledish";  // only the exact id and the dotted prefix are reserved
  EXPECT_THAT(registry->DeclareMatmulProvider(provider).message(),
              Not(HasSubstr("name the compiled lowering")));
}

TEST(MatmulDelegateTest, GatesDeclineWithTheReason) {
  auto blas = std::make_shared<DelegateRegistry>();
  ASSERT_TRUE(blas->RegisterDefaultLibraries(Target::kHost).ok());
  auto epilogue = CompileWith(R"mlir(
func.func @dense(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(relu) {delegate = "openblas"}
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir",
                              blas);
  EXPECT_EQ(epilogue.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      epilogue.status().message(),
      HasSubstr("d.mlir:3:3: error: tile.matmul: the forced candidate 'openblas' "
                "(attribute `delegate`) is rejected by the applicability gate: it covers "
                "root_only and the op has a fused epilogue (bias, activation or residual)"));
  EXPECT_THAT(
      CompileWith(MatmulSource(""), blas, Target::kHost, false, "cublas").status().message(),
      HasSubstr("the forced candidate 'cublas' (option `matmul_delegate`) is rejected "
                "by the applicability gate: it serves the nvptx target and this compile "
                "is for host"));
  EXPECT_THAT(CompileWith(MatmulSource(""), blas, Target::kHost, false, "mkl").status().message(),
              HasSubstr("the forced candidate 'mkl' (option `matmul_delegate`) is unknown; "
                        "candidates: compiled, openblas, cublas"));
  EXPECT_THAT(CompileWith(MatmulSource("policy(tf32)"), blas, Target::kHost, false, "openblas")
                  .status()
                  .message(),
              HasSubstr("it implements the f32 numeric policy only"));
}

constexpr char kNondeterministic[] = R"mlir(
func.func @twice(%x: memref<?xf32>, %n: i32, %v: f32) DETERMINISTIC {
  tessera_nvidia.kernel_call %x, %n, %v {callee = "tessera_test_fill", arch = "host",
      binding = "c_abi", provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "nondeterministic", signature = (memref<?xf32>, i32, f32) -> ()}
      : (memref<?xf32>, i32, f32) -> ()
  tessera_nvidia.kernel_call %x, %n, %v {callee = "tessera_test_fill", arch = "host",
      binding = "c_abi", provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "nondeterministic", signature = (memref<?xf32>, i32, f32) -> ()}
      : (memref<?xf32>, i32, f32) -> ()
  return
}
)mlir";

TEST(DeterminismTest, EveryOffenderIsReportedAndNothingIsDispatched) {
  std::string source = kNondeterministic;
  source.replace(source.find("DETERMINISTIC"), 13, "attributes {tessera.deterministic}");
  const uint64_t before = runtime::DelegateDispatchCount();
  auto refused = CompileWith(source, WithLibraryA());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("d.mlir:3:3: error: 'tessera_nvidia.kernel_call' op "
                              "nondeterministic delegate 'tessera_test_fill'"),
                    HasSubstr("d.mlir:7:3: error: 'tessera_nvidia.kernel_call' op "
                              "nondeterministic delegate 'tessera_test_fill'"),
                    HasSubstr("in deterministic function @twice"), HasSubstr("remedy:")));
  // A deterministic compile refuses the undeclared function too.
  std::string plain = kNondeterministic;
  plain.replace(plain.find("DETERMINISTIC"), 13, "");
  EXPECT_THAT(
      CompileWith(plain, WithLibraryA(), Target::kHost, /*deterministic=*/true).status().message(),
      HasSubstr("compile without the deterministic requirement"));
  EXPECT_EQ(runtime::DelegateDispatchCount(), before);

  // Without the requirement the same program runs, and dispatches twice.
  auto module = CompileWith(plain, WithLibraryA());
  ASSERT_TRUE(module.ok()) << module.status();
  HostTensor<float> x({3});
  int32_t n = 3;
  float v = 1.0f;
  void* args[] = {x.descriptor(), &n, &v};
  (*(*module)->host->Lookup("twice"))(args);
  EXPECT_EQ(runtime::DelegateDispatchCount(), before + 2);
}

constexpr char kScaleKernel[] = R"cuda(
extern "C" __global__ void tessera_scale(float* x, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}
)cuda";

constexpr char kLaunch[] = R"mlir(
func.func @scale(%x: memref<?xf32>, %n: i32, %f: f32) {
  tessera_nvidia.kernel_call %x, %n, %f {callee = "tessera_scale", arch = "sm_80+",
      binding = "cuda_kernel", provenance = "handwritten_kernel", accuracy = "reference_exact",
      determinism = "deterministic", grid = array<i64: 4>, block = array<i64: 256>}
      : (memref<?xf32>, i32, f32) -> ()
  return
}
)mlir";

TEST(KernelImageTest, NvrtcSourceServesACudaKernelCall) {
  auto registry = std::make_shared<DelegateRegistry>();
  ASSERT_TRUE(registry->RegisterCudaSource("mine", kScaleKernel, "sm_90").ok());
  auto image = registry->ResolveKernel("tessera_scale");
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_THAT(image->ptx, HasSubstr(".entry tessera_scale"));
  auto module = CompileWith(kLaunch, registry, Target::kNvptx);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT((*module)->host_llvm_ir, AllOf(HasSubstr("tessera_rt_launch_image_kernel"),
                                             HasSubstr("c\"tessera_scale\\00\"")));
  ASSERT_EQ((*module)->delegate_identities.size(), 1u);
  EXPECT_THAT((*module)->delegate_identities[0], HasSubstr("mine (kernel_image)"));
  // The JIT'd host code links against the runtime.
  EXPECT_TRUE(LoadHostCode(**module).ok());
}

TEST(KernelImageTest, CubinImagesListTheirFunctions) {
  DelegateRegistry source;
  ASSERT_TRUE(source.RegisterCudaSource("ptx", kScaleKernel, "sm_90").ok());
  auto cubin = LinkPtxToCubin(source.ResolveKernel("tessera_scale")->ptx, "sm_90", 3);
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  DelegateRegistry registry;
  ASSERT_TRUE(registry.RegisterCubin("bin", *cubin).ok());
  auto image = registry.ResolveKernel("tessera_scale");
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->name, "bin");
  EXPECT_EQ(registry.RegisterCubin("junk", "not an elf").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KernelImageTest, ErrorsNameWhatIsMissing) {
  auto registry = std::make_shared<DelegateRegistry>();
  auto broken = registry->RegisterCudaSource("bad", "__global__ void k( { }", "sm_90");
  EXPECT_EQ(broken.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(broken.message(),
              AllOf(HasSubstr("NVRTC could not compile kernel source 'bad'"), HasSubstr("error")));
  ASSERT_TRUE(registry->RegisterCudaSource("mine", kScaleKernel, "sm_90").ok());
  std::string unknown = kLaunch;
  const std::string callee = "\"tessera_scale\"";
  unknown.replace(unknown.find(callee), callee.size(), "\"tessera_other\"");
  EXPECT_THAT(std::string(CompileWith(unknown, registry, Target::kNvptx).status().message()),
              HasSubstr("kernel 'tessera_other' not found in registered kernel images "
                        "(searched: mine)"));
  std::string no_grid = kLaunch;
  const std::string grid = ", grid = array<i64: 4>, block = array<i64: 256>";
  no_grid.replace(no_grid.find(grid), grid.size(), "");
  EXPECT_THAT(CompileWith(no_grid, registry, Target::kNvptx).status().message(),
              HasSubstr("cuda_kernel delegate 'tessera_scale' declares no launch configuration"));
  absl::Status on_host = CompileWith(kLaunch, registry, Target::kHost).status();
  EXPECT_EQ(on_host.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(on_host.message(),
              HasSubstr("cuda_kernel delegate 'tessera_scale' needs the nvptx target"));
}

TEST(DelegateCacheTest, RegisteredIdentitiesArePartOfTheKey) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  service::CompileServiceOptions cache_options;
  cache_options.disk_root = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/delegate_cache");
  service::CompileService cache(cache_options);
  CompileOptions options;
  options.delegates = WithLibraryA();
  auto first = cache.Compile(kFill, options);
  ASSERT_TRUE(first.ok()) << first.status();
  auto again = cache.Compile(kFill, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->digest, first->digest);
  auto other = std::make_shared<DelegateRegistry>();
  ASSERT_TRUE(other->RegisterLibrary("a", Runfile("tests/delegates/libtest_library_b.so")).ok());
  options.delegates = other;
  auto rebuilt = cache.Compile(kFill, options);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_NE(rebuilt->digest, first->digest);
  EXPECT_THAT(rebuilt->miss.ToString(), HasSubstr("stale: delegates "));
  // A fresh cache loads the entry from disk and links it against the caller's registry.
  service::CompileService fresh(cache_options);
  auto loaded = fresh.Compile(kFill, options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->source, service::ModuleSource::kDisk);
  HostTensor<float> x({2});
  int32_t n = 2;
  float v = 4.0f;
  void* args[] = {x.descriptor(), &n, &v};
  (*loaded->module->host->Lookup("fill"))(args);
  EXPECT_EQ(x[1], 4.0f);
}

}  // namespace
}  // namespace tessera::jit::delegates
