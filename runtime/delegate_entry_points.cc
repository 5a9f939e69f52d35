// Runtime support for delegate calls.
#include "runtime/delegate_entry_points.h"

#include <atomic>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "runtime/delegate_state.h"
#include "runtime/gpu_runtime.h"
#include "runtime/invocation.h"

namespace tessera::runtime {
namespace {

std::atomic<uint64_t> dispatches{0};

extern "C" void TesseraCountDispatch() { dispatches.fetch_add(1, std::memory_order_relaxed); }

// A vendor call returned `status`; non-zero fails the invocation (naming the callee).
extern "C" void TesseraDelegateStatus(int32_t status, const char* callee) {
  if (status == 0) return;
  RecordFailure(
      absl::InternalError(absl::StrCat("delegate '", callee, "' returned status ", status)));
}

// The invocation's registry's cuBLAS handle for this thread and device, bound to its stream.
extern "C" void* TesseraCublasHandle() {
  DelegateRuntime* delegates = CurrentInvocationDelegates();
  if (delegates == nullptr) {
    RecordFailure(absl::FailedPreconditionError("cuBLAS is not registered"));
    return nullptr;
  }
  absl::StatusOr<void*> handle =
      delegates->CublasHandle(CurrentInvocationOrdinal(), CurrentInvocationStream());
  if (!handle.ok()) {
    RecordFailure(handle.status());
    return nullptr;
  }
  return *handle;
}

extern "C" void TesseraLaunchImageKernel(const char* image, const char* kernel, int64_t grid_x,
                                         int64_t grid_y, int64_t grid_z, int64_t block_x,
                                         int64_t block_y, int64_t block_z, void** params) {
  if (InvocationFailed()) return;
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) return RecordFailure(runtime.status());
  DelegateRuntime* delegates = CurrentInvocationDelegates();
  if (delegates == nullptr) {
    return RecordFailure(absl::FailedPreconditionError(
        absl::StrCat("kernel image '", image, "' is not registered")));
  }
  absl::StatusOr<CUmodule> module = delegates->ImageModule(image, CurrentInvocationOrdinal());
  if (!module.ok()) return RecordFailure(module.status());
  auto function = (*runtime)->GetFunction(*module, kernel);
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

RuntimeSymbolList DelegateEntryPoints() {
  return {
      {"tessera_rt_count_dispatch", reinterpret_cast<void*>(&TesseraCountDispatch)},
      {"tessera_rt_delegate_status", reinterpret_cast<void*>(&TesseraDelegateStatus)},
      {"tessera_rt_cublas_handle", reinterpret_cast<void*>(&TesseraCublasHandle)},
      {"tessera_rt_launch_image_kernel", reinterpret_cast<void*>(&TesseraLaunchImageKernel)},
  };
}

}  // namespace tessera::runtime
