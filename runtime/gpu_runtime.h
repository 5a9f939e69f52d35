// Devices, primary contexts, memory, streams, modules and launches through the dlopen'ed CUDA
// driver. The host target never touches this.
#ifndef TESSERA_RUNTIME_GPU_RUNTIME_H_
#define TESSERA_RUNTIME_GPU_RUNTIME_H_

#include <cuda.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "runtime/cuda_driver.h"

namespace tessera::runtime {

/// What a device is.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string arch;  ///< "sm_90"
  size_t total_memory = 0;
  int multiprocessors = 0;
  int l2_bytes = 0;  ///< the L2 cache size
};

/// Directions of a copy.
enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

/// The process-wide GPU runtime. Thread-safe: every method may be called from any thread; each
/// call makes the device's primary context current on the calling thread first.
class GpuRuntime {
 public:
  /// The runtime, created on first use. UNAVAILABLE when there is no driver or no device.
  static absl::StatusOr<GpuRuntime*> Get();

  int device_count() const { return static_cast<int>(devices_.size()); }
  absl::StatusOr<DeviceInfo> Info(int ordinal) const;

  /// Makes the primary context of `ordinal` current on the calling thread (retained on first
  /// use and kept for the life of the process).
  absl::Status Activate(int ordinal);

  absl::StatusOr<CUdeviceptr> Allocate(int ordinal, size_t bytes);
  absl::Status Free(int ordinal, CUdeviceptr pointer);
  /// Copies `bytes`; ordered on `stream` (null: the legacy default stream) and waited for.
  absl::Status Copy(int ordinal, void* destination, const void* source, size_t bytes, CopyKind kind,
                    CUstream stream);
  absl::Status Memset(int ordinal, CUdeviceptr destination, unsigned char value, size_t bytes,
                      CUstream stream);

  /// A stream on `ordinal`; `non_blocking`: it does not synchronise with the legacy default
  /// stream.
  absl::StatusOr<CUstream> CreateStream(int ordinal, bool non_blocking = true);
  absl::Status DestroyStream(int ordinal, CUstream stream);
  absl::Status Synchronize(int ordinal, CUstream stream);
  /// Whether all work on `stream` has completed (never blocks).
  absl::StatusOr<bool> StreamDone(int ordinal, CUstream stream);
  /// Work later enqueued on `stream` waits for `event` (on the device, not the host).
  absl::Status WaitEvent(int ordinal, CUstream stream, CUevent event);

  /// Events, for ordering and timing on streams.
  absl::StatusOr<CUevent> CreateEvent(int ordinal, bool timing = true);
  absl::Status RecordEvent(CUevent event, CUstream stream);
  /// Whether the work before the event's last record has completed (never blocks).
  absl::StatusOr<bool> EventDone(int ordinal, CUevent event);
  absl::Status SynchronizeEvent(int ordinal, CUevent event);
  /// Waits for `stop`, then the milliseconds between `start` and `stop`.
  absl::StatusOr<float> ElapsedMs(CUevent start, CUevent stop);
  absl::Status DestroyEvent(int ordinal, CUevent event);

  /// Loads a module: the cubin first; when the driver rejects it (e.g. another GPU
  /// generation), the PTX through the driver's JIT, whose error log a failure carries.
  absl::StatusOr<CUmodule> LoadModule(int ordinal, absl::string_view cubin, absl::string_view ptx);
  absl::Status UnloadModule(int ordinal, CUmodule module);
  absl::StatusOr<CUfunction> GetFunction(CUmodule module, const char* name);
  absl::Status Launch(CUfunction function, std::array<unsigned, 3> grid,
                      std::array<unsigned, 3> block, unsigned shared_bytes, CUstream stream,
                      void** params);

  const DriverApi& driver() const { return *driver_; }

 private:
  GpuRuntime(const DriverApi* driver, std::vector<CUdevice> devices);
  absl::Status CheckOrdinal(int ordinal) const;

  const DriverApi* driver_;
  std::vector<CUdevice> devices_;
  mutable absl::Mutex mu_;
  std::vector<CUcontext> contexts_ ABSL_GUARDED_BY(mu_);
};

/// Keeps the calling thread's current CUDA context across a scope: the runtime makes its own
/// primary contexts current (Activate), and a host program's context must be current again when
/// a call into the service returns. No-op without a driver.
class ScopedCurrentContext {
 public:
  ScopedCurrentContext();
  ~ScopedCurrentContext();
  ScopedCurrentContext(const ScopedCurrentContext&) = delete;
  ScopedCurrentContext& operator=(const ScopedCurrentContext&) = delete;

 private:
  const DriverApi* driver_ = nullptr;
  CUcontext saved_ = nullptr;
};

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_GPU_RUNTIME_H_
