// Delegates: the libraries, matmul providers and kernel images a context's modules resolve
// kernel_call ops against (service/delegates.h).
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capi/handles.h"
#include "runtime/delegate_entry_points.h"

using tessera::capi::CheckStructSize;
using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;
using tessera::runtime::Target;

extern "C" {

tessera_jit_error_t* tessera_jit_context_register_library(tessera_jit_context_t* context,
                                                          const char* name, const char* path) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (name == nullptr || path == nullptr) return InvalidArgument("name or path is NULL");
  return MakeError(context->delegates->RegisterLibrary(name, path));
}

tessera_jit_error_t* tessera_jit_context_register_library_with_pointers(
    tessera_jit_context_t* context, const char* name, const char* path,
    tessera_jit_pointer_space_t pointers) {
  using tessera::runtime::PointerSpace;
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (name == nullptr || path == nullptr) return InvalidArgument("name or path is NULL");
  PointerSpace space;
  switch (pointers) {
    case TESSERA_JIT_POINTERS_INFERRED:
      space = PointerSpace::kInferred;
      break;
    case TESSERA_JIT_POINTERS_HOST:
      space = PointerSpace::kHost;
      break;
    case TESSERA_JIT_POINTERS_DEVICE:
      space = PointerSpace::kDevice;
      break;
    default:
      return InvalidArgument(
          absl::StrCat("unknown pointer space ", static_cast<int>(pointers),
                       "; expected TESSERA_JIT_POINTERS_INFERRED, _HOST or _DEVICE"));
  }
  return MakeError(context->delegates->RegisterLibrary(name, path, space));
}

tessera_jit_error_t* tessera_jit_context_register_default_libraries(tessera_jit_context_t* context,
                                                                    const char* target) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  Target chosen = context->default_target;
  if (target != nullptr) {
    auto parsed = tessera::runtime::ParseTarget(target);
    if (!parsed.ok()) return MakeError(parsed.status());
    chosen = *parsed;
  }
  return MakeError(context->delegates->RegisterDefaultLibraries(chosen));
}

tessera_jit_error_t* tessera_jit_context_declare_matmul_provider(
    tessera_jit_context_t* context, const tessera_jit_matmul_provider_t* provider) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (provider == nullptr) return InvalidArgument("provider is NULL");
  if (absl::Status status =
          CheckStructSize(provider->struct_size, TESSERA_JIT_MATMUL_PROVIDER_STRUCT_SIZE,
                          "tessera_jit_matmul_provider_t");
      !status.ok()) {
    return MakeError(status);
  }
  auto text = [](const char* value) {
    return value == nullptr ? std::string() : std::string(value);
  };
  tessera::runtime::MatmulProvider declared;
  declared.name = text(provider->name);
  declared.library = text(provider->library);
  declared.callee = text(provider->callee);
  auto target = tessera::runtime::ParseTarget(text(provider->target));
  if (!target.ok()) {
    return MakeError(absl::InvalidArgumentError(
        absl::StrCat("tessera_jit_matmul_provider_t.target: ", target.status().message())));
  }
  declared.target = *target;
  declared.abi = *target == Target::kHost ? "cblas_sgemm" : "cublasSgemm_v2";
  declared.arch = text(provider->arch);
  declared.provenance = text(provider->provenance);
  declared.covers = text(provider->covers);
  declared.determinism = text(provider->determinism);
  declared.accuracy = text(provider->accuracy);
  if (provider->tolerance != 0) declared.tolerance = provider->tolerance;
  if (provider->tolerance_rel != 0) declared.tolerance_rel = provider->tolerance_rel;
  if (absl::Status status = context->delegates->DeclareMatmulProvider(declared); !status.ok()) {
    return MakeError(status);
  }
  return nullptr;
}

tessera_jit_error_t* tessera_jit_context_register_kernel_image(tessera_jit_context_t* context,
                                                               const char* name, const void* data,
                                                               size_t size,
                                                               tessera_jit_image_format_t format,
                                                               const char* arch) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (name == nullptr || (data == nullptr && size > 0))
    return InvalidArgument("name or data is NULL");
  std::string bytes(static_cast<const char*>(data), size);
  switch (format) {
    case TESSERA_JIT_IMAGE_PTX:
      return MakeError(context->delegates->RegisterPtx(name, std::move(bytes)));
    case TESSERA_JIT_IMAGE_CUBIN:
      return MakeError(context->delegates->RegisterCubin(name, std::move(bytes)));
    case TESSERA_JIT_IMAGE_CUDA_SOURCE: {
      absl::StatusOr<std::string> target_arch =
          arch != nullptr ? std::string(arch) : tessera::capi::DefaultArch(context);
      if (!target_arch.ok()) return MakeError(target_arch.status());
      return MakeError(context->delegates->RegisterCudaSource(name, bytes, *target_arch));
    }
    default:
      break;
  }
  return InvalidArgument(absl::StrCat("unknown image format ", static_cast<int>(format)));
}

size_t tessera_jit_context_get_delegate_count(tessera_jit_context_t* context) {
  return context == nullptr ? 0 : context->delegates->Identities().size();
}

const char* tessera_jit_context_get_delegate_identity(tessera_jit_context_t* context, size_t index,
                                                      size_t* out_size) {
  if (out_size != nullptr) *out_size = 0;
  if (context == nullptr) return nullptr;
  auto identities = context->delegates->Identities();
  if (index >= identities.size()) return nullptr;
  absl::MutexLock lock(&context->mu);
  const std::string& text =
      *context->delegate_identities.insert(identities[index].ToString()).first;
  if (out_size != nullptr) *out_size = text.size();
  return text.c_str();
}

uint64_t tessera_jit_get_delegate_dispatch_count(void) {
  return tessera::runtime::DelegateDispatchCount();
}

}  // extern "C"
