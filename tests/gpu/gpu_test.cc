// GPU tests: device queries, memory, and every Tile op run on the device through the C API and
// Over 600 lines: every Tile op on the device against the host, sharing one device fixture (the GPU
// check runs this one binary).
// compared with the host target's result on the same inputs. Without a CUDA driver or device
// every test skips, saying why.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/float16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera_jit.h"

namespace {

using ::testing::HasSubstr;

std::string TakeMessage(tessera_jit_error_t* error) {
  std::string message = error == nullptr ? "" : tessera_jit_error_message(error, nullptr);
  tessera_jit_error_destroy(error);
  return message;
}

#define ASSERT_OK(expr)                                \
  do {                                                 \
    tessera_jit_error_t* error_ = (expr);              \
    ASSERT_EQ(error_, nullptr) << TakeMessage(error_); \
  } while (false)

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera_jit_is_gpu_available()) {
      tessera_jit_device_info_t info;
      info.struct_size = sizeof(info);
      GTEST_SKIP() << "no usable GPU: " << TakeMessage(tessera_jit_device_get_info(0, &info));
    }
    tessera_jit_context_options_t options;
    tessera_jit_context_options_init(&options);
    options.default_target = "nvptx";
    options.cache_dir = "";  // memory only: each run compiles for real
    ASSERT_OK(tessera_jit_context_create(&options, &context_));
  }
  void TearDown() override { tessera_jit_context_destroy(context_); }

  /// Compiles `source` (arbitrated, for the device) and returns its decisions as JSON, printed
  /// too: the GPU check keeps the log. "" when the compile failed (the failure is recorded).
  std::string CompileForDecisions(const char* source) {
    tessera_jit_module_t* module = nullptr;
    tessera_jit_error_t* error =
        tessera_jit_compile(context_, source, std::strlen(source), nullptr, &module);
    if (error != nullptr) {
      ADD_FAILURE() << TakeMessage(error);
      return "";
    }
    const char* json = nullptr;
    size_t size = 0;
    error = tessera_jit_module_get_text(module, TESSERA_JIT_TEXT_DECISIONS, &json, &size);
    std::string decisions = error == nullptr ? std::string(json, size) : "";
    if (error != nullptr) ADD_FAILURE() << TakeMessage(error);
    tessera_jit_module_destroy(module);
    std::printf("%s\n", decisions.c_str());
    return decisions;
  }

  tessera_jit_context_t* context_ = nullptr;
};

TEST_F(GpuTest, DeviceInfoIsSane) {
  EXPECT_GE(tessera_jit_device_count(), 1);
  tessera_jit_device_info_t info;
  info.struct_size = sizeof(info);
  ASSERT_OK(tessera_jit_device_get_info(0, &info));
  EXPECT_GT(std::strlen(info.name), 0u);
  EXPECT_THAT(std::string(info.arch), ::testing::StartsWith("sm_"));
  EXPECT_GT(info.total_memory_bytes, 0u);
  EXPECT_GT(info.multiprocessors, 0);
}

TEST_F(GpuTest, BuffersRoundTrip) {
  std::vector<float> host(1 << 20), back(1 << 20);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
  void* a = nullptr;
  void* b = nullptr;
  const size_t bytes = host.size() * sizeof(float);
  ASSERT_OK(tessera_jit_buffer_alloc(context_, bytes, &a));
  ASSERT_OK(tessera_jit_buffer_alloc(context_, bytes, &b));
  ASSERT_OK(
      tessera_jit_buffer_copy(context_, a, host.data(), bytes, TESSERA_JIT_COPY_HOST_TO_DEVICE));
  ASSERT_OK(tessera_jit_buffer_copy(context_, b, a, bytes, TESSERA_JIT_COPY_DEVICE_TO_DEVICE));
  ASSERT_OK(
      tessera_jit_buffer_copy(context_, back.data(), b, bytes, TESSERA_JIT_COPY_DEVICE_TO_HOST));
  EXPECT_EQ(back, host);
  ASSERT_OK(tessera_jit_buffer_free(context_, a));
  ASSERT_OK(tessera_jit_buffer_free(context_, b));
}

/// Storage of a test tensor: f32, f16 or bf16 (values kept as float, stored as the type).
enum class Dtype { kF32, kF16, kBF16 };

/// A tensor with host data and a device copy, stored as `dtype`: `host` holds the values (for
/// f16/bf16 rounded to the type), `narrow_host` the host copy in the type's bits.
struct DeviceTensor {
  DeviceTensor(tessera_jit_context_t* context, std::vector<int64_t> dims, uint32_t seed,
               Dtype dtype = Dtype::kF32)
      : context(context), shape(std::move(dims)), dtype(dtype) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    host.resize(n);
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& v : host) v = uniform(random);
    if (dtype != Dtype::kF32) {
      narrow_host = Encode(host);
      host = Decode(narrow_host);
    }
    EXPECT_EQ(tessera_jit_buffer_alloc(context, Bytes(), &device), nullptr);
    EXPECT_EQ(tessera_jit_buffer_copy(context, device, HostData(), Bytes(),
                                      TESSERA_JIT_COPY_HOST_TO_DEVICE),
              nullptr);
  }
  ~DeviceTensor() { tessera_jit_error_destroy(tessera_jit_buffer_free(context, device)); }
  size_t ElementBytes() const { return dtype == Dtype::kF32 ? 4 : 2; }
  size_t Bytes() const { return std::max<size_t>(host.size(), 1) * ElementBytes(); }
  void* HostData() {
    return dtype == Dtype::kF32 ? static_cast<void*>(host.data())
                                : static_cast<void*>(narrow_host.data());
  }
  std::vector<uint16_t> Encode(const std::vector<float>& values) const {
    std::vector<uint16_t> bits(std::max<size_t>(values.size(), 1));
    for (size_t i = 0; i < values.size(); ++i) {
      bits[i] = dtype == Dtype::kF16 ? tessera::FloatToHalf(values[i])
                                     : tessera::FloatToBfloat(values[i]);
    }
    return bits;
  }
  std::vector<float> Decode(const std::vector<uint16_t>& bits) const {
    std::vector<float> values(host.size());
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] =
          dtype == Dtype::kF16 ? tessera::HalfToFloat(bits[i]) : tessera::BfloatToFloat(bits[i]);
    }
    return values;
  }
  /// The host copy's values (the host target runs in place on it).
  std::vector<float> Host() const { return dtype == Dtype::kF32 ? host : Decode(narrow_host); }
  std::vector<float> Download() const {
    if (dtype == Dtype::kF32) {
      std::vector<float> out(host.size());
      EXPECT_EQ(tessera_jit_buffer_copy(context, out.data(), device, host.size() * 4,
                                        TESSERA_JIT_COPY_DEVICE_TO_HOST),
                nullptr);
      return out;
    }
    std::vector<uint16_t> out(std::max<size_t>(host.size(), 1));
    EXPECT_EQ(tessera_jit_buffer_copy(context, out.data(), device, host.size() * 2,
                                      TESSERA_JIT_COPY_DEVICE_TO_HOST),
              nullptr);
    return Decode(out);
  }
  DLTensor View(bool on_device) {
    DLTensor t{};
    t.data = on_device ? device : HostData();
    t.device = {on_device ? kDLCUDA : kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype == Dtype::kF32   ? DLDataType{kDLFloat, 32, 1}
              : dtype == Dtype::kF16 ? DLDataType{kDLFloat, 16, 1}
                                     : DLDataType{kDLBfloat, 16, 1};
    t.shape = shape.data();
    return t;
  }
  tessera_jit_context_t* context;
  std::vector<int64_t> shape;
  Dtype dtype;
  std::vector<float> host;
  std::vector<uint16_t> narrow_host;
  void* device = nullptr;
};

struct OpCase {
  const char* name;
  const char* source;
  std::vector<std::vector<int64_t>> shapes;
  float atol;
  float rtol;
  std::vector<Dtype> dtypes = {};  ///< per tensor; f32 for those not listed
};

class GpuOpTest : public GpuTest, public ::testing::WithParamInterface<OpCase> {};

/// Runs the entry `f` on the device (from a cubin, and from PTX the driver compiles) and on
/// the host with the same inputs; every tensor must agree within the case's tolerance
/// (|d − h| ≤ atol + rtol·|h|).
TEST_P(GpuOpTest, DeviceMatchesHost) {
  const OpCase& c = GetParam();
  std::vector<std::unique_ptr<DeviceTensor>> tensors;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    tensors.push_back(std::make_unique<DeviceTensor>(
        context_, c.shapes[i], 100 + i, i < c.dtypes.size() ? c.dtypes[i] : Dtype::kF32));
  }
  auto invoke = [&](const char* target, bool on_device, uint32_t flags) {
    tessera_jit_compile_options_t options;
    tessera_jit_compile_options_init(&options);
    options.target = target;
    options.flags = flags;
    tessera_jit_module_t* module = nullptr;
    EXPECT_EQ(tessera_jit_compile(context_, c.source, std::strlen(c.source), &options, &module),
              nullptr);
    tessera_jit_function_t* function = nullptr;
    EXPECT_EQ(tessera_jit_module_get_function(module, "f", 1, &function), nullptr);
    std::vector<DLTensor> views;
    for (auto& t : tensors) views.push_back(t->View(on_device));
    std::vector<tessera_jit_arg_t> args(views.size());
    for (size_t i = 0; i < views.size(); ++i) {
      args[i].kind = TESSERA_JIT_ARG_TENSOR;
      args[i].value.tensor = &views[i];
    }
    std::string error = TakeMessage(
        tessera_jit_function_invoke(function, args.data(), args.size(), nullptr, nullptr));
    EXPECT_EQ(error, "");
    EXPECT_EQ(TakeMessage(tessera_jit_stream_synchronize(context_, nullptr)), "");
    tessera_jit_module_destroy(module);
  };
  invoke("nvptx", true, TESSERA_JIT_PTX_ONLY);
  std::vector<std::vector<float>> from_ptx;
  for (auto& t : tensors) from_ptx.push_back(t->Download());
  invoke("nvptx", true, 0);
  invoke("host", false, 0);  // in place on the host copies: the reference
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::vector<float> device = tensors[i]->Download();
    const std::vector<float> host = tensors[i]->Host();
    for (size_t k = 0; k < device.size(); ++k) {
      float h = host[k];
      EXPECT_LE(std::fabs(device[k] - h), c.atol + c.rtol * std::fabs(h))
          << c.name << " tensor #" << i << " element " << k;
      EXPECT_LE(std::fabs(from_ptx[i][k] - h), c.atol + c.rtol * std::fabs(h))
          << c.name << " (PTX only) tensor #" << i << " element " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    TileOps, GpuOpTest,
    ::testing::Values(
        OpCase{"map",
               R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.map ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    %e = math.exp %t : f32
    tile.yield %e : f32
  }
  return
})",
               {{37, 1031}, {37, 1031}},
               1e-6f,
               1e-6f},
        OpCase{"reduce",
               R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1 : memref<?x?xf32> -> memref<?xf32>
  tile.reduce max %x -> %z axis = 0 : memref<?x?xf32> -> memref<?xf32>
  return
})",
               {{129, 3001}, {129}, {3001}},
               1e-4f,
               1e-5f},
        OpCase{"softmax",
               R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  return
})",
               {{65, 1000}, {65, 1000}},
               1e-7f,
               1e-5f},
        OpCase{
            "matmul",
            R"(func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(gelu) {transpose_b}
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
})",
            {{100, 77}, {33, 77}, {33}, {100, 33}},
            1e-5f,
            1e-5f},
        OpCase{"broadcast_map",
               R"(func.func @f(%x: memref<?x?x?xf32>, %b: memref<?x1xf32>, %y: memref<?x?x?xf32>) {
  tile.map ins(%x, %b : memref<?x?x?xf32>, memref<?x1xf32>) outs(%y : memref<?x?x?xf32>) {
  ^bb0(%u: f32, %v: f32):
    %s = arith.mulf %u, %v : f32
    tile.yield %s : f32
  }
  return
})",
               {{3, 50, 7}, {50, 1}, {3, 50, 7}},
               0.0f,
               0.0f},
        OpCase{
            "batched_matmul",
            R"(func.func @f(%a: memref<?x1x?x?xf32>, %b: memref<?x?x?xf32>, %c: memref<?x?x?x?xf32>) {
  tile.matmul %a, %b -> %c activation(silu) : memref<?x1x?x?xf32>, memref<?x?x?xf32> -> memref<?x?x?x?xf32>
  return
})",
            {{3, 1, 45, 70}, {4, 70, 19}, {3, 4, 45, 19}},
            1e-5f,
            1e-5f},
        OpCase{
            "norm",
            R"(func.func @f(%x: memref<?x?xf32>, %r: memref<?x?xf32>, %w: memref<?xf32>, %b: memref<?xf32>, %y: memref<?x?xf32>, %h: memref<?x?xf32>, %z: memref<?x?xf32>) {
  tile.norm rms %x residual(%r : memref<?x?xf32>) -> %y residual_out(%h : memref<?x?xf32>) weight(%w : memref<?xf32>) : memref<?x?xf32> -> memref<?x?xf32>
  tile.norm layer %x -> %z weight(%w : memref<?xf32>) bias(%b : memref<?xf32>) : memref<?x?xf32> -> memref<?x?xf32>
  return
})",
            {{33, 3001}, {33, 3001}, {3001}, {3001}, {33, 3001}, {33, 3001}, {33, 3001}},
            1e-5f,
            1e-5f},
        OpCase{
            "attention",
            R"(func.func @f(%q: memref<?x?x?x?xf32>, %k: memref<?x?x?x?xf32>, %v: memref<?x?x?x?xf32>, %o: memref<?x?x?x?xf32>, %p: memref<?x?x?x?xf32>) {
  tile.attention %q, %k, %v -> %o causal : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32> -> memref<?x?x?x?xf32>
  tile.attention %q, %k, %v -> %p scale(0.5) : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32> -> memref<?x?x?x?xf32>
  return
})",
            {{2, 4, 37, 64}, {2, 2, 700, 64}, {2, 2, 700, 300}, {2, 4, 37, 300}, {2, 4, 37, 300}},
            1e-5f,
            1e-4f},
        // Any finite lse will do: both targets recompute the same probabilities from it. Dv =
        // 160 takes warp_per_row's rows through two passes of 128 columns.
        OpCase{
            "attention_backward",
            R"(func.func @f(%do: memref<?x?x?x?xf32>, %q: memref<?x?x?x?xf32>, %k: memref<?x?x?x?xf32>, %v: memref<?x?x?x?xf32>, %o: memref<?x?x?x?xf32>, %l: memref<?x?x?xf32>, %dq: memref<?x?x?x?xf32>, %dk: memref<?x?x?x?xf32>, %dv: memref<?x?x?x?xf32>) {
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %dk, %dv causal window(40, 3) softcap(4.0) dropout(0.2, 5)
      : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?xf32> -> memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>
  return
})",
            {{2, 4, 37, 160},
             {2, 4, 37, 64},
             {2, 2, 70, 64},
             {2, 2, 70, 160},
             {2, 4, 37, 160},
             {2, 4, 37},
             {2, 4, 37, 64},
             {2, 2, 70, 64},
             {2, 2, 70, 160}},
            1e-5f,
            1e-4f},
        OpCase{
            "attention_backward_warp_per_row",
            R"(func.func @f(%do: memref<?x?x?x?xf32>, %q: memref<?x?x?x?xf32>, %k: memref<?x?x?x?xf32>, %v: memref<?x?x?x?xf32>, %o: memref<?x?x?x?xf32>, %l: memref<?x?x?xf32>, %dq: memref<?x?x?x?xf32>, %dk: memref<?x?x?x?xf32>, %dv: memref<?x?x?x?xf32>) {
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %dk, %dv causal window(40, 3) softcap(4.0) dropout(0.2, 5) {tessera.candidate = "compiled.warp_per_row"}
      : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?xf32> -> memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>
  return
})",
            {{2, 4, 37, 160},
             {2, 4, 37, 64},
             {2, 2, 70, 64},
             {2, 2, 70, 160},
             {2, 4, 37, 160},
             {2, 4, 37},
             {2, 4, 37, 64},
             {2, 2, 70, 64},
             {2, 2, 70, 160}},
            1e-5f,
            1e-4f},
        OpCase{
            "rope",
            R"(func.func @f(%x: memref<?x?x?xf32>, %c: memref<?x?xf32>, %s: memref<?x?xf32>, %y: memref<?x?x?xf32>, %z: memref<?x?x?xf32>) {
  tile.rope half %x, %c, %s -> %y : memref<?x?x?xf32>, memref<?x?xf32>, memref<?x?xf32> -> memref<?x?x?xf32>
  tile.rope interleaved %x, %c, %s -> %z : memref<?x?x?xf32>, memref<?x?xf32>, memref<?x?xf32> -> memref<?x?x?xf32>
  return
})",
            {{3, 17, 128}, {17, 64}, {17, 64}, {3, 17, 128}, {3, 17, 128}},
            1e-6f,
            1e-6f},
        // Kernel variants (KernelSchedules.h), forced; the host runs its own lowering.
        OpCase{"map_vectorized",  // 38147 elements: full vectors and a 3-element tail
               R"(func.func @f(%x: memref<?x?xf32>, %z: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.map ins(%x, %z : memref<?x?xf32>, memref<?x?xf32>) outs(%y : memref<?x?xf32>)
      attributes {tessera.candidate = "compiled.vectorized"} {
  ^bb0(%v: f32, %w: f32):
    %t = math.tanh %v : f32
    %e = arith.addf %t, %w : f32
    tile.yield %e : f32
  }
  return
})",
               {{37, 1031}, {37, 1031}, {37, 1031}},
               1e-6f,
               1e-6f},
        OpCase{
            "reduce_warp_per_row",
            R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?xf32>, %z: memref<?xf32>, %w: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1 {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?xf32>
  tile.reduce max %x -> %z axis = 0 {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?xf32>
  tile.reduce mean %x -> %w axis = 1 {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?xf32>
  return
})",
            {{129, 3001}, {129}, {3001}, {129}},
            1e-4f,
            1e-5f},
        OpCase{"softmax_warp_per_row",  // rows of 37: not whole 128-bit chunks, element-wise
               R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?x?xf32>
  return
})",
               {{300, 37}, {300, 37}},
               1e-7f,
               1e-5f},
        OpCase{
            "reduce_warp_per_row_vector_loads",  // rows of 3000 f32, 1000 f16: 128-bit loads
            R"(func.func @f(%x: memref<?x?xf32>, %s: memref<?xf32>, %h: memref<?x?xf16>, %m: memref<?xf32>) {
  tile.reduce sum %x -> %s axis = 1 {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?xf32>
  tile.reduce mean %h -> %m axis = 1 {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf16> -> memref<?xf32>
  return
})",
            {{129, 3000}, {129}, {77, 1000}, {77}},
            1e-4f,
            1e-5f,
            {Dtype::kF32, Dtype::kF32, Dtype::kF16, Dtype::kF32}},
        OpCase{"reduce_warp_per_row_rank3_keepdims",  // rows of 1000 bf16, vector loads
               R"(func.func @f(%x: memref<?x?x?xbf16>, %y: memref<?x?x1xf32>) {
  tile.reduce max %x -> %y axis = 2 keepdims {tessera.candidate = "compiled.warp_per_row"} : memref<?x?x?xbf16> -> memref<?x?x1xf32>
  return
})",
               {{5, 7, 1000}, {5, 7, 1}},
               0.0f,
               0.0f,
               {Dtype::kBF16, Dtype::kF32}},
        OpCase{
            "softmax_warp_per_row_vector_loads",  // f16 results: one f16 ulp apart at most
            R"(func.func @f(%x: memref<?x?xf32>, %p: memref<?x?xf32>, %h: memref<?x?xf16>, %q: memref<?x?xf16>) {
  tile.softmax %x -> %p {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?x?xf32>
  tile.softmax %h -> %q {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf16> -> memref<?x?xf16>
  return
})",
            {{129, 3000}, {129, 3000}, {77, 1000}, {77, 1000}},
            1e-7f,
            2e-3f,
            {Dtype::kF32, Dtype::kF32, Dtype::kF16, Dtype::kF16}},
        OpCase{"softmax_online",
               R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y {tessera.candidate = "compiled.online"} : memref<?x?xf32> -> memref<?x?xf32>
  return
})",
               {{65, 5000}, {65, 5000}},
               1e-7f,
               1e-5f},
        OpCase{
            "norm_warp_per_row",  // rows of 37 and of 3001: one warp each, lanes strided
            R"(func.func @f(%x: memref<?x?xf32>, %r: memref<?x?xf32>, %w: memref<?xf32>, %b: memref<?xf32>, %y: memref<?x?xf32>, %h: memref<?x?xf32>, %z: memref<?x?xf32>) {
  tile.norm rms %x residual(%r : memref<?x?xf32>) -> %y residual_out(%h : memref<?x?xf32>) weight(%w : memref<?xf32>) {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?x?xf32>
  tile.norm layer %x -> %z weight(%w : memref<?xf32>) bias(%b : memref<?xf32>) {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?x?xf32>
  return
})",
            {{129, 3001}, {129, 3001}, {3001}, {3001}, {129, 3001}, {129, 3001}, {129, 3001}},
            1e-5f,
            1e-4f},
        OpCase{
            "matmul_mma_sync_tf32",  // ragged in M, N and K; both sides round to TF32
            R"(func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(relu) policy(tf32)
      {transpose_b, tessera.candidate = "compiled.mma_sync"}
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
})",
            {{100, 77}, {33, 77}, {33}, {100, 33}},
            1e-4f,
            1e-4f},
        OpCase{"map_vectorized_f16",  // 8 halves per 128-bit access; 38147: a 3-element tail
               R"(func.func @f(%x: memref<?x?xf16>, %z: memref<?x?xf16>, %y: memref<?x?xf16>) {
  tile.map ins(%x, %z : memref<?x?xf16>, memref<?x?xf16>) outs(%y : memref<?x?xf16>)
      attributes {tessera.candidate = "compiled.vectorized"} {
  ^bb0(%v: f16, %w: f16):
    %p = arith.mulf %v, %w : f16
    %e = arith.addf %p, %v : f16
    tile.yield %e : f16
  }
  return
})",
               {{37, 1031}, {37, 1031}, {37, 1031}},
               0.0f,
               0.0f,
               {Dtype::kF16, Dtype::kF16, Dtype::kF16}},
        OpCase{"map_vectorized_falls_back",  // %z is 1 x N at run time: the baseline runs
               R"(func.func @f(%x: memref<?x?xf32>, %z: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.map ins(%x, %z : memref<?x?xf32>, memref<?x?xf32>) outs(%y : memref<?x?xf32>)
      attributes {tessera.candidate = "compiled.vectorized"} {
  ^bb0(%v: f32, %w: f32):
    %e = arith.mulf %v, %w : f32
    tile.yield %e : f32
  }
  return
})",
               {{37, 1031}, {1, 1031}, {37, 1031}},
               0.0f,
               0.0f},
        OpCase{
            "matmul_mma_sync_bf16",  // bf16 inputs, f32 accumulators and result
            R"(func.func @f(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(gelu)
      {tessera.candidate = "compiled.mma_sync"}
      : memref<?x?xbf16>, memref<?x?xbf16> -> memref<?x?xf32>
  return
})",
            {{100, 77}, {77, 33}, {33}, {100, 33}},
            1e-4f,
            1e-4f,
            {Dtype::kBF16, Dtype::kBF16}},
        OpCase{
            "matmul_mma_sync_f16_transpose_a",  // f16 result: one f16 ulp of rounding apart
            R"(func.func @f(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %bias: memref<?xf16>, %c: memref<?x?xf16>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf16>) activation(relu)
      {transpose_a, tessera.candidate = "compiled.mma_sync"}
      : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf16>
  return
})",
            {{77, 100}, {77, 33}, {33}, {100, 33}},
            1e-3f,
            2e-3f,
            {Dtype::kF16, Dtype::kF16, Dtype::kF16, Dtype::kF16}},
        OpCase{
            "batched_matmul_mma_sync_bf16",  // a rank-2 B shared by every batch
            R"(func.func @f(%a: memref<?x?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?x?xf32>) {
  tile.matmul %a, %b -> %c {tessera.candidate = "compiled.mma_sync"}
      : memref<?x?x?xbf16>, memref<?x?xbf16> -> memref<?x?x?xf32>
  return
})",
            {{3, 45, 70}, {70, 19}, {3, 45, 19}},
            1e-4f,
            1e-4f,
            {Dtype::kBF16, Dtype::kBF16}},
        OpCase{
            "matmul_mma_async_f16",  // K 72 and N 40: rows of whole 16-byte copies;
                                     // the last K stage half outside (zero-filled)
            R"(func.func @f(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(relu)
      {tessera.candidate = "compiled.mma_async"}
      : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>
  return
})",
            {{100, 72}, {72, 40}, {40}, {100, 40}},
            1e-4f,
            1e-4f,
            {Dtype::kF16, Dtype::kF16}},
        OpCase{"matmul_mma_async_tf32",  // 4 floats per copy: K 100, N 36
               R"(func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c policy(tf32) {tessera.candidate = "compiled.mma_async"}
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
})",
               {{77, 100}, {100, 36}, {77, 36}},
               1e-4f,
               1e-4f},
        OpCase{
            "batched_matmul_mma_async_bf16",  // a rank-2 B shared by every batch
            R"(func.func @f(%a: memref<?x?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?x?xbf16>) {
  tile.matmul %a, %b -> %c {tessera.candidate = "compiled.mma_async"}
      : memref<?x?x?xbf16>, memref<?x?xbf16> -> memref<?x?x?xbf16>
  return
})",
            {{3, 45, 200}, {200, 24}, {3, 45, 24}},
            1e-2f,
            1e-2f,
            {Dtype::kBF16, Dtype::kBF16, Dtype::kBF16}},
        OpCase{
            "batched_matmul_mma_async_looping_blocks",  // 65537 batches: past the grid's
                                                        // z limit, blocks loop over tiles;
                                                        // K 16: one stage per tile
            R"(func.func @f(%a: memref<?x?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?x?xf32>) {
  tile.matmul %a, %b -> %c {tessera.candidate = "compiled.mma_async"}
      : memref<?x?x?xbf16>, memref<?x?xbf16> -> memref<?x?x?xf32>
  return
})",
            {{65537, 16, 16}, {16, 16}, {65537, 16, 16}},
            1e-4f,
            1e-4f,
            {Dtype::kBF16, Dtype::kBF16}},
        OpCase{"matmul_mma_async_falls_back",  // K 77: rows not whole copies, mma_sync runs
               R"(func.func @f(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c {tessera.candidate = "compiled.mma_async"}
      : memref<?x?xf16>, memref<?x?xf16> -> memref<?x?xf32>
  return
})",
               {{100, 77}, {77, 33}, {100, 33}},
               1e-4f,
               1e-4f,
               {Dtype::kF16, Dtype::kF16}},
        OpCase{"empty",
               R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  return
})",
               {{0, 16}, {0, 16}},
               0.0f,
               0.0f}),
    [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

TEST_F(GpuTest, RowReductionsAgreeBitForBitWhateverTheInputsAlignment) {
  // warp_per_row reads rows in 128-bit chunks: with vector loads when the input is 16-byte
  // aligned, element by element (in the same order) when it is not. The same rows from an
  // aligned and from a shifted pointer must give the same bits.
  struct Form {
    const char* source;
    DLDataType dtype;
    size_t element_bytes;
  };
  const Form forms[] = {
      {R"(func.func @f(%x: memref<?x?xf32>, %s: memref<?xf32>, %p: memref<?x?xf32>) {
  tile.reduce sum %x -> %s axis = 1 {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?xf32>
  tile.softmax %x -> %p {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf32> -> memref<?x?xf32>
  return
})",
       {kDLFloat, 32, 1},
       4},
      {R"(func.func @f(%x: memref<?x?xf16>, %s: memref<?xf32>, %p: memref<?x?xf16>) {
  tile.reduce sum %x -> %s axis = 1 {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf16> -> memref<?xf32>
  tile.softmax %x -> %p {tessera.candidate = "compiled.warp_per_row"} : memref<?x?xf16> -> memref<?x?xf16>
  return
})",
       {kDLFloat, 16, 1},
       2},
  };
  constexpr int64_t kRows = 67, kLength = 3000;  // rows of whole chunks for f32 and f16
  const size_t count = kRows * kLength;
  for (const Form& form : forms) {
    SCOPED_TRACE(form.source);
    tessera_jit_module_t* module = nullptr;
    ASSERT_OK(
        tessera_jit_compile(context_, form.source, std::strlen(form.source), nullptr, &module));
    tessera_jit_function_t* function = nullptr;
    ASSERT_OK(tessera_jit_module_get_function(module, "f", 1, &function));
    // The same bytes at element 0 and at element 1 of a buffer one element longer.
    std::vector<uint8_t> values(count * form.element_bytes);
    std::mt19937 random(7);
    for (size_t i = 0; i < count; ++i) {
      const float v = std::uniform_real_distribution<float>(-4.0f, 4.0f)(random);
      if (form.element_bytes == 4) {
        std::memcpy(values.data() + 4 * i, &v, 4);
      } else {
        const uint16_t half = tessera::FloatToHalf(v);
        std::memcpy(values.data() + 2 * i, &half, 2);
      }
    }
    std::vector<std::vector<uint8_t>> sums, probabilities;
    for (size_t shift : {size_t{0}, size_t{1}}) {
      const size_t input_bytes = (count + 1) * form.element_bytes;
      std::vector<uint8_t> staged(input_bytes, 0);
      std::memcpy(staged.data() + shift * form.element_bytes, values.data(), values.size());
      void* x = nullptr;
      void* s = nullptr;
      void* p = nullptr;
      ASSERT_OK(tessera_jit_buffer_alloc(context_, input_bytes, &x));
      ASSERT_OK(tessera_jit_buffer_alloc(context_, kRows * 4, &s));
      ASSERT_OK(tessera_jit_buffer_alloc(context_, values.size(), &p));
      ASSERT_OK(tessera_jit_buffer_copy(context_, x, staged.data(), input_bytes,
                                        TESSERA_JIT_COPY_HOST_TO_DEVICE));
      int64_t matrix[] = {kRows, kLength};
      int64_t vector[] = {kRows};
      DLTensor tx{}, ts{}, tp{};
      tx.data = x;
      tx.byte_offset = shift * form.element_bytes;
      tx.device = ts.device = tp.device = {kDLCUDA, 0};
      tx.ndim = tp.ndim = 2;
      ts.ndim = 1;
      tx.dtype = tp.dtype = form.dtype;
      ts.dtype = {kDLFloat, 32, 1};
      tx.shape = tp.shape = matrix;
      ts.shape = vector;
      ts.data = s;
      tp.data = p;
      tessera_jit_arg_t args[3];
      DLTensor* views[] = {&tx, &ts, &tp};
      for (int i = 0; i < 3; ++i) {
        args[i].kind = TESSERA_JIT_ARG_TENSOR;
        args[i].value.tensor = views[i];
      }
      ASSERT_OK(tessera_jit_function_invoke(function, args, 3, nullptr, nullptr));
      ASSERT_OK(tessera_jit_stream_synchronize(context_, nullptr));
      sums.emplace_back(kRows * 4);
      probabilities.emplace_back(values.size());
      ASSERT_OK(tessera_jit_buffer_copy(context_, sums.back().data(), s, kRows * 4,
                                        TESSERA_JIT_COPY_DEVICE_TO_HOST));
      ASSERT_OK(tessera_jit_buffer_copy(context_, probabilities.back().data(), p, values.size(),
                                        TESSERA_JIT_COPY_DEVICE_TO_HOST));
      for (void* buffer : {x, s, p}) ASSERT_OK(tessera_jit_buffer_free(context_, buffer));
    }
    EXPECT_EQ(sums[0], sums[1]) << "row sums differ between aligned and shifted input";
    EXPECT_EQ(probabilities[0], probabilities[1]) << "softmax differs";
    tessera_jit_module_destroy(module);
  }
}

TEST_F(GpuTest, CublasServesMatmulAndMatchesTheHost) {
  ASSERT_OK(tessera_jit_context_register_default_libraries(context_, "nvptx"));
  const char* source =
      R"(func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c {transpose_b} : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
})";
  DeviceTensor a(context_, {96, 130}, 1), b(context_, {77, 130}, 2), c(context_, {96, 77}, 3);
  std::vector<DLTensor> device = {a.View(true), b.View(true), c.View(true)};
  std::vector<DLTensor> host = {a.View(false), b.View(false), c.View(false)};
  auto run = [&](const char* target, const char* delegate, std::vector<DLTensor>& views) {
    tessera_jit_compile_options_t options;
    tessera_jit_compile_options_init(&options);
    options.target = target;
    options.matmul_delegate = delegate;
    tessera_jit_module_t* module = nullptr;
    ASSERT_OK(tessera_jit_compile(context_, source, std::strlen(source), &options, &module));
    tessera_jit_function_t* f = nullptr;
    ASSERT_OK(tessera_jit_module_get_function(module, "f", 1, &f));
    tessera_jit_arg_t args[3];
    for (int i = 0; i < 3; ++i) {
      args[i].kind = TESSERA_JIT_ARG_TENSOR;
      args[i].value.tensor = &views[i];
    }
    ASSERT_OK(tessera_jit_function_invoke(f, args, 3, nullptr, nullptr));
    ASSERT_OK(tessera_jit_stream_synchronize(context_, nullptr));
    tessera_jit_module_destroy(module);
  };
  const uint64_t before = tessera_jit_get_delegate_dispatch_count();
  run("nvptx", "cublas", device);
  EXPECT_EQ(tessera_jit_get_delegate_dispatch_count(), before + 1);
  run("host", nullptr, host);
  std::vector<float> result = c.Download();
  for (size_t i = 0; i < result.size(); ++i) {
    EXPECT_LE(std::fabs(result[i] - c.host[i]), 1e-3f + 1e-5f * std::fabs(c.host[i])) << i;
  }
}

/// A file of the examples folder: $TESSERA_EXAMPLES_DIR (the GPU bundle sets it), else Bazel's
/// runfiles.
std::string ReadExample(const std::string& name) {
  const char* dir = std::getenv("TESSERA_EXAMPLES_DIR");
  const char* runfiles = std::getenv("TEST_SRCDIR");
  std::string path = dir != nullptr        ? std::string(dir) + "/" + name
                     : runfiles != nullptr ? std::string(runfiles) + "/tessera_jit/examples/" + name
                                           : "examples/" + name;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  EXPECT_NE(file, nullptr) << "cannot open " << path;
  std::string text;
  if (file == nullptr) return text;
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof(chunk), file)) > 0;) text.append(chunk, n);
  std::fclose(file);
  return text;
}

void Invoke(tessera_jit_module_t* module, const char* entry, std::vector<DLTensor>& views) {
  tessera_jit_function_t* f = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, entry, std::strlen(entry), &f));
  std::vector<tessera_jit_arg_t> args(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    args[i].kind = TESSERA_JIT_ARG_TENSOR;
    args[i].value.tensor = &views[i];
  }
  ASSERT_OK(tessera_jit_function_invoke(f, args.data(), args.size(), nullptr, nullptr));
}

// examples/delegates.mlir as its header says (cuBLAS, the hand-written softmax compiled with
// NVRTC, the inline PTX), against float64 references within each delegate's declared bounds.
TEST_F(GpuTest, TheDelegationExampleRunsWithinItsDeclaredTolerances) {
  ASSERT_OK(tessera_jit_context_register_default_libraries(context_, "nvptx"));
  const std::string kernel = ReadExample("row_softmax_f32.cu");
  ASSERT_OK(tessera_jit_context_register_kernel_image(context_, "softmax_kernels", kernel.data(),
                                                      kernel.size(), TESSERA_JIT_IMAGE_CUDA_SOURCE,
                                                      nullptr));
  const std::string source = ReadExample("delegates.mlir");
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source.data(), source.size(), nullptr, &module));

  DeviceTensor q(context_, {128, 64}, 11), k(context_, {128, 64}, 12);
  DeviceTensor scores(context_, {128, 128}, 13), probs(context_, {128, 128}, 14);
  std::vector<DLTensor> views = {q.View(true), k.View(true), scores.View(true), probs.View(true)};
  Invoke(module, "attention_scores", views);
  ASSERT_OK(tessera_jit_stream_synchronize(context_, nullptr));
  const std::vector<float> got_scores = scores.Download();
  const std::vector<float> got_probs = probs.Download();
  for (int i = 0; i < 128; ++i) {
    std::vector<double> row(128);
    for (int j = 0; j < 128; ++j) {
      double dot = 0;
      for (int d = 0; d < 64; ++d) dot += double(q.host[i * 64 + d]) * k.host[j * 64 + d];
      row[j] = dot;
      // cuBLAS: tolerance = 1e-4, tolerance_rel = 1e-5.
      EXPECT_LE(std::fabs(got_scores[i * 128 + j] - dot), 1e-4 + 1e-5 * std::fabs(dot))
          << "scores[" << i << "][" << j << "]";
    }
    // The softmax of the scores the device computed (reference_exact: atol 1e-3, rtol 1e-5).
    double max = -INFINITY, sum = 0;
    for (int j = 0; j < 128; ++j) max = std::max(max, double(got_scores[i * 128 + j]));
    for (int j = 0; j < 128; ++j) sum += std::exp(double(got_scores[i * 128 + j]) - max);
    for (int j = 0; j < 128; ++j) {
      const double want = std::exp(double(got_scores[i * 128 + j]) - max) / sum;
      EXPECT_LE(std::fabs(got_probs[i * 128 + j] - want), 1e-3 + 1e-5 * want)
          << "probs[" << i << "][" << j << "]";
    }
  }

  // exp2 through ex2.approx.ftz.f32 over [-130, 126): subnormal results (below -126) flush to
  // zero within the absolute floor; 2^128 and up would overflow f32.
  DeviceTensor x(context_, {4096}, 15), y(context_, {4096}, 16);
  for (size_t i = 0; i < x.host.size(); ++i) x.host[i] = -130.0f + 256.0f * i / x.host.size();
  ASSERT_OK(tessera_jit_buffer_copy(context_, x.device, x.host.data(), x.Bytes(),
                                    TESSERA_JIT_COPY_HOST_TO_DEVICE));
  std::vector<DLTensor> exp_views = {x.View(true), y.View(true)};
  Invoke(module, "exp2_fast", exp_views);
  ASSERT_OK(tessera_jit_stream_synchronize(context_, nullptr));
  const std::vector<float> got = y.Download();
  for (size_t i = 0; i < got.size(); ++i) {
    const double want = std::exp2(double(x.host[i]));
    // Declared: tolerance = 1e-37, tolerance_rel = 1e-6.
    EXPECT_LE(std::fabs(got[i] - want), 1e-37 + 1e-6 * want) << "exp2(" << x.host[i] << ")";
  }
  tessera_jit_module_destroy(module);
}

// examples/decoder_block.mlir (norm, batched matmuls, rope, causal GQA attention, the fused
// residual norm, the gated MLP) on the device against the same entry on the host target.
TEST_F(GpuTest, TheDecoderBlockMatchesTheHost) {
  const std::string source = ReadExample("decoder_block.mlir");
  const int64_t b = 2, s = 37;
  const std::vector<std::vector<int64_t>> shapes = {{b, 1, s, 64},
                                                    {s, 8},
                                                    {s, 8},
                                                    {64},
                                                    {4, 64, 16},
                                                    {2, 64, 16},
                                                    {2, 64, 16},
                                                    {4, 16, 64},
                                                    {64},
                                                    {64, 128},
                                                    {64, 128},
                                                    {128, 64},
                                                    {b, 1, s, 64},
                                                    // workspace: h, q, k, v, a, heads, g, gate, up
                                                    {b, 1, s, 64},
                                                    {b, 4, s, 16},
                                                    {b, 2, s, 16},
                                                    {b, 2, s, 16},
                                                    {b, 4, s, 16},
                                                    {b, 4, s, 64},
                                                    {b, 1, s, 64},
                                                    {b, 1, s, 128},
                                                    {b, 1, s, 128}};
  std::vector<std::unique_ptr<DeviceTensor>> tensors;
  for (size_t i = 0; i < shapes.size(); ++i) {
    tensors.push_back(std::make_unique<DeviceTensor>(context_, shapes[i], 500 + i));
  }
  for (const char* target : {"nvptx", "host"}) {
    tessera_jit_compile_options_t options;
    tessera_jit_compile_options_init(&options);
    options.target = target;
    tessera_jit_module_t* module = nullptr;
    ASSERT_OK(tessera_jit_compile(context_, source.data(), source.size(), &options, &module));
    std::vector<DLTensor> views;
    for (auto& t : tensors) views.push_back(t->View(std::string(target) == "nvptx"));
    Invoke(module, "decoder_block", views);
    ASSERT_OK(tessera_jit_stream_synchronize(context_, nullptr));
    tessera_jit_module_destroy(module);
  }
  const std::vector<float> device = tensors[12]->Download();  // %out
  for (size_t i = 0; i < device.size(); ++i) {
    const float host = tensors[12]->host[i];
    EXPECT_LE(std::fabs(device[i] - host), 1e-4f + 1e-4f * std::fabs(host)) << "element " << i;
  }
}

TEST_F(GpuTest, TheArbiterMeasuresCublasAgainstTheCompiledMatmulWithCudaEvents) {
  ASSERT_OK(tessera_jit_context_register_default_libraries(context_, "nvptx"));
  // A large matmul (cuBLAS is expected to win), then one with an epilogue (root_only declines).
  const char* source = R"(func.func @f(%a: memref<1024x1024xf32>, %b: memref<1024x1024xf32>,
    %c: memref<1024x1024xf32>, %bias: memref<1024xf32>, %d: memref<1024x1024xf32>) {
  tile.matmul %a, %b -> %c : memref<1024x1024xf32>, memref<1024x1024xf32> -> memref<1024x1024xf32>
  tile.matmul %a, %b -> %d bias(%bias : memref<1024xf32>) activation(relu)
      : memref<1024x1024xf32>, memref<1024x1024xf32> -> memref<1024x1024xf32>
  return
})";
  const std::string decisions = CompileForDecisions(source);
  EXPECT_THAT(decisions, HasSubstr("\"timing_source\": \"CUDA events on a non-default stream\""));
  EXPECT_THAT(decisions, HasSubstr("\"winner\": \"cublas\""));
  EXPECT_THAT(decisions, HasSubstr("it covers root_only and the op has a fused epilogue"));
  EXPECT_THAT(decisions, ::testing::Not(HasSubstr("\"gate\": \"accuracy\"")));
}

TEST_F(GpuTest, TheArbiterProbesAndTimesTheTensorCoreVariantOnNarrowMatmuls) {
  // bf16 storage and the tf32 policy: compiled vs compiled.mma_sync, both accuracy-gated on
  // the probes (inputs exact in the storage type) and timed; which one wins is the device's.
  const char* source = R"(func.func @f(%a: memref<512x512xbf16>, %b: memref<512x512xbf16>,
    %c: memref<512x512xbf16>, %x: memref<512x512xf32>, %y: memref<512x512xf32>,
    %z: memref<512x512xf32>) {
  tile.matmul %a, %b -> %c : memref<512x512xbf16>, memref<512x512xbf16> -> memref<512x512xbf16>
  tile.matmul %x, %y -> %z policy(tf32) : memref<512x512xf32>, memref<512x512xf32> -> memref<512x512xf32>
  return
})";
  const std::string decisions = CompileForDecisions(source);
  EXPECT_THAT(decisions, HasSubstr("\"timing_source\": \"CUDA events on a non-default stream\""));
  EXPECT_THAT(decisions, HasSubstr("\"id\": \"compiled.mma_sync\""));
  EXPECT_THAT(decisions, HasSubstr("\"id\": \"compiled.mma_async\""));
  EXPECT_THAT(decisions, ::testing::Not(HasSubstr("not probed")));
  EXPECT_THAT(decisions, ::testing::Not(HasSubstr("\"gate\": \"accuracy\"")));
}

TEST_F(GpuTest, TheArbiterProbesAndTimesTheVariantsOfMapReduceAndSoftmax) {
  // Each op alone as a probe function, every variant checked against the baseline kernel's
  // output on the device, then raced; which one wins is the device's.
  const char* source = R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>,
    %z: memref<?x?xf32>, %s: memref<?xf32>) {
  tile.map ins(%x : memref<?x?xf32>) outs(%z : memref<?x?xf32>) {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    tile.yield %e : f32
  }
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  tile.reduce sum %x -> %s axis = 1 : memref<?x?xf32> -> memref<?xf32>
  tile.norm rms %x -> %z weight(%s : memref<?xf32>) : memref<?x?xf32> -> memref<?x?xf32>
  return
})";
  const std::string decisions = CompileForDecisions(source);
  EXPECT_THAT(decisions, HasSubstr("\"timing_source\": \"CUDA events on a non-default stream\""));
  for (const char* id : {"compiled.vectorized", "compiled.warp_per_row", "compiled.online"}) {
    EXPECT_THAT(decisions, HasSubstr(std::string("\"id\": \"") + id + "\"")) << id;
  }
  EXPECT_THAT(decisions, ::testing::Not(HasSubstr("not probed")));
  EXPECT_THAT(decisions, ::testing::Not(HasSubstr("\"gate\": \"accuracy\"")));
  EXPECT_THAT(decisions, ::testing::Not(HasSubstr("\"gate\": \"availability\"")));
}

TEST_F(GpuTest, HostMemoryIsRejectedBeforeLaunch) {
  const char* source = R"(func.func @f(%x: memref<?xf32>) {
  tile.map outs(%x : memref<?xf32>) {
    %z = arith.constant 0.0 : f32
    tile.yield %z : f32
  }
  return
})";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source, std::strlen(source), nullptr, &module));
  tessera_jit_function_t* function = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "f", 1, &function));
  std::vector<float> host(8);
  int64_t shape[] = {8};
  DLTensor t{host.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  tessera_jit_arg_t arg{};
  arg.kind = TESSERA_JIT_ARG_TENSOR;
  arg.value.tensor = &t;
  tessera_jit_error_t* error = tessera_jit_function_invoke(function, &arg, 1, nullptr, nullptr);
  EXPECT_EQ(tessera_jit_error_code(error), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(TakeMessage(error), HasSubstr("expected memory of that device"));
  tessera_jit_module_destroy(module);
}

TEST_F(GpuTest, MismatchedSizesAreRefusedAndTheCallersContextIsRestored) {
  const char* source = R"(func.func @copy(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    tile.yield %v : f32
  }
  return
})";
  tessera_jit_module_t* module = nullptr;
  ASSERT_OK(tessera_jit_compile(context_, source, std::strlen(source), nullptr, &module));
  tessera_jit_function_t* function = nullptr;
  ASSERT_OK(tessera_jit_module_get_function(module, "copy", 4, &function));
  DeviceTensor x(context_, {4}, 1), y(context_, {1 << 20}, 2);
  DLTensor xv = x.View(true), yv = y.View(true);
  tessera_jit_arg_t args[2] = {};
  args[0].kind = args[1].kind = TESSERA_JIT_ARG_TENSOR;
  args[0].value.tensor = &xv;
  args[1].value.tensor = &yv;
  tessera_jit_error_t* error = tessera_jit_function_invoke(function, args, 2, nullptr, nullptr);
  EXPECT_EQ(tessera_jit_error_code(error), TESSERA_JIT_INVALID_ARGUMENT);
  EXPECT_THAT(
      TakeMessage(error),
      HasSubstr("@copy: dimension 0 of argument #1 'y' is 1048576 but argument #0 'x' has 4"));
  // A caller without a current CUDA context has none after a call that launched kernels.
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(cuda, nullptr);
  using GetCurrent = int (*)(void**);
  using SetCurrent = int (*)(void*);
  auto get_current = reinterpret_cast<GetCurrent>(dlsym(cuda, "cuCtxGetCurrent"));
  auto set_current = reinterpret_cast<SetCurrent>(dlsym(cuda, "cuCtxSetCurrent"));
  ASSERT_TRUE(get_current != nullptr && set_current != nullptr);
  ASSERT_EQ(set_current(nullptr), 0);
  DLTensor same = y.View(true);
  int64_t four[] = {4};
  same.shape = four;
  args[1].value.tensor = &same;
  ASSERT_OK(tessera_jit_function_invoke(function, args, 2, nullptr, nullptr));
  void* current = reinterpret_cast<void*>(1);
  ASSERT_EQ(get_current(&current), 0);
  EXPECT_EQ(current, nullptr);
  ASSERT_OK(tessera_jit_stream_synchronize(context_, nullptr));
  std::vector<float> out = y.Download();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], x.host[i]);
  tessera_jit_module_destroy(module);
  dlclose(cuda);
}

/// One row of `columns` floats summed by one thread block: a kernel that runs for milliseconds
/// while occupying a single multiprocessor, so that two of them on two streams can overlap.
struct LongRowSum {
  explicit LongRowSum(tessera_jit_context_t* context, int64_t columns)
      : x(context, {1, columns}, 7), y(context, {1}, 8) {
    const char* source = R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
})";
    EXPECT_EQ(tessera_jit_compile(context, source, std::strlen(source), nullptr, &module), nullptr);
    EXPECT_EQ(tessera_jit_module_get_function(module, "f", 1, &function), nullptr);
    xv = x.View(true);
    yv = y.View(true);
    args[0].kind = args[1].kind = TESSERA_JIT_ARG_TENSOR;
    args[0].value.tensor = &xv;
    args[1].value.tensor = &yv;
  }
  ~LongRowSum() { tessera_jit_module_destroy(module); }
  tessera_jit_error_t* Invoke(void* stream) {
    return tessera_jit_function_invoke(function, args, 2, stream, nullptr);
  }
  DeviceTensor x, y;
  DLTensor xv{}, yv{};
  tessera_jit_arg_t args[2] = {};
  tessera_jit_module_t* module = nullptr;
  tessera_jit_function_t* function = nullptr;
};

/// Milliseconds between two events recorded around `work` on `stream`.
template <typename Work>
float TimeOnStream(tessera_jit_context_t* context, void* stream, Work work) {
  tessera_jit_event_t* start = nullptr;
  tessera_jit_event_t* stop = nullptr;
  EXPECT_EQ(tessera_jit_event_create(context, 0, &start), nullptr);
  EXPECT_EQ(tessera_jit_event_create(context, 0, &stop), nullptr);
  EXPECT_EQ(tessera_jit_event_record(start, stream), nullptr);
  work();
  EXPECT_EQ(tessera_jit_event_record(stop, stream), nullptr);
  float ms = -1.0f;
  EXPECT_EQ(tessera_jit_event_elapsed_time(start, stop, &ms), nullptr);
  tessera_jit_event_destroy(start);
  tessera_jit_event_destroy(stop);
  return ms;
}

TEST_F(GpuTest, AnInvokeOnAStreamReturnsBeforeItsKernelFinishes) {
  LongRowSum sum(context_, int64_t{1} << 26);  // 256 MiB read by one block: tens of ms
  void* stream = nullptr;
  ASSERT_OK(tessera_jit_stream_create(context_, TESSERA_JIT_STREAM_NON_BLOCKING, &stream));
  ASSERT_OK(sum.Invoke(stream));  // loads the module and warms up
  ASSERT_OK(tessera_jit_stream_synchronize(context_, stream));
  tessera_jit_event_t* done = nullptr;
  ASSERT_OK(tessera_jit_event_create(context_, TESSERA_JIT_EVENT_DISABLE_TIMING, &done));
  ASSERT_OK(sum.Invoke(stream));
  ASSERT_OK(tessera_jit_event_record(done, stream));
  int32_t stream_done = 1, event_done = 1;
  ASSERT_OK(tessera_jit_stream_query(context_, stream, &stream_done));
  ASSERT_OK(tessera_jit_event_query(done, &event_done));
  EXPECT_EQ(stream_done, 0) << "the invoke waited for its kernel";
  EXPECT_EQ(event_done, 0);
  ASSERT_OK(tessera_jit_event_synchronize(done));
  ASSERT_OK(tessera_jit_event_query(done, &event_done));
  ASSERT_OK(tessera_jit_stream_query(context_, stream, &stream_done));
  EXPECT_EQ(event_done, 1);
  EXPECT_EQ(stream_done, 1);
  double expected = 0.0;
  for (float v : sum.x.host) expected += v;
  EXPECT_NEAR(sum.y.Download()[0], expected, 1e-2 * std::sqrt(double(sum.x.host.size())));
  // A timing-disabled event has no elapsed time.
  float ms = 0.0f;
  tessera_jit_error_t* error = tessera_jit_event_elapsed_time(done, done, &ms);
  EXPECT_EQ(tessera_jit_error_code(error), TESSERA_JIT_FAILED_PRECONDITION);
  tessera_jit_error_destroy(error);
  tessera_jit_event_destroy(done);
  ASSERT_OK(tessera_jit_stream_destroy(context_, stream));
}

TEST_F(GpuTest, TwoStreamsOverlap) {
  LongRowSum a(context_, int64_t{1} << 24), b(context_, int64_t{1} << 24);
  void* s1 = nullptr;
  void* s2 = nullptr;
  ASSERT_OK(tessera_jit_stream_create(context_, TESSERA_JIT_STREAM_NON_BLOCKING, &s1));
  ASSERT_OK(tessera_jit_stream_create(context_, TESSERA_JIT_STREAM_NON_BLOCKING, &s2));
  ASSERT_OK(a.Invoke(s1));  // warm-up: module loads
  ASSERT_OK(b.Invoke(s2));
  ASSERT_OK(tessera_jit_stream_synchronize(context_, s1));
  ASSERT_OK(tessera_jit_stream_synchronize(context_, s2));
  // One kernel alone on s1, then one on each stream: s2 starts after s1's start event and s1's
  // stop waits for s2, so the second interval spans both kernels.
  const float alone = TimeOnStream(context_, s1, [&] { EXPECT_EQ(a.Invoke(s1), nullptr); });
  tessera_jit_event_t* forked = nullptr;
  tessera_jit_event_t* joined = nullptr;
  ASSERT_OK(tessera_jit_event_create(context_, TESSERA_JIT_EVENT_DISABLE_TIMING, &forked));
  ASSERT_OK(tessera_jit_event_create(context_, TESSERA_JIT_EVENT_DISABLE_TIMING, &joined));
  const float both = TimeOnStream(context_, s1, [&] {
    EXPECT_EQ(tessera_jit_event_record(forked, s1), nullptr);
    EXPECT_EQ(tessera_jit_stream_wait_event(context_, s2, forked), nullptr);
    EXPECT_EQ(a.Invoke(s1), nullptr);
    EXPECT_EQ(b.Invoke(s2), nullptr);
    EXPECT_EQ(tessera_jit_event_record(joined, s2), nullptr);
    EXPECT_EQ(tessera_jit_stream_wait_event(context_, s1, joined), nullptr);
  });
  EXPECT_GT(alone, 0.5f) << "the kernel is too short to tell overlap from a sequence";
  EXPECT_LT(both, 1.6f * alone) << "two one-block kernels on two streams ran one after the other"
                                << " (alone " << alone << " ms, both " << both << " ms)";
  tessera_jit_event_destroy(forked);
  tessera_jit_event_destroy(joined);
  ASSERT_OK(tessera_jit_stream_destroy(context_, s1));
  ASSERT_OK(tessera_jit_stream_destroy(context_, s2));
}

}  // namespace
