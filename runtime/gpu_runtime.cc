// The GPU runtime over the CUDA driver API.
#include "runtime/gpu_runtime.h"

#include <utility>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace tessera::runtime {

GpuRuntime::GpuRuntime(const DriverApi* driver, std::vector<CUdevice> devices)
    : driver_(driver), devices_(std::move(devices)), contexts_(devices_.size(), nullptr) {}

absl::StatusOr<GpuRuntime*> GpuRuntime::Get() {
  static absl::once_flag once;
  static absl::StatusOr<GpuRuntime*>* runtime = nullptr;
  absl::call_once(once, [] {
    runtime = new absl::StatusOr<GpuRuntime*>([]() -> absl::StatusOr<GpuRuntime*> {
      TESSERA_ASSIGN_OR_RETURN(const DriverApi* driver, Driver());
      int count = 0;
      TESSERA_RETURN_IF_ERROR(
          CudaStatus(*driver, driver->cuDeviceGetCount(&count), "cuDeviceGetCount"));
      if (count == 0) return absl::UnavailableError("the CUDA driver sees no device");
      std::vector<CUdevice> devices(count);
      for (int i = 0; i < count; ++i) {
        TESSERA_RETURN_IF_ERROR(
            CudaStatus(*driver, driver->cuDeviceGet(&devices[i], i), "cuDeviceGet"));
      }
      return new GpuRuntime(driver, std::move(devices));
    }());
  });
  return *runtime;
}

absl::Status GpuRuntime::CheckOrdinal(int ordinal) const {
  if (ordinal < 0 || ordinal >= device_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no CUDA device ", ordinal, "; there are ", device_count()));
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceInfo> GpuRuntime::Info(int ordinal) const {
  TESSERA_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  CUdevice device = devices_[ordinal];
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  TESSERA_RETURN_IF_ERROR(CudaStatus(*driver_, driver_->cuDeviceGetName(name, sizeof(name), device),
                                     "cuDeviceGetName"));
  info.name = name;
  int major = 0;
  int minor = 0;
  TESSERA_RETURN_IF_ERROR(CudaStatus(
      *driver_,
      driver_->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
      "cuDeviceGetAttribute"));
  TESSERA_RETURN_IF_ERROR(CudaStatus(
      *driver_,
      driver_->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
      "cuDeviceGetAttribute"));
  info.arch = absl::StrCat("sm_", major, minor);
  TESSERA_RETURN_IF_ERROR(
      CudaStatus(*driver_,
                 driver_->cuDeviceGetAttribute(&info.multiprocessors,
                                               CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
                 "cuDeviceGetAttribute"));
  TESSERA_RETURN_IF_ERROR(CudaStatus(
      *driver_,
      driver_->cuDeviceGetAttribute(&info.l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device),
      "cuDeviceGetAttribute"));
  TESSERA_RETURN_IF_ERROR(CudaStatus(
      *driver_, driver_->cuDeviceTotalMem(&info.total_memory, device), "cuDeviceTotalMem"));
  return info;
}

absl::Status GpuRuntime::Activate(int ordinal) {
  TESSERA_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  CUcontext context = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (contexts_[ordinal] == nullptr) {
      TESSERA_RETURN_IF_ERROR(CudaStatus(
          *driver_, driver_->cuDevicePrimaryCtxRetain(&contexts_[ordinal], devices_[ordinal]),
          "cuDevicePrimaryCtxRetain"));
    }
    context = contexts_[ordinal];
  }
  return CudaStatus(*driver_, driver_->cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

absl::StatusOr<CUdeviceptr> GpuRuntime::Allocate(int ordinal, size_t bytes) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  CUdeviceptr pointer = 0;
  TESSERA_RETURN_IF_ERROR(
      CudaStatus(*driver_, driver_->cuMemAlloc(&pointer, bytes == 0 ? 1 : bytes), "cuMemAlloc"));
  return pointer;
}

absl::Status GpuRuntime::Free(int ordinal, CUdeviceptr pointer) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  return CudaStatus(*driver_, driver_->cuMemFree(pointer), "cuMemFree");
}

absl::Status GpuRuntime::Copy(int ordinal, void* destination, const void* source, size_t bytes,
                              CopyKind kind, CUstream stream) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  CUresult result = CUDA_SUCCESS;
  switch (kind) {
    case CopyKind::kHostToDevice:
      result = driver_->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(destination), source, bytes,
                                          stream);
      break;
    case CopyKind::kDeviceToHost:
      result = driver_->cuMemcpyDtoHAsync(destination, reinterpret_cast<CUdeviceptr>(source), bytes,
                                          stream);
      break;
    case CopyKind::kDeviceToDevice:
      result = driver_->cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(destination),
                                          reinterpret_cast<CUdeviceptr>(source), bytes, stream);
      break;
  }
  TESSERA_RETURN_IF_ERROR(CudaStatus(*driver_, result, "cuMemcpyAsync"));
  return CudaStatus(*driver_, driver_->cuStreamSynchronize(stream), "cuStreamSynchronize");
}

absl::Status GpuRuntime::Memset(int ordinal, CUdeviceptr destination, unsigned char value,
                                size_t bytes, CUstream stream) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  return CudaStatus(*driver_, driver_->cuMemsetD8Async(destination, value, bytes, stream),
                    "cuMemsetD8Async");
}

absl::StatusOr<CUstream> GpuRuntime::CreateStream(int ordinal, bool non_blocking) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  CUstream stream = nullptr;
  TESSERA_RETURN_IF_ERROR(CudaStatus(
      *driver_,
      driver_->cuStreamCreate(&stream, non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT),
      "cuStreamCreate"));
  return stream;
}

absl::Status GpuRuntime::DestroyStream(int ordinal, CUstream stream) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  return CudaStatus(*driver_, driver_->cuStreamDestroy(stream), "cuStreamDestroy");
}

absl::Status GpuRuntime::Synchronize(int ordinal, CUstream stream) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  return CudaStatus(*driver_, driver_->cuStreamSynchronize(stream), "cuStreamSynchronize");
}

absl::StatusOr<bool> GpuRuntime::StreamDone(int ordinal, CUstream stream) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  const CUresult result = driver_->cuStreamQuery(stream);
  if (result == CUDA_ERROR_NOT_READY) return false;
  TESSERA_RETURN_IF_ERROR(CudaStatus(*driver_, result, "cuStreamQuery"));
  return true;
}

absl::Status GpuRuntime::WaitEvent(int ordinal, CUstream stream, CUevent event) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  return CudaStatus(*driver_, driver_->cuStreamWaitEvent(stream, event, CU_EVENT_WAIT_DEFAULT),
                    "cuStreamWaitEvent");
}

absl::StatusOr<CUevent> GpuRuntime::CreateEvent(int ordinal, bool timing) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  CUevent event = nullptr;
  TESSERA_RETURN_IF_ERROR(CudaStatus(
      *driver_, driver_->cuEventCreate(&event, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
      "cuEventCreate"));
  return event;
}

absl::StatusOr<bool> GpuRuntime::EventDone(int ordinal, CUevent event) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  const CUresult result = driver_->cuEventQuery(event);
  if (result == CUDA_ERROR_NOT_READY) return false;
  TESSERA_RETURN_IF_ERROR(CudaStatus(*driver_, result, "cuEventQuery"));
  return true;
}

absl::Status GpuRuntime::SynchronizeEvent(int ordinal, CUevent event) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  return CudaStatus(*driver_, driver_->cuEventSynchronize(event), "cuEventSynchronize");
}

absl::Status GpuRuntime::RecordEvent(CUevent event, CUstream stream) {
  return CudaStatus(*driver_, driver_->cuEventRecord(event, stream), "cuEventRecord");
}

absl::StatusOr<float> GpuRuntime::ElapsedMs(CUevent start, CUevent stop) {
  TESSERA_RETURN_IF_ERROR(
      CudaStatus(*driver_, driver_->cuEventSynchronize(stop), "cuEventSynchronize"));
  float ms = 0.0f;
  TESSERA_RETURN_IF_ERROR(
      CudaStatus(*driver_, driver_->cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime"));
  return ms;
}

absl::Status GpuRuntime::DestroyEvent(int ordinal, CUevent event) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  return CudaStatus(*driver_, driver_->cuEventDestroy(event), "cuEventDestroy");
}

absl::StatusOr<CUmodule> GpuRuntime::LoadModule(int ordinal, absl::string_view cubin,
                                                absl::string_view ptx) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  CUmodule module = nullptr;
  absl::Status cubin_status = absl::NotFoundError("no cubin");
  if (!cubin.empty()) {
    cubin_status =
        CudaStatus(*driver_, driver_->cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
    if (cubin_status.ok()) return module;
  }
  if (ptx.empty()) return cubin_status;
  // The PTX must be NUL-terminated for the driver.
  std::string text(ptx);
  char log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(sizeof(log))};
  absl::Status status =
      CudaStatus(*driver_, driver_->cuModuleLoadDataEx(&module, text.c_str(), 2, options, values),
                 "cuModuleLoadDataEx (PTX)");
  if (status.ok()) return module;
  return absl::Status(status.code(), absl::StrCat(status.message(), "; driver JIT log: ", log,
                                                  cubin.empty() ? "" : "; after the cubin failed: ",
                                                  cubin.empty() ? "" : cubin_status.message()));
}

absl::Status GpuRuntime::UnloadModule(int ordinal, CUmodule module) {
  TESSERA_RETURN_IF_ERROR(Activate(ordinal));
  return CudaStatus(*driver_, driver_->cuModuleUnload(module), "cuModuleUnload");
}

absl::StatusOr<CUfunction> GpuRuntime::GetFunction(CUmodule module, const char* name) {
  CUfunction function = nullptr;
  TESSERA_RETURN_IF_ERROR(CudaStatus(*driver_,
                                     driver_->cuModuleGetFunction(&function, module, name),
                                     absl::StrCat("cuModuleGetFunction(", name, ")")));
  return function;
}

absl::Status GpuRuntime::Launch(CUfunction function, std::array<unsigned, 3> grid,
                                std::array<unsigned, 3> block, unsigned shared_bytes,
                                CUstream stream, void** params) {
  return CudaStatus(*driver_,
                    driver_->cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1],
                                            block[2], shared_bytes, stream, params, nullptr),
                    "cuLaunchKernel");
}

ScopedCurrentContext::ScopedCurrentContext() {
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return;
  const DriverApi& driver = (*runtime)->driver();
  if (driver.cuCtxGetCurrent(&saved_) == CUDA_SUCCESS) driver_ = &driver;
}

ScopedCurrentContext::~ScopedCurrentContext() {
  if (driver_ != nullptr) (void)driver_->cuCtxSetCurrent(saved_);
}

}  // namespace tessera::runtime
