// libcuda.so.1, loaded on first use.
#include "bridge/cuda_driver.h"

#include <dlfcn.h>

namespace tessera::bridge {
namespace {

struct Loaded {
  CudaDriver driver{};
  std::string error;
  bool ok = false;
};

template <typename T>
bool Bind(void* library, const char* symbol, T& out) {
  out = reinterpret_cast<T>(dlsym(library, symbol));
  return out != nullptr;
}

Loaded Load() {
  Loaded loaded;
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    loaded.error = "no CUDA driver (libcuda.so.1)";
    return loaded;
  }
  CudaDriver& d = loaded.driver;
  const bool bound =
      Bind(library, "cuInit", d.init) && Bind(library, "cuDeviceGet", d.device_get) &&
      Bind(library, "cuDevicePrimaryCtxRetain", d.primary_ctx_retain) &&
      Bind(library, "cuCtxPushCurrent_v2", d.ctx_push) &&
      Bind(library, "cuCtxPopCurrent_v2", d.ctx_pop) &&
      Bind(library, "cuCtxSynchronize", d.ctx_synchronize) &&
      Bind(library, "cuModuleLoadDataEx", d.module_load_data_ex) &&
      Bind(library, "cuModuleGetFunction", d.module_get_function) &&
      Bind(library, "cuModuleUnload", d.module_unload) &&
      Bind(library, "cuLaunchKernel", d.launch_kernel) &&
      Bind(library, "cuMemAlloc_v2", d.mem_alloc) && Bind(library, "cuMemFree_v2", d.mem_free) &&
      Bind(library, "cuMemcpyHtoD_v2", d.memcpy_htod) &&
      Bind(library, "cuMemcpyDtoH_v2", d.memcpy_dtoh) &&
      Bind(library, "cuMemGetInfo_v2", d.mem_get_info) &&
      Bind(library, "cuFuncGetAttribute", d.func_get_attribute) &&
      Bind(library, "cuOccupancyMaxActiveBlocksPerMultiprocessor", d.occupancy_max_active_blocks) &&
      Bind(library, "cuEventCreate", d.event_create) &&
      Bind(library, "cuEventRecord", d.event_record) &&
      Bind(library, "cuEventSynchronize", d.event_synchronize) &&
      Bind(library, "cuEventElapsedTime", d.event_elapsed_time) &&
      Bind(library, "cuEventDestroy_v2", d.event_destroy);
  if (!bound) {
    loaded.error = "libcuda.so.1 lacks a driver function the bridge needs";
    return loaded;
  }
  int device = 0;
  if (d.init(0) != 0 || d.device_get(&device, 0) != 0 ||
      d.primary_ctx_retain(&d.context, device) != 0) {
    loaded.error = "no usable GPU";
    return loaded;
  }
  loaded.ok = true;
  return loaded;
}

}  // namespace

const CudaDriver* LoadCudaDriver(std::string& why) {
  static const Loaded* loaded = new Loaded(Load());
  why = loaded->error;
  return loaded->ok ? &loaded->driver : nullptr;
}

ScopedContext::ScopedContext(const CudaDriver& driver)
    : driver_(driver), ok_(driver.ctx_push(driver.context) == 0) {}

ScopedContext::~ScopedContext() {
  if (!ok_) return;
  void* popped = nullptr;
  driver_.ctx_pop(&popped);
}

}  // namespace tessera::bridge
