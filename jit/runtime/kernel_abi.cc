// The mgpu* ABI over GpuRuntime, with per-thread invocation scopes.
#include "jit/runtime/kernel_abi.h"

#include <cstdint>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "jit/runtime/gpu_runtime.h"

namespace tessera::jit::runtime {
namespace {

constexpr char kImageMagic[8] = {'T', 'S', 'R', 'I', 'M', 'G', '0', '1'};

thread_local InvocationScope* current_scope = nullptr;

/// Reports a failure to the enclosing scope (none: the failure has nowhere to go but is also
/// harmless, e.g. an unload at teardown).
void Fail(absl::Status status) {
  if (current_scope != nullptr) current_scope->Record(std::move(status));
}

bool Failed() { return current_scope != nullptr && !current_scope->status().ok(); }

int CurrentOrdinal() { return current_scope != nullptr ? current_scope->ordinal() : 0; }

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
extern "C" void* TesseraStreamCreate() {
  return current_scope != nullptr ? current_scope->stream() : nullptr;
}
extern "C" void TesseraStreamSynchronize(void* /*stream*/) {}
extern "C" void TesseraStreamDestroy(void* /*stream*/) {}

extern "C" void TesseraLaunchKernel(void* function, intptr_t grid_x, intptr_t grid_y,
                                    intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                                    intptr_t block_z, int32_t shared_bytes, void* stream,
                                    void** params, void** /*extra*/, size_t /*param_count*/) {
  if (Failed() || function == nullptr) return;
  GpuRuntime* runtime = RuntimeOrFail();
  if (runtime == nullptr) return;
  Fail(runtime->Launch(static_cast<CUfunction>(function),
                       {static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y),
                        static_cast<unsigned>(grid_z)},
                       {static_cast<unsigned>(block_x), static_cast<unsigned>(block_y),
                        static_cast<unsigned>(block_z)},
                       static_cast<unsigned>(shared_bytes), static_cast<CUstream>(stream),
                       params));
}

}  // namespace

std::string PackDeviceImage(absl::string_view cubin, absl::string_view ptx) {
  std::string packed(kImageMagic, sizeof(kImageMagic));
  uint64_t sizes[2] = {cubin.size(), ptx.size() + 1};
  packed.append(reinterpret_cast<const char*>(sizes), sizeof(sizes));
  packed.append(cubin.data(), cubin.size());
  packed.append(ptx.data(), ptx.size());
  packed.push_back('\0');  // the driver's PTX JIT reads a C string
  return packed;
}

bool UnpackDeviceImage(absl::string_view data, absl::string_view& cubin,
                       absl::string_view& ptx) {
  constexpr size_t kHeader = sizeof(kImageMagic) + 2 * sizeof(uint64_t);
  if (data.size() < kHeader || std::memcmp(data.data(), kImageMagic, sizeof(kImageMagic)) != 0) {
    return false;
  }
  uint64_t sizes[2];
  std::memcpy(sizes, data.data() + sizeof(kImageMagic), sizeof(sizes));
  if (sizes[0] > data.size() - kHeader || sizes[1] > data.size() - kHeader - sizes[0]) {
    return false;
  }
  cubin = data.substr(kHeader, sizes[0]);
  ptx = data.substr(kHeader + sizes[0], sizes[1]);
  if (!ptx.empty()) ptx.remove_suffix(1);  // the NUL
  return true;
}

int CurrentInvocationOrdinal() { return CurrentOrdinal(); }

CUstream CurrentInvocationStream() {
  return current_scope != nullptr ? current_scope->stream() : nullptr;
}

DelegateRuntime* CurrentInvocationDelegates() {
  return current_scope != nullptr ? current_scope->delegates() : nullptr;
}

bool InvocationFailed() { return Failed(); }

void RecordFailure(absl::Status status) { Fail(std::move(status)); }

InvocationScope::InvocationScope(int ordinal, CUstream stream, DelegateRuntime* delegates)
    : ordinal_(ordinal), stream_(stream), delegates_(delegates), previous_(current_scope) {
  current_scope = this;
}

InvocationScope::~InvocationScope() { current_scope = previous_; }

void InvocationScope::Record(absl::Status status) {
  if (status_.ok() && !status.ok()) status_ = std::move(status);
}

std::vector<std::pair<std::string, void*>> RuntimeSymbols() {
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

}  // namespace tessera::jit::runtime
