// One registry's delegate state at run time.
#include "runtime/delegate_state.h"

#include "absl/strings/str_cat.h"
#include "runtime/gpu_runtime.h"

namespace tessera::runtime {

DelegateRuntime::DelegateRuntime() = default;

DelegateRuntime::~DelegateRuntime() { Release(); }

void DelegateRuntime::Release() {
  absl::MutexLock lock(&mu_);
  if (loaded_.empty() && handles_.empty()) return;  // host-only: never touches the driver
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return;
  ScopedCurrentContext keep_callers_context;
  if (CublasDestroy destroy = cublas_destroy_.load()) {
    for (const auto& [key, handle] : handles_) {
      (void)(*runtime)->Activate(key.second);
      destroy(handle);
    }
  }
  handles_.clear();
  for (const auto& [key, module] : loaded_) (void)(*runtime)->UnloadModule(key.second, module);
  loaded_.clear();
}

void DelegateRuntime::AddKernelImage(const std::string& name, std::string cubin, std::string ptx) {
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

void DelegateRuntime::SetCublasEntryPoints(void* create, void* set_stream, void* destroy) {
  cublas_create_.store(reinterpret_cast<CublasCreate>(create));
  cublas_set_stream_.store(reinterpret_cast<CublasSetStream>(set_stream));
  cublas_destroy_.store(reinterpret_cast<CublasDestroy>(destroy));
}

absl::StatusOr<void*> DelegateRuntime::CublasHandle(int device, CUstream stream) {
  CublasCreate create = cublas_create_.load();
  CublasSetStream set_stream = cublas_set_stream_.load();
  if (create == nullptr || set_stream == nullptr) {
    return absl::FailedPreconditionError("cuBLAS is not registered");
  }
  void* handle = nullptr;
  {
    absl::MutexLock lock(&mu_);
    void*& slot = handles_[{std::this_thread::get_id(), device}];
    if (slot == nullptr && create(&slot) != 0) {
      handles_.erase({std::this_thread::get_id(), device});
      return absl::InternalError("cublasCreate_v2 failed");
    }
    handle = slot;
  }
  // Only this thread uses its handle: binding the stream needs no lock.
  if (set_stream(handle, stream) != 0) return absl::InternalError("cublasSetStream_v2 failed");
  return handle;
}

}  // namespace tessera::runtime
