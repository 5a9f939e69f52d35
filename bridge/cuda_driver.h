// The CUDA driver functions the bridge's PTX path needs, dlopen'd from libcuda.so.1 (the bridge,
// like the library, has no link-time dependency on CUDA), and device 0's primary context.
#ifndef TESSERA_BRIDGE_CUDA_DRIVER_H_
#define TESSERA_BRIDGE_CUDA_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::bridge {

using CuResult = int;
using CuDevicePtr = unsigned long long;  // NOLINT: CUdeviceptr

struct CudaDriver {
  CuResult (*init)(unsigned);
  CuResult (*device_get)(int*, int);
  CuResult (*primary_ctx_retain)(void**, int);
  CuResult (*ctx_push)(void*);
  CuResult (*ctx_pop)(void**);
  CuResult (*ctx_synchronize)();
  CuResult (*module_load_data_ex)(void**, const void*, unsigned, int*, void**);
  CuResult (*module_get_function)(void**, void*, const char*);
  CuResult (*module_unload)(void*);
  CuResult (*launch_kernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, void*, void**, void**);
  CuResult (*mem_alloc)(CuDevicePtr*, size_t);
  CuResult (*mem_free)(CuDevicePtr);
  CuResult (*memcpy_htod)(CuDevicePtr, const void*, size_t);
  CuResult (*memcpy_dtoh)(void*, CuDevicePtr, size_t);
  CuResult (*mem_get_info)(size_t*, size_t*);
  CuResult (*func_get_attribute)(int*, int, void*);
  CuResult (*occupancy_max_active_blocks)(int*, void*, int, size_t);
  CuResult (*event_create)(void**, unsigned);
  CuResult (*event_record)(void*, void*);
  CuResult (*event_synchronize)(void*);
  CuResult (*event_elapsed_time)(float*, void*, void*);
  CuResult (*event_destroy)(void*);
  void* context = nullptr;  ///< device 0's primary context, retained for the process
};

/// The driver with device 0's primary context, loaded once; null with `why` when there is no
/// driver or no usable device.
const CudaDriver* LoadCudaDriver(std::string& why);

/// Makes the driver's context current on this thread for the scope.
class ScopedContext {
 public:
  explicit ScopedContext(const CudaDriver& driver);
  ~ScopedContext();
  bool ok() const { return ok_; }

 private:
  const CudaDriver& driver_;
  bool ok_;
};

// CU_FUNC_ATTRIBUTE_* values of cuda.h.
constexpr int kCuFuncSharedSizeBytes = 1;
constexpr int kCuFuncLocalSizeBytes = 3;
constexpr int kCuFuncNumRegs = 4;

}  // namespace tessera::bridge

#endif  // TESSERA_BRIDGE_CUDA_DRIVER_H_
