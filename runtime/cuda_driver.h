// The CUDA driver API, loaded at run time: dlopen("libcuda.so.1") and every entry point resolved
// once through cuGetProcAddress. Nothing links against libcuda, so everything builds and starts
// on machines without a driver and reports UNAVAILABLE for device work.
#ifndef TESSERA_RUNTIME_CUDA_DRIVER_H_
#define TESSERA_RUNTIME_CUDA_DRIVER_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::runtime {

/// The driver entry points Tessera uses. Immutable once resolved.
struct DriverApi {
  decltype(&::cuInit) cuInit;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion;
  decltype(&::cuGetErrorName) cuGetErrorName;
  decltype(&::cuGetErrorString) cuGetErrorString;
  decltype(&::cuDeviceGetCount) cuDeviceGetCount;
  decltype(&::cuDeviceGet) cuDeviceGet;
  decltype(&::cuDeviceGetName) cuDeviceGetName;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute;
  decltype(&::cuDeviceTotalMem) cuDeviceTotalMem;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain;
  decltype(&::cuCtxGetCurrent) cuCtxGetCurrent;
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize;
  decltype(&::cuMemAlloc) cuMemAlloc;
  decltype(&::cuMemFree) cuMemFree;
  decltype(&::cuMemcpyHtoDAsync) cuMemcpyHtoDAsync;
  decltype(&::cuMemcpyDtoHAsync) cuMemcpyDtoHAsync;
  decltype(&::cuMemcpyDtoDAsync) cuMemcpyDtoDAsync;
  decltype(&::cuMemsetD8Async) cuMemsetD8Async;
  decltype(&::cuStreamCreate) cuStreamCreate;
  decltype(&::cuStreamDestroy) cuStreamDestroy;
  decltype(&::cuStreamSynchronize) cuStreamSynchronize;
  decltype(&::cuStreamQuery) cuStreamQuery;
  decltype(&::cuStreamWaitEvent) cuStreamWaitEvent;
  decltype(&::cuEventCreate) cuEventCreate;
  decltype(&::cuEventRecord) cuEventRecord;
  decltype(&::cuEventSynchronize) cuEventSynchronize;
  decltype(&::cuEventQuery) cuEventQuery;
  decltype(&::cuEventElapsedTime) cuEventElapsedTime;
  decltype(&::cuEventDestroy) cuEventDestroy;
  decltype(&::cuModuleLoadData) cuModuleLoadData;
  decltype(&::cuModuleLoadDataEx) cuModuleLoadDataEx;
  decltype(&::cuModuleUnload) cuModuleUnload;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction;
  decltype(&::cuLaunchKernel) cuLaunchKernel;
};

/// The driver, loaded and initialised once per process (thread-safe). UNAVAILABLE, saying which,
/// when libcuda.so.1 is missing, is the toolkit's stub, or sees no device.
absl::StatusOr<const DriverApi*> Driver();

/// OK for CUDA_SUCCESS; otherwise a status keeping the call, the error name, its number and
/// text — "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE (200): device kernel image is
/// invalid" — with the code abseil gives its meaning (out of memory: RESOURCE_EXHAUSTED; no
/// device or driver: UNAVAILABLE; invalid value or handle: INVALID_ARGUMENT; else INTERNAL).
absl::Status CudaStatus(const DriverApi& driver, CUresult result, absl::string_view call);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_CUDA_DRIVER_H_
