// The mgpu* ABI over GpuRuntime.
#include "runtime/launch_entry_points.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "runtime/device_image.h"
#include "runtime/gpu_runtime.h"
#include "runtime/invocation.h"

namespace tessera::runtime {
namespace {

void Fail(absl::Status status) { RecordFailure(std::move(status)); }
bool Failed() { return InvocationFailed(); }
int CurrentOrdinal() { return CurrentInvocationOrdinal(); }

/// Functions already looked up, by (module, name pointer): the host code asks before every
/// launch with the same constant string, and cuModuleGetFunction is a driver round trip.
struct FunctionCache {
  absl::Mutex mu;
  absl::flat_hash_map<std::pair<void*, const char*>, void*> functions ABSL_GUARDED_BY(mu);
};

FunctionCache& Functions() {
  static auto* cache = new FunctionCache();
  return *cache;
}

GpuRuntime* RuntimeOrFail() {
  absl::StatusOr<GpuRuntime*> runtime = GpuRuntime::Get();
  if (!runtime.ok()) {
    Fail(runtime.status());
    return nullptr;
  }
  return *runtime;
}

void* LoadModule(absl::string_view cubin, absl::string_view ptx) {
  if (Failed()) return nullptr;
  GpuRuntime* runtime = RuntimeOrFail();
  if (runtime == nullptr) return nullptr;
  absl::StatusOr<CUmodule> module = runtime->LoadModule(CurrentOrdinal(), cubin, ptx);
  if (!module.ok()) {
    Fail(module.status());
    return nullptr;
  }
  return *module;
}

extern "C" void* TesseraModuleLoad(void* data, size_t size) {
  absl::string_view blob(static_cast<const char*>(data), size);
  absl::string_view cubin;
  absl::string_view ptx;
  if (!UnpackDeviceImage(blob, cubin, ptx)) cubin = blob;
  return LoadModule(cubin, ptx);
}

extern "C" void* TesseraModuleLoadJit(void* data, int /*opt_level*/) {
  return LoadModule({}, static_cast<const char*>(data));
}

extern "C" void TesseraModuleUnload(void* module) {
  if (module == nullptr) return;
  {
    // Forget its functions: the driver may hand the same handle to a later module.
    absl::MutexLock lock(&Functions().mu);
    absl::erase_if(Functions().functions,
                   [module](const auto& entry) { return entry.first.first == module; });
  }
  absl::StatusOr<GpuRuntime*> runtime = GpuRuntime::Get();
  if (!runtime.ok()) return;
  Fail((*runtime)->UnloadModule(CurrentOrdinal(), static_cast<CUmodule>(module)));
}

extern "C" void* TesseraModuleGetFunction(void* module, const char* name) {
  if (Failed()) return nullptr;
  {
    absl::MutexLock lock(&Functions().mu);
    auto it = Functions().functions.find({module, name});
    if (it != Functions().functions.end()) return it->second;
  }
  if (module == nullptr) {
    Fail(absl::FailedPreconditionError(
        absl::StrCat("kernel '", name, "': its device image was not loaded")));
    return nullptr;
  }
  GpuRuntime* runtime = RuntimeOrFail();
  if (runtime == nullptr) return nullptr;
  absl::StatusOr<CUfunction> function = runtime->GetFunction(static_cast<CUmodule>(module), name);
  if (!function.ok()) {
    Fail(function.status());
    return nullptr;
  }
  absl::MutexLock lock(&Functions().mu);
  Functions().functions[{module, name}] = *function;
  return *function;
}

// The host code asks for a stream per launch; every launch of an invocation goes to the
// caller's stream instead, so creating, synchronising and destroying it are no-ops.
extern "C" void* TesseraStreamCreate() { return CurrentInvocationStream(); }
extern "C" void TesseraStreamSynchronize(void* /*stream*/) {}
extern "C" void TesseraStreamDestroy(void* /*stream*/) {}

extern "C" void TesseraLaunchKernel(void* function, intptr_t grid_x, intptr_t grid_y,
                                    intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                                    intptr_t block_z, int32_t shared_bytes, void* stream,
                                    void** params, void** /*extra*/, size_t /*param_count*/) {
  if (Failed() || function == nullptr) return;
  GpuRuntime* runtime = RuntimeOrFail();
  if (runtime == nullptr) return;
  // CUDA's grid limits; the compiled kernels clamp their grids and loop, so a larger one is a
  // raw kernel's launch: refused, never truncated to fewer blocks than asked for.
  constexpr intptr_t kMaxGrid[] = {2147483647, 65535, 65535};
  const intptr_t grid[] = {grid_x, grid_y, grid_z};
  for (int d = 0; d < 3; ++d) {
    if (grid[d] < 1 || grid[d] > kMaxGrid[d]) {
      Fail(absl::OutOfRangeError(absl::StrCat("a kernel launch asks for ", grid[d],
                                              " blocks on grid axis ", std::string(1, "xyz"[d]),
                                              "; CUDA allows 1 to ", kMaxGrid[d])));
      return;
    }
  }
  Fail(runtime->Launch(
      static_cast<CUfunction>(function),
      {static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y), static_cast<unsigned>(grid_z)},
      {static_cast<unsigned>(block_x), static_cast<unsigned>(block_y),
       static_cast<unsigned>(block_z)},
      static_cast<unsigned>(shared_bytes), static_cast<CUstream>(stream), params));
}

}  // namespace

std::vector<std::pair<std::string, void*>> LaunchEntryPoints() {
  return {
      {"mgpuModuleLoad", reinterpret_cast<void*>(&TesseraModuleLoad)},
      {"mgpuModuleLoadJIT", reinterpret_cast<void*>(&TesseraModuleLoadJit)},
      {"mgpuModuleUnload", reinterpret_cast<void*>(&TesseraModuleUnload)},
      {"mgpuModuleGetFunction", reinterpret_cast<void*>(&TesseraModuleGetFunction)},
      {"mgpuStreamCreate", reinterpret_cast<void*>(&TesseraStreamCreate)},
      {"mgpuStreamSynchronize", reinterpret_cast<void*>(&TesseraStreamSynchronize)},
      {"mgpuStreamDestroy", reinterpret_cast<void*>(&TesseraStreamDestroy)},
      {"mgpuLaunchKernel", reinterpret_cast<void*>(&TesseraLaunchKernel)},
  };
}

}  // namespace tessera::runtime
