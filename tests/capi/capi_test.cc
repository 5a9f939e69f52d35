// The C API end to end on the host target: compile → invoke with DLPack tensors → compare with
// Over 600 lines: the C API end to end, sharing one context fixture and the C++ references.
// a C++ reference; every argument check returns INVALID_ARGUMENT naming the argument; many
// threads compile and invoke on one context at once; GPU-only calls say UNAVAILABLE here.
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera_jit.h"
#include "tests/capi/capi_test_util.h"
#include "tests/redis/redis_server.h"

namespace {

using ::tessera::testing::Error;
using ::tessera::testing::Float;
using ::tessera::testing::Int;
using ::tessera::testing::MemoryOnlyHostContext;
using ::tessera::testing::Tensor;
using ::testing::HasSubstr;

constexpr char kSource[] = R"mlir(
func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}
func.func @row_max(%x: memref<?x8xf32>, %y: memref<?xf32>) {
  tile.reduce max %x -> %y axis = 1 : memref<?x8xf32> -> memref<?xf32>
  return
}
func.func @count(%n: i32, %scale: f64) -> f64 {
  %f = arith.sitofp %n : i32 to f64
  %r = arith.mulf %f, %scale : f64
  return %r : f64
}
)mlir";

/// A private compile cache directory per test.
std::string CacheDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/capi_cache_" + name;
  std::string command = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  return dir;
}

class CapiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = CacheDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.default_target = "host";
    options.cache_dir = cache_dir_.c_str();
    ASSERT_OK(tessera_jit_context_create(&options, &context_));
    ASSERT_OK(tessera_jit_compile(context_, kSource, sizeof(kSource) - 1, nullptr, &module_));
  }
  void TearDown() override {
    tessera_jit_module_destroy(module_);
    tessera_jit_context_destroy(context_);
  }
  tessera_jit_function_t* Function(const char* name) {
    tessera_jit_function_t* function = nullptr;
    Error error(tessera_jit_module_get_function(module_, name, std::strlen(name), &function));
    EXPECT_EQ(error.code(), TESSERA_JIT_OK) << error.message();
    return function;
  }

  std::string cache_dir_;
  tessera_jit_context_t* context_ = nullptr;
  tessera_jit_module_t* module_ = nullptr;
};

tessera_jit_cache_stats_t Stats(tessera_jit_context_t* context) {
  tessera_jit_cache_stats_t stats;
  stats.struct_size = sizeof(stats);
  Error error(tessera_jit_context_get_cache_stats(context, &stats));
  EXPECT_EQ(error.code(), TESSERA_JIT_OK) << error.message();
  return stats;
}

TEST_F(CapiTest, CompilesGoThroughTheCache) {
  tessera_jit_cache_stats_t before = Stats(context_);
  EXPECT_EQ(before.compiles, 1u);  // SetUp compiled kSource
  EXPECT_EQ(before.misses_not_cached, 1u);
  EXPECT_STREQ(before.last_miss_reason, "not cached");
  EXPECT_EQ(before.disk_enabled, 1);
  EXPECT_EQ(before.disk_entries, 1u);
  tessera_jit_module_t* again = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, kSource, sizeof(kSource) - 1, nullptr, &again));
  EXPECT_EQ(Stats(context_).memory_hits, 1u);
  // The cached module works like the first.
  tessera_jit_function_t* saxpy = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(again, "saxpy", 5, &saxpy));
  Tensor x({3}, 2.0f), y({3}, 1.0f), out({3});
  tessera_jit_arg_t args[] = {Float(3.0), x.arg(), y.arg(), out.arg()};
  ASSERT_OK(tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr));
  EXPECT_EQ(out.data[1], 7.0f);
  tessera_jit_module_destroy(again);

  // Another context on the same directory (as another process would) finds it on disk.
  tessera_jit_context_options_t options;
  tessera_jit_context_options_init(&options);
  options.default_target = "host";
  options.cache_dir = cache_dir_.c_str();
  tessera_jit_context_t* other = nullptr;
  ASSERT_OK(tessera_jit_context_create(&options, &other));
  tessera_jit_module_t* loaded = nullptr;
  ASSERT_OK(tessera_jit_compile(other, kSource, sizeof(kSource) - 1, nullptr, &loaded));
  tessera_jit_cache_stats_t stats = Stats(other);
  EXPECT_EQ(stats.disk_hits, 1u);
  EXPECT_EQ(stats.compiles, 0u);
  tessera_jit_module_destroy(loaded);
  tessera_jit_context_destroy(other);

  tessera_jit_cache_stats_t small;
  small.struct_size = 8;
  Error error(tessera_jit_context_get_cache_stats(context_, &small));
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
}

TEST(CapiDelegateTest, RegisteredOpenBlasServesMatmulThroughTheCApi) {
  tessera_jit_context_t* context = MemoryOnlyHostContext();
  ASSERT_NE(context, nullptr);
  Error bad(tessera_jit_context_register_library(context, "x", "/no/such/library.so"));
  EXPECT_EQ(bad.code(), TESSERA_JIT_INVALID_ARGUMENT);
  ASSERT_OK(tessera_jit_context_register_default_libraries(context, nullptr));
  ASSERT_EQ(tessera_jit_context_get_delegate_count(context), 1u);
  size_t size = 0;
  std::string identity(tessera_jit_context_get_delegate_identity(context, 0, &size));
  EXPECT_EQ(identity.size(), size);
  EXPECT_THAT(identity, HasSubstr("openblas (library, host pointers) libopenblas.so.0 OpenBLAS"));

  const char source[] = R"mlir(
func.func @mm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}
)mlir";
  tessera_jit_compile_options_t compile;
  tessera_jit_compile_options_init(&compile);
  compile.matmul_delegate = "openblas";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context, source, sizeof(source) - 1, &compile, &module));
  tessera_jit_function_t* mm = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "mm", 2, &mm));
  Tensor a({2, 3}, 1.0f), b({3, 4}, 2.0f), c({2, 4});
  tessera_jit_arg_t args[] = {a.arg(), b.arg(), c.arg()};
  const uint64_t before = tessera_jit_get_delegate_dispatch_count();
  ASSERT_OK(tessera_jit_function_invoke(mm, args, 3, nullptr, nullptr));
  EXPECT_EQ(tessera_jit_get_delegate_dispatch_count(), before + 1);
  for (float value : c.data) EXPECT_EQ(value, 6.0f);
  tessera_jit_module_destroy(module);

  // Without the library registered, forcing it is a compile error naming the gate.
  tessera_jit_context_t* bare = MemoryOnlyHostContext();
  ASSERT_NE(bare, nullptr);
  Error missing(tessera_jit_compile(bare, source, sizeof(source) - 1, &compile, &module));
  EXPECT_EQ(missing.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(missing.message(),
              HasSubstr("the forced candidate 'openblas' (option `matmul_delegate`) is rejected "
                        "by the availability gate: library 'openblas' is not registered"));
  tessera_jit_context_destroy(bare);

  // The arbiter decides when nothing is forced; its records come back as JSON.
  compile.matmul_delegate = nullptr;
  ASSERT_OK(tessera_jit_compile(context, source, sizeof(source) - 1, &compile, &module));
  const char* json = nullptr;
  size_t json_size = 0;
  ASSERT_OK(tessera_jit_module_get_text(module, TESSERA_JIT_TEXT_DECISIONS, &json, &json_size));
  const std::string decisions(json, json_size);
  EXPECT_THAT(
      decisions,
      AllOf(HasSubstr("\"op\": \"tile.matmul\""), HasSubstr("\"id\": \"openblas\""),
            HasSubstr("\"timing_source\": \"host steady_clock\""), HasSubstr("\"winner\": ")));
  tessera_jit_module_destroy(module);

  // Declared providers: the contract is checked field by field.
  tessera_jit_matmul_provider_t provider;
  tessera_jit_matmul_provider_init(&provider);
  provider.name = "blas2";
  provider.library = "openblas";
  provider.callee = "cblas_sgemm";
  provider.accuracy = "tolerance_bounded";
  Error unbounded(tessera_jit_context_declare_matmul_provider(context, &provider));
  EXPECT_EQ(unbounded.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(unbounded.message(),
              HasSubstr("accuracy=tolerance_bounded requires `tolerance` and/or `tolerance_rel`"));
  provider.tolerance = 1e-3;
  ASSERT_OK(tessera_jit_context_declare_matmul_provider(context, &provider));
  compile.matmul_delegate = "blas2";
  ASSERT_OK(tessera_jit_compile(context, source, sizeof(source) - 1, &compile, &module));
  ASSERT_OK(tessera_jit_module_get_text(module, TESSERA_JIT_TEXT_DECISIONS, &json, &json_size));
  EXPECT_THAT(std::string(json, json_size), HasSubstr("\"winner\": \"blas2\""));
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
}

TEST(CapiDelegateTest, LibrariesCarryTheirPointerSpace) {
  tessera_jit_context_t* context = MemoryOnlyHostContext();
  ASSERT_NE(context, nullptr);
  Error unknown(tessera_jit_context_register_library_with_pointers(
      context, "x", "libopenblas.so.0", static_cast<tessera_jit_pointer_space_t>(7)));
  EXPECT_EQ(unknown.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(unknown.message(), HasSubstr("unknown pointer space 7"));
  Error null_path(tessera_jit_context_register_library_with_pointers(context, "x", nullptr,
                                                                     TESSERA_JIT_POINTERS_HOST));
  EXPECT_EQ(null_path.code(), TESSERA_JIT_INVALID_ARGUMENT);
  Error unknown_format(tessera_jit_context_register_kernel_image(
      context, "k", "x", 1, static_cast<tessera_jit_image_format_t>(1000), nullptr));
  EXPECT_EQ(unknown_format.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(unknown_format.message(), HasSubstr("unknown image format 1000"));
  // OpenBLAS declared as taking device pointers: a host compile refuses its callee.
  ASSERT_OK(tessera_jit_context_register_library_with_pointers(
      context, "openblas", "libopenblas.so.0", TESSERA_JIT_POINTERS_DEVICE));
  EXPECT_THAT(tessera_jit_context_get_delegate_identity(context, 0, nullptr),
              HasSubstr("openblas (library, device pointers)"));
  const char source[] = R"mlir(
func.func @ask(%x: memref<4xf32>) -> i32 {
  %r = tessera_nvidia.kernel_call %x {callee = "openblas_get_num_threads", arch = "host",
      binding = "c_abi", provenance = "vendor_library", accuracy = "reference_exact",
      determinism = "deterministic", signature = (memref<4xf32>) -> i32} : (memref<4xf32>) -> i32
  return %r : i32
}
)mlir";
  tessera_jit_module_t* module = nullptr;
  Error refused(tessera_jit_compile(context, source, sizeof(source) - 1, nullptr, &module));
  EXPECT_EQ(refused.code(), TESSERA_JIT_FAILED_PRECONDITION);
  EXPECT_THAT(refused.message(), HasSubstr("which takes device pointers: it cannot serve a host "
                                           "compile"));
  EXPECT_EQ(module, nullptr);
  tessera_jit_context_destroy(context);
}

TEST(CapiDelegateTest, SupportedArchsAreListed) {
  std::vector<std::string> archs;
  for (size_t i = 0; i < tessera_jit_get_supported_arch_count(); ++i) {
    archs.push_back(tessera_jit_get_supported_arch(i));
  }
  EXPECT_EQ(tessera_jit_get_supported_arch(archs.size()), nullptr);
  EXPECT_THAT(archs, ::testing::IsSupersetOf({"sm_75", "sm_90", "sm_90a", "sm_100", "sm_100a",
                                              "sm_103", "sm_120", "sm_121a"}));
  EXPECT_THAT(archs, ::testing::Not(::testing::Contains("sm_70")));
}

TEST(CapiDelegateTest, CudaSourceImagesCompileOrCarryTheNvrtcLog) {
  tessera_jit_context_t* context = nullptr;
  ASSERT_OK(tessera_jit_context_create(nullptr, &context));
  const char good[] = "extern \"C\" __global__ void twice(float* x) { x[threadIdx.x] *= 2; }";
  ASSERT_OK(tessera_jit_context_register_kernel_image(context, "mine", good, sizeof(good) - 1,
                                                      TESSERA_JIT_IMAGE_CUDA_SOURCE, "sm_80"));
  const char bad[] = "__global__ void broken( {";
  Error error(tessera_jit_context_register_kernel_image(context, "bad", bad, sizeof(bad) - 1,
                                                        TESSERA_JIT_IMAGE_CUDA_SOURCE, "sm_80"));
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(), HasSubstr("NVRTC could not compile kernel source 'bad'"));
  EXPECT_EQ(tessera_jit_context_get_delegate_count(context), 1u);
  tessera_jit_context_destroy(context);
}

TEST(CapiCacheTest, ApiZeroOneContextOptionsStillWork) {
  // A caller built against API 0.1 passes the shorter struct: no cache fields, defaults apply.
  tessera_jit_context_options_t options;
  tessera_jit_context_options_init(&options);
  options.struct_size = offsetof(tessera_jit_context_options_t, log_level) + sizeof(int);
  options.default_target = "host";
  tessera_jit_context_t* context = nullptr;
  ASSERT_OK(tessera_jit_context_create(&options, &context));
  tessera_jit_context_destroy(context);
  options.struct_size = offsetof(tessera_jit_context_options_t, log_level);
  Error error(tessera_jit_context_create(&options, &context));
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(), HasSubstr("tessera_jit_context_options_t.struct_size"));
}

TEST_F(CapiTest, ReportsVersionAndEntries) {
  int major = -1, minor = -1;
  tessera_jit_get_api_version(&major, &minor);
  EXPECT_EQ(major, TESSERA_JIT_API_MAJOR);
  EXPECT_EQ(minor, TESSERA_JIT_API_MINOR);
  ASSERT_EQ(tessera_jit_module_get_entry_count(module_), 3u);
  size_t size = 0;
  EXPECT_EQ(std::string(tessera_jit_module_get_entry_name(module_, 1, &size)), "row_max");
  EXPECT_EQ(size, 7u);
  EXPECT_EQ(tessera_jit_module_get_entry_name(module_, 3, &size), nullptr);
}

TEST_F(CapiTest, SizesThatFollowIntegerArgumentsAreReported) {
  // The original Tessera's launch-level softmax: X and O are [rows, columns] (API 0.13).
  constexpr char kLaunch[] = R"mlir(
llvm.func @softmax(%x: !llvm.ptr, %o: !llvm.ptr, %rows: i64, %columns: i64) {
  tile.softmax_kernel %x, %o, %rows, %columns {
    storage = "f32", accum = "f32", axis = -1 : i64, exp_mode = "accurate", ftz = false
  } : !llvm.ptr, !llvm.ptr, i64, i64
  llvm.return
}
)mlir";
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.target = "host";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, kLaunch, sizeof(kLaunch) - 1, &options, &module));
  tessera_jit_function_t* function = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "softmax", 7, &function));
  for (size_t arg = 0; arg < 2; ++arg) {
    tessera_jit_arg_info_t info;
    info.struct_size = TESSERA_JIT_ARG_INFO_STRUCT_SIZE;
    ASSERT_OK(tessera_jit_function_get_arg_info(function, 0, arg, &info));
    ASSERT_EQ(info.ndim, 2);
    ASSERT_NE(info.size_from, nullptr);
    EXPECT_EQ(info.size_from[0], 2) << "argument " << arg;
    EXPECT_EQ(info.size_from[1], 3) << "argument " << arg;
  }
  tessera_jit_arg_info_t rows;
  rows.struct_size = TESSERA_JIT_ARG_INFO_STRUCT_SIZE;
  ASSERT_OK(tessera_jit_function_get_arg_info(function, 0, 2, &rows));
  EXPECT_EQ(rows.kind, TESSERA_JIT_ARG_INT);
  EXPECT_EQ(rows.size_from, nullptr);
  // A 3x5 buffer passed with columns = 6 is refused naming both.
  float x[15] = {}, o[15] = {};
  int64_t shape[] = {3, 5};
  DLTensor tx{x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  DLTensor to{o, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  tessera_jit_arg_t args[4];
  args[0].kind = args[1].kind = TESSERA_JIT_ARG_TENSOR;
  args[0].value.tensor = &tx;
  args[1].value.tensor = &to;
  args[2].kind = args[3].kind = TESSERA_JIT_ARG_INT;
  args[2].value.i = 3;
  args[3].value.i = 6;
  Error error(tessera_jit_function_invoke(function, args, 4, nullptr, nullptr));
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(), HasSubstr("dimension 1 of argument #0 'x' is 5 but argument #3 "
                                         "'columns' is 6"));
  args[3].value.i = 5;
  ASSERT_OK(tessera_jit_function_invoke(function, args, 4, nullptr, nullptr));
  tessera_jit_module_destroy(module);
}

TEST_F(CapiTest, InvokesSaxpyAgainstReference) {
  tessera_jit_function_t* saxpy = Function("saxpy");
  ASSERT_NE(saxpy, nullptr);
  Tensor x({1000}), y({1000}), out({1000});
  for (int i = 0; i < 1000; ++i) {
    x.data[i] = 0.001f * i;
    y.data[i] = 1.0f - 0.002f * i;
  }
  tessera_jit_arg_t args[] = {Float(2.5), x.arg(), y.arg(), out.arg()};
  ASSERT_OK(tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr));
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(out.data[i], 2.5f * x.data[i] + y.data[i]) << i;
}

// API 0.15: host code for named CPUs, and packages holding several modules. x86-64 code runs
// on every x86-64 machine; of graniterapids (AMX, Intel's) and znver5 (MWAITX, AMD's) at least
// one cannot run here, and compiles anyway, for a package.
TEST_F(CapiTest, PackagesHoldHostCodeForSeveralCpus) {
  auto compile_for = [&](const char* cpu, tessera_jit_module_t** module) {
    tessera_jit_compile_options_t options;
    tessera_jit_compile_options_init(&options);
    options.host_cpu = cpu;
    return Error(tessera_jit_compile(context_, kSource, sizeof(kSource) - 1, &options, module));
  };
  auto expect_saxpy = [](tessera_jit_module_t* module) {
    tessera_jit_function_t* saxpy = nullptr;
    ASSERT_OK(tessera_jit_module_get_function(module, "saxpy", 5, &saxpy));
    Tensor x({33}), y({33}), out({33});
    for (int i = 0; i < 33; ++i) {
      x.data[i] = 0.5f * i;
      y.data[i] = 1.0f - i;
    }
    tessera_jit_arg_t args[] = {Float(3.0), x.arg(), y.arg(), out.arg()};
    ASSERT_OK(tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr));
    for (int i = 0; i < 33; ++i) EXPECT_EQ(out.data[i], 3.0f * x.data[i] + y.data[i]) << i;
  };
  tessera_jit_module_t* baseline = nullptr;
  ASSERT_EQ(compile_for("x86-64", &baseline).code(), TESSERA_JIT_OK);
  expect_saxpy(baseline);
  tessera_jit_module_t* foreign = nullptr;
  for (const char* cpu : {"graniterapids", "znver5"}) {
    tessera_jit_module_t* module = nullptr;
    ASSERT_EQ(compile_for(cpu, &module).code(), TESSERA_JIT_OK) << cpu;
    tessera_jit_function_t* saxpy = nullptr;
    Error error(tessera_jit_module_get_function(module, "saxpy", 5, &saxpy));
    if (error.code() == TESSERA_JIT_OK || foreign != nullptr) {
      tessera_jit_module_destroy(module);
      continue;
    }
    EXPECT_EQ(error.code(), TESSERA_JIT_FAILED_PRECONDITION);
    EXPECT_THAT(error.message(), HasSubstr("@saxpy cannot run here"));
    EXPECT_THAT(error.message(), HasSubstr("lacks its features"));
    EXPECT_EQ(saxpy, nullptr);
    foreign = module;
  }
  ASSERT_NE(foreign, nullptr) << "this CPU runs both graniterapids and znver5 code";

  const tessera_jit_module_t* modules[] = {foreign, baseline};
  size_t size = 0;
  ASSERT_OK(tessera_jit_package_write(modules, 2, nullptr, 0, &size));
  ASSERT_GT(size, 0u);
  std::vector<char> bytes(size);
  size_t written = 0;
  Error small(tessera_jit_package_write(modules, 2, bytes.data(), size - 1, &written));
  EXPECT_EQ(small.code(), TESSERA_JIT_OUT_OF_RANGE);
  EXPECT_EQ(written, size);
  ASSERT_OK(tessera_jit_package_write(modules, 2, bytes.data(), bytes.size(), &written));
  EXPECT_EQ(written, size);
  tessera_jit_module_t* loaded = nullptr;
  ASSERT_OK(
      tessera_jit_module_load(context_, bytes.data(), bytes.size(), "host", nullptr, &loaded));
  expect_saxpy(loaded);  // the x86-64 entry: the other cannot run here
  tessera_jit_module_destroy(loaded);
  // Only the foreign entry: refused, naming what this CPU lacks.
  ASSERT_OK(tessera_jit_package_write(modules, 1, nullptr, 0, &size));
  bytes.assign(size, 0);
  ASSERT_OK(tessera_jit_package_write(modules, 1, bytes.data(), bytes.size(), &size));
  Error refused(
      tessera_jit_module_load(context_, bytes.data(), bytes.size(), "host", nullptr, &loaded));
  EXPECT_EQ(refused.code(), TESSERA_JIT_FAILED_PRECONDITION);
  EXPECT_THAT(refused.message(), HasSubstr("which this CPU"));

  // The hostile caller.
  const tessera_jit_module_t* twice[] = {baseline, baseline};
  EXPECT_EQ(Error(tessera_jit_package_write(twice, 2, nullptr, 0, &size)).code(),
            TESSERA_JIT_INVALID_ARGUMENT);
  const tessera_jit_module_t* with_null[] = {baseline, nullptr};
  EXPECT_EQ(Error(tessera_jit_package_write(with_null, 2, nullptr, 0, &size)).code(),
            TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(Error(tessera_jit_package_write(nullptr, 1, nullptr, 0, &size)).code(),
            TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(Error(tessera_jit_package_write(modules, 0, nullptr, 0, &size)).code(),
            TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(Error(tessera_jit_package_write(modules, 1, nullptr, 0, nullptr)).code(),
            TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_EQ(Error(tessera_jit_package_write(modules, 1, nullptr, 5, &size)).code(),
            TESSERA_JIT_INVALID_ARGUMENT);
  std::vector<const tessera_jit_module_t*> many(65, baseline);
  Error too_many(tessera_jit_package_write(many.data(), many.size(), nullptr, 0, &size));
  EXPECT_EQ(too_many.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(too_many.message(), HasSubstr("1 to 64 modules, not 65"));
  tessera_jit_module_t* unknown = nullptr;
  Error bad_cpu = compile_for("pentium-9000", &unknown);
  EXPECT_EQ(bad_cpu.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(bad_cpu.message(), HasSubstr("unknown host CPU 'pentium-9000'"));
  EXPECT_EQ(unknown, nullptr);
  // A caller built against API 0.10 has no host_cpu: whatever lies beyond its struct is unread.
  tessera_jit_compile_options_t old;
  tessera_jit_compile_options_init(&old);
  old.struct_size = TESSERA_JIT_STRUCT_SIZE(tessera_jit_compile_options_t, arbitration_budget_ms);
  old.host_cpu = "pentium-9000";
  tessera_jit_module_t* native = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, kSource, sizeof(kSource) - 1, &old, &native));
  expect_saxpy(native);
  tessera_jit_module_destroy(native);
  tessera_jit_module_destroy(foreign);
  tessera_jit_module_destroy(baseline);
}

TEST_F(CapiTest, InvokesReductionAndReturnsScalars) {
  Tensor x({3, 8}), y({3});
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<float>((i * 7) % 11);
  tessera_jit_arg_t args[] = {x.arg(), y.arg()};
  ASSERT_OK(tessera_jit_function_invoke(Function("row_max"), args, 2, nullptr, nullptr));
  for (int r = 0; r < 3; ++r) {
    float expected = *std::max_element(x.data.begin() + r * 8, x.data.begin() + r * 8 + 8);
    EXPECT_EQ(y.data[r], expected);
  }
  tessera_jit_arg_t scalars[] = {Int(6), Float(0.5)};
  tessera_jit_arg_t result{};
  ASSERT_OK(tessera_jit_function_invoke(Function("count"), scalars, 2, nullptr, &result));
  EXPECT_EQ(result.kind, TESSERA_JIT_ARG_FLOAT);
  EXPECT_EQ(result.value.f, 3.0);
}

TEST_F(CapiTest, ArgumentsAreCheckedBeforeAnythingRuns) {
  tessera_jit_function_t* saxpy = Function("saxpy");
  Tensor x({4}), y({4}), out({4}, 7.0f);
  struct Case {
    std::string what;
    std::vector<tessera_jit_arg_t> args;
    std::string expected;
  };
  Tensor matrix({2, 2});
  Tensor wrong_dtype({4});
  wrong_dtype.view.dtype = {kDLFloat, 64, 1};
  Tensor on_gpu({4});
  on_gpu.view.device = {kDLCUDA, 0};
  Tensor strided({4});
  int64_t strides[] = {2};
  strided.view.strides = strides;
  Tensor no_data({4});
  no_data.view.data = nullptr;
  tessera_jit_arg_t null_tensor{};
  null_tensor.kind = TESSERA_JIT_ARG_TENSOR;
  const std::vector<Case> cases = {
      {"count", {Float(1), x.arg(), y.arg()}, "@saxpy takes 4 argument(s), found 3"},
      {"scalar kind",
       {Int(1), x.arg(), y.arg(), out.arg()},
       "argument #0 'alpha' of @saxpy (f32): expected a float scalar"},
      {"tensor kind",
       {Float(1), Float(2), y.arg(), out.arg()},
       "argument #1 'x' of @saxpy (memref<?xf32>): expected a tensor"},
      {"null tensor",
       {Float(1), null_tensor, y.arg(), out.arg()},
       "argument #1 'x' of @saxpy (memref<?xf32>): expected a DLTensor, found NULL"},
      {"dtype",
       {Float(1), wrong_dtype.arg(), y.arg(), out.arg()},
       "argument #1 'x' of @saxpy (memref<?xf32>): dtype float64 does not match"},
      {"rank",
       {Float(1), x.arg(), matrix.arg(), out.arg()},
       "argument #2 'y' of @saxpy (memref<?xf32>): expected rank 1, found 2"},
      {"device",
       {Float(1), x.arg(), y.arg(), on_gpu.arg()},
       "argument #3 'out' of @saxpy (memref<?xf32>): the module runs on the host; expected host "
       "memory (kDLCPU), found device type 2"},
      {"strides",
       {Float(1), strided.arg(), y.arg(), out.arg()},
       "expected a dense row-major tensor, found strides [2]"},
      {"null data",
       {Float(1), x.arg(), no_data.arg(), out.arg()},
       "argument #2 'y' of @saxpy (memref<?xf32>): data is NULL"},
  };
  for (const Case& c : cases) {
    Error error(tessera_jit_function_invoke(saxpy, c.args.data(), c.args.size(), nullptr, nullptr));
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT) << c.what;
    EXPECT_THAT(error.message(), HasSubstr(c.expected)) << c.what;
  }
  for (float value : out.data) EXPECT_EQ(value, 7.0f);  // nothing ran
}

TEST_F(CapiTest, StaticSizesAndIntegerRangesAreChecked) {
  Tensor wide({2, 9}), rows({2});
  tessera_jit_arg_t args[] = {wide.arg(), rows.arg()};
  Error shape(tessera_jit_function_invoke(Function("row_max"), args, 2, nullptr, nullptr));
  EXPECT_EQ(shape.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(
      shape.message(),
      HasSubstr("argument #0 'x' of @row_max (memref<?x8xf32>): shape [2, 9] does not match"));
  tessera_jit_arg_t scalars[] = {Int(int64_t{1} << 40), Float(1)};
  Error range(tessera_jit_function_invoke(Function("count"), scalars, 2, nullptr, nullptr));
  EXPECT_EQ(range.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(range.message(), HasSubstr("does not fit in 32 bits"));
}

TEST_F(CapiTest, StructSizesAndNullsAreChecked) {
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.struct_size = 4;
  tessera_jit_module_t* module = nullptr;
  Error small(tessera_jit_compile(context_, kSource, sizeof(kSource) - 1, &options, &module));
  EXPECT_EQ(small.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(small.message(),
              HasSubstr("tessera_jit_compile_options_t.struct_size is 4; expected at least"));
  Error null_out(tessera_jit_compile(context_, kSource, sizeof(kSource) - 1, nullptr, nullptr));
  EXPECT_EQ(null_out.code(), TESSERA_JIT_INVALID_ARGUMENT);
  tessera_jit_function_t* function = nullptr;
  Error missing(tessera_jit_module_get_function(module_, "nope", 4, &function));
  EXPECT_EQ(missing.code(), TESSERA_JIT_NOT_FOUND);
  EXPECT_THAT(missing.message(),
              HasSubstr("no entry function @nope; the module has: saxpy, row_max, count"));
}

TEST_F(CapiTest, CompileErrorsCarryLocations) {
  const std::string bad =
      "func.func @f(%a: memref<4x8xf32>, %b: memref<4xf32>) {\n"
      "  tile.reduce sum %a -> %b axis = 3 : memref<4x8xf32> -> memref<4xf32>\n"
      "  return\n}\n";
  tessera_jit_module_t* module = nullptr;
  Error error(tessera_jit_compile(context_, bad.data(), bad.size(), nullptr, &module));
  EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(error.message(), HasSubstr(":2:3: error: 'tile.reduce' op expected axis in [0, 2)"));
  EXPECT_EQ(module, nullptr);
}

TEST_F(CapiTest, TextsOfAHostModule) {
  const char* data = nullptr;
  size_t size = 0;
  ASSERT_OK(tessera_jit_module_get_text(module_, TESSERA_JIT_TEXT_LLVM, &data, &size));
  EXPECT_THAT(std::string(data, size), HasSubstr("define"));
  Error ptx(tessera_jit_module_get_text(module_, TESSERA_JIT_TEXT_PTX, &data, &size));
  EXPECT_EQ(ptx.code(), TESSERA_JIT_NOT_FOUND);
}

TEST_F(CapiTest, ManyThreadsCompileAndInvokeOnOneContext) {
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        tessera_jit_module_t* module = nullptr;
        Error compiled(
            tessera_jit_compile(context_, kSource, sizeof(kSource) - 1, nullptr, &module));
        if (compiled.code() != TESSERA_JIT_OK) {
          ++failures[t];
          continue;
        }
        // Shared module and a private one, invoked concurrently.
        for (tessera_jit_module_t* target : {module, module_}) {
          tessera_jit_function_t* saxpy = nullptr;
          Error found(tessera_jit_module_get_function(target, "saxpy", 5, &saxpy));
          Tensor x({257}, 1.0f + t), y({257}, 2.0f), out({257});
          tessera_jit_arg_t args[] = {Float(3.0), x.arg(), y.arg(), out.arg()};
          Error ran(tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr));
          if (found.code() != TESSERA_JIT_OK || ran.code() != TESSERA_JIT_OK) ++failures[t];
          for (float value : out.data) {
            if (value != 3.0f * (1.0f + t) + 2.0f) ++failures[t];
          }
        }
        tessera_jit_module_destroy(module);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(CapiGpuAbsentTest, GpuCallsSayUnavailableWithoutADriver) {
  if (tessera_jit_is_gpu_available()) GTEST_SKIP() << "a GPU is present; tests/gpu covers it";
  EXPECT_EQ(tessera_jit_device_count(), 0);
  tessera_jit_device_info_t info;
  info.struct_size = sizeof(info);
  Error no_info(tessera_jit_device_get_info(0, &info));
  EXPECT_EQ(no_info.code(), TESSERA_JIT_UNAVAILABLE);
  EXPECT_THAT(no_info.message(), HasSubstr("libcuda.so.1"));

  tessera_jit_context_options_t options;
  tessera_jit_context_options_init(&options);
  options.cache_dir = "";  // memory only
  tessera_jit_context_t* context = nullptr;
  ASSERT_OK(tessera_jit_context_create(&options, &context));  // defaults to host without a GPU
  void* pointer = nullptr;
  Error alloc(tessera_jit_buffer_alloc(context, 64, &pointer));
  EXPECT_EQ(alloc.code(), TESSERA_JIT_UNAVAILABLE);

  // An nvptx module still compiles here; invoking it says the GPU is unavailable.
  tessera_jit_compile_options_t compile;
  tessera_jit_compile_options_init(&compile);
  compile.target = "nvptx";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context, kSource, sizeof(kSource) - 1, &compile, &module));
  const char* ptx = nullptr;
  size_t size = 0;
  ASSERT_OK(tessera_jit_module_get_text(module, TESSERA_JIT_TEXT_PTX, &ptx, &size));
  EXPECT_THAT(std::string(ptx, size), HasSubstr(".entry saxpy_map_0"));
  tessera_jit_function_t* saxpy = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "saxpy", 5, &saxpy));
  Tensor x({4}), y({4}), out({4});
  for (Tensor* t : {&x, &y, &out}) t->view.device = {kDLCUDA, 0};
  tessera_jit_arg_t args[] = {Float(1.0), x.arg(), y.arg(), out.arg()};
  Error ran(tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr));
  EXPECT_EQ(ran.code(), TESSERA_JIT_UNAVAILABLE);
  EXPECT_THAT(ran.message(), HasSubstr("@saxpy runs on the GPU, which is not available"));
  EXPECT_EQ(tessera::testing::Text(module, TESSERA_JIT_TEXT_CUBIN).substr(0, 4),
            "\x7f"
            "ELF");
  const std::string linked_ptx = tessera::testing::Text(module, TESSERA_JIT_TEXT_PTX);
  tessera_jit_module_destroy(module);

  // PTX only: the same PTX, no cubin (the driver compiles the PTX at load).
  compile.flags = TESSERA_JIT_PTX_ONLY;
  ASSERT_OK(tessera_jit_compile(context, kSource, sizeof(kSource) - 1, &compile, &module));
  EXPECT_EQ(tessera::testing::Text(module, TESSERA_JIT_TEXT_PTX), linked_ptx);
  const char* cubin = nullptr;
  Error no_cubin(tessera_jit_module_get_text(module, TESSERA_JIT_TEXT_CUBIN, &cubin, &size));
  EXPECT_EQ(no_cubin.code(), TESSERA_JIT_NOT_FOUND);
  EXPECT_THAT(no_cubin.message(), HasSubstr("compiled to PTX only (TESSERA_JIT_PTX_ONLY)"));
  ASSERT_OK(tessera_jit_module_get_function(module, "saxpy", 5, &saxpy));
  Error ran_ptx(tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr));
  EXPECT_EQ(ran_ptx.code(), TESSERA_JIT_UNAVAILABLE);
  tessera_jit_module_destroy(module);

  // Two kernels are two images, compiled in parallel; TEXT_CUBIN links them into one cubin.
  constexpr char kTwoKernels[] = R"mlir(
func.func @two(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %z: memref<?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  tile.reduce sum %y -> %z axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}
)mlir";
  compile.flags = 0;
  ASSERT_OK(tessera_jit_compile(context, kTwoKernels, sizeof(kTwoKernels) - 1, &compile, &module));
  const std::string both = tessera::testing::Text(module, TESSERA_JIT_TEXT_CUBIN);
  EXPECT_EQ(both.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_THAT(both, HasSubstr("two_softmax_0"));
  EXPECT_THAT(both, HasSubstr("two_reduce_1"));
  EXPECT_EQ(tessera::testing::Text(module, TESSERA_JIT_TEXT_CUBIN), both);  // linked once
  const std::string two_ptx = tessera::testing::Text(module, TESSERA_JIT_TEXT_PTX);
  EXPECT_THAT(two_ptx, HasSubstr("// gpu.module @tessera_kernels_two_softmax_0"));
  EXPECT_THAT(two_ptx, HasSubstr("// gpu.module @tessera_kernels_two_reduce_1"));
  tessera_jit_module_destroy(module);

  // On the host target the flag changes nothing.
  compile.flags = TESSERA_JIT_PTX_ONLY;
  compile.target = "host";
  ASSERT_OK(tessera_jit_compile(context, kSource, sizeof(kSource) - 1, &compile, &module));
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
}

}  // namespace

namespace {

// Output structs from older callers: the library writes only the fields that fit.
TEST_F(CapiTest, OutputStructsOfOlderVersionsGetOnlyTheirFields) {
  // A 0.2 caller's cache stats end with last_miss_reason: the bytes after it are the caller's.
  struct {
    tessera_jit_cache_stats_t stats;
    unsigned char guard[64];
  } old_stats;
  std::memset(&old_stats, 0xAB, sizeof(old_stats));
  old_stats.stats.struct_size =
      TESSERA_JIT_STRUCT_SIZE(tessera_jit_cache_stats_t, last_miss_reason);
  ASSERT_OK(tessera_jit_context_get_cache_stats(context_, &old_stats.stats));
  EXPECT_EQ(old_stats.stats.compiles, 1u);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&old_stats.stats);
  for (size_t i = old_stats.stats.struct_size; i < sizeof(old_stats); ++i) {
    ASSERT_EQ(bytes[i], 0xAB) << "byte " << i << " past the caller's struct was written";
  }
  // A 0.1 caller's argument info ends with `type`.
  struct {
    tessera_jit_arg_info_t info;
    unsigned char guard[16];
  } old_info;
  std::memset(&old_info, 0xCD, sizeof(old_info));
  old_info.info.struct_size = TESSERA_JIT_STRUCT_SIZE(tessera_jit_arg_info_t, type);
  ASSERT_OK(tessera_jit_function_get_arg_info(Function("saxpy"), 0, 1, &old_info.info));
  EXPECT_STREQ(old_info.info.type, "memref<?xf32>");
  const auto* info_bytes = reinterpret_cast<const unsigned char*>(&old_info.info);
  for (size_t i = old_info.info.struct_size; i < sizeof(old_info); ++i) {
    ASSERT_EQ(info_bytes[i], 0xCD) << "byte " << i << " past the caller's struct was written";
  }
  // The current size gets everything.
  tessera_jit_cache_stats_t stats = Stats(context_);
  EXPECT_EQ(stats.disk_read_only, 0);
  EXPECT_EQ(stats.disk_lock_timeouts, 0u);
  EXPECT_EQ(stats.remote_enabled, 0);
  EXPECT_EQ(TESSERA_JIT_CACHE_STATS_STRUCT_SIZE,
            offsetof(tessera_jit_cache_stats_t, remote_latency_p99_us) + sizeof(double));
  // A 0.5 caller's stats end with disk_lock_failures: no remote field is written.
  struct {
    tessera_jit_cache_stats_t stats;
    unsigned char guard[8];
  } stats_05;
  std::memset(&stats_05, 0xEF, sizeof(stats_05));
  stats_05.stats.struct_size =
      TESSERA_JIT_STRUCT_SIZE(tessera_jit_cache_stats_t, disk_lock_failures);
  ASSERT_OK(tessera_jit_context_get_cache_stats(context_, &stats_05.stats));
  const auto* bytes_05 = reinterpret_cast<const unsigned char*>(&stats_05.stats);
  for (size_t i = stats_05.stats.struct_size; i < sizeof(stats_05); ++i) {
    ASSERT_EQ(bytes_05[i], 0xEF) << "byte " << i << " past the caller's struct was written";
  }
}

// API 0.8: a remote tier shared by contexts with separate disk caches ("machines").
TEST_F(CapiTest, ContextsWithSeparateDisksShareTheRemoteTier) {
  tessera::testing::RedisServer server;
  ASSERT_TRUE(server.running());
  const std::string url = server.Url();
  auto make = [&](const std::string& dir) {
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.default_target = "host";
    options.cache_dir = dir.c_str();
    options.remote_cache = url.c_str();
    tessera_jit_context_t* context = nullptr;
    EXPECT_EQ(Error(tessera_jit_context_create(&options, &context)).code(), TESSERA_JIT_OK);
    return context;
  };
  const std::string first_dir = cache_dir_ + "-first", second_dir = cache_dir_ + "-second";
  tessera_jit_context_t* first = make(first_dir);
  tessera_jit_context_t* second = make(second_dir);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  tessera_jit_module_t* a = nullptr;
  tessera_jit_module_t* b = nullptr;
  ASSERT_OK(tessera_jit_compile(first, kSource, sizeof(kSource) - 1, nullptr, &a));
  ASSERT_OK(tessera_jit_compile(second, kSource, sizeof(kSource) - 1, nullptr, &b));
  const tessera_jit_cache_stats_t one = Stats(first), two = Stats(second);
  EXPECT_EQ(one.remote_enabled, 1);
  EXPECT_EQ(one.compiles, 1u);
  EXPECT_EQ(one.remote_stores, 1u);
  EXPECT_EQ(one.remote_misses, 1u);
  EXPECT_EQ(two.compiles, 0u);
  EXPECT_EQ(two.remote_hits, 1u);
  EXPECT_EQ(two.disk_entries, 1u);  // the hit filled the local disk
  EXPECT_GT(two.remote_latency_p50_us, 0);
  // The module from the server runs like the compiled one.
  tessera_jit_function_t* saxpy = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(b, "saxpy", 5, &saxpy));
  Tensor x({3}, 2.0f), y({3}, 1.0f), out({3});
  tessera_jit_arg_t args[] = {Float(3.0), x.arg(), y.arg(), out.arg()};
  ASSERT_OK(tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr));
  EXPECT_EQ(out.data[1], 7.0f);
  tessera_jit_module_destroy(a);
  tessera_jit_module_destroy(b);
  tessera_jit_context_destroy(first);
  tessera_jit_context_destroy(second);
  // A malformed URL is the caller's error, named; a server that is not there is not.
  for (const char* bad : {"http://127.0.0.1:1", "redis://127.0.0.1:99999", "redis://h:1?x=1"}) {
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.cache_dir = "";
    options.remote_cache = bad;
    tessera_jit_context_t* context = nullptr;
    Error error(tessera_jit_context_create(&options, &context));
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT) << bad;
    EXPECT_THAT(error.message(), HasSubstr("remote_cache")) << bad;
  }
  server.Kill();
  ::testing::internal::CaptureStderr();
  tessera_jit_context_t* offline = make(cache_dir_ + "-offline");
  ASSERT_NE(offline, nullptr);
  tessera_jit_module_t* c = nullptr;
  ASSERT_OK(tessera_jit_compile(offline, kSource, sizeof(kSource) - 1, nullptr, &c));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("compiling and caching locally"));
  const tessera_jit_cache_stats_t three = Stats(offline);
  EXPECT_EQ(three.compiles, 1u);
  EXPECT_EQ(three.remote_misses_unavailable, 1u);
  EXPECT_GE(three.remote_errors, 1u);
  tessera_jit_module_destroy(c);
  tessera_jit_context_destroy(offline);
}

// A prebuilt cache mounted read-only (here: opened read-only) serves hits and writes nothing.
TEST_F(CapiTest, AReadOnlyCacheServesHits) {
  tessera_jit_context_options_t options;
  tessera_jit_context_options_init(&options);
  options.default_target = "host";
  options.cache_dir = cache_dir_.c_str();
  options.cache_read_only = 1;
  tessera_jit_context_t* reader = nullptr;
  ASSERT_OK(tessera_jit_context_create(&options, &reader));
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(reader, kSource, sizeof(kSource) - 1, nullptr, &module));
  constexpr char kOther[] = "func.func @nothing() {\n  return\n}\n";
  tessera_jit_module_t* other = nullptr;
  ASSERT_OK(tessera_jit_compile(reader, kOther, sizeof(kOther) - 1, nullptr, &other));
  tessera_jit_cache_stats_t stats = Stats(reader);
  EXPECT_EQ(stats.disk_hits, 1u);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.disk_read_only, 1);
  EXPECT_EQ(stats.disk_entries, 1u);  // the new module was not stored
  tessera_jit_module_destroy(other);
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(reader);
  options.cache_lock_timeout_ms = -1;
  Error negative(tessera_jit_context_create(&options, &reader));
  EXPECT_EQ(negative.code(), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(negative.message(), HasSubstr("cache_lock_timeout_ms"));
}

// num_threads (API 0.7): each context runs host code on its own pool; the result is bitwise
// the same for every size, and sizes outside [1, 1024] are refused.
TEST(CapiThreadsTest, ContextThreadCountNeverChangesAResult) {
  constexpr char kSource[] =
      "func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {\n"
      "  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>\n  return\n}\n";
  std::vector<std::vector<float>> results;
  for (int32_t threads : {1, 2, 5}) {
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.default_target = "host";
    options.cache_dir = "";
    options.num_threads = threads;
    tessera_jit_context_t* context = nullptr;
    ASSERT_OK(tessera_jit_context_create(&options, &context));
    tessera_jit_module_t* module = nullptr;
    ASSERT_OK(tessera_jit_compile(context, kSource, sizeof(kSource) - 1, nullptr, &module));
    tessera_jit_function_t* softmax = nullptr;
    ASSERT_OK(tessera_jit_module_get_function(module, "softmax", 7, &softmax));
    Tensor x({300, 777}), y({300, 777});
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<float>((i * 37) % 101) / 7;
    tessera_jit_arg_t args[] = {x.arg(), y.arg()};
    ASSERT_OK(tessera_jit_function_invoke(softmax, args, 2, nullptr, nullptr));
    results.push_back(y.data);
    tessera_jit_module_destroy(module);
    tessera_jit_context_destroy(context);
  }
  for (const auto& result : results) {
    ASSERT_EQ(std::memcmp(result.data(), results[0].data(), sizeof(float) * result.size()), 0);
  }
  for (int32_t bad : {-1, 1025}) {
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.cache_dir = "";
    options.num_threads = bad;
    tessera_jit_context_t* context = nullptr;
    Error error(tessera_jit_context_create(&options, &context));
    EXPECT_EQ(error.code(), TESSERA_JIT_INVALID_ARGUMENT) << bad;
    EXPECT_THAT(error.message(), HasSubstr("num_threads")) << bad;
    EXPECT_EQ(context, nullptr);
  }
}

// log_level governs the library's own lines: a disk tier that cannot be made warns at
// WARNING and is silent at ERROR.
TEST(CapiLogTest, LogLevelGovernsTheLibrarysLines) {
  const std::string not_a_directory = CacheDir("log_file");
  ASSERT_EQ(std::system(("mkdir -p \"$(dirname '" + not_a_directory + "')\" && touch '" +
                         not_a_directory + "'")
                            .c_str()),
            0);
  const std::string below_a_file = not_a_directory + "/cache";
  for (tessera_jit_log_level_t level : {TESSERA_JIT_LOG_WARNING, TESSERA_JIT_LOG_ERROR}) {
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.default_target = "host";
    options.cache_dir = below_a_file.c_str();
    options.log_level = level;
    ::testing::internal::CaptureStderr();
    tessera_jit_context_t* context = nullptr;
    Error error(tessera_jit_context_create(&options, &context));
    const std::string written = ::testing::internal::GetCapturedStderr();
    ASSERT_EQ(error.code(), TESSERA_JIT_OK) << error.message();
    if (level == TESSERA_JIT_LOG_WARNING) {
      EXPECT_THAT(written, HasSubstr("tessera-jit: warning: compile cache on disk is off"));
    } else {
      EXPECT_EQ(written, "");
    }
    tessera_jit_context_destroy(context);
  }
}

}  // namespace
