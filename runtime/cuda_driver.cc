// Loading the CUDA driver with dlopen and cuGetProcAddress.
#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"

namespace tessera::runtime {
namespace {

// Entry points are requested for the CUDA 12.0 ABI, which selects the current versioned
// symbols (cuMemAlloc → cuMemAlloc_v2, …) — plain dlsym on those names is the trap.
constexpr int kAbiVersion = 12000;

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

template <typename Fn>
bool Resolve(GetProcAddress get, const char* name, Fn& out) {
  void* pointer = nullptr;
  CUdriverProcAddressQueryResult found;
  if (get(name, &pointer, kAbiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
      found != CU_GET_PROC_ADDRESS_SUCCESS || pointer == nullptr) {
    return false;
  }
  out = reinterpret_cast<Fn>(pointer);
  return true;
}

absl::StatusOr<DriverApi> Load() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(absl::StrCat("no CUDA driver: cannot load libcuda.so.1 (",
                                               error != nullptr ? error : "unknown error", ")"));
  }
  auto get = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (get == nullptr) {
    return absl::UnavailableError(
        "libcuda.so.1 has no cuGetProcAddress_v2: the driver is older than CUDA 12");
  }
  DriverApi api{};
  bool ok = true;
#define TESSERA_RESOLVE(name) ok = ok && Resolve(get, #name, api.name)
  TESSERA_RESOLVE(cuInit);
  TESSERA_RESOLVE(cuDriverGetVersion);
  TESSERA_RESOLVE(cuGetErrorName);
  TESSERA_RESOLVE(cuGetErrorString);
  TESSERA_RESOLVE(cuDeviceGetCount);
  TESSERA_RESOLVE(cuDeviceGet);
  TESSERA_RESOLVE(cuDeviceGetName);
  TESSERA_RESOLVE(cuDeviceGetAttribute);
  TESSERA_RESOLVE(cuDeviceTotalMem);
  TESSERA_RESOLVE(cuDevicePrimaryCtxRetain);
  TESSERA_RESOLVE(cuCtxGetCurrent);
  TESSERA_RESOLVE(cuCtxSetCurrent);
  TESSERA_RESOLVE(cuCtxSynchronize);
  TESSERA_RESOLVE(cuMemAlloc);
  TESSERA_RESOLVE(cuMemFree);
  TESSERA_RESOLVE(cuMemcpyHtoDAsync);
  TESSERA_RESOLVE(cuMemcpyDtoHAsync);
  TESSERA_RESOLVE(cuMemcpyDtoDAsync);
  TESSERA_RESOLVE(cuMemsetD8Async);
  TESSERA_RESOLVE(cuStreamCreate);
  TESSERA_RESOLVE(cuStreamDestroy);
  TESSERA_RESOLVE(cuStreamSynchronize);
  TESSERA_RESOLVE(cuStreamQuery);
  TESSERA_RESOLVE(cuStreamWaitEvent);
  TESSERA_RESOLVE(cuEventCreate);
  TESSERA_RESOLVE(cuEventRecord);
  TESSERA_RESOLVE(cuEventSynchronize);
  TESSERA_RESOLVE(cuEventQuery);
  TESSERA_RESOLVE(cuEventElapsedTime);
  TESSERA_RESOLVE(cuEventDestroy);
  TESSERA_RESOLVE(cuModuleLoadData);
  TESSERA_RESOLVE(cuModuleLoadDataEx);
  TESSERA_RESOLVE(cuModuleUnload);
  TESSERA_RESOLVE(cuModuleGetFunction);
  TESSERA_RESOLVE(cuLaunchKernel);
#undef TESSERA_RESOLVE
  if (!ok) {
    return absl::UnavailableError(
        "libcuda.so.1 lacks driver entry points Tessera needs (driver too old?)");
  }
  CUresult init = api.cuInit(0);
  if (init == CUDA_ERROR_STUB_LIBRARY) {
    return absl::UnavailableError(
        "libcuda.so.1 is the CUDA toolkit's stub library, not a driver (no GPU driver installed)");
  }
  if (init == CUDA_ERROR_NO_DEVICE) {
    return absl::UnavailableError("the CUDA driver sees no device");
  }
  if (init != CUDA_SUCCESS) return CudaStatus(api, init, "cuInit");
  return api;
}

}  // namespace

absl::StatusOr<const DriverApi*> Driver() {
  static absl::once_flag once;
  static absl::StatusOr<DriverApi>* driver = nullptr;
  absl::call_once(once, [] { driver = new absl::StatusOr<DriverApi>(Load()); });
  if (!driver->ok()) return driver->status();
  return &driver->value();
}

absl::Status CudaStatus(const DriverApi& driver, CUresult result, absl::string_view call) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (driver.cuGetErrorName == nullptr || driver.cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    name = "CUDA_ERROR_UNKNOWN";
  }
  if (driver.cuGetErrorString == nullptr ||
      driver.cuGetErrorString(result, &text) != CUDA_SUCCESS) {
    text = "unknown error";
  }
  std::string message =
      absl::StrCat(call, " failed: ", name, " (", static_cast<int>(result), "): ", text);
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(message);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_NOT_INITIALIZED:
      return absl::UnavailableError(message);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_FOUND:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace tessera::runtime
