// Devices and device buffers, over the GPU runtime (runtime/gpu_runtime.h).
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capi/handles.h"
#include "runtime/gpu_runtime.h"
#include "runtime/target.h"

namespace tessera::capi {

bool GpuAvailable() { return runtime::GpuRuntime::Get().ok(); }

absl::StatusOr<std::string> DefaultArch(const tessera_jit_context* context) {
  auto runtime = runtime::GpuRuntime::Get();
  if (!runtime.ok()) return std::string("sm_90");
  auto info = (*runtime)->Info(context->device);
  if (!info.ok()) return std::string("sm_90");
  if (absl::Status supported = runtime::ValidateArch(info->arch); !supported.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("device ", context->device, " (", info->name, ") is ", info->arch,
                     ", which this compiler does not generate code for; ", supported.message(),
                     " (name one with the arch option to compile for another GPU)"));
  }
  return info->arch;
}

}  // namespace tessera::capi

using tessera::capi::CheckStructSize;
using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;
using tessera::runtime::GpuRuntime;
using tessera::runtime::Target;

extern "C" {

size_t tessera_jit_get_supported_arch_count(void) {
  return tessera::runtime::SupportedArchs().size();
}

const char* tessera_jit_get_supported_arch(size_t index) {
  const auto& archs = tessera::runtime::SupportedArchs();
  return index < archs.size() ? archs[index].c_str() : nullptr;
}

int tessera_jit_is_gpu_available(void) { return tessera::capi::GpuAvailable() ? 1 : 0; }

int32_t tessera_jit_device_count(void) {
  auto runtime = GpuRuntime::Get();
  return runtime.ok() ? (*runtime)->device_count() : 0;
}

tessera_jit_error_t* tessera_jit_device_get_info(int32_t ordinal,
                                                 tessera_jit_device_info_t* out_info) {
  if (out_info == nullptr) return InvalidArgument("out_info is NULL");
  if (absl::Status status = CheckStructSize(
          out_info->struct_size, TESSERA_JIT_DEVICE_INFO_STRUCT_SIZE, "tessera_jit_device_info_t");
      !status.ok()) {
    return MakeError(status);
  }
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return MakeError(runtime.status());
  auto info = (*runtime)->Info(ordinal);
  if (!info.ok()) return MakeError(info.status());
  out_info->ordinal = info->ordinal;
  std::snprintf(out_info->name, sizeof(out_info->name), "%s", info->name.c_str());
  std::snprintf(out_info->arch, sizeof(out_info->arch), "%s", info->arch.c_str());
  out_info->total_memory_bytes = info->total_memory;
  out_info->multiprocessors = info->multiprocessors;
  return nullptr;
}

tessera_jit_error_t* tessera_jit_buffer_alloc(tessera_jit_context_t* context, size_t size,
                                              void** out_device_pointer) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (out_device_pointer == nullptr) return InvalidArgument("out_device_pointer is NULL");
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return MakeError(runtime.status());
  tessera::runtime::ScopedCurrentContext keep_callers_context;
  auto pointer = (*runtime)->Allocate(context->device, size);
  if (!pointer.ok()) return MakeError(pointer.status());
  *out_device_pointer = reinterpret_cast<void*>(*pointer);
  return nullptr;
}

tessera_jit_error_t* tessera_jit_buffer_free(tessera_jit_context_t* context, void* device_pointer) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (device_pointer == nullptr) return nullptr;
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return MakeError(runtime.status());
  tessera::runtime::ScopedCurrentContext keep_callers_context;
  return MakeError(
      (*runtime)->Free(context->device, reinterpret_cast<CUdeviceptr>(device_pointer)));
}

tessera_jit_error_t* tessera_jit_buffer_copy(tessera_jit_context_t* context, void* destination,
                                             const void* source, size_t size,
                                             tessera_jit_copy_kind_t kind) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if ((destination == nullptr || source == nullptr) && size > 0) {
    return InvalidArgument("destination or source is NULL");
  }
  if (kind < TESSERA_JIT_COPY_HOST_TO_DEVICE || kind > TESSERA_JIT_COPY_DEVICE_TO_DEVICE) {
    return InvalidArgument(absl::StrCat("unknown copy kind ", static_cast<int>(kind)));
  }
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return MakeError(runtime.status());
  tessera::runtime::ScopedCurrentContext keep_callers_context;
  using tessera::runtime::CopyKind;
  const CopyKind copy = kind == TESSERA_JIT_COPY_HOST_TO_DEVICE   ? CopyKind::kHostToDevice
                        : kind == TESSERA_JIT_COPY_DEVICE_TO_HOST ? CopyKind::kDeviceToHost
                                                                  : CopyKind::kDeviceToDevice;
  return MakeError((*runtime)->Copy(context->device, destination, source, size, copy, nullptr));
}

}  // extern "C"
