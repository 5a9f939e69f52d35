// Every error code that capi/include/tessera_jit.h documents, checked against the library.
// Over 600 lines: one case per documented error code, in the header's order, so the two can be read
// side by side.
//
// The header is read top to bottom; each documented (function, condition, code) triple is a
// case below that provokes exactly that condition and asserts exactly that code, and where the
// header or docs/capi.md promise it, what the message names or locates. docs/capi.md's codes for
// the same functions are cases too. A condition that needs a GPU (there is no libcuda.so.1
// here) is tested for what happens without one where that is documented (UNAVAILABLE);
// the others are listed as GPU-only where they would be tested.
//
// GPU-only (tests/gpu covers the device; nothing here can provoke them):
//  - tessera_jit_context_register_kernel_image, arch NULL on a device whose arch the compiler
//    does not support: FAILED_PRECONDITION (needs such a device).
//  - tessera_jit_compile_options_t.arch NULL on such a device: FAILED_PRECONDITION.
//  - tessera_jit_device_get_info with a bad ordinal: INVALID_ARGUMENT (needs a driver; without
//    one the call is UNAVAILABLE, tested below).
//  - tessera_jit_event_elapsed_time: FAILED_PRECONDITION for an event never recorded or made
//    with TESSERA_JIT_EVENT_DISABLE_TIMING, INVALID_ARGUMENT for events of two devices (an
//    event can only be made with a GPU; two devices for the latter).
//  - tessera_jit_stream_wait_event, _event_record, _event_query, _event_synchronize:
//    UNAVAILABLE needs an event, which needs a GPU (their NULL checks are tested).
// Not provokable deterministically in a test: RESOURCE_EXHAUSTED for a compile that runs out
// of memory (docs/capi.md; service/compile_service.cc turns std::bad_alloc into it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera_jit.h"
#include "tests/capi/capi_test_util.h"

namespace {

using ::tessera::testing::CompiledModuleTest;
using ::tessera::testing::Error;
using ::tessera::testing::Float;
using ::tessera::testing::Int;
using ::tessera::testing::MemoryOnlyHostContext;
using ::tessera::testing::Tensor;
using ::testing::HasSubstr;

std::string CodeName(tessera_jit_error_code_t code) {
  switch (code) {
    case TESSERA_JIT_OK:
      return "OK";
    case TESSERA_JIT_CANCELLED:
      return "CANCELLED";
    case TESSERA_JIT_UNKNOWN:
      return "UNKNOWN";
    case TESSERA_JIT_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case TESSERA_JIT_DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case TESSERA_JIT_NOT_FOUND:
      return "NOT_FOUND";
    case TESSERA_JIT_ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case TESSERA_JIT_PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case TESSERA_JIT_RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case TESSERA_JIT_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case TESSERA_JIT_ABORTED:
      return "ABORTED";
    case TESSERA_JIT_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case TESSERA_JIT_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case TESSERA_JIT_INTERNAL:
      return "INTERNAL";
    case TESSERA_JIT_UNAVAILABLE:
      return "UNAVAILABLE";
    case TESSERA_JIT_DATA_LOSS:
      return "DATA_LOSS";
    case TESSERA_JIT_UNAUTHENTICATED:
      return "UNAUTHENTICATED";
  }
  return "code " + std::to_string(static_cast<int>(code));
}

/// One documented triple: `call` provokes `condition` of `function`, which must return `code`
/// with every string of `message` in its message.
struct Case {
  std::string function;
  std::string condition;
  tessera_jit_error_code_t code;
  std::function<tessera_jit_error_t*()> call;
  std::vector<std::string> message = {};
};

void ExpectDocumentedCodes(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.function + ": " + c.condition);
    Error error(c.call());
    EXPECT_EQ(CodeName(error.code()), CodeName(c.code)) << error.message();
    for (const std::string& part : c.message) EXPECT_THAT(error.message(), HasSubstr(part));
  }
}

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

constexpr char kSource[] =
    R"mlir(func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}
func.func @rows(%x: memref<?x8xf32>, %y: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1 : memref<?x8xf32> -> memref<?xf32>
  return
}
func.func @pick(%b: i1, %n: i32) -> i32 {
  %z = arith.constant 0 : i32
  %r = arith.select %b, %n, %z : i32
  return %r : i32
}
func.func @gather(%x: memref<?xf32>, %i: index) -> f32 {
  %v = memref.load %x[%i] : memref<?xf32>
  return %v : f32
}
)mlir";

/// For nvptx compiles: an nvptx module's host code may not index memrefs (@gather could not).
constexpr char kDeviceSource[] =
    R"mlir(func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}
)mlir";

/// A host C-ABI kernel_call of `callee` (memref<4xf32> -> i32, as OpenBLAS's
/// openblas_get_num_threads) with `arch` and `accuracy`.
std::string KernelCall(const std::string& callee, const std::string& arch,
                       const std::string& accuracy = "reference_exact") {
  return "func.func @ask(%x: memref<4xf32>) -> i32 {\n"
         "  %r = tessera_nvidia.kernel_call %x {callee = \"" +
         callee + "\", arch = \"" + arch +
         "\",\n      binding = \"c_abi\", provenance = \"vendor_library\", accuracy = \"" +
         accuracy +
         "\",\n      determinism = \"deterministic\", signature = (memref<4xf32>) -> i32}"
         " : (memref<4xf32>) -> i32\n"
         "  return %r : i32\n}\n";
}

/// A host context (memory-only cache) with kSource compiled.
class DocumentedErrorsTest : public CompiledModuleTest {
 protected:
  DocumentedErrorsTest() : CompiledModuleTest(kSource) {}
  /// tessera_jit_compile of `source` with `edit` applied to default options; the module, if
  /// any, is destroyed.
  tessera_jit_error_t* Compile(
      const std::string& source, const std::function<void(tessera_jit_compile_options_t&)>& edit =
                                     [](tessera_jit_compile_options_t&) {}) {
    tessera_jit_compile_options_t options;
    tessera_jit_compile_options_init(&options);
    edit(options);
    tessera_jit_module_t* module = nullptr;
    tessera_jit_error_t* error =
        tessera_jit_compile(context_, source.data(), source.size(), &options, &module);
    tessera_jit_module_destroy(module);
    return error;
  }
};

/// tessera_jit_context_create with host, memory-only options edited by `edit`; the context,
/// if any, is destroyed.
tessera_jit_error_t* CreateContext(
    const std::function<void(tessera_jit_context_options_t&)>& edit) {
  tessera_jit_context_options_t options;
  tessera_jit_context_options_init(&options);
  options.default_target = "host";
  options.cache_dir = "";
  edit(options);
  tessera_jit_context_t* context = nullptr;
  tessera_jit_error_t* error = tessera_jit_context_create(&options, &context);
  tessera_jit_context_destroy(context);
  return error;
}

// --- Errors: "The code of `error` (NULL: TESSERA_JIT_OK)"; "the values equal abseil's status
// codes" (a NOT_FOUND from the library is 5, as absl::StatusCode::kNotFound). ---
TEST_F(DocumentedErrorsTest, ErrorAccessorsFollowTheHeader) {
  EXPECT_EQ(CodeName(tessera_jit_error_code(nullptr)), CodeName(TESSERA_JIT_OK));
  size_t size = 7;
  EXPECT_STREQ(tessera_jit_error_message(nullptr, &size), "");
  EXPECT_EQ(size, 0u);
  tessera_jit_error_destroy(nullptr);  // "NULL is allowed"
  tessera_jit_function_t* function = nullptr;
  Error missing(tessera_jit_module_get_function(module_, "nope", 4, &function));
  EXPECT_EQ(static_cast<int>(missing.code()), 5);
  const char* message = tessera_jit_error_message(missing.error, &size);
  EXPECT_EQ(std::string(message, size), missing.message());
  EXPECT_EQ(std::strlen(message), size);  // NUL-terminated
}

// --- Conventions: "Any size from the struct's first version on is accepted; smaller is
// INVALID_ARGUMENT" (docs/capi.md: naming the struct). Every function that takes a struct. ---
TEST_F(DocumentedErrorsTest, StructSizesFromTheFirstVersionOnAreAcceptedSmallerAreRefused) {
  tessera_jit_compile_options_t compile;
  tessera_jit_compile_options_init(&compile);
  tessera_jit_cache_stats_t stats;
  tessera_jit_device_info_t device;
  tessera_jit_matmul_provider_t provider;
  tessera_jit_matmul_provider_init(&provider);
  tessera_jit_decision_info_t decision;
  tessera_jit_arg_info_t arg;
  tessera_jit_module_t* module = nullptr;
  const size_t context_0_1 = TESSERA_JIT_STRUCT_SIZE(tessera_jit_context_options_t, log_level);
  const size_t compile_0_1 = TESSERA_JIT_STRUCT_SIZE(tessera_jit_compile_options_t, opt_level);
  const size_t stats_0_2 = TESSERA_JIT_STRUCT_SIZE(tessera_jit_cache_stats_t, last_miss_reason);
  const size_t arg_0_1 = TESSERA_JIT_STRUCT_SIZE(tessera_jit_arg_info_t, type);
  auto compile_with = [&](size_t size) {
    compile.struct_size = size;
    tessera_jit_error_t* error =
        tessera_jit_compile(context_, kSource, sizeof(kSource) - 1, &compile, &module);
    tessera_jit_module_destroy(module);
    module = nullptr;
    return error;
  };
  ExpectDocumentedCodes({
      {"tessera_jit_context_create", "options of API 0.1's size", TESSERA_JIT_OK,
       [&] { return CreateContext([&](auto& o) { o.struct_size = context_0_1; }); }},
      {"tessera_jit_context_create",
       "options smaller than API 0.1's",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return CreateContext([&](auto& o) { o.struct_size = context_0_1 - 1; }); },
       {"tessera_jit_context_options_t.struct_size"}},
      {"tessera_jit_context_get_cache_stats", "stats of API 0.2's size", TESSERA_JIT_OK,
       [&] {
         stats.struct_size = stats_0_2;
         return tessera_jit_context_get_cache_stats(context_, &stats);
       }},
      {"tessera_jit_context_get_cache_stats",
       "stats smaller than API 0.2's",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         stats.struct_size = stats_0_2 - 1;
         return tessera_jit_context_get_cache_stats(context_, &stats);
       },
       {"tessera_jit_cache_stats_t.struct_size"}},
      // Checked before the driver is looked for: INVALID_ARGUMENT with or without a GPU.
      {"tessera_jit_device_get_info",
       "info smaller than API 0.1's",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         device.struct_size = TESSERA_JIT_DEVICE_INFO_STRUCT_SIZE - 1;
         return tessera_jit_device_get_info(0, &device);
       },
       {"tessera_jit_device_info_t.struct_size"}},
      {"tessera_jit_context_declare_matmul_provider",
       "provider smaller than API 0.3's",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         provider.struct_size = TESSERA_JIT_MATMUL_PROVIDER_STRUCT_SIZE - 1;
         return tessera_jit_context_declare_matmul_provider(context_, &provider);
       },
       {"tessera_jit_matmul_provider_t.struct_size"}},
      {"tessera_jit_compile", "options of API 0.1's size", TESSERA_JIT_OK,
       [&] { return compile_with(compile_0_1); }},
      {"tessera_jit_compile",
       "options smaller than API 0.1's",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return compile_with(compile_0_1 - 1); },
       {"tessera_jit_compile_options_t.struct_size"}},
      {"tessera_jit_module_get_decision",
       "info smaller than API 0.11's",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         decision.struct_size = TESSERA_JIT_DECISION_INFO_STRUCT_SIZE - 1;
         return tessera_jit_module_get_decision(module_, 0, &decision);
       },
       {"tessera_jit_decision_info_t.struct_size"}},
      {"tessera_jit_function_get_arg_info", "info of API 0.1's size", TESSERA_JIT_OK,
       [&] {
         arg.struct_size = arg_0_1;
         return tessera_jit_function_get_arg_info(Function("saxpy"), 0, 1, &arg);
       }},
      {"tessera_jit_function_get_arg_info",
       "info smaller than API 0.1's",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         arg.struct_size = arg_0_1 - 1;
         return tessera_jit_function_get_arg_info(Function("saxpy"), 0, 1, &arg);
       },
       {"tessera_jit_arg_info_t.struct_size"}},
  });
}

// --- Conventions: "Every struct ... makes every int32 a valid enum value, so an unknown one is
// INVALID_ARGUMENT": each enum the library reads. ---
TEST_F(DocumentedErrorsTest, UnknownEnumValuesAreInvalidArguments) {
  const char* text = nullptr;
  size_t size = 0;
  Tensor x({4}), y({4}), out({4});
  tessera_jit_arg_t unknown_kind = x.arg();
  unknown_kind.kind = static_cast<tessera_jit_arg_kind_t>(99);
  tessera_jit_arg_t alpha_unknown_kind = Float(1);
  alpha_unknown_kind.kind = static_cast<tessera_jit_arg_kind_t>(99);
  char host[4] = {};
  ExpectDocumentedCodes({
      {"tessera_jit_context_register_library_with_pointers",
       "an unknown pointers value",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return tessera_jit_context_register_library_with_pointers(
             context_, "x", "libopenblas.so.0", static_cast<tessera_jit_pointer_space_t>(7));
       },
       {"unknown pointer space 7"}},
      {"tessera_jit_context_register_kernel_image",
       "an unknown format",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return tessera_jit_context_register_kernel_image(
             context_, "k", "x", 1, static_cast<tessera_jit_image_format_t>(1000), nullptr);
       },
       {"unknown image format 1000"}},
      {"tessera_jit_module_get_text",
       "an unknown kind",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return tessera_jit_module_get_text(module_, static_cast<tessera_jit_text_kind_t>(99),
                                            &text, &size);
       },
       {"unknown text kind 99"}},
      {"tessera_jit_function_invoke",
       "an unknown kind for a tensor",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         tessera_jit_arg_t args[] = {Float(1), unknown_kind, y.arg(), out.arg()};
         return tessera_jit_function_invoke(Function("saxpy"), args, 4, nullptr, nullptr);
       },
       {"argument #1 'x' of @saxpy (memref<?xf32>): expected a tensor"}},
      {"tessera_jit_function_invoke",
       "an unknown kind for a scalar",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         tessera_jit_arg_t args[] = {alpha_unknown_kind, x.arg(), y.arg(), out.arg()};
         return tessera_jit_function_invoke(Function("saxpy"), args, 4, nullptr, nullptr);
       },
       {"argument #0 'alpha' of @saxpy (f32): expected a float scalar"}},
      // Refused before the driver is looked for: the same with or without a GPU.
      {"tessera_jit_buffer_copy",
       "an unknown kind",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return tessera_jit_buffer_copy(context_, host, host, sizeof(host),
                                        static_cast<tessera_jit_copy_kind_t>(5));
       },
       {"unknown copy kind 5"}},
  });
}

// --- Context: tessera_jit_context_create (the options' documented codes) ---
TEST(DocumentedErrorsContextTest, ContextCreateRefusesBadOptionsNamingTheField) {
  const std::string missing_plan = TempPath("documented_errors_no_such_plan.json");
  const std::string damaged_plan = TempPath("documented_errors_damaged_plan.json");
  {
    std::ofstream(damaged_plan)
        << "{\"format\": \"tessera-jit-plan\", \"version\": 1, \"decisions\": [1]}";
  }
  const std::string directory_plan = TempPath("");
  ExpectDocumentedCodes({
      {"tessera_jit_context_create",
       "out_context NULL",
       TESSERA_JIT_INVALID_ARGUMENT,
       [] { return tessera_jit_context_create(nullptr, nullptr); },
       {"out_context is NULL"}},
      {"tessera_jit_context_create",
       "remote_cache: a malformed URL",
       TESSERA_JIT_INVALID_ARGUMENT,
       [] { return CreateContext([](auto& o) { o.remote_cache = "http://cache:6379"; }); },
       {"tessera_jit_context_options_t.remote_cache"}},
      // "NULL: $TESSERA_JIT_REMOTE_CACHE (ignored with a warning if it does not parse)".
      {"tessera_jit_context_create", "remote_cache NULL, $TESSERA_JIT_REMOTE_CACHE malformed",
       TESSERA_JIT_OK,
       [] {
         setenv("TESSERA_JIT_REMOTE_CACHE", "http://cache:6379", 1);
         tessera_jit_error_t* error = CreateContext([](auto& o) {
           o.remote_cache = nullptr;
           o.log_level = TESSERA_JIT_LOG_ERROR;  // the warning is not this test's output
         });
         unsetenv("TESSERA_JIT_REMOTE_CACHE");
         return error;
       }},
      {"tessera_jit_context_create",
       "plan_path: a missing plan file",
       TESSERA_JIT_NOT_FOUND,
       [&] { return CreateContext([&](auto& o) { o.plan_path = missing_plan.c_str(); }); },
       {"tessera_jit_context_options_t.plan_path", missing_plan}},
      {"tessera_jit_context_create",
       "plan_path: a malformed plan file (naming file and entry)",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return CreateContext([&](auto& o) { o.plan_path = damaged_plan.c_str(); }); },
       {"tessera_jit_context_options_t.plan_path", damaged_plan, "decision 1 is not an object"}},
      {"tessera_jit_context_create",
       "plan_path: not a regular file (a directory)",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return CreateContext([&](auto& o) { o.plan_path = directory_plan.c_str(); }); },
       {"is not a regular file"}},
      {"tessera_jit_context_create",
       "plan_strict without plan_path",
       TESSERA_JIT_INVALID_ARGUMENT,
       [] { return CreateContext([](auto& o) { o.plan_strict = 1; }); },
       {"plan_strict is set without a plan_path"}},
      {"tessera_jit_context_create",
       "arbitration_budget_ms below 1",
       TESSERA_JIT_INVALID_ARGUMENT,
       [] { return CreateContext([](auto& o) { o.arbitration_budget_ms = -1; }); },
       {"tessera_jit_context_options_t.arbitration_budget_ms"}},
      {"tessera_jit_context_create",
       "arbitration_budget_ms above 3600000",
       TESSERA_JIT_INVALID_ARGUMENT,
       [] { return CreateContext([](auto& o) { o.arbitration_budget_ms = 3600001; }); },
       {"tessera_jit_context_options_t.arbitration_budget_ms"}},
      {"tessera_jit_context_create",
       "num_threads above 1024",
       TESSERA_JIT_INVALID_ARGUMENT,
       [] { return CreateContext([](auto& o) { o.num_threads = 1025; }); },
       {"tessera_jit_context_options_t.num_threads"}},
      {"tessera_jit_context_create",
       "num_threads negative",
       TESSERA_JIT_INVALID_ARGUMENT,
       [] { return CreateContext([](auto& o) { o.num_threads = -1; }); },
       {"tessera_jit_context_options_t.num_threads"}},
      {"tessera_jit_context_create",
       "cache_lock_timeout_ms negative",
       TESSERA_JIT_INVALID_ARGUMENT,
       [] { return CreateContext([](auto& o) { o.cache_lock_timeout_ms = -1; }); },
       {"tessera_jit_context_options_t.cache_lock_timeout_ms"}},
      {"tessera_jit_context_create",
       "default_target neither host nor nvptx",
       TESSERA_JIT_INVALID_ARGUMENT,
       [] { return CreateContext([](auto& o) { o.default_target = "gpu"; }); },
       {"tessera_jit_context_options_t.default_target"}},
  });
}

// --- Context: tessera_jit_context_write_plan ---
TEST_F(DocumentedErrorsTest, WritePlanRefusesBadPathsAndSaysUnavailableWhenItCannotWrite) {
  const std::string unwritable = "/nonexistent/dir/plan.json";
  ExpectDocumentedCodes({
      {"tessera_jit_context_write_plan",
       "a NULL path",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_context_write_plan(context_, nullptr, 4); },
       {"path is NULL or empty"}},
      {"tessera_jit_context_write_plan",
       "an empty path",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_context_write_plan(context_, "p.json", 0); },
       {"path is NULL or empty"}},
      {"tessera_jit_context_write_plan",
       "a path with a NUL byte",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_context_write_plan(context_, "a\0b", 3); },
       {"path has a NUL byte"}},
      {"tessera_jit_context_write_plan",
       "a path that cannot be written",
       TESSERA_JIT_UNAVAILABLE,
       [&] {
         return tessera_jit_context_write_plan(context_, unwritable.data(), unwritable.size());
       },
       {"cannot write the plan file '/nonexistent/dir/plan.json'"}},
  });
}

// --- Delegates: register_library, register_library_with_pointers, register_kernel_image,
// declare_matmul_provider ---
TEST_F(DocumentedErrorsTest, DelegateRegistrationsReturnTheirDocumentedCodes) {
  const char bad_source[] = "__global__ void broken( {";
  const char good_source[] = "extern \"C\" __global__ void twice(float* x) { x[0] *= 2; }";
  ExpectDocumentedCodes({
      {"tessera_jit_context_register_library",
       "a library that cannot be loaded",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_context_register_library(context_, "x", "/no/such/lib.so"); },
       {"cannot load library 'x' from /no/such/lib.so"}},
      {"tessera_jit_context_register_library_with_pointers",
       "a library that cannot be loaded",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return tessera_jit_context_register_library_with_pointers(context_, "x", "/no/such/lib.so",
                                                                   TESSERA_JIT_POINTERS_HOST);
       },
       {"cannot load library 'x' from /no/such/lib.so"}},
      {"tessera_jit_context_register_kernel_image",
       "CUDA source that does not compile",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return tessera_jit_context_register_kernel_image(context_, "bad", bad_source,
                                                          sizeof(bad_source) - 1,
                                                          TESSERA_JIT_IMAGE_CUDA_SOURCE, "sm_80");
       },
       // NVRTC's log: the source file it named and the error.
       {"NVRTC could not compile kernel source 'bad' for sm_80", "bad.cu", "error"}},
      {"tessera_jit_context_register_kernel_image",
       "CUDA source for an unsupported arch",
       TESSERA_JIT_UNIMPLEMENTED,
       [&] {
         return tessera_jit_context_register_kernel_image(context_, "old", good_source,
                                                          sizeof(good_source) - 1,
                                                          TESSERA_JIT_IMAGE_CUDA_SOURCE, "sm_70");
       },
       {"unsupported arch 'sm_70'"}},
  });
  if (!tessera_jit_is_gpu_available()) {
    // "arch NULL = the context's device, else sm_90": without a device, a compile for sm_90.
    ASSERT_OK(tessera_jit_context_register_kernel_image(context_, "mine", good_source,
                                                        sizeof(good_source) - 1,
                                                        TESSERA_JIT_IMAGE_CUDA_SOURCE, nullptr));
  }
}

TEST_F(DocumentedErrorsTest, MatmulProviderContractsAreCheckedFieldByField) {
  ASSERT_OK(tessera_jit_context_register_default_libraries(context_, "host"));  // openblas
  // A provider built from the valid one below by `edit`.
  auto declare = [this](const std::function<void(tessera_jit_matmul_provider_t&)>& edit) {
    return [this, edit] {
      tessera_jit_matmul_provider_t provider;
      tessera_jit_matmul_provider_init(&provider);
      provider.name = "mine";
      provider.library = "openblas";
      provider.callee = "cblas_sgemm";
      provider.provenance = "vendor_library";
      edit(provider);
      return tessera_jit_context_declare_matmul_provider(context_, &provider);
    };
  };
  using P = tessera_jit_matmul_provider_t;
  const char* kFunction = "tessera_jit_context_declare_matmul_provider";
  ExpectDocumentedCodes({
      {kFunction,
       "a NULL provider",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_context_declare_matmul_provider(context_, nullptr); },
       {"provider is NULL"}},
      // "INVALID_ARGUMENT naming the field for a malformed contract"
      {kFunction,
       "no name",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.name = ""; }),
       {"needs a non-empty name"}},
      {kFunction,
       "name 'compiled'",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.name = "compiled"; }),
       {"'compiled'"}},
      {kFunction,
       "name 'openblas' (built in)",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.name = "openblas"; }),
       {"matmul provider 'openblas' is built in"}},
      {kFunction,
       "name 'cublas' (built in)",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.name = "cublas"; }),
       {"matmul provider 'cublas' is built in"}},
      {kFunction,
       "no library",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.library = nullptr; }),
       {"needs the registered library"}},
      {kFunction,
       "no callee",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.callee = ""; }),
       {"needs a non-empty callee"}},
      {kFunction,
       "target neither host nor nvptx",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.target = "gpu"; }),
       {"tessera_jit_matmul_provider_t.target"}},
      {kFunction,
       "arch that does not fit the target",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.arch = "sm_80+"; }),
       {"arch 'sm_80+' does not fit the host target"}},
      {kFunction,
       "arch empty",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.arch = ""; }),
       {"`arch`"}},
      {kFunction,
       "provenance unknown",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.provenance = "magic"; }),
       {"provenance"}},
      {kFunction,
       "covers unknown",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.covers = "everything"; }),
       {"covers"}},
      {kFunction,
       "determinism unknown",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.determinism = "mostly"; }),
       {"determinism"}},
      {kFunction,
       "accuracy unknown",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.accuracy = "close"; }),
       {"accuracy"}},
      {kFunction,
       "tolerance_bounded without a tolerance",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.accuracy = "tolerance_bounded"; }),
       {"accuracy=tolerance_bounded requires `tolerance` and/or `tolerance_rel`"}},
      {kFunction,
       "reference_exact with a tolerance",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) { p.tolerance = 1e-3; }),
       {"accuracy=reference_exact must not carry a tolerance"}},
      {kFunction,
       "a negative tolerance_rel",
       TESSERA_JIT_INVALID_ARGUMENT,
       declare([](P& p) {
         p.accuracy = "tolerance_bounded";
         p.tolerance_rel = -1;
       }),
       {"`tolerance_rel` must be finite and greater than zero"}},
      // A name that is not registered is NOT_FOUND, as an unknown entry is for
      // tessera_jit_module_get_function.
      {kFunction,
       "a library that is not registered",
       TESSERA_JIT_NOT_FOUND,
       declare([](P& p) { p.library = "nolib"; }),
       {"library 'nolib' is not registered"}},
      {kFunction,
       "a callee the library does not define",
       TESSERA_JIT_NOT_FOUND,
       declare([](P& p) { p.callee = "no_such_sgemm"; }),
       {"'no_such_sgemm' is not defined by library 'openblas'"}},
  });
  // The valid provider is accepted (every case above differs from it in one field).
  ASSERT_OK(declare([](P&) {})());
}

// Pointer spaces: "a kernel_call into the other kind fails the compile (FAILED_PRECONDITION)";
// docs/capi.md: "a delegate that cannot serve the compile's target or arch →
// FAILED_PRECONDITION".
TEST(DocumentedErrorsDelegateTest, DelegatesThatCannotServeTheCompileFailItsPrecondition) {
  tessera_jit_context_t* context = MemoryOnlyHostContext();
  ASSERT_NE(context, nullptr);
  // OpenBLAS registered as a device-pointer library: a host compile cannot call it.
  ASSERT_OK(tessera_jit_context_register_library_with_pointers(
      context, "openblas_device", "libopenblas.so.0", TESSERA_JIT_POINTERS_DEVICE));
  tessera_jit_context_t* host_library = MemoryOnlyHostContext();
  ASSERT_NE(host_library, nullptr);
  ASSERT_OK(tessera_jit_context_register_default_libraries(host_library, "host"));
  auto compile = [](tessera_jit_context_t* in, const std::string& source, const char* target,
                    const char* arch) {
    tessera_jit_compile_options_t options;
    tessera_jit_compile_options_init(&options);
    options.target = target;
    options.arch = arch;
    tessera_jit_module_t* module = nullptr;
    tessera_jit_error_t* error =
        tessera_jit_compile(in, source.data(), source.size(), &options, &module);
    tessera_jit_module_destroy(module);
    return error;
  };
  ExpectDocumentedCodes({
      {"tessera_jit_compile",
       "host compile calling a device-pointer library",
       TESSERA_JIT_FAILED_PRECONDITION,
       [&] {
         return compile(context, KernelCall("openblas_get_num_threads", "host"), "host", nullptr);
       },
       {"<source>:2:8: error:", "which takes device pointers: it cannot serve a host compile"}},
      {"tessera_jit_compile",
       "nvptx compile calling a host-pointer library",
       TESSERA_JIT_FAILED_PRECONDITION,
       [&] {
         return compile(host_library, KernelCall("openblas_get_num_threads", "sm_75+"), "nvptx",
                        "sm_90");
       },
       {"<source>:2:8: error:", "which takes host pointers: it cannot serve an nvptx compile"}},
      {"tessera_jit_compile",
       "a delegate whose arch envelope excludes the host target",
       TESSERA_JIT_FAILED_PRECONDITION,
       [&] {
         return compile(host_library, KernelCall("openblas_get_num_threads", "sm_80+"), "host",
                        nullptr);
       },
       {"<source>:2:8: error:", "which does not include this compile's host target"}},
      {"tessera_jit_compile",
       "a delegate whose arch envelope excludes the compile's arch",
       TESSERA_JIT_FAILED_PRECONDITION,
       [&] {
         return compile(host_library, KernelCall("openblas_get_num_threads", "sm_90+"), "nvptx",
                        "sm_80");
       },
       {"<source>:2:8: error:", "which does not include this compile's nvptx sm_80"}},
  });
  tessera_jit_context_destroy(host_library);
  tessera_jit_context_destroy(context);
}

// --- Devices: tessera_jit_device_get_info ---
TEST(DocumentedErrorsDeviceTest, DeviceInfoIsUnavailableWithoutADriver) {
  if (tessera_jit_is_gpu_available()) {
    GTEST_SKIP() << "a GPU is present: a bad ordinal is INVALID_ARGUMENT there (tests/gpu)";
  }
  // "Without a driver or device, count is 0 and is_gpu_available false (not an error)."
  EXPECT_EQ(tessera_jit_device_count(), 0);
  tessera_jit_device_info_t info;
  info.struct_size = TESSERA_JIT_DEVICE_INFO_STRUCT_SIZE;
  ExpectDocumentedCodes({
      {"tessera_jit_device_get_info",
       "no driver",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_device_get_info(0, &info); },
       {"libcuda.so.1"}},
      // Without a driver there is no ordinal to check: UNAVAILABLE comes first.
      {"tessera_jit_device_get_info",
       "no driver, and a bad ordinal",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_device_get_info(-1, &info); },
       {"libcuda.so.1"}},
  });
}

// --- Compile: tessera_jit_compile (the header's codes and docs/capi.md's "every code") ---
TEST_F(DocumentedErrorsTest, CompileErrorsHaveTheirDocumentedCodesAndLocations) {
  std::string nested;
  for (int i = 0; i < 300; ++i) nested += "module {\n";
  for (int i = 0; i < 300; ++i) nested += "}\n";
  using O = tessera_jit_compile_options_t;
  ExpectDocumentedCodes({
      {"tessera_jit_compile",
       "bad IR",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return Compile(
             "func.func @f(%a: memref<4x8xf32>, %b: memref<4xf32>) {\n"
             "  tile.reduce sum %a -> %b axis = 3 : memref<4x8xf32> -> memref<4xf32>\n"
             "  return\n}\n");
       },
       {"<source>:2:3: error: 'tile.reduce' op expected axis in [0, 2)"}},
      {"tessera_jit_compile",
       "disallowed IR",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return Compile(
             "func.func @asm(%x: i64) -> i64 {\n"
             "  %r = llvm.inline_asm \"mov $0, $1\", \"=r,r\" %x : (i64) -> i64\n"
             "  return %r : i64\n}\n");
       },
       {"<source>:2:8: error: 'llvm.inline_asm' is not allowed in Tessera IR"}},
      {"tessera_jit_compile",
       "IR nested deeper than 256 levels",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return Compile(nested); },
       {"<source>:257:8: error: the IR nests deeper than 256 levels"}},
      {"tessera_jit_compile",
       "a broken contract",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return Compile(KernelCall("openblas_get_num_threads", "host", "tolerance_bounded")); },
       {"<source>:2:8: error:",
        "accuracy=tolerance_bounded requires `tolerance` and/or `tolerance_rel`"}},
      {"tessera_jit_compile",
       "a failed lowering (a callee no registered library defines)",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return Compile(KernelCall("no_such_function", "host")); },
       {"<source>:2:8: error:", "'no_such_function' not found in registered libraries"}},
      {"tessera_jit_compile",
       "target neither host nor nvptx",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return Compile(kSource, [](O& o) { o.target = "gpu"; }); },
       {"tessera_jit_compile_options_t.target"}},
      {"tessera_jit_compile",
       "an unsupported arch",
       TESSERA_JIT_UNIMPLEMENTED,
       [&] {
         return Compile(kSource, [](O& o) {
           o.target = "nvptx";
           o.arch = "sm_70";
         });
       },
       {"unsupported arch 'sm_70'"}},
      {"tessera_jit_compile",
       "unknown flag bits",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return Compile(kSource, [](O& o) { o.flags = 0x80u; }); },
       {"tessera_jit_compile_options_t.flags: unknown flags 0x80"}},
      {"tessera_jit_compile",
       "TESSERA_JIT_BACKGROUND_DETERMINISTIC alone",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return Compile(kSource, [](O& o) { o.flags = TESSERA_JIT_BACKGROUND_DETERMINISTIC; });
       },
       {"TESSERA_JIT_BACKGROUND_DETERMINISTIC needs TESSERA_JIT_BACKGROUND_DECISIONS"}},
      {"tessera_jit_compile",
       "arbitration_budget_ms below 1",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return Compile(kSource, [](O& o) { o.arbitration_budget_ms = -5; }); },
       {"tessera_jit_compile_options_t.arbitration_budget_ms"}},
      {"tessera_jit_compile",
       "arbitration_budget_ms above 3600000",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return Compile(kSource, [](O& o) { o.arbitration_budget_ms = 3600001; }); },
       {"tessera_jit_compile_options_t.arbitration_budget_ms"}},
      {"tessera_jit_compile",
       "source NULL with a size",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         tessera_jit_module_t* module = nullptr;
         return tessera_jit_compile(context_, nullptr, 5, nullptr, &module);
       },
       {"source is NULL"}},
      // "NULL with size 0 is the empty module."
      {"tessera_jit_compile", "source NULL with size 0", TESSERA_JIT_OK,
       [&] {
         tessera_jit_module_t* module = nullptr;
         tessera_jit_error_t* error = tessera_jit_compile(context_, nullptr, 0, nullptr, &module);
         tessera_jit_module_destroy(module);
         return error;
       }},
  });
}

// docs/capi.md: "no usable CUDA toolkit → FAILED_PRECONDITION" (an nvptx compile, when the
// search for libdevice found none). Only where no CUDA root is present:
// tools/cuda_optional_test.sh runs it with the toolkit hidden (a mount namespace).
TEST(DocumentedErrorsToolkitTest, AnNvptxCompileWithoutAUsableToolkitFailsItsPrecondition) {
  const std::string info = tessera_jit_get_build_info();
  if (info.find("\"libdevice\":{\"found\":true") != std::string::npos) {
    GTEST_SKIP() << "libdevice is present (tools/cuda_optional_test.sh hides it): " << info;
  }
  tessera_jit_context_t* context = MemoryOnlyHostContext();
  ASSERT_NE(context, nullptr);
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.target = "nvptx";
  options.arch = "sm_90";
  tessera_jit_module_t* module = nullptr;
  Error error(
      tessera_jit_compile(context, kDeviceSource, sizeof(kDeviceSource) - 1, &options, &module));
  EXPECT_EQ(CodeName(error.code()), CodeName(TESSERA_JIT_FAILED_PRECONDITION)) << error.message();
  EXPECT_THAT(error.message(), HasSubstr("needs libdevice, which was not found; looked in: "));
  EXPECT_THAT(error.message(), HasSubstr("/usr/local/cuda"));
  EXPECT_EQ(module, nullptr);
  tessera_jit_context_destroy(context);
}

// --- Module: get_text, get_function, get_decision, wait_decisions ---
TEST_F(DocumentedErrorsTest, ModuleLookupsReturnTheirDocumentedCodes) {
  const char* text = nullptr;
  size_t size = 0;
  tessera_jit_function_t* function = nullptr;
  const char nul_name[] = {'s', 'a', '\0', 'x'};
  tessera_jit_decision_info_t decision;
  decision.struct_size = TESSERA_JIT_DECISION_INFO_STRUCT_SIZE;
  const size_t decisions = tessera_jit_module_get_decision_count(module_);
  ASSERT_EQ(decisions, 2u);  // one per Tile op: the tile.map and the tile.reduce
  ExpectDocumentedCodes({
      {"tessera_jit_module_get_text",
       "PTX of a host module",
       TESSERA_JIT_NOT_FOUND,
       [&] { return tessera_jit_module_get_text(module_, TESSERA_JIT_TEXT_PTX, &text, &size); },
       {"the module has no PTX (compiled for host)"}},
      {"tessera_jit_module_get_text",
       "a cubin of a host module",
       TESSERA_JIT_NOT_FOUND,
       [&] { return tessera_jit_module_get_text(module_, TESSERA_JIT_TEXT_CUBIN, &text, &size); },
       {"the module has no cubin (compiled for host)"}},
      {"tessera_jit_module_get_function",
       "an unknown entry (naming the entries that exist)",
       TESSERA_JIT_NOT_FOUND,
       [&] { return tessera_jit_module_get_function(module_, "nope", 4, &function); },
       {"no entry function @nope; the module has: saxpy, rows, pick, gather"}},
      // docs/capi.md: user bytes quoted in a message are written as \xNN.
      {"tessera_jit_module_get_function",
       "an unknown entry with a NUL in its name",
       TESSERA_JIT_NOT_FOUND,
       [&] {
         return tessera_jit_module_get_function(module_, nul_name, sizeof(nul_name), &function);
       },
       {"no entry function @sa\\x00x"}},
      {"tessera_jit_module_get_decision",
       "an index out of range",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_module_get_decision(module_, decisions, &decision); },
       {"the module has 2 decision(s); index 2 is out of range"}},
      {"tessera_jit_module_get_decision",
       "a NULL module (docs/capi.md)",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_module_get_decision(nullptr, 0, &decision); },
       {"module is NULL"}},
      {"tessera_jit_module_get_decision",
       "a NULL info (docs/capi.md)",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_module_get_decision(module_, 0, nullptr); },
       {"out_info is NULL"}},
      {"tessera_jit_module_wait_decisions",
       "a NULL module (docs/capi.md)",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_module_wait_decisions(nullptr, 0, nullptr); },
       {"module is NULL"}},
  });
}

// TESSERA_JIT_PTX_ONLY: "TESSERA_JIT_TEXT_CUBIN is then NOT_FOUND" (an nvptx compile needs no
// GPU, only the toolkit).
TEST_F(DocumentedErrorsTest, APtxOnlyModuleHasNoCubin) {
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.target = "nvptx";
  options.arch = "sm_90";
  options.flags = TESSERA_JIT_PTX_ONLY;
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(
      tessera_jit_compile(context_, kDeviceSource, sizeof(kDeviceSource) - 1, &options, &module));
  const char* text = nullptr;
  size_t size = 0;
  ExpectDocumentedCodes({
      {"tessera_jit_module_get_text",
       "a cubin of a PTX-only module",
       TESSERA_JIT_NOT_FOUND,
       [&] { return tessera_jit_module_get_text(module, TESSERA_JIT_TEXT_CUBIN, &text, &size); },
       {"compiled to PTX only (TESSERA_JIT_PTX_ONLY)"}},
      {"tessera_jit_module_get_text", "PTX of a PTX-only module", TESSERA_JIT_OK,
       [&] { return tessera_jit_module_get_text(module, TESSERA_JIT_TEXT_PTX, &text, &size); }},
  });
  tessera_jit_module_destroy(module);
}

// --- Invoke: tessera_jit_function_get_arg_info ---
TEST_F(DocumentedErrorsTest, ArgInfoRefusesABadIndex) {
  tessera_jit_arg_info_t info;
  info.struct_size = TESSERA_JIT_ARG_INFO_STRUCT_SIZE;
  ExpectDocumentedCodes({
      {"tessera_jit_function_get_arg_info",
       "an argument index out of range",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_function_get_arg_info(Function("saxpy"), 0, 4, &info); },
       {"@saxpy has 4 argument(s); index 4 is out of range"}},
      {"tessera_jit_function_get_arg_info",
       "a result index out of range",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_function_get_arg_info(Function("pick"), 1, 1, &info); },
       {"@pick has 1 result(s); index 1 is out of range"}},
  });
}

// --- Invoke: tessera_jit_function_invoke. "Every argument is checked before anything runs
// ... each failure is INVALID_ARGUMENT naming the function, the argument and what was
// expected"; docs/capi.md lists the checks in order. Nothing is written when one fails. ---
TEST_F(DocumentedErrorsTest, InvokeChecksEveryArgumentBeforeAnythingRuns) {
  Tensor x({4}, 1.0f), y({4}, 1.0f), out({4}, 7.0f);
  Tensor matrix({2, 2}), long_y({8}), long_out({8}, 7.0f);
  auto with = [](const Tensor& tensor, const std::function<void(DLTensor&)>& edit) {
    auto* view = new DLTensor(tensor.view);  // freed with `views` below
    edit(*view);
    return view;
  };
  std::vector<std::unique_ptr<DLTensor>> views;
  auto arg = [&](DLTensor* view, tessera_jit_arg_kind_t kind = TESSERA_JIT_ARG_TENSOR) {
    views.emplace_back(view);
    tessera_jit_arg_t a{};
    a.kind = kind;
    a.value.tensor = view;
    return a;
  };
  int64_t huge_rows[] = {int64_t{1} << 62, 8};  // 2^65 elements
  int64_t wide_rows[] = {int64_t{1} << 58, 8};  // 2^61 elements, 2^63 bytes
  int64_t strides[] = {2};
  int64_t negative[] = {-1};
  Tensor rows_x({2, 8}), rows_y({2});
  const std::string where = "argument #1 'x' of @saxpy (memref<?xf32>): ";
  struct Invoke {
    std::string condition;
    const char* entry;
    std::vector<tessera_jit_arg_t> args;
    std::string message;
  };
  const std::vector<Invoke> invokes = {
      {"the argument count",
       "saxpy",
       {Float(1), x.arg(), y.arg()},
       "@saxpy takes 4 argument(s), found 3"},
      {"a scalar for a tensor (kind)",
       "saxpy",
       {Float(1), Float(2), y.arg(), out.arg()},
       where + "expected a tensor"},
      {"a tensor for a float scalar (kind)",
       "saxpy",
       {x.arg(), x.arg(), y.arg(), out.arg()},
       "argument #0 'alpha' of @saxpy (f32): expected a float scalar"},
      {"a float for an integer scalar (kind)",
       "pick",
       {Int(1), Float(2)},
       "argument #1 'n' of @pick (i32): expected an integer scalar"},
      {"a NULL DLTensor",
       "saxpy",
       {Float(1), arg(nullptr), y.arg(), out.arg()},
       where + "expected a DLTensor, found NULL"},
      {"the dtype",
       "saxpy",
       {Float(1), arg(with(x, [](DLTensor& t) { t.dtype = {kDLFloat, 64, 1}; })), y.arg(),
        out.arg()},
       where + "dtype float64 does not match the element type"},
      {"the dtype's lanes",
       "saxpy",
       {Float(1), arg(with(x, [](DLTensor& t) { t.dtype = {kDLFloat, 32, 2}; })), y.arg(),
        out.arg()},
       where + "dtype float32x2 does not match the element type"},
      {"the rank",
       "saxpy",
       {Float(1), matrix.arg(), y.arg(), out.arg()},
       where + "expected rank 1, found 2"},
      {"a NULL shape",
       "saxpy",
       {Float(1), arg(with(x, [](DLTensor& t) { t.shape = nullptr; })), y.arg(), out.arg()},
       where + "shape is NULL"},
      {"a negative size",
       "saxpy",
       {Float(1), arg(with(x, [&](DLTensor& t) { t.shape = negative; })), y.arg(), out.arg()},
       where + "shape [-1] does not match"},
      {"a size other than the static size",
       "rows",
       {arg(with(matrix, [](DLTensor&) {})), rows_y.arg()},
       "argument #0 'x' of @rows (memref<?x8xf32>): shape [2, 2] does not match"},
      {"an element count past 64 bits",
       "rows",
       {arg(with(rows_x, [&](DLTensor& t) { t.shape = huge_rows; })), rows_y.arg()},
       "argument #0 'x' of @rows (memref<?x8xf32>): shape [4611686018427387904, 8] has more "
       "elements than 64 bits can count"},
      {"a byte size past the address space",
       "rows",
       {arg(with(rows_x, [&](DLTensor& t) { t.shape = wide_rows; })), rows_y.arg()},
       "argument #0 'x' of @rows (memref<?x8xf32>): shape [288230376151711744, 8] at byte "
       "offset 0 spans more bytes than the address space holds"},
      {"strides that are not dense row-major",
       "saxpy",
       {Float(1), arg(with(x, [&](DLTensor& t) { t.strides = strides; })), y.arg(), out.arg()},
       where + "expected a dense row-major tensor, found strides [2]"},
      {"NULL data with elements",
       "saxpy",
       {Float(1), arg(with(x, [](DLTensor& t) { t.data = nullptr; })), y.arg(), out.arg()},
       where + "data is NULL"},
      {"data + byte_offset misaligned",
       "saxpy",
       {Float(1), arg(with(x, [](DLTensor& t) { t.byte_offset = 2; })), y.arg(), out.arg()},
       where + "data + byte_offset"},
      {"the device",
       "saxpy",
       {Float(1), arg(with(x, [](DLTensor& t) { t.device = {kDLCUDA, 0}; })), y.arg(), out.arg()},
       where + "the module runs on the host; expected host memory (kDLCPU), found device type 2"},
      {"a read-only tensor for an output",
       "saxpy",
       {Float(1), x.arg(), y.arg(),
        arg(with(out, [](DLTensor&) {}), TESSERA_JIT_ARG_TENSOR_READ_ONLY)},
       "argument #3 'out' of @saxpy (memref<?xf32>): the tensor is read-only, but @saxpy writes "
       "this argument"},
      {"an integer past its type's range",
       "pick",
       {Int(1), Int(int64_t{1} << 40)},
       "argument #1 'n' of @pick (i32): 1099511627776 does not fit in 32 bits"},
      {"an i1 other than 0 or 1",
       "pick",
       {Int(2), Int(1)},
       "argument #0 'b' of @pick (i1): 2 does not fit in 1 bits"},
      {"the shape contract",
       "saxpy",
       {Float(1), x.arg(), long_y.arg(), long_out.arg()},
       "@saxpy: dimension 0 of argument #1 'x' is 4 but argument #3 'out' has 8"},
      // "in this order": the first failing check of the first failing argument is reported.
      {"order: the dtype before the rank",
       "saxpy",
       {Float(1), arg(with(matrix, [](DLTensor& t) { t.dtype = {kDLFloat, 64, 1}; })), y.arg(),
        out.arg()},
       where + "dtype float64 does not match"},
      {"order: the device before read-only",
       "saxpy",
       {Float(1), x.arg(), y.arg(),
        arg(with(out, [](DLTensor& t) { t.device = {kDLCUDA, 0}; }),
            TESSERA_JIT_ARG_TENSOR_READ_ONLY)},
       "argument #3 'out' of @saxpy (memref<?xf32>): the module runs on the host"},
      {"order: argument #1 before argument #2",
       "saxpy",
       {Float(1), arg(nullptr), matrix.arg(), out.arg()},
       where + "expected a DLTensor, found NULL"},
  };
  std::vector<Case> cases;
  for (const Invoke& invoke : invokes) {
    cases.push_back({"tessera_jit_function_invoke",
                     invoke.condition,
                     TESSERA_JIT_INVALID_ARGUMENT,
                     [this, &invoke] {
                       return tessera_jit_function_invoke(Function(invoke.entry),
                                                          invoke.args.data(), invoke.args.size(),
                                                          nullptr, nullptr);
                     },
                     {invoke.message}});
  }
  cases.push_back({"tessera_jit_function_invoke",
                   "args NULL with arguments",
                   TESSERA_JIT_INVALID_ARGUMENT,
                   [this] {
                     return tessera_jit_function_invoke(Function("saxpy"), nullptr, 4, nullptr,
                                                        nullptr);
                   },
                   {"args is NULL"}});
  ExpectDocumentedCodes(cases);
  for (const Tensor* written : {&out, &long_out}) {
    for (float value : written->data) EXPECT_EQ(value, 7.0f);  // nothing ran
  }
}

// docs/capi.md: "A failed [run-time check] stops the entry where it is and invoke returns
// OUT_OF_RANGE with the op and its location."
TEST_F(DocumentedErrorsTest, AFailedRunTimeCheckIsOutOfRangeWithTheOpAndItsLocation) {
  Tensor x({4}, 1.5f);
  tessera_jit_arg_t result{};
  ExpectDocumentedCodes({
      {"tessera_jit_function_invoke", "an index in bounds", TESSERA_JIT_OK,
       [&] {
         tessera_jit_arg_t args[] = {x.arg(), Int(3)};
         return tessera_jit_function_invoke(Function("gather"), args, 2, nullptr, &result);
       }},
      {"tessera_jit_function_invoke",
       "memref.load past the end",
       TESSERA_JIT_OUT_OF_RANGE,
       [&] {
         tessera_jit_arg_t args[] = {x.arg(), Int(4)};
         return tessera_jit_function_invoke(Function("gather"), args, 2, nullptr, &result);
       },
       {"@gather: run-time check failed at <source>:20:8", "out-of-bounds"}},
  });
}

// --- Buffers, streams and events without a GPU: "UNAVAILABLE without a GPU"; "Without a GPU
// every call below that would touch the device is UNAVAILABLE (NULL handles, unknown flags and
// an event pair that cannot be timed are refused first; destroying a NULL stream is no
// error)". Also an nvptx module's invoke. ---
TEST(DocumentedErrorsGpuAbsentTest, CallsThatNeedAGpuAreUnavailableAfterTheirChecks) {
  if (tessera_jit_is_gpu_available()) {
    GTEST_SKIP() << "a GPU is present: tests/gpu covers buffers, streams and events";
  }
  tessera_jit_context_t* context = MemoryOnlyHostContext();
  ASSERT_NE(context, nullptr);
  tessera_jit_compile_options_t options;
  tessera_jit_compile_options_init(&options);
  options.target = "nvptx";
  options.arch = "sm_90";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(
      tessera_jit_compile(context, kDeviceSource, sizeof(kDeviceSource) - 1, &options, &module));
  tessera_jit_function_t* saxpy = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "saxpy", 5, &saxpy));
  Tensor x({4}), y({4}), out({4});
  for (Tensor* t : {&x, &y, &out}) t->view.device = {kDLCUDA, 0};
  tessera_jit_arg_t args[] = {Float(1), x.arg(), y.arg(), out.arg()};
  char host[16] = {};
  void* pointer = nullptr;
  void* stream = nullptr;
  tessera_jit_event_t* event = nullptr;
  int32_t done = 7;
  float ms = 0;
  void* some_stream = reinterpret_cast<void*>(0x1000);  // never dereferenced without a driver
  const std::string no_gpu = "which is not available";
  ExpectDocumentedCodes({
      {"tessera_jit_function_invoke",
       "an nvptx module without a GPU",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_function_invoke(saxpy, args, 4, nullptr, nullptr); },
       {"@saxpy runs on the GPU, which is not available", "libcuda.so.1"}},
      {"tessera_jit_buffer_alloc",
       "no GPU",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_buffer_alloc(context, 64, &pointer); },
       {"libcuda.so.1"}},
      {"tessera_jit_buffer_free", "NULL (allowed)", TESSERA_JIT_OK,
       [&] { return tessera_jit_buffer_free(context, nullptr); }},
      {"tessera_jit_buffer_free",
       "no GPU",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_buffer_free(context, host); },
       {"libcuda.so.1"}},
      {"tessera_jit_buffer_copy",
       "a NULL source with a size",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] {
         return tessera_jit_buffer_copy(context, host, nullptr, 4, TESSERA_JIT_COPY_HOST_TO_DEVICE);
       },
       {"destination or source is NULL"}},
      {"tessera_jit_buffer_copy",
       "no GPU",
       TESSERA_JIT_UNAVAILABLE,
       [&] {
         return tessera_jit_buffer_copy(context, host, host, 4, TESSERA_JIT_COPY_HOST_TO_DEVICE);
       },
       {"libcuda.so.1"}},
      // Streams: NULL handles and unknown flags first, then UNAVAILABLE.
      {"tessera_jit_stream_create",
       "a NULL context",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_stream_create(nullptr, 0, &stream); },
       {"context is NULL"}},
      {"tessera_jit_stream_create",
       "a NULL out_stream",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_stream_create(context, 0, nullptr); },
       {"out_stream is NULL"}},
      {"tessera_jit_stream_create",
       "unknown flags",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_stream_create(context, 0x6, &stream); },
       {"unknown flags 0x6"}},
      {"tessera_jit_stream_create",
       "no GPU",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_stream_create(context, TESSERA_JIT_STREAM_NON_BLOCKING, &stream); },
       {"a stream needs a GPU, " + no_gpu}},
      {"tessera_jit_stream_destroy",
       "a NULL context",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_stream_destroy(nullptr, some_stream); },
       {"context is NULL"}},
      {"tessera_jit_stream_destroy", "a NULL stream (no error)", TESSERA_JIT_OK,
       [&] { return tessera_jit_stream_destroy(context, nullptr); }},
      {"tessera_jit_stream_destroy",
       "no GPU",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_stream_destroy(context, some_stream); },
       {"a stream needs a GPU, " + no_gpu}},
      {"tessera_jit_stream_synchronize",
       "a NULL context",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_stream_synchronize(nullptr, nullptr); },
       {"context is NULL"}},
      {"tessera_jit_stream_synchronize",
       "no GPU",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_stream_synchronize(context, nullptr); },
       {"a stream needs a GPU, " + no_gpu}},
      {"tessera_jit_stream_query",
       "a NULL context",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_stream_query(nullptr, nullptr, &done); },
       {"context is NULL"}},
      {"tessera_jit_stream_query",
       "a NULL out_done",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_stream_query(context, nullptr, nullptr); },
       {"out_done is NULL"}},
      {"tessera_jit_stream_query",
       "no GPU",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_stream_query(context, nullptr, &done); },
       {"a stream needs a GPU, " + no_gpu}},
      {"tessera_jit_stream_wait_event",
       "a NULL context",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_stream_wait_event(nullptr, nullptr, nullptr); },
       {"context is NULL"}},
      {"tessera_jit_stream_wait_event",
       "a NULL event",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_stream_wait_event(context, nullptr, nullptr); },
       {"event is NULL"}},
      // Events: the handle checks; without a GPU no event can be made (see GPU-only above).
      {"tessera_jit_event_create",
       "a NULL context",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_event_create(nullptr, 0, &event); },
       {"context is NULL"}},
      {"tessera_jit_event_create",
       "a NULL out_event",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_event_create(context, 0, nullptr); },
       {"out_event is NULL"}},
      {"tessera_jit_event_create",
       "unknown flags",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_event_create(context, 0x2, &event); },
       {"unknown flags 0x2"}},
      {"tessera_jit_event_create",
       "no GPU",
       TESSERA_JIT_UNAVAILABLE,
       [&] { return tessera_jit_event_create(context, TESSERA_JIT_EVENT_DISABLE_TIMING, &event); },
       {"an event needs a GPU, " + no_gpu}},
      {"tessera_jit_event_record",
       "a NULL event",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_event_record(nullptr, nullptr); },
       {"event is NULL"}},
      {"tessera_jit_event_query",
       "a NULL event",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_event_query(nullptr, &done); },
       {"event is NULL"}},
      {"tessera_jit_event_synchronize",
       "a NULL event",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_event_synchronize(nullptr); },
       {"event is NULL"}},
      {"tessera_jit_event_elapsed_time",
       "NULL events",
       TESSERA_JIT_INVALID_ARGUMENT,
       [&] { return tessera_jit_event_elapsed_time(nullptr, nullptr, &ms); },
       {"start or stop is NULL"}},
  });
  EXPECT_EQ(pointer, nullptr);
  EXPECT_EQ(stream, nullptr);
  EXPECT_EQ(event, nullptr);
  EXPECT_EQ(done, 0);                  // written before the driver is looked for
  tessera_jit_event_destroy(nullptr);  // "NULL is allowed"
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
}

}  // namespace
