// One registry's delegate state at run time.
#include "jit/runtime/delegate_state.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "jit/runtime/gpu_runtime.h"

namespace tessera::jit::runtime {
namespace {

std::atomic<uint64_t> next_id{1};

}  // namespace

DelegateRuntime::DelegateRuntime() : id_(next_id.fetch_add(1)) {}

DelegateRuntime::~DelegateRuntime() {
  // Modules this registry loaded are unloaded with it; cuBLAS handles stay with their threads
  // (cublasDestroy would need the library, which the registry's destructor closes).
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return;
  absl::MutexLock lock(&mu_);
  for (const auto& [key, module] : loaded_) (void)(*runtime)->UnloadModule(key.second, module);
}

void DelegateRuntime::AddKernelImage(const std::string& name, std::string cubin,
                                     std::string ptx) {
  absl::MutexLock lock(&mu_);
  images_[name] = {std::move(cubin), std::move(ptx)};
}

absl::StatusOr<CUmodule> DelegateRuntime::ImageModule(const std::string& name, int device) {
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return runtime.status();
  absl::MutexLock lock(&mu_);
  if (auto loaded = loaded_.find({name, device}); loaded != loaded_.end()) return loaded->second;
  auto it = images_.find(name);
  if (it == images_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("kernel image '", name, "' is not registered"));
  }
  absl::StatusOr<CUmodule> module =
      (*runtime)->LoadModule(device, it->second.first, it->second.second);
  if (module.ok()) loaded_[{name, device}] = *module;
  return module;
}

void DelegateRuntime::SetCublasEntryPoints(void* create, void* set_stream) {
  cublas_create_.store(reinterpret_cast<CublasCreate>(create));
  cublas_set_stream_.store(reinterpret_cast<CublasSetStream>(set_stream));
}

absl::StatusOr<void*> DelegateRuntime::CublasHandle(int device, CUstream stream) {
  CublasCreate create = cublas_create_.load();
  CublasSetStream set_stream = cublas_set_stream_.load();
  if (create == nullptr || set_stream == nullptr) {
    return absl::FailedPreconditionError("cuBLAS is not registered");
  }
  // One handle per thread, registry and device.
  thread_local absl::flat_hash_map<std::pair<uint64_t, int>, void*> handles;
  void*& handle = handles[{id_, device}];
  if (handle == nullptr && create(&handle) != 0) {
    handle = nullptr;
    return absl::InternalError("cublasCreate_v2 failed");
  }
  if (set_stream(handle, stream) != 0) return absl::InternalError("cublasSetStream_v2 failed");
  return handle;
}

}  // namespace tessera::jit::runtime
