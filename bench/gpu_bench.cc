// GPU benchmark, one run, one table (+ JSON): C API invoke overhead against a raw
// cuLaunchKernel of the same empty kernel; elementwise bandwidth against a device-to-device
// copy (baseline and vectorized map); the time of every Tile op, with its kernel variants
// side by side (forced with tessera.candidate); and cuBLAS's bf16 GEMM beside the bf16 matmuls.
// Device times are CUDA events on a non-default stream, medians of repeated runs after warm-up, on
// non-zero data. Without a GPU it says why and exits 2.
//
//   bazel run //bench:gpu_bench -- [--json PATH]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/gpu_runtime.h"
#include "tessera_jit.h"

namespace {

using tessera::runtime::GpuRuntime;

void Die(const std::string& what, tessera_jit_error_t* error) {
  if (error == nullptr) return;
  std::cerr << what << ": " << tessera_jit_error_message(error, nullptr) << "\n";
  std::exit(1);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Bench {
  tessera_jit_context_t* context = nullptr;
  GpuRuntime* runtime = nullptr;
  CUstream stream = nullptr;
  CUevent start = nullptr;
  CUevent stop = nullptr;

  /// Median device time (ms) of `body` enqueued on `stream`, CUDA events, after warm-up.
  double DeviceMs(const std::function<void()>& body, int runs = 20) {
    for (int i = 0; i < 3; ++i) body();
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
      Check(runtime->RecordEvent(start, stream));
      body();
      Check(runtime->RecordEvent(stop, stream));
      auto ms = runtime->ElapsedMs(start, stop);
      Check(ms.status());
      times.push_back(*ms);
    }
    return Median(times);
  }

  static void Check(const absl::Status& status) {
    if (status.ok()) return;
    std::cerr << status << "\n";
    std::exit(1);
  }

  tessera_jit_function_t* Compile(const std::string& source, const char* entry,
                                  tessera_jit_module_t** module) {
    Die("compile", tessera_jit_compile(context, source.data(), source.size(), nullptr, module));
    tessera_jit_function_t* function = nullptr;
    Die("lookup", tessera_jit_module_get_function(*module, entry, std::strlen(entry), &function));
    return function;
  }

  /// `count` bf16 values (0.25 … 1.25, rounded toward zero) on the device.
  void* BufferBf16(size_t count) {
    void* pointer = nullptr;
    Die("alloc", tessera_jit_buffer_alloc(context, count * sizeof(uint16_t), &pointer));
    std::vector<uint16_t> host(count);
    for (size_t i = 0; i < count; ++i) {
      const float value = 0.25f + static_cast<float>(i % 1000) * 1e-3f;
      uint32_t bits;
      std::memcpy(&bits, &value, sizeof(bits));
      host[i] = static_cast<uint16_t>(bits >> 16);
    }
    Die("copy", tessera_jit_buffer_copy(context, pointer, host.data(), count * sizeof(uint16_t),
                                        TESSERA_JIT_COPY_HOST_TO_DEVICE));
    return pointer;
  }

  void* Buffer(size_t floats) {
    void* pointer = nullptr;
    Die("alloc", tessera_jit_buffer_alloc(context, floats * sizeof(float), &pointer));
    std::vector<float> host(floats);
    for (size_t i = 0; i < floats; ++i) host[i] = 0.25f + static_cast<float>(i % 1000) * 1e-3f;
    Die("copy", tessera_jit_buffer_copy(context, pointer, host.data(), floats * sizeof(float),
                                        TESSERA_JIT_COPY_HOST_TO_DEVICE));
    return pointer;
  }
};

struct Tensor {
  std::vector<int64_t> shape;
  DLTensor view{};
  Tensor(void* data, std::vector<int64_t> dims, DLDataType dtype = {kDLFloat, 32, 1})
      : shape(std::move(dims)) {
    view.data = data;
    view.device = {kDLCUDA, 0};
    view.ndim = static_cast<int32_t>(shape.size());
    view.dtype = dtype;
    view.shape = shape.data();
  }
  tessera_jit_arg_t Arg() {
    tessera_jit_arg_t a{};
    a.kind = TESSERA_JIT_ARG_TENSOR;
    a.value.tensor = &view;
    return a;
  }
};

/// cuBLAS's bf16 GEMM (f32 accumulation and result, cublasGemmEx), dlopen'd from the machine's
/// CUDA toolkit: what the bf16 matmul target is measured against.
class CublasBf16 {
 public:
  /// Null (and `why`) when libcublas.so.13 or its entry points are missing.
  static std::unique_ptr<CublasBf16> Load(CUstream stream, std::string* why) {
    void* library = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      *why = dlerror();
      return nullptr;
    }
    auto cublas = std::unique_ptr<CublasBf16>(new CublasBf16(library));
    cublas->create_ = reinterpret_cast<Create>(dlsym(library, "cublasCreate_v2"));
    cublas->destroy_ = reinterpret_cast<Destroy>(dlsym(library, "cublasDestroy_v2"));
    cublas->set_stream_ = reinterpret_cast<SetStream>(dlsym(library, "cublasSetStream_v2"));
    cublas->gemm_ = reinterpret_cast<GemmEx>(dlsym(library, "cublasGemmEx"));
    if (!cublas->create_ || !cublas->destroy_ || !cublas->set_stream_ || !cublas->gemm_) {
      *why = "libcublas.so.13 lacks cublasCreate_v2, cublasSetStream_v2 or cublasGemmEx";
      return nullptr;
    }
    if (int status = cublas->create_(&cublas->handle_); status != 0) {
      *why = absl::StrCat("cublasCreate_v2 returned ", status);
      return nullptr;
    }
    if (int status = cublas->set_stream_(cublas->handle_, stream); status != 0) {
      *why = absl::StrCat("cublasSetStream_v2 returned ", status);
      return nullptr;
    }
    return cublas;
  }

  ~CublasBf16() {
    if (handle_ != nullptr) destroy_(handle_);
    dlclose(library_);
  }

  /// Row-major C[m, n] = A[m, k] B[k, n] (A, B bf16; C f32), as column-major Cᵀ = Bᵀ Aᵀ.
  int Gemm(const void* a, const void* b, void* c, int m, int n, int k) {
    constexpr int kOpN = 0, kBf16 = 14, kF32 = 0, kCompute32F = 68, kDefaultAlgo = -1;
    const float alpha = 1.0f, beta = 0.0f;
    return gemm_(handle_, kOpN, kOpN, n, m, k, &alpha, b, kBf16, n, a, kBf16, k, &beta, c, kF32, n,
                 kCompute32F, kDefaultAlgo);
  }

 private:
  using Create = int (*)(void**);
  using Destroy = int (*)(void*);
  using SetStream = int (*)(void*, CUstream);
  using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int,
                         const void*, int, int, const void*, void*, int, int, int, int);
  explicit CublasBf16(void* library) : library_(library) {}
  void* library_;
  void* handle_ = nullptr;
  Create create_ = nullptr;
  Destroy destroy_ = nullptr;
  SetStream set_stream_ = nullptr;
  GemmEx gemm_ = nullptr;
};

constexpr char kEmpty[] = R"(module attributes {gpu.container_module} {
  gpu.module @bench {
    gpu.func @empty() kernel { gpu.return }
  }
  func.func @launch_empty() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @bench::@empty blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
})";

}  // namespace

int main(int argc, char** argv) {
  std::string json_path = "gpu_bench.json";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--json") json_path = argv[++i];
  }
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) {
    std::cout << "gpu_bench: no GPU: " << runtime.status().message() << "\n";
    return 2;
  }
  Bench b;
  b.runtime = *runtime;
  tessera_jit_context_options_t options;
  tessera_jit_context_options_init(&options);
  options.default_target = "nvptx";
  Die("context", tessera_jit_context_create(&options, &b.context));
  auto stream = b.runtime->CreateStream(0);
  if (!stream.ok()) {
    std::cerr << stream.status() << "\n";
    return 1;
  }
  b.stream = *stream;
  const auto& d = b.runtime->driver();
  auto start = b.runtime->CreateEvent(0);
  auto stop = b.runtime->CreateEvent(0);
  Bench::Check(start.status());
  Bench::Check(stop.status());
  b.start = *start;
  b.stop = *stop;
  tessera_jit_device_info_t info;
  info.struct_size = sizeof(info);
  Die("info", tessera_jit_device_get_info(0, &info));

  std::vector<std::string> rows;
  std::string json = absl::StrCat("{\n  \"benchmark\": \"gpu\",\n  \"device\": \"", info.name,
                                  "\",\n  \"arch\": \"", info.arch, "\",\n  \"rows\": [\n");
  auto add = [&](const std::string& what, double value, const std::string& unit,
                 const std::string& note) {
    rows.push_back(absl::StrFormat("| %-44s | %12.3f | %-6s | %s |", what, value, unit, note));
    absl::StrAppend(&json, rows.size() > 1 ? ",\n" : "",
                    absl::StrFormat("    {\"what\": \"%s\", \"value\": %.6f, \"unit\": \"%s\"}",
                                    what, value, unit));
  };

  // 1. Invoke overhead: the same empty kernel through the C API and through cuLaunchKernel.
  {
    tessera_jit_module_t* module = nullptr;
    tessera_jit_function_t* launch = b.Compile(kEmpty, "launch_empty", &module);
    const char* cubin = nullptr;
    size_t size = 0;
    Die("cubin", tessera_jit_module_get_text(module, TESSERA_JIT_TEXT_CUBIN, &cubin, &size));
    auto raw_module = b.runtime->LoadModule(0, std::string(cubin, size), "");
    auto raw = b.runtime->GetFunction(*raw_module, "empty");
    constexpr int kLaunches = 2000;
    auto host_us = [&](const std::function<void()>& body) {
      for (int i = 0; i < 100; ++i) body();
      d.cuStreamSynchronize(b.stream);
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kLaunches; ++i) body();
      auto t1 = std::chrono::steady_clock::now();
      d.cuStreamSynchronize(b.stream);
      return std::chrono::duration<double, std::micro>(t1 - t0).count() / kLaunches;
    };
    double raw_us =
        host_us([&] { (void)b.runtime->Launch(*raw, {1, 1, 1}, {1, 1, 1}, 0, b.stream, nullptr); });
    double api_us = host_us(
        [&] { Die("invoke", tessera_jit_function_invoke(launch, nullptr, 0, b.stream, nullptr)); });
    add("raw cuLaunchKernel, empty kernel (host)", raw_us, "us", "per launch");
    add("tessera_jit_function_invoke, empty kernel", api_us, "us", "per launch");
    add("invoke overhead over raw launch", api_us - raw_us, "us", "target <= 0.5 us");
    tessera_jit_module_destroy(module);
  }

  // 2. Elementwise bandwidth vs a device-to-device copy (read n + write n floats each).
  {
    const size_t n = size_t{1} << 28;  // 1 GiB per buffer
    void* x = b.Buffer(n);
    void* y = b.Buffer(n);
    // y = 1.5 x, with the map's attributes (a forced candidate) spliced in.
    auto scale_source = [](const std::string& attributes) {
      return absl::StrCat(R"(func.func @scale(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) )",
                          attributes, R"({
  ^bb0(%v: f32):
    %c = arith.constant 1.5 : f32
    %r = arith.mulf %v, %c : f32
    tile.yield %r : f32
  }
  return
})");
    };
    tessera_jit_module_t* module = nullptr;
    tessera_jit_function_t* scale = b.Compile(scale_source(""), "scale", &module);
    Tensor tx(x, {static_cast<int64_t>(n)}), ty(y, {static_cast<int64_t>(n)});
    tessera_jit_arg_t args[] = {tx.Arg(), ty.Arg()};
    double copy_ms = b.DeviceMs([&] {
      d.cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(y), reinterpret_cast<CUdeviceptr>(x),
                          n * sizeof(float), b.stream);
    });
    double map_ms = b.DeviceMs(
        [&] { Die("invoke", tessera_jit_function_invoke(scale, args, 2, b.stream, nullptr)); });
    tessera_jit_module_t* vector_module = nullptr;
    tessera_jit_function_t* vector_scale =
        b.Compile(scale_source("attributes {tessera.candidate = \"compiled.vectorized\"} "),
                  "scale", &vector_module);
    double vector_ms = b.DeviceMs([&] {
      Die("invoke", tessera_jit_function_invoke(vector_scale, args, 2, b.stream, nullptr));
    });
    double bytes = 2.0 * n * sizeof(float);
    add("device-to-device copy bandwidth", bytes / copy_ms / 1e6, "GB/s", "1 GiB in, 1 GiB out");
    add("tile.map (y = 1.5 x) bandwidth", bytes / map_ms / 1e6, "GB/s",
        absl::StrFormat("%.1f %% of copy (target >= 85 %%)", 100.0 * copy_ms / map_ms));
    add("tile.map, compiled.vectorized, bandwidth", bytes / vector_ms / 1e6, "GB/s",
        absl::StrFormat("%.1f %% of copy (target >= 85 %%)", 100.0 * copy_ms / vector_ms));
    tessera_jit_module_destroy(module);
    tessera_jit_module_destroy(vector_module);
    Die("free", tessera_jit_buffer_free(b.context, x));
    Die("free", tessera_jit_buffer_free(b.context, y));
  }

  // 3. Every Tile op, baseline and kernel variants side by side (forced with tessera.candidate).
  struct Op {
    const char* name;
    std::string source;
    std::vector<std::vector<int64_t>> shapes;
    bool bf16 = false;  ///< A and B are bf16
  };
  auto forced = [](const char* candidate) {
    return candidate == nullptr ? std::string()
                                : absl::StrCat(" {tessera.candidate = \"", candidate, "\"}");
  };
  auto reduce = [&](const char* candidate) {
    return absl::StrCat(R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1)",
                        forced(candidate), R"( : memref<?x?xf32> -> memref<?xf32>
  return
})");
  };
  auto softmax = [&](const char* candidate) {
    return absl::StrCat(R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y)",
                        forced(candidate), R"( : memref<?x?xf32> -> memref<?x?xf32>
  return
})");
  };
  auto bf16_matmul = [&](const char* candidate) {
    return absl::StrCat(
        R"(func.func @f(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c)",
        forced(candidate), R"( : memref<?x?xbf16>, memref<?x?xbf16> -> memref<?x?xf32>
  return
})");
  };
  const std::vector<Op> variants = {
      {"tile.reduce sum, 65536 x 64, compiled", reduce(nullptr), {{65536, 64}, {65536}}},
      {"tile.reduce sum, 65536 x 64, warp_per_row",
       reduce("compiled.warp_per_row"),
       {{65536, 64}, {65536}}},
      {"tile.reduce sum, 4096 x 4096, warp_per_row",
       reduce("compiled.warp_per_row"),
       {{4096, 4096}, {4096}}},
      {"tile.softmax, 65536 x 64, compiled", softmax(nullptr), {{65536, 64}, {65536, 64}}},
      {"tile.softmax, 65536 x 64, warp_per_row",
       softmax("compiled.warp_per_row"),
       {{65536, 64}, {65536, 64}}},
      {"tile.softmax, 4096 x 4096, online",
       softmax("compiled.online"),
       {{4096, 4096}, {4096, 4096}}},
      {"tile.matmul bf16 -> f32, 4096^3, compiled",
       bf16_matmul(nullptr),
       {{4096, 4096}, {4096, 4096}, {4096, 4096}},
       true},
      {"tile.matmul bf16 -> f32, 4096^3, mma_sync",
       bf16_matmul("compiled.mma_sync"),
       {{4096, 4096}, {4096, 4096}, {4096, 4096}},
       true},
      {"tile.matmul bf16 -> f32, 4096^3, mma_async",
       bf16_matmul("compiled.mma_async"),
       {{4096, 4096}, {4096, 4096}, {4096, 4096}},
       true},
  };
  const std::vector<Op> ops = {
      {"tile.reduce sum, 4096 x 4096 rows",
       R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  tile.reduce sum %x -> %y axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
})",
       {{4096, 4096}, {4096}}},
      {"tile.softmax, 4096 x 4096",
       R"(func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  tile.softmax %x -> %y : memref<?x?xf32> -> memref<?x?xf32>
  return
})",
       {{4096, 4096}, {4096, 4096}}},
      {"tile.matmul+bias+relu, 2048^3",
       R"(func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  tile.matmul %a, %b -> %c bias(%bias : memref<?xf32>) activation(relu)
      : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
})",
       {{2048, 2048}, {2048, 2048}, {2048}, {2048, 2048}}},
  };
  std::map<std::string, double> op_ms;  // by name
  std::vector<Op> all = ops;
  all.insert(all.end(), variants.begin(), variants.end());
  for (const Op& op : all) {
    std::vector<void*> buffers;
    std::vector<Tensor> tensors;
    tensors.reserve(op.shapes.size());
    for (const auto& shape : op.shapes) {
      size_t n = 1;
      for (int64_t s : shape) n *= static_cast<size_t>(s);
      const bool bf16 = op.bf16 && tensors.size() < 2;
      buffers.push_back(bf16 ? b.BufferBf16(n) : b.Buffer(n));
      tensors.emplace_back(buffers.back(), shape,
                           bf16 ? DLDataType{kDLBfloat, 16, 1} : DLDataType{kDLFloat, 32, 1});
    }
    std::vector<tessera_jit_arg_t> args;
    for (Tensor& t : tensors) args.push_back(t.Arg());
    tessera_jit_module_t* module = nullptr;
    tessera_jit_function_t* f = b.Compile(op.source, "f", &module);
    double ms = b.DeviceMs([&] {
      Die("invoke", tessera_jit_function_invoke(f, args.data(), args.size(), b.stream, nullptr));
    });
    std::string note = "median of 20, CUDA events";
    if (op.shapes.size() == 3 && op.bf16) {
      const double flops = 2.0 * op.shapes[0][0] * op.shapes[1][1] * op.shapes[0][1];
      note = absl::StrFormat("%.1f TFLOP/s", flops / ms / 1e9);
    }
    add(op.name, ms, "ms", note);
    op_ms[op.name] = ms;
    tessera_jit_module_destroy(module);
    for (void* p : buffers) Die("free", tessera_jit_buffer_free(b.context, p));
  }

  // 4. cuBLAS's bf16 GEMM on the same problem, and the project's own kernels against it.
  {
    constexpr int kSize = 4096;
    const double flops = 2.0 * kSize * kSize * kSize;
    std::string why;
    std::unique_ptr<CublasBf16> cublas = CublasBf16::Load(b.stream, &why);
    if (cublas == nullptr) {
      std::cout << "gpu_bench: no cuBLAS bf16 row: " << why << "\n";
    } else {
      const size_t n = size_t{kSize} * kSize;
      void* a = b.BufferBf16(n);
      void* bb = b.BufferBf16(n);
      void* c = b.Buffer(n);
      int status = 0;
      double ms = b.DeviceMs([&] { status |= cublas->Gemm(a, bb, c, kSize, kSize, kSize); });
      if (status != 0) {
        std::cout << "gpu_bench: cublasGemmEx failed (" << status << ")\n";
      } else {
        add("cublasGemmEx bf16 -> f32, 4096^3", ms, "ms",
            absl::StrFormat("%.1f TFLOP/s", flops / ms / 1e9));
        for (const char* variant : {"compiled", "mma_sync", "mma_async"}) {
          const std::string name = absl::StrCat("tile.matmul bf16 -> f32, 4096^3, ", variant);
          add(absl::StrCat(variant, " / cuBLAS bf16 throughput"), 100.0 * ms / op_ms[name], "%",
              "target >= 70 % (the project's own codegen)");
        }
      }
      for (void* p : {a, bb, c}) Die("free", tessera_jit_buffer_free(b.context, p));
    }
  }

  std::cout << "GPU benchmark on " << info.name << " (" << info.arch << ")\n\n";
  std::cout << absl::StrFormat("| %-44s | %12s | %-6s | %s |\n", "what", "value", "unit", "note");
  std::cout << "|----------------------------------------------|--------------|--------|------|\n";
  for (const std::string& row : rows) std::cout << row << "\n";
  absl::StrAppend(&json, "\n  ]\n}\n");
  std::ofstream(json_path) << json;
  std::cout << "\nJSON written to " << json_path << "\n";
  tessera_jit_context_destroy(b.context);
  return 0;
}
