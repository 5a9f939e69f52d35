// Helpers of the C API tests: owned errors, host float32 DLTensors, scalar arguments.
#ifndef TESSERA_TESTS_CAPI_CAPI_TEST_UTIL_H_
#define TESSERA_TESTS_CAPI_CAPI_TEST_UTIL_H_

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tessera_jit.h"

namespace tessera::testing {

/// Owns an error for the duration of a check.
struct Error {
  explicit Error(tessera_jit_error_t* error) : error(error) {}
  ~Error() { tessera_jit_error_destroy(error); }
  tessera_jit_error_code_t code() const { return tessera_jit_error_code(error); }
  std::string message() const {
    size_t size = 0;
    const char* text = tessera_jit_error_message(error, &size);
    return std::string(text, size);
  }
  tessera_jit_error_t* error;
};

#define ASSERT_OK(expr)                                           \
  do {                                                            \
    ::tessera::testing::Error error_(expr);                       \
    ASSERT_EQ(error_.code(), TESSERA_JIT_OK) << error_.message(); \
  } while (false)

/// A host-target context with a memory-only compile cache, or null (with a test failure).
inline tessera_jit_context_t* MemoryOnlyHostContext() {
  tessera_jit_context_options_t options;
  tessera_jit_context_options_init(&options);
  options.default_target = "host";
  options.cache_dir = "";
  tessera_jit_context_t* context = nullptr;
  Error error(tessera_jit_context_create(&options, &context));
  EXPECT_EQ(error.code(), TESSERA_JIT_OK) << error.message();
  return context;
}

/// A module's text of `kind` (empty, with a test failure, when it has none).
inline std::string Text(tessera_jit_module_t* module, tessera_jit_text_kind_t kind) {
  const char* data = nullptr;
  size_t size = 0;
  Error error(tessera_jit_module_get_text(module, kind, &data, &size));
  EXPECT_EQ(error.code(), TESSERA_JIT_OK) << error.message();
  return error.code() == TESSERA_JIT_OK ? std::string(data, size) : "";
}

/// `tensor` as an invoke argument (read-write).
inline tessera_jit_arg_t TensorArg(const DLTensor* tensor) {
  tessera_jit_arg_t a{};
  a.kind = TESSERA_JIT_ARG_TENSOR;
  a.value.tensor = tensor;
  return a;
}

/// A host float32 tensor with its DLTensor view.
struct Tensor {
  explicit Tensor(std::vector<int64_t> dims, float fill = 0.0f)
      : shape(std::move(dims)), data(Count(shape), fill) {
    view.data = data.data();
    view.device = {kDLCPU, 0};
    view.ndim = static_cast<int32_t>(shape.size());
    view.dtype = {kDLFloat, 32, 1};
    view.shape = shape.data();
    view.strides = nullptr;
    view.byte_offset = 0;
  }
  static size_t Count(const std::vector<int64_t>& dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
  }
  tessera_jit_arg_t arg() const { return TensorArg(&view); }
  std::vector<int64_t> shape;
  std::vector<float> data;
  DLTensor view{};
};

inline tessera_jit_arg_t Float(double value) {
  tessera_jit_arg_t a{};
  a.kind = TESSERA_JIT_ARG_FLOAT;
  a.value.f = value;
  return a;
}

inline tessera_jit_arg_t Int(int64_t value) {
  tessera_jit_arg_t a{};
  a.kind = TESSERA_JIT_ARG_INT;
  a.value.i = value;
  return a;
}

/// A fixture: a memory-only host context (MemoryOnlyHostContext) with one module compiled from
/// the source the subclass passes, destroyed after each test; Function() looks up its entries.
class CompiledModuleTest : public ::testing::Test {
 protected:
  explicit CompiledModuleTest(std::string source) : source_(std::move(source)) {}
  void SetUp() override {
    context_ = MemoryOnlyHostContext();
    ASSERT_NE(context_, nullptr);
    ASSERT_OK(tessera_jit_compile(context_, source_.data(), source_.size(), nullptr, &module_));
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

  std::string source_;
  tessera_jit_context_t* context_ = nullptr;
  tessera_jit_module_t* module_ = nullptr;
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_CAPI_CAPI_TEST_UTIL_H_
