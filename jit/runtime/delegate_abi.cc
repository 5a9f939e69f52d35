// Runtime support for delegate calls.
#include "jit/runtime/delegate_abi.h"

#include <atomic>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "jit/runtime/gpu_runtime.h"
#include "jit/runtime/kernel_abi.h"

namespace tessera::jit::runtime {
namespace {

std::atomic<uint64_t> dispatches{0};

struct Images {
  absl::Mutex mu;
  std::map<std::string, std::pair<std::string, std::string>> images ABSL_GUARDED_BY(mu);
  std::map<std::pair<std::string, int>, CUmodule> loaded ABSL_GUARDED_BY(mu);
};

Images& ImageTable() {
  static auto* images = new Images();
  return *images;
}

using CublasCreate = int (*)(void**);
using CublasSetStream = int (*)(void*, void*);
std::atomic<CublasCreate> cublas_create{nullptr};
std::atomic<CublasSetStream> cublas_set_stream{nullptr};

extern "C" void TesseraCountDispatch() { dispatches.fetch_add(1, std::memory_order_relaxed); }

// A vendor call returned `status`; non-zero fails the invocation (naming the callee).
extern "C" void TesseraDelegateStatus(int32_t status, const char* callee) {
  if (status == 0) return;
  RecordFailure(absl::InternalError(
      absl::StrCat("delegate '", callee, "' returned status ", status)));
}

// One cuBLAS handle per thread and device, bound to the invocation's stream before each call.
extern "C" void* TesseraCublasHandle() {
  CublasCreate create = cublas_create.load();
  CublasSetStream set_stream = cublas_set_stream.load();
  if (create == nullptr || set_stream == nullptr) {
    RecordFailure(absl::FailedPreconditionError("cuBLAS is not registered"));
    return nullptr;
  }
  thread_local absl::flat_hash_map<int, void*> handles;
  const int device = CurrentInvocationOrdinal();
  void*& handle = handles[device];
  if (handle == nullptr && create(&handle) != 0) {
    handle = nullptr;
    RecordFailure(absl::InternalError("cublasCreate_v2 failed"));
    return nullptr;
  }
  if (set_stream(handle, CurrentInvocationStream()) != 0) {
    RecordFailure(absl::InternalError("cublasSetStream_v2 failed"));
  }
  return handle;
}

extern "C" void TesseraLaunchImageKernel(const char* image, const char* kernel, int64_t grid_x,
                                         int64_t grid_y, int64_t grid_z, int64_t block_x,
                                         int64_t block_y, int64_t block_z, void** params) {
  if (InvocationFailed()) return;
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return RecordFailure(runtime.status());
  const int device = CurrentInvocationOrdinal();
  CUmodule module = nullptr;
  {
    Images& table = ImageTable();
    absl::MutexLock lock(&table.mu);
    auto loaded = table.loaded.find({image, device});
    if (loaded != table.loaded.end()) {
      module = loaded->second;
    } else {
      auto it = table.images.find(image);
      if (it == table.images.end()) {
        return RecordFailure(absl::FailedPreconditionError(
            absl::StrCat("kernel image '", image, "' is not registered")));
      }
      auto load = (*runtime)->LoadModule(device, it->second.first, it->second.second);
      if (!load.ok()) return RecordFailure(load.status());
      module = *load;
      table.loaded[{image, device}] = module;
    }
  }
  auto function = (*runtime)->GetFunction(module, kernel);
  if (!function.ok()) return RecordFailure(function.status());
  RecordFailure((*runtime)->Launch(
      *function,
      {static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y), static_cast<unsigned>(grid_z)},
      {static_cast<unsigned>(block_x), static_cast<unsigned>(block_y),
       static_cast<unsigned>(block_z)},
      0, CurrentInvocationStream(), params));
}

}  // namespace

uint64_t DelegateDispatchCount() { return dispatches.load(); }

void RegisterKernelImage(const std::string& name, std::string cubin, std::string ptx) {
  Images& table = ImageTable();
  absl::MutexLock lock(&table.mu);
  table.images[name] = {std::move(cubin), std::move(ptx)};
}

void SetCublasEntryPoints(void* create, void* set_stream) {
  cublas_create.store(reinterpret_cast<CublasCreate>(create));
  cublas_set_stream.store(reinterpret_cast<CublasSetStream>(set_stream));
}

RuntimeSymbolList DelegateRuntimeSymbols() {
  return {
      {"tessera_rt_count_dispatch", reinterpret_cast<void*>(&TesseraCountDispatch)},
      {"tessera_rt_delegate_status", reinterpret_cast<void*>(&TesseraDelegateStatus)},
      {"tessera_rt_cublas_handle", reinterpret_cast<void*>(&TesseraCublasHandle)},
      {"tessera_rt_launch_image_kernel", reinterpret_cast<void*>(&TesseraLaunchImageKernel)},
  };
}

}  // namespace tessera::jit::runtime
