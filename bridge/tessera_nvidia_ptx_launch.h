/* The original Tessera's NVIDIA launch bridge, as a drop-in over the Tessera JIT C API
 * (docs/original-ir.md, "The launch bridge"). The signatures and return codes are the original
 * bridge's (its runtime/cuda/tessera_nvidia_ptx_launch.h); this header is written here.
 *
 * Registered text that is Tile IR (the original's launch-level kernels, or this project's Tile
 * IR) is compiled in process; the launch geometry comes from the IR, not from the entry name.
 * Registered PTX text (a line starting `.version`) is loaded by the driver and launched with
 * the original's name-keyed geometry (bridge/ptx_abi.h: buffer sizes, parameters, grid) for the
 * ABIs of the ops this project imports; the original's other PTX ABIs are 5.
 *
 * Buffers are host pointers, ordered as the kernel's pointer arguments; `dims` are its i64
 * arguments in order. Each buffer is sized from the dims as the kernel's IR declares it (the
 * shape contract). Every call checks its arguments and dims (each in [1, 2^31), each buffer at
 * most 2^31 elements) before it touches a buffer.
 *
 * Return codes (the original's): 0 ok; 1 a NULL argument to register; 2 no usable GPU; 3 a
 * compile or device operation failed; 4 no text registered for the name; 5 a NULL argument,
 * an unknown kernel ABI or a bad shape. tessera_nvidia_ptx_last_error() says why (an extension).
 *
 * Without a GPU every launch returns 2, as the original does — unless the caller opts in to
 * running Tile IR on the host: TESSERA_NVIDIA_BRIDGE_HOST=1 in the environment, or
 * tessera_nvidia_ptx_set_host_fallback(1). Thread-safe. */
#ifndef TESSERA_BRIDGE_TESSERA_NVIDIA_PTX_LAUNCH_H_
#define TESSERA_BRIDGE_TESSERA_NVIDIA_PTX_LAUNCH_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Registers `ptx` (PTX or Tile IR text, NUL-terminated) under `kernel_name`, replacing what was
 * registered and dropping its compiled modules. 0, or 1 for a NULL argument. */
int tessera_nvidia_ptx_register(const char* kernel_name, const char* ptx);

/* Runs `kernel_name` over the host buffers and dims: inputs are copied to the device, the
 * kernel runs, outputs come back; on the host target (opt-in) it runs in place. */
int tessera_nvidia_ptx_invoke(const char* kernel_name, void** buffers, size_t num_buffers,
                              const int64_t* dims, size_t num_dims);

/* As tessera_nvidia_ptx_invoke; `dynamic_shared_bytes` is ignored: a Tile IR kernel's shared
 * memory is part of the IR's launch geometry, and the PTX ABIs this bridge carries launch with
 * none (the original's dynamic-shared-memory ABI is refused, 5). */
int tessera_nvidia_ptx_invoke_v2(const char* kernel_name, void** buffers, size_t num_buffers,
                                 const int64_t* dims, size_t num_dims, size_t dynamic_shared_bytes);

/* Runs the kernel `warmup` times (>= 0), then `repetitions` times (>= 1), and writes the mean
 * latency of one run in milliseconds (device time between CUDA events on a GPU; wall time on
 * the host target). Inputs are copied once. */
int tessera_nvidia_ptx_benchmark(const char* kernel_name, void** buffers, size_t num_buffers,
                                 const int64_t* dims, size_t num_dims, int warmup, int repetitions,
                                 float* latency_ms);

/* The original's variant for kernels with dynamic shared memory: 5 for a Tile IR kernel. */
int tessera_nvidia_ptx_benchmark_v2(const char* kernel_name, void** buffers, size_t num_buffers,
                                    const int64_t* dims, size_t num_dims,
                                    size_t dynamic_shared_bytes, int warmup, int repetitions,
                                    float* latency_ms);

/* Registers, static shared bytes, local bytes and blocks per SM of a registered PTX entry
 * (cuFuncGetAttribute, cuOccupancyMaxActiveBlocksPerMultiprocessor): 2 without a GPU, 4 when
 * nothing is registered, 5 for Tile IR (its module may hold several kernels). */
int tessera_nvidia_ptx_resources(const char* kernel_name, int block_size,
                                 size_t dynamic_shared_bytes, int* registers_per_thread,
                                 int* static_shared_bytes, int* local_bytes,
                                 int* active_blocks_per_sm);

/* The device's total and free memory (cuMemGetInfo on device 0): 5 for a NULL output, 2
 * without a GPU. */
int tessera_nvidia_ptx_device_memory(size_t* total_bytes, size_t* free_bytes);

/* The original registers itself with its core runtime; that runtime is not part of this
 * process: 2, as the original returns without it. */
int tessera_nvidia_register_ptx_launcher(void);

/* Extensions. The reason for the last nonzero return code on this thread ("" after a success);
 * valid until the thread's next bridge call. */
const char* tessera_nvidia_ptx_last_error(void);
/* Non-zero: without a GPU, Tile IR kernels run on the host target instead of returning 2
 * (also TESSERA_NVIDIA_BRIDGE_HOST=1). Returns the previous setting. */
int tessera_nvidia_ptx_set_host_fallback(int enabled);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_BRIDGE_TESSERA_NVIDIA_PTX_LAUNCH_H_ */
