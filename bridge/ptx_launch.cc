// The original Tessera's launch bridge over the public C API (bridge/tessera_nvidia_ptx_launch.h).
#include "bridge/tessera_nvidia_ptx_launch.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dlpack/dlpack.h"
#include "tessera_jit.h"

namespace {

// The original's return codes.
constexpr int kOk = 0;
constexpr int kNullRegistration = 1;
constexpr int kNoGpu = 2;
constexpr int kDeviceFailed = 3;
constexpr int kNotRegistered = 4;
constexpr int kBadAbi = 5;

// The original's limits: each dim below 2^31, each buffer at most 2^31 elements.
constexpr int64_t kMaxExtent = int64_t{1} << 31;

thread_local std::string t_last_error;

int Fail(int code, std::string why) {
  t_last_error = std::move(why);
  return code;
}

int Succeed() {
  t_last_error.clear();
  return kOk;
}

/// Takes a C API error: its message, and frees it.
std::string Consume(tessera_jit_error_t* error) {
  size_t size = 0;
  const char* text = tessera_jit_error_message(error, &size);
  std::string message(text, size);
  tessera_jit_error_destroy(error);
  return message;
}

bool HostFallbackFromEnvironment() {
  const char* value = std::getenv("TESSERA_NVIDIA_BRIDGE_HOST");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

std::mutex g_mu;
bool g_host_fallback = HostFallbackFromEnvironment();

struct ModuleDeleter {
  void operator()(tessera_jit_module_t* module) const { tessera_jit_module_destroy(module); }
};
using ModulePtr = std::shared_ptr<tessera_jit_module_t>;

struct Registered {
  std::string text;
  bool ptx = false;
  std::map<std::string, ModulePtr> modules;  ///< by target
};
std::map<std::string, Registered>& Kernels() {
  static auto* kernels = new std::map<std::string, Registered>();
  return *kernels;
}

/// The bridge's one context (created on first use), or null with why it could not be.
tessera_jit_context_t* Context(std::string& why) {
  struct Created {
    tessera_jit_context_t* context = nullptr;
    std::string error;
  };
  static const Created created = [] {
    Created result;
    if (tessera_jit_error_t* error = tessera_jit_context_create(nullptr, &result.context)) {
      result.error = "creating the Tessera JIT context failed: " + Consume(error);
      result.context = nullptr;
    }
    return result;
  }();
  why = created.error;
  return created.context;
}

/// PTX text: a line that starts (after blanks) with the `.version` directive. MLIR has no such
/// line (a comment starts with `//`).
bool IsPtx(const std::string& text) {
  for (size_t at = 0; at < text.size();) {
    size_t start = text.find_first_not_of(" \t", at);
    if (start == std::string::npos) break;
    if (text.compare(start, 9, ".version ") == 0) return true;
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return false;
}

/// A compiled entry, held alive while it runs (a re-register may drop the registry's copy).
struct Launchable {
  ModulePtr module;
  tessera_jit_function_t* function = nullptr;
  bool host = false;
};

/// The module for `name` on the target this call runs on, compiled on first use.
int Find(const char* name, Launchable& out) {
  const bool gpu = tessera_jit_is_gpu_available() != 0;
  std::lock_guard<std::mutex> lock(g_mu);
  const bool host = !gpu && g_host_fallback;
  auto found = Kernels().find(name);
  if (!gpu && !host) {
    return Fail(kNoGpu, "no usable GPU (set TESSERA_NVIDIA_BRIDGE_HOST=1 to run Tile IR on the "
                        "host)");
  }
  if (found == Kernels().end()) {
    return Fail(kNotRegistered, std::string("nothing is registered as '") + name + "'");
  }
  Registered& kernel = found->second;
  if (kernel.ptx) {
    if (!gpu) return Fail(kNoGpu, "registered PTX runs only on a GPU");
    return Fail(kBadAbi, std::string("'") + name +
                             "' is PTX text; this bridge launches Tile IR only (the original's "
                             "name-keyed PTX geometry table is not carried)");
  }
  const std::string target = host ? "host" : "nvptx";
  ModulePtr& module = kernel.modules[target];
  if (!module) {
    std::string why;
    tessera_jit_context_t* context = Context(why);
    if (context == nullptr) return Fail(kDeviceFailed, why);
    tessera_jit_compile_options_t options;
    tessera_jit_compile_options_init(&options);
    options.target = target.c_str();
    tessera_jit_module_t* compiled = nullptr;
    if (tessera_jit_error_t* error = tessera_jit_compile(context, kernel.text.data(),
                                                         kernel.text.size(), &options, &compiled)) {
      kernel.modules.erase(target);
      return Fail(kDeviceFailed, Consume(error));
    }
    module = ModulePtr(compiled, ModuleDeleter());
  }
  out.module = module;
  out.host = host;
  if (tessera_jit_error_t* error =
          tessera_jit_module_get_function(module.get(), name, std::strlen(name), &out.function)) {
    return Fail(kBadAbi, Consume(error));
  }
  return kOk;
}

/// One argument of the entry, bound to a caller's buffer or dim.
struct Bound {
  tessera_jit_arg_info_t info;
  std::vector<int64_t> shape;
  size_t bytes = 0;
  void* host = nullptr;  ///< the caller's buffer (tensors)
  int64_t value = 0;     ///< the dim (integers)
  void* device = nullptr;
  DLTensor tensor{};
};

/// Binds buffers and dims to the entry's arguments, checking every count, dim and size first.
int Bind(const Launchable& launchable, void** buffers, size_t num_buffers, const int64_t* dims,
         size_t num_dims, std::vector<Bound>& bound) {
  const size_t count = tessera_jit_function_get_arg_count(launchable.function);
  bound.resize(count);
  std::vector<int64_t> dim_of_argument(count, -1);
  size_t tensors = 0, integers = 0;
  for (size_t i = 0; i < count; ++i) {
    Bound& arg = bound[i];
    arg.info.struct_size = TESSERA_JIT_ARG_INFO_STRUCT_SIZE;
    if (tessera_jit_error_t* error =
            tessera_jit_function_get_arg_info(launchable.function, 0, i, &arg.info)) {
      return Fail(kBadAbi, Consume(error));
    }
    if (arg.info.kind == TESSERA_JIT_ARG_TENSOR) {
      ++tensors;
    } else if (arg.info.kind == TESSERA_JIT_ARG_INT) {
      dim_of_argument[i] = static_cast<int64_t>(integers++);
    } else {
      return Fail(kBadAbi, "argument #" + std::to_string(i) +
                               " is a float scalar; the launch ABI passes buffers and i64 dims");
    }
  }
  if (tensors != num_buffers || integers != num_dims) {
    return Fail(kBadAbi, "the kernel takes " + std::to_string(tensors) + " buffer(s) and " +
                             std::to_string(integers) + " dim(s); the call passes " +
                             std::to_string(num_buffers) + " and " + std::to_string(num_dims));
  }
  for (size_t d = 0; d < num_dims; ++d) {
    if (dims[d] <= 0 || dims[d] >= kMaxExtent) {
      return Fail(kBadAbi, "dim #" + std::to_string(d) + " is " + std::to_string(dims[d]) +
                               "; each dim must be in [1, 2^31)");
    }
  }
  size_t next_buffer = 0, next_dim = 0;
  for (size_t i = 0; i < count; ++i) {
    Bound& arg = bound[i];
    if (arg.info.kind == TESSERA_JIT_ARG_INT) {
      arg.value = dims[next_dim++];
      continue;
    }
    arg.host = buffers[next_buffer++];
    int64_t elements = 1;
    for (int32_t d = 0; d < arg.info.ndim; ++d) {
      int64_t size = arg.info.shape[d];
      if (size < 0) {
        const int64_t from = arg.info.size_from != nullptr ? arg.info.size_from[d] : -1;
        if (from < 0 || static_cast<size_t>(from) >= count || dim_of_argument[from] < 0) {
          return Fail(kBadAbi, "dimension " + std::to_string(d) + " of argument #" +
                                   std::to_string(i) + " (" + arg.info.type +
                                   ") follows no dim of the call");
        }
        size = dims[dim_of_argument[from]];
      }
      arg.shape.push_back(size);
      if (size != 0 && elements > kMaxExtent / size) {
        return Fail(kBadAbi, "argument #" + std::to_string(i) + " holds more than 2^31 elements");
      }
      elements *= size;
    }
    if (arg.host == nullptr && elements > 0) {
      return Fail(kBadAbi, "buffer for argument #" + std::to_string(i) + " is NULL");
    }
    arg.bytes = static_cast<size_t>(elements) * ((arg.info.dtype.bits + 7) / 8);
  }
  return kOk;
}

/// Frees the device buffers of `bound` (on every path).
struct DeviceBuffers {
  tessera_jit_context_t* context = nullptr;
  std::vector<Bound>* bound = nullptr;
  ~DeviceBuffers() {
    if (context == nullptr) return;
    // Work already enqueued (an earlier run of a failed benchmark) finishes before its buffers go.
    tessera_jit_error_destroy(tessera_jit_stream_synchronize(context, nullptr));
    for (Bound& arg : *bound) {
      if (arg.device != nullptr) tessera_jit_error_destroy(tessera_jit_buffer_free(context, arg.device));
    }
  }
};

/// Runs the bound kernel `warmup + repetitions` times; `latency_ms` (may be NULL) receives the
/// mean of the timed runs.
int Run(const Launchable& launchable, std::vector<Bound>& bound, int warmup, int repetitions,
        float* latency_ms) {
  std::string why;
  tessera_jit_context_t* context = Context(why);
  if (context == nullptr) return Fail(kDeviceFailed, why);
  DeviceBuffers buffers;
  if (!launchable.host) {
    buffers.context = context;
    buffers.bound = &bound;
  }
  std::vector<tessera_jit_arg_t> args(bound.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    Bound& arg = bound[i];
    if (arg.info.kind == TESSERA_JIT_ARG_INT) {
      args[i].kind = TESSERA_JIT_ARG_INT;
      args[i].value.i = arg.value;
      continue;
    }
    void* data = arg.host;
    if (!launchable.host && arg.bytes > 0) {
      if (tessera_jit_error_t* error = tessera_jit_buffer_alloc(context, arg.bytes, &arg.device)) {
        return Fail(kDeviceFailed, Consume(error));
      }
      // Every buffer goes over: `written` means the kernel may write it, not that it does not
      // read it (an in-place norm, a raw kernel).
      if (tessera_jit_error_t* error = tessera_jit_buffer_copy(
              context, arg.device, arg.host, arg.bytes, TESSERA_JIT_COPY_HOST_TO_DEVICE)) {
        return Fail(kDeviceFailed, Consume(error));
      }
      data = arg.device;
    } else if (!launchable.host) {
      data = nullptr;  // an empty tensor: no device memory
    }
    arg.tensor.data = data;
    arg.tensor.device = {launchable.host ? kDLCPU : kDLCUDA, 0};
    arg.tensor.ndim = arg.info.ndim;
    arg.tensor.dtype = arg.info.dtype;
    arg.tensor.shape = arg.shape.data();
    args[i].kind = TESSERA_JIT_ARG_TENSOR;
    args[i].value.tensor = &arg.tensor;
  }
  tessera_jit_event_t* start = nullptr;
  tessera_jit_event_t* stop = nullptr;
  const bool device_timing = latency_ms != nullptr && !launchable.host;
  std::chrono::steady_clock::time_point began;
  int code = kOk;
  for (int run = 0; run < warmup + repetitions && code == kOk; ++run) {
    if (run == warmup) {
      if (device_timing) {
        tessera_jit_error_t* error = tessera_jit_event_create(context, 0, &start);
        if (error == nullptr) error = tessera_jit_event_create(context, 0, &stop);
        if (error == nullptr) error = tessera_jit_event_record(start, nullptr);
        if (error != nullptr) code = Fail(kDeviceFailed, Consume(error));
      }
      began = std::chrono::steady_clock::now();
    }
    if (code != kOk) break;
    if (tessera_jit_error_t* error =
            tessera_jit_function_invoke(launchable.function, args.data(), args.size(), nullptr,
                                        nullptr)) {
      const bool bad_shape = tessera_jit_error_code(error) == TESSERA_JIT_INVALID_ARGUMENT;
      code = Fail(bad_shape ? kBadAbi : kDeviceFailed, Consume(error));
    }
  }
  if (code == kOk && !launchable.host) {
    tessera_jit_error_t* error = device_timing ? tessera_jit_event_record(stop, nullptr) : nullptr;
    if (error == nullptr) error = tessera_jit_stream_synchronize(context, nullptr);
    float elapsed = 0;
    if (error == nullptr && device_timing) error = tessera_jit_event_elapsed_time(start, stop, &elapsed);
    if (error != nullptr) {
      code = Fail(kDeviceFailed, Consume(error));
    } else if (device_timing) {
      *latency_ms = elapsed / static_cast<float>(repetitions);
    }
    for (Bound& arg : bound) {
      if (code != kOk || arg.device == nullptr || !arg.info.written) continue;
      if (tessera_jit_error_t* copy = tessera_jit_buffer_copy(
              context, arg.host, arg.device, arg.bytes, TESSERA_JIT_COPY_DEVICE_TO_HOST)) {
        code = Fail(kDeviceFailed, Consume(copy));
      }
    }
  }
  if (code == kOk && latency_ms != nullptr && launchable.host) {
    const std::chrono::duration<double, std::milli> spent = std::chrono::steady_clock::now() - began;
    *latency_ms = static_cast<float>(spent.count() / repetitions);
  }
  tessera_jit_event_destroy(start);
  tessera_jit_event_destroy(stop);
  return code == kOk ? Succeed() : code;
}

int Launch(const char* kernel_name, void** buffers, size_t num_buffers, const int64_t* dims,
           size_t num_dims, int warmup, int repetitions, float* latency_ms) {
  if (kernel_name == nullptr || (buffers == nullptr && num_buffers > 0) ||
      (dims == nullptr && num_dims > 0)) {
    return Fail(kBadAbi, "kernel_name must not be NULL, nor buffers and dims when counted");
  }
  Launchable launchable;
  if (int code = Find(kernel_name, launchable); code != kOk) return code;
  std::vector<Bound> bound;
  if (int code = Bind(launchable, buffers, num_buffers, dims, num_dims, bound); code != kOk) {
    return code;
  }
  return Run(launchable, bound, warmup, repetitions, latency_ms);
}

// cuMemGetInfo through the driver, for tessera_nvidia_ptx_device_memory.
using CuInit = int (*)(unsigned);
using CuDeviceGet = int (*)(int*, int);
using CuPrimaryRetain = int (*)(void**, int);
using CuPrimaryRelease = int (*)(int);
using CuCtxPush = int (*)(void*);
using CuCtxPop = int (*)(void**);
using CuMemGetInfo = int (*)(size_t*, size_t*);

int DeviceMemory(size_t* total_bytes, size_t* free_bytes) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return Fail(kNoGpu, "no CUDA driver (libcuda.so.1)");
  auto init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
  auto device_get = reinterpret_cast<CuDeviceGet>(dlsym(driver, "cuDeviceGet"));
  auto retain = reinterpret_cast<CuPrimaryRetain>(dlsym(driver, "cuDevicePrimaryCtxRetain"));
  auto release = reinterpret_cast<CuPrimaryRelease>(dlsym(driver, "cuDevicePrimaryCtxRelease_v2"));
  auto push = reinterpret_cast<CuCtxPush>(dlsym(driver, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<CuCtxPop>(dlsym(driver, "cuCtxPopCurrent_v2"));
  auto mem_get_info = reinterpret_cast<CuMemGetInfo>(dlsym(driver, "cuMemGetInfo_v2"));
  int device = 0;
  void* context = nullptr;
  if (!init || !device_get || !retain || !release || !push || !pop || !mem_get_info ||
      init(0) != 0 || device_get(&device, 0) != 0 || retain(&context, device) != 0) {
    return Fail(kNoGpu, "no usable GPU");
  }
  int code = Succeed();
  if (push(context) != 0) {
    code = Fail(kDeviceFailed, "cuCtxPushCurrent failed");
  } else {
    if (mem_get_info(free_bytes, total_bytes) != 0) {
      code = Fail(kDeviceFailed, "cuMemGetInfo failed");
    }
    void* popped = nullptr;
    pop(&popped);
  }
  release(device);
  return code;
}

}  // namespace

extern "C" {

int tessera_nvidia_ptx_register(const char* kernel_name, const char* ptx) {
  if (kernel_name == nullptr || ptx == nullptr) {
    return Fail(kNullRegistration, "kernel_name and ptx must not be NULL");
  }
  std::lock_guard<std::mutex> lock(g_mu);
  Registered& kernel = Kernels()[kernel_name];
  if (kernel.text == ptx) return Succeed();  // keeps the compiled modules (a warm re-register)
  kernel.text = ptx;
  kernel.ptx = IsPtx(kernel.text);
  kernel.modules.clear();  // a launch in flight keeps its module alive
  return Succeed();
}

int tessera_nvidia_ptx_invoke(const char* kernel_name, void** buffers, size_t num_buffers,
                              const int64_t* dims, size_t num_dims) {
  return Launch(kernel_name, buffers, num_buffers, dims, num_dims, 0, 1, nullptr);
}

int tessera_nvidia_ptx_invoke_v2(const char* kernel_name, void** buffers, size_t num_buffers,
                                 const int64_t* dims, size_t num_dims,
                                 size_t /*dynamic_shared_bytes*/) {
  return Launch(kernel_name, buffers, num_buffers, dims, num_dims, 0, 1, nullptr);
}

int tessera_nvidia_ptx_benchmark(const char* kernel_name, void** buffers, size_t num_buffers,
                                 const int64_t* dims, size_t num_dims, int warmup,
                                 int repetitions, float* latency_ms) {
  if (latency_ms == nullptr) return Fail(kBadAbi, "latency_ms must not be NULL");
  if (warmup < 0 || repetitions < 1 || warmup > (1 << 24) || repetitions > (1 << 24)) {
    return Fail(kBadAbi, "warmup must be in [0, 2^24] and repetitions in [1, 2^24]");
  }
  return Launch(kernel_name, buffers, num_buffers, dims, num_dims, warmup, repetitions,
                latency_ms);
}

int tessera_nvidia_ptx_benchmark_v2(const char* kernel_name, void** buffers, size_t num_buffers,
                                    const int64_t* dims, size_t num_dims,
                                    size_t /*dynamic_shared_bytes*/, int /*warmup*/,
                                    int /*repetitions*/, float* latency_ms) {
  if (kernel_name == nullptr || buffers == nullptr || dims == nullptr || latency_ms == nullptr) {
    return Fail(kBadAbi, "kernel_name, buffers, dims and latency_ms must not be NULL");
  }
  return Fail(kBadAbi, "benchmark_v2 serves the original's dynamic-shared-memory kernels; use "
                       "tessera_nvidia_ptx_benchmark for Tile IR");
}

int tessera_nvidia_ptx_resources(const char* kernel_name, int block_size,
                                 size_t dynamic_shared_bytes, int* registers_per_thread,
                                 int* static_shared_bytes, int* local_bytes,
                                 int* active_blocks_per_sm) {
  if (kernel_name == nullptr || block_size <= 0 || dynamic_shared_bytes > UINT32_MAX ||
      registers_per_thread == nullptr || static_shared_bytes == nullptr ||
      local_bytes == nullptr || active_blocks_per_sm == nullptr) {
    return Fail(kBadAbi, "a NULL output, a block_size <= 0 or dynamic_shared_bytes >= 2^32");
  }
  if (tessera_jit_is_gpu_available() == 0) return Fail(kNoGpu, "no usable GPU");
  return Fail(kBadAbi, "the resources of one kernel are not reported: a Tile IR module may hold "
                       "several kernels, and the public C API reports none of these");
}

int tessera_nvidia_ptx_device_memory(size_t* total_bytes, size_t* free_bytes) {
  if (total_bytes == nullptr || free_bytes == nullptr) {
    return Fail(kBadAbi, "total_bytes and free_bytes must not be NULL");
  }
  return DeviceMemory(total_bytes, free_bytes);
}

int tessera_nvidia_register_ptx_launcher(void) {
  return Fail(kNoGpu, "the original's core runtime (tsrRegisterGpuLauncher) is not in this process");
}

const char* tessera_nvidia_ptx_last_error(void) { return t_last_error.c_str(); }

int tessera_nvidia_ptx_set_host_fallback(int enabled) {
  std::lock_guard<std::mutex> lock(g_mu);
  const int previous = g_host_fallback ? 1 : 0;
  g_host_fallback = enabled != 0;
  return previous;
}

}  // extern "C"
