// The original Tessera's launch bridge over the public C API (bridge/tessera_nvidia_ptx_launch.h).
// Over 600 lines: the bridge's C ABI is one surface (registration, queries, invoke and streams over
// one handle table); split, its invariants would spread over files.
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

#include "bridge/cuda_driver.h"
#include "bridge/ptx_abi.h"
#include "bridge/tessera_nvidia_ptx_launch.h"
#include "dlpack/dlpack.h"
#include "tessera_jit.h"

namespace {

using tessera::bridge::CudaDriver;
using tessera::bridge::CuDevicePtr;
using tessera::bridge::LoadCudaDriver;
using tessera::bridge::PlanPtxLaunch;
using tessera::bridge::PtxLaunchPlan;
using tessera::bridge::ScopedContext;

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

/// A registered PTX text JIT-compiled by the driver: unloaded when the last user lets go.
struct PtxModule {
  const CudaDriver* driver = nullptr;
  void* module = nullptr;
  void* function = nullptr;
  ~PtxModule() {
    if (module == nullptr) return;
    ScopedContext current(*driver);
    driver->module_unload(module);
  }
};

struct Registered {
  std::string text;
  bool ptx = false;
  std::map<std::string, ModulePtr> modules;  ///< by target (Tile IR)
  std::shared_ptr<PtxModule> ptx_module;     ///< PTX, loaded on first launch
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
  std::shared_ptr<PtxModule> ptx;  ///< set for registered PTX (then module is null)
};

/// Loads registered PTX `text` as the original does (cuModuleLoadDataEx, the entry `name`).
int LoadPtx(const std::string& name, const std::string& text, std::shared_ptr<PtxModule>& out) {
  std::string why;
  const CudaDriver* driver = LoadCudaDriver(why);
  if (driver == nullptr) return Fail(kNoGpu, why);
  ScopedContext current(*driver);
  if (!current.ok()) return Fail(kDeviceFailed, "cuCtxPushCurrent failed");
  auto loaded = std::make_shared<PtxModule>();
  loaded->driver = driver;
  char log[8192] = {};
  int options[] = {5 /*CU_JIT_ERROR_LOG_BUFFER*/, 6 /*CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES*/};
  void* values[] = {log, reinterpret_cast<void*>(sizeof(log))};
  if (driver->module_load_data_ex(&loaded->module, text.c_str(), 2, options, values) != 0) {
    loaded->module = nullptr;
    return Fail(kDeviceFailed, "the driver could not load the PTX registered as '" + name +
                                   "': " + std::string(log, strnlen(log, sizeof(log))));
  }
  if (driver->module_get_function(&loaded->function, loaded->module, name.c_str()) != 0) {
    return Fail(kDeviceFailed, "the PTX registered as '" + name + "' has no entry of that name");
  }
  out = std::move(loaded);
  return kOk;
}

/// The module for `name` on the target this call runs on, compiled on first use.
int Find(const char* name, Launchable& out) {
  const bool gpu = tessera_jit_is_gpu_available() != 0;
  std::lock_guard<std::mutex> lock(g_mu);
  const bool host = !gpu && g_host_fallback;
  auto found = Kernels().find(name);
  if (!gpu && !host) {
    return Fail(kNoGpu,
                "no usable GPU (set TESSERA_NVIDIA_BRIDGE_HOST=1 to run Tile IR on the "
                "host)");
  }
  if (found == Kernels().end()) {
    return Fail(kNotRegistered, std::string("nothing is registered as '") + name + "'");
  }
  Registered& kernel = found->second;
  if (kernel.ptx) {
    if (!gpu) return Fail(kNoGpu, "registered PTX runs only on a GPU");
    if (!kernel.ptx_module) {
      if (int code = LoadPtx(name, kernel.text, kernel.ptx_module); code != kOk) return code;
    }
    out.ptx = kernel.ptx_module;
    return kOk;
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
      if (arg.device != nullptr)
        tessera_jit_error_destroy(tessera_jit_buffer_free(context, arg.device));
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
    if (tessera_jit_error_t* error = tessera_jit_function_invoke(launchable.function, args.data(),
                                                                 args.size(), nullptr, nullptr)) {
      const bool bad_shape = tessera_jit_error_code(error) == TESSERA_JIT_INVALID_ARGUMENT;
      code = Fail(bad_shape ? kBadAbi : kDeviceFailed, Consume(error));
    }
  }
  if (code == kOk && !launchable.host) {
    tessera_jit_error_t* error = device_timing ? tessera_jit_event_record(stop, nullptr) : nullptr;
    if (error == nullptr) error = tessera_jit_stream_synchronize(context, nullptr);
    float elapsed = 0;
    if (error == nullptr && device_timing)
      error = tessera_jit_event_elapsed_time(start, stop, &elapsed);
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
    const std::chrono::duration<double, std::milli> spent =
        std::chrono::steady_clock::now() - began;
    *latency_ms = static_cast<float>(spent.count() / repetitions);
  }
  tessera_jit_event_destroy(start);
  tessera_jit_event_destroy(stop);
  return code == kOk ? Succeed() : code;
}

/// Runs registered PTX with the original's geometry for its name: the plan's device buffers,
/// the inputs copied over, `warmup + repetitions` launches, the outputs copied back.
int RunPtx(const PtxModule& ptx, const char* name, void** buffers, size_t num_buffers,
           const int64_t* dims, size_t num_dims, int warmup, int repetitions, float* latency_ms) {
  PtxLaunchPlan plan;
  std::string why;
  if (!PlanPtxLaunch(name, num_buffers, dims, num_dims, plan, why)) return Fail(kBadAbi, why);
  for (size_t i = 0; i < num_buffers; ++i) {
    if (buffers[i] == nullptr) {
      return Fail(kBadAbi, "buffer #" + std::to_string(i) + " is NULL");
    }
  }
  const CudaDriver& driver = *ptx.driver;
  ScopedContext current(driver);
  if (!current.ok()) return Fail(kDeviceFailed, "cuCtxPushCurrent failed");
  std::vector<CuDevicePtr> device(num_buffers, 0);
  struct Freed {
    const CudaDriver& driver;
    std::vector<CuDevicePtr>& device;
    ~Freed() {
      driver.ctx_synchronize();  // nothing enqueued still uses them
      for (CuDevicePtr pointer : device) {
        if (pointer != 0) driver.mem_free(pointer);
      }
    }
  } freed{driver, device};
  for (size_t i = 0; i < num_buffers; ++i) {
    if (driver.mem_alloc(&device[i], plan.buffer_bytes[i]) != 0) {
      device[i] = 0;
      return Fail(kDeviceFailed,
                  "cuMemAlloc of " + std::to_string(plan.buffer_bytes[i]) + " bytes failed");
    }
    if (!plan.copied_back[i] &&
        driver.memcpy_htod(device[i], buffers[i], plan.buffer_bytes[i]) != 0) {
      return Fail(kDeviceFailed, "cuMemcpyHtoD failed");
    }
  }
  std::vector<int64_t> dims64(dims, dims + num_dims);
  std::vector<int32_t> dims32(dims, dims + num_dims);  // each dim was checked below 2^31
  std::vector<void*> params;
  for (CuDevicePtr& pointer : device) params.push_back(&pointer);
  for (size_t d = 0; plan.pass_dims && d < num_dims; ++d) {
    params.push_back(plan.dims_as_i64 ? static_cast<void*>(&dims64[d])
                                      : static_cast<void*>(&dims32[d]));
  }
  void* start = nullptr;
  void* stop = nullptr;
  int code = kOk;
  for (int run = 0; run < warmup + repetitions && code == kOk; ++run) {
    if (run == warmup && latency_ms != nullptr &&
        (driver.event_create(&start, 0) != 0 || driver.event_create(&stop, 0) != 0 ||
         driver.event_record(start, nullptr) != 0)) {
      code = Fail(kDeviceFailed, "creating or recording a CUDA event failed");
      break;
    }
    if (driver.launch_kernel(ptx.function, plan.grid_x, plan.grid_y, 1, plan.block_x, plan.block_y,
                             1, 0, nullptr, params.data(), nullptr) != 0) {
      code = Fail(kDeviceFailed, "cuLaunchKernel failed");
    }
  }
  float elapsed = 0;
  if (code == kOk && latency_ms != nullptr &&
      (driver.event_record(stop, nullptr) != 0 || driver.event_synchronize(stop) != 0 ||
       driver.event_elapsed_time(&elapsed, start, stop) != 0)) {
    code = Fail(kDeviceFailed, "timing the launches failed");
  }
  if (code == kOk && driver.ctx_synchronize() != 0) {
    code = Fail(kDeviceFailed, "the kernel failed on the device");
  }
  for (size_t i = 0; code == kOk && i < num_buffers; ++i) {
    if (plan.copied_back[i] &&
        driver.memcpy_dtoh(buffers[i], device[i], plan.buffer_bytes[i]) != 0) {
      code = Fail(kDeviceFailed, "cuMemcpyDtoH failed");
    }
  }
  if (start != nullptr) driver.event_destroy(start);
  if (stop != nullptr) driver.event_destroy(stop);
  if (code == kOk && latency_ms != nullptr) *latency_ms = elapsed / static_cast<float>(repetitions);
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
  if (launchable.ptx) {
    return RunPtx(*launchable.ptx, kernel_name, buffers, num_buffers, dims, num_dims, warmup,
                  repetitions, latency_ms);
  }
  std::vector<Bound> bound;
  if (int code = Bind(launchable, buffers, num_buffers, dims, num_dims, bound); code != kOk) {
    return code;
  }
  return Run(launchable, bound, warmup, repetitions, latency_ms);
}

int DeviceMemory(size_t* total_bytes, size_t* free_bytes) {
  std::string why;
  const CudaDriver* driver = LoadCudaDriver(why);
  if (driver == nullptr) return Fail(kNoGpu, why);
  ScopedContext current(*driver);
  if (!current.ok()) return Fail(kDeviceFailed, "cuCtxPushCurrent failed");
  if (driver->mem_get_info(free_bytes, total_bytes) != 0) {
    return Fail(kDeviceFailed, "cuMemGetInfo failed");
  }
  return Succeed();
}

/// The original's _resources for registered PTX: registers, static shared and local bytes of
/// the entry, and the blocks of `block_size` threads one SM holds.
int PtxResources(const char* kernel_name, int block_size, size_t dynamic_shared_bytes,
                 int* registers_per_thread, int* static_shared_bytes, int* local_bytes,
                 int* active_blocks_per_sm) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto found = Kernels().find(kernel_name);
    if (found != Kernels().end() && !found->second.ptx) {
      return Fail(kBadAbi, "'" + std::string(kernel_name) +
                               "' is Tile IR: its module may hold several kernels, and the "
                               "public C API reports none of these figures");
    }
  }
  Launchable launchable;
  if (int code = Find(kernel_name, launchable); code != kOk) return code;
  if (!launchable.ptx) return Fail(kBadAbi, "'" + std::string(kernel_name) + "' is Tile IR");
  const CudaDriver& driver = *launchable.ptx->driver;
  void* function = launchable.ptx->function;
  ScopedContext current(driver);
  if (!current.ok() ||
      driver.func_get_attribute(registers_per_thread, tessera::bridge::kCuFuncNumRegs, function) !=
          0 ||
      driver.func_get_attribute(static_shared_bytes, tessera::bridge::kCuFuncSharedSizeBytes,
                                function) != 0 ||
      driver.func_get_attribute(local_bytes, tessera::bridge::kCuFuncLocalSizeBytes, function) !=
          0 ||
      driver.occupancy_max_active_blocks(active_blocks_per_sm, function, block_size,
                                         dynamic_shared_bytes) != 0) {
    return Fail(kDeviceFailed, "querying the kernel's resources failed");
  }
  return Succeed();
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
  kernel.ptx_module.reset();
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
                                 const int64_t* dims, size_t num_dims, int warmup, int repetitions,
                                 float* latency_ms) {
  if (latency_ms == nullptr) return Fail(kBadAbi, "latency_ms must not be NULL");
  if (warmup < 0 || repetitions < 1 || warmup > (1 << 24) || repetitions > (1 << 24)) {
    return Fail(kBadAbi, "warmup must be in [0, 2^24] and repetitions in [1, 2^24]");
  }
  return Launch(kernel_name, buffers, num_buffers, dims, num_dims, warmup, repetitions, latency_ms);
}

int tessera_nvidia_ptx_benchmark_v2(const char* kernel_name, void** buffers, size_t num_buffers,
                                    const int64_t* dims, size_t num_dims,
                                    size_t /*dynamic_shared_bytes*/, int /*warmup*/,
                                    int /*repetitions*/, float* latency_ms) {
  if (kernel_name == nullptr || buffers == nullptr || dims == nullptr || latency_ms == nullptr) {
    return Fail(kBadAbi, "kernel_name, buffers, dims and latency_ms must not be NULL");
  }
  return Fail(kBadAbi,
              "benchmark_v2 serves the original's dynamic-shared-memory kernels; use "
              "tessera_nvidia_ptx_benchmark for Tile IR");
}

int tessera_nvidia_ptx_resources(const char* kernel_name, int block_size,
                                 size_t dynamic_shared_bytes, int* registers_per_thread,
                                 int* static_shared_bytes, int* local_bytes,
                                 int* active_blocks_per_sm) {
  if (kernel_name == nullptr || block_size <= 0 || dynamic_shared_bytes > UINT32_MAX ||
      registers_per_thread == nullptr || static_shared_bytes == nullptr || local_bytes == nullptr ||
      active_blocks_per_sm == nullptr) {
    return Fail(kBadAbi, "a NULL output, a block_size <= 0 or dynamic_shared_bytes >= 2^32");
  }
  if (tessera_jit_is_gpu_available() == 0) return Fail(kNoGpu, "no usable GPU");
  return PtxResources(kernel_name, block_size, dynamic_shared_bytes, registers_per_thread,
                      static_shared_bytes, local_bytes, active_blocks_per_sm);
}

int tessera_nvidia_ptx_device_memory(size_t* total_bytes, size_t* free_bytes) {
  if (total_bytes == nullptr || free_bytes == nullptr) {
    return Fail(kBadAbi, "total_bytes and free_bytes must not be NULL");
  }
  return DeviceMemory(total_bytes, free_bytes);
}

int tessera_nvidia_register_ptx_launcher(void) {
  return Fail(kNoGpu,
              "the original's core runtime (tsrRegisterGpuLauncher) is not in this process");
}

const char* tessera_nvidia_ptx_last_error(void) { return t_last_error.c_str(); }

int tessera_nvidia_ptx_set_host_fallback(int enabled) {
  std::lock_guard<std::mutex> lock(g_mu);
  const int previous = g_host_fallback ? 1 : 0;
  g_host_fallback = enabled != 0;
  return previous;
}

}  // extern "C"
