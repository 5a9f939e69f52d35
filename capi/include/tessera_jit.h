/* Tessera JIT: the C API. The only public header of libtessera_jit.so.
 * Over 600 lines: the only public header; every declaration carries its documented contract
 * and error codes, which tests/capi/documented_errors_test.cc checks.
 *
 * Conventions
 *  - Opaque handles. A fallible call returns tessera_jit_error_t*: NULL on success, otherwise
 *    an error the caller owns and releases with tessera_jit_error_destroy(). Nothing throws or
 *    aborts across this boundary.
 *  - Every struct starts with `struct_size`, the size the caller was compiled with
 *    (TESSERA_JIT_STRUCT_SIZE). Option structs: fill them with their (inline) _init() function;
 *    fields past the caller's size take their defaults. Output structs (cache stats, device
 *    info, argument info): the library writes only the fields that fit. Any size from the
 *    struct's first version on is accepted; smaller is INVALID_ARGUMENT.
 *  - Ownership is in the verb: _create/_destroy, _get_* borrows (valid as long as its owner).
 *  - Strings are pointer + length; returned strings are also NUL-terminated.
 *  - Thread safety is stated per type and per function. Contexts, modules and functions are
 *    thread-safe handles: any number of threads may use one at once, except that no thread may
 *    use a handle while (or after) another destroys it. Errors are owned by one thread at a
 *    time. The library writes to stderr only through the context's log_level (and a run-time
 *    check failing outside a checked call, which cannot happen through this API).
 */
#ifndef TESSERA_JIT_H_
#define TESSERA_JIT_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_JIT_API_MAJOR 0
#define TESSERA_JIT_API_MINOR 15

/* The size of `type` up to and including `last_field`: what a struct of the API version that
 * ended with `last_field` measures (API 0.5). */
#define TESSERA_JIT_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* The API version the library implements. Thread-safe. */
void tessera_jit_get_api_version(int* out_major, int* out_minor);

/* API 0.14: what this library is built from and what it found at run time, as a JSON object:
 * "tessera" (build identity), "llvm", "cuda_headers", "host_cpu", "cuda" — for each of "nvrtc",
 * "nvjitlink" and "libdevice": "found", "path", "origin", "version" and the "steps" of the
 * search (docs/building.md) — and "driver" ("found", "message"). Searches for what was not yet
 * searched for. A static NUL-terminated string, the same on every call. Thread-safe. */
const char* tessera_jit_get_build_info(void);

/* ------------------------------------------------------------------------------------------- */
/* Errors                                                                                       */

typedef struct tessera_jit_error tessera_jit_error_t;

/* Error codes; the values equal abseil's status codes. */
typedef enum tessera_jit_error_code_t {
  TESSERA_JIT_OK = 0,
  TESSERA_JIT_CANCELLED = 1,
  TESSERA_JIT_UNKNOWN = 2,
  TESSERA_JIT_INVALID_ARGUMENT = 3,
  TESSERA_JIT_DEADLINE_EXCEEDED = 4,
  TESSERA_JIT_NOT_FOUND = 5,
  TESSERA_JIT_ALREADY_EXISTS = 6,
  TESSERA_JIT_PERMISSION_DENIED = 7,
  TESSERA_JIT_RESOURCE_EXHAUSTED = 8,
  TESSERA_JIT_FAILED_PRECONDITION = 9,
  TESSERA_JIT_ABORTED = 10,
  TESSERA_JIT_OUT_OF_RANGE = 11,
  TESSERA_JIT_UNIMPLEMENTED = 12,
  TESSERA_JIT_INTERNAL = 13,
  TESSERA_JIT_UNAVAILABLE = 14,
  TESSERA_JIT_DATA_LOSS = 15,
  TESSERA_JIT_UNAUTHENTICATED = 16,
} tessera_jit_error_code_t;

/* Error functions are thread-safe on distinct errors; an error is used by one thread at a time.
 * The code of `error` (NULL: TESSERA_JIT_OK). */
tessera_jit_error_code_t tessera_jit_error_code(const tessera_jit_error_t* error);
/* The message of `error`; valid until tessera_jit_error_destroy(error). */
const char* tessera_jit_error_message(const tessera_jit_error_t* error, size_t* out_size);
/* Releases `error` (NULL is allowed). */
void tessera_jit_error_destroy(tessera_jit_error_t* error);

/* ------------------------------------------------------------------------------------------- */
/* Context                                                                                      */

typedef struct tessera_jit_context tessera_jit_context_t; /* Thread-safe. */

typedef enum tessera_jit_log_level_t {
  TESSERA_JIT_LOG_ERROR = 0,
  TESSERA_JIT_LOG_WARNING = 1,
  TESSERA_JIT_LOG_INFO = 2,
  TESSERA_JIT_LOG_DEBUG = 3, /* API 0.14: also where the CUDA libraries were searched for, once
                                per context, when it is created */
} tessera_jit_log_level_t;

typedef struct tessera_jit_context_options_t {
  size_t struct_size;         /* TESSERA_JIT_CONTEXT_OPTIONS_STRUCT_SIZE */
  const char* default_target; /* "host" or "nvptx"; NULL: nvptx when a GPU is present, else host */
  int32_t device_ordinal;     /* the CUDA device nvptx modules run on */
  tessera_jit_log_level_t log_level; /* what is written to stderr */
  /* --- API 0.2: the compile cache (callers built against 0.1 get the defaults) --- */
  const char* cache_dir;       /* NULL: $TESSERA_JIT_CACHE_DIR, else ~/.cache/tessera-jit;
                                  "": no disk tier (memory only) */
  uint64_t cache_memory_bytes; /* 0: 256 MiB */
  uint64_t cache_disk_bytes;   /* 0: 1 GiB */
  /* --- API 0.5 --- */
  int32_t cache_read_only;       /* non-zero: serve disk hits from cache_dir, never write it (a
                                    prebuilt cache in a container image); chosen by itself when
                                    the directory holds a cache but is not writable */
  int64_t cache_lock_timeout_ms; /* how long a compile waits for another process compiling the
                                    same key, then compiles too; 0: 120000 */
  /* --- API 0.7 --- */
  int32_t num_threads; /* threads host code of this context runs its parallel loops on (the
                          caller's thread included), 1-1024; 0: $TESSERA_JIT_NUM_THREADS, else
                          the cores the process may use. Results do not depend on it. */
  /* --- API 0.8 --- */
  const char* remote_cache; /* the fleet's cache tier below memory and disk (docs/cache.md):
                               "redis://[user:password@]host:port[/db][?timeout_ms=N&…]";
                               NULL: $TESSERA_JIT_REMOTE_CACHE (ignored with a warning if it
                               does not parse); "": none. A malformed URL here is an
                               INVALID_ARGUMENT; an unreachable server never fails a compile. */
  /* --- API 0.10: the arbiter (docs/arbiter.md) --- */
  const char* plan_path; /* replay: every Tile op takes the candidate this plan file pins, with
                            nothing probed or timed (tessera_jit_context_write_plan writes
                            one); NULL or "": measure. A plan file that cannot be read fails
                            context creation with NOT_FOUND; a malformed one (not a regular
                            file, too large, not a plan) with INVALID_ARGUMENT. */
  int32_t plan_strict;   /* with plan_path: a Tile op the plan lacks fails its compile (naming
                            it) instead of running the compiled lowering */
  int32_t arbitration_budget_ms; /* how long the candidates of one decision may run (warm-up
                                    and timed samples), 1-3600000; 0: 300 */
} tessera_jit_context_options_t;
#define TESSERA_JIT_CONTEXT_OPTIONS_STRUCT_SIZE \
  TESSERA_JIT_STRUCT_SIZE(tessera_jit_context_options_t, arbitration_budget_ms)

/* Fills `out_options` with the defaults. Inline, so that it writes exactly the struct the caller
 * was compiled with (a newer library never writes past an older caller's struct). */
static inline void tessera_jit_context_options_init(tessera_jit_context_options_t* out_options) {
  memset(out_options, 0, sizeof(*out_options));
  out_options->struct_size = TESSERA_JIT_CONTEXT_OPTIONS_STRUCT_SIZE;
  out_options->log_level = TESSERA_JIT_LOG_WARNING;
}
/* Creates a context; the caller owns it. `options` may be NULL (the defaults). A field out of
 * its range (num_threads, arbitration_budget_ms, a negative cache_lock_timeout_ms), an unknown
 * default_target or plan_strict without plan_path is INVALID_ARGUMENT naming the field.
 * Thread-safe. */
tessera_jit_error_t* tessera_jit_context_create(const tessera_jit_context_options_t* options,
                                                tessera_jit_context_t** out_context);
/* Releases the caller's reference to a context (NULL is allowed). Modules hold a reference of
 * their own: a context destroyed while modules live stays usable by them and is freed with the
 * last one. Do not destroy a context while another thread uses it through this handle. */
void tessera_jit_context_destroy(tessera_jit_context_t* context);

/* API 0.10: writes the decisions of every module this context compiled (the first decision of
 * each arbitration point) as a plan file at `path` (`path_size` bytes, no NUL needed; written
 * to a temporary file and renamed). A plan with no decisions is valid. INVALID_ARGUMENT for a
 * NULL or empty path, or one with a NUL byte; UNAVAILABLE when it cannot be written.
 * Thread-safe. */
tessera_jit_error_t* tessera_jit_context_write_plan(tessera_jit_context_t* context,
                                                    const char* path, size_t path_size);

/* The context's compile cache: every tessera_jit_compile goes through it (memory, then disk,
 * then a real compile). Counters are since the context was created; disk figures are of the
 * shared directory. */
typedef struct tessera_jit_cache_stats_t {
  size_t struct_size; /* TESSERA_JIT_CACHE_STATS_STRUCT_SIZE */
  uint64_t memory_hits;
  uint64_t disk_hits;
  uint64_t compiles; /* = misses */
  uint64_t misses_not_cached;
  uint64_t misses_stale;   /* an entry from another toolchain or library version existed */
  uint64_t misses_damaged; /* truncated, checksum mismatch, foreign format, half-written */
  uint64_t memory_entries;
  uint64_t memory_bytes;
  uint64_t disk_entries;
  uint64_t disk_bytes;
  int32_t disk_enabled; /* 0 when there is no disk tier or it turned itself off */
  char last_miss_reason[256];
  /* --- API 0.5 --- */
  int32_t disk_read_only;      /* the disk tier serves hits only */
  uint64_t disk_lock_timeouts; /* compiles that stopped waiting for another process's lock */
  uint64_t disk_lock_failures; /* lock files that could not be opened or locked */
  /* --- API 0.8: the remote tier (this context's operations; `tessera-jit cache stats
   * --remote` shows the fleet's) --- */
  int32_t remote_enabled;         /* configured and not refused (a failed AUTH switches it off) */
  uint64_t remote_hits;           /* compiles served by the remote tier */
  uint64_t remote_misses;         /* lookups that found nothing usable, with the next three */
  uint64_t remote_misses_damaged; /* corrupted, truncated, foreign, another format or toolchain */
  uint64_t remote_misses_unavailable; /* the server was down, slow or backing off */
  uint64_t remote_stores;
  uint64_t remote_store_failures;  /* e.g. the server out of memory */
  uint64_t remote_lease_waits;     /* compiles that waited for another process's compile */
  uint64_t remote_lease_takeovers; /* … and took the key over (its holder died or failed) */
  uint64_t remote_lease_timeouts;  /* … and stopped waiting (cache_lock_timeout_ms) */
  uint64_t remote_errors;          /* failed commands: unavailable, timeout, auth, OOM, other */
  uint64_t remote_reconnects;
  double remote_latency_p50_us; /* GET latency of remote hits (the last 4096) */
  double remote_latency_p99_us;
} tessera_jit_cache_stats_t;
#define TESSERA_JIT_CACHE_STATS_STRUCT_SIZE \
  TESSERA_JIT_STRUCT_SIZE(tessera_jit_cache_stats_t, remote_latency_p99_us)

/* Fills `out_stats` (struct_size set by the caller; from API 0.2's size, ending with
 * last_miss_reason, on). Thread-safe. */
tessera_jit_error_t* tessera_jit_context_get_cache_stats(tessera_jit_context_t* context,
                                                         tessera_jit_cache_stats_t* out_stats);

/* ------------------------------------------------------------------------------------------- */
/* Delegates (API 0.2): vendor libraries and kernel images a module's tessera_nvidia.kernel_call
 * ops resolve against — only these, never the process's own symbols. Register before
 * compiling; registrations are part of the compile cache key. Thread-safe.                     */

/* dlopen()s `path` (RTLD_LOCAL) under `name`. INVALID_ARGUMENT if it cannot be loaded. Its
 * callees take the pointers its soname says: the CUDA libraries (libcublas, libcudnn, libcufft,
 * libcurand, libcusparse, libcusolver, libnccl, libcudart, libnvshmem) device pointers, any
 * other library host pointers (see tessera_jit_context_register_library_with_pointers). */
tessera_jit_error_t* tessera_jit_context_register_library(tessera_jit_context_t* context,
                                                          const char* name, const char* path);

/* API 0.6: which memory a library's pointer parameters address. A host-pointer library serves
 * host compiles only, a device-pointer library nvptx compiles only: a kernel_call into the
 * other kind fails the compile (FAILED_PRECONDITION). */
typedef enum tessera_jit_pointer_space_t {
  TESSERA_JIT_POINTERS_INFERRED = 0, /* from the soname, as tessera_jit_context_register_library */
  TESSERA_JIT_POINTERS_HOST = 1,
  TESSERA_JIT_POINTERS_DEVICE = 2,
  /* Not a value: makes every int32 a valid enum value, so an unknown one is an error
   * (INVALID_ARGUMENT), not undefined behaviour in the library. */
  TESSERA_JIT_POINTERS_ENUM_MAX = 0x7FFFFFFF,
} tessera_jit_pointer_space_t;

/* API 0.6: tessera_jit_context_register_library with the pointer space stated. INVALID_ARGUMENT
 * for an unknown `pointers` value. Thread-safe. */
tessera_jit_error_t* tessera_jit_context_register_library_with_pointers(
    tessera_jit_context_t* context, const char* name, const char* path,
    tessera_jit_pointer_space_t pointers);
/* The default set for `target` ("host": openblas → libopenblas.so.0; "nvptx": cublas →
 * libcublas.so.13); NULL: the context's default target. */
tessera_jit_error_t* tessera_jit_context_register_default_libraries(tessera_jit_context_t* context,
                                                                    const char* target);

typedef enum tessera_jit_image_format_t {
  TESSERA_JIT_IMAGE_PTX = 0,               /* PTX text */
  TESSERA_JIT_IMAGE_CUBIN = 1,             /* cubin bytes */
  TESSERA_JIT_IMAGE_CUDA_SOURCE = 2,       /* CUDA C++, compiled in process with NVRTC for `arch` */
  TESSERA_JIT_IMAGE_ENUM_MAX = 0x7FFFFFFF, /* not a value (see TESSERA_JIT_POINTERS_ENUM_MAX) */
} tessera_jit_image_format_t;

/* Registers hand-written kernels under `name`; their entries serve `binding = "cuda_kernel"`
 * calls. `arch` (CUDA source only): NULL = the context's device, else sm_90 (a device whose arch
 * the compiler does not support is FAILED_PRECONDITION; an `arch` it does not support,
 * UNIMPLEMENTED, as for tessera_jit_compile). A CUDA source that does not compile is
 * INVALID_ARGUMENT carrying NVRTC's log. */
tessera_jit_error_t* tessera_jit_context_register_kernel_image(tessera_jit_context_t* context,
                                                               const char* name, const void* data,
                                                               size_t size,
                                                               tessera_jit_image_format_t format,
                                                               const char* arch);

/* The registered delegates' identities, one line each ("name (library, host pointers) soname
 * version sha256:… path"). The string is valid for the life of the context, whatever other threads
 * register or ask meanwhile. Thread-safe. */
size_t tessera_jit_context_get_delegate_count(tessera_jit_context_t* context);
const char* tessera_jit_context_get_delegate_identity(tessera_jit_context_t* context, size_t index,
                                                      size_t* out_size);

/* A matmul provider (API 0.3): declares that `library` (registered) serves tile.matmul through
 * `callee`, which has the ABI of cblas_sgemm (target "host") or cublasSgemm_v2 ("nvptx"). It
 * becomes an arbiter candidate with this contract (the delegation contract of docs/ir.md). */
typedef struct tessera_jit_matmul_provider_t {
  size_t struct_size;  /* TESSERA_JIT_MATMUL_PROVIDER_STRUCT_SIZE */
  const char* name;    /* the candidate id; not "compiled", "openblas" or "cublas" */
  const char* library; /* a registered library that defines `callee` */
  const char* callee;
  const char* target;      /* "host" or "nvptx" */
  const char* arch;        /* the arch envelope, e.g. "host" or "sm_80+" */
  const char* provenance;  /* "vendor_library" | "handwritten_kernel" */
  const char* covers;      /* "root_only" | "whole_region" */
  const char* determinism; /* "deterministic" | "nondeterministic" */
  const char* accuracy;    /* "reference_exact" | "tolerance_bounded" */
  double tolerance;        /* absolute bound; 0: none */
  double tolerance_rel;    /* relative bound; 0: none */
} tessera_jit_matmul_provider_t;
#define TESSERA_JIT_MATMUL_PROVIDER_STRUCT_SIZE \
  TESSERA_JIT_STRUCT_SIZE(tessera_jit_matmul_provider_t, tolerance_rel)

static inline void tessera_jit_matmul_provider_init(tessera_jit_matmul_provider_t* out_provider) {
  memset(out_provider, 0, sizeof(*out_provider));
  out_provider->struct_size = TESSERA_JIT_MATMUL_PROVIDER_STRUCT_SIZE;
  out_provider->target = "host";
  out_provider->arch = "host";
  out_provider->provenance = "handwritten_kernel";
  out_provider->covers = "root_only";
  out_provider->determinism = "deterministic";
  out_provider->accuracy = "reference_exact";
}
/* INVALID_ARGUMENT naming the field for a malformed contract (or a reserved name); NOT_FOUND
 * for a library that is not registered or a callee it does not define (an unknown name, as
 * for tessera_jit_module_get_function). */
tessera_jit_error_t* tessera_jit_context_declare_matmul_provider(
    tessera_jit_context_t* context, const tessera_jit_matmul_provider_t* provider);

/* Delegate calls made by JIT'd code in this process so far (all contexts). Thread-safe. */
uint64_t tessera_jit_get_delegate_dispatch_count(void);

/* ------------------------------------------------------------------------------------------- */
/* Devices. Without a driver or device, count is 0 and is_gpu_available false (not an error).   */

typedef struct tessera_jit_device_info_t {
  size_t struct_size; /* TESSERA_JIT_DEVICE_INFO_STRUCT_SIZE */
  int32_t ordinal;
  char name[256];
  char arch[16]; /* "sm_90" */
  uint64_t total_memory_bytes;
  int32_t multiprocessors;
} tessera_jit_device_info_t;
#define TESSERA_JIT_DEVICE_INFO_STRUCT_SIZE \
  TESSERA_JIT_STRUCT_SIZE(tessera_jit_device_info_t, multiprocessors)

/* API 0.6: the GPU archs the nvptx target compiles for, oldest first ("sm_75" … "sm_90a",
 * "sm_100" … "sm_121a"): index 0 to count - 1. Static strings. Thread-safe. */
size_t tessera_jit_get_supported_arch_count(void);
const char* tessera_jit_get_supported_arch(size_t index); /* NULL past the end */

/* Whether a CUDA driver and at least one device are usable. Thread-safe. */
int tessera_jit_is_gpu_available(void);
/* The number of CUDA devices (0 without a driver). Thread-safe. */
int32_t tessera_jit_device_count(void);
/* Fills `out_info` (struct_size set by the caller; any size from API 0.1's) for device `ordinal`.
 * UNAVAILABLE without a driver; INVALID_ARGUMENT for a bad ordinal. Thread-safe. */
tessera_jit_error_t* tessera_jit_device_get_info(int32_t ordinal,
                                                 tessera_jit_device_info_t* out_info);

/* ------------------------------------------------------------------------------------------- */
/* Compile                                                                                      */

typedef struct tessera_jit_module tessera_jit_module_t;     /* Thread-safe. */
typedef struct tessera_jit_function tessera_jit_function_t; /* Thread-safe. */

#define TESSERA_JIT_DETERMINISTIC 0x1u /* every function deterministic (tessera.deterministic) */
/* API 0.10: every function deterministic at the batch_invariant level (implies
 * TESSERA_JIT_DETERMINISTIC): only candidates whose result rows do not depend on the batch size
 * may serve a Tile op; a delegate proves it by a replay probe first (docs/arbiter.md). */
#define TESSERA_JIT_BATCH_INVARIANT 0x2u
/* API 0.11: background decisions. A Tile op without a cached decision is not measured in this
 * compile: its incumbent (the compiled lowering, or a stale record's winner) serves, and a
 * worker of the context measures it; once decided, the module switches to the measured
 * candidates at the start of the next invoke, or of a get_decision / wait_decisions call —
 * never during an invoke: each invoke runs one module's code throughout.
 * tessera_jit_module_get_decision and tessera_jit_module_wait_decisions follow it. Host target only
 * (an nvptx compile decides synchronously, as without the flag). In a deterministic function the
 * swap would change results between calls: its ops are measured synchronously unless
 * TESSERA_JIT_BACKGROUND_DETERMINISTIC allows it. */
#define TESSERA_JIT_BACKGROUND_DECISIONS 0x4u
#define TESSERA_JIT_BACKGROUND_DETERMINISTIC 0x8u
/* API 0.12: nvptx: compile to PTX only — no cubin, no nvJitLink (1/3 to 1/2 of a compile's
 * time, docs/performance.md). The CUDA driver compiles the PTX for the device when the module
 * first loads (ptxas's time, once per process; the driver's own cache, ~/.nv/ComputeCache,
 * keeps the result for later processes unless CUDA_CACHE_DISABLE=1), and PTX for an arch loads
 * on that arch and newer ones. TESSERA_JIT_TEXT_CUBIN is then NOT_FOUND. Ignored for the host
 * target. */
#define TESSERA_JIT_PTX_ONLY 0x10u

typedef struct tessera_jit_compile_options_t {
  size_t struct_size; /* TESSERA_JIT_COMPILE_OPTIONS_STRUCT_SIZE */
  const char* target; /* "nvptx" or "host"; NULL = the context default */
  const char* arch;   /* "sm_90"; one of tessera_jit_get_supported_arch(); NULL = the
                         context's device (sm_90 without one; a device of an arch the compiler
                         does not support is FAILED_PRECONDITION) */
  uint32_t flags;     /* TESSERA_JIT_DETERMINISTIC, … */
  int32_t opt_level;  /* 0-3 */
  /* --- API 0.2 --- */
  const char*
      matmul_delegate; /* forces every tile.matmul onto one arbiter candidate: a matmul
                          provider ("openblas", "cublas", a declared one) or "compiled";
                          NULL: the arbiter chooses (ops with `delegate = "…"` are forced) */
  /* --- API 0.10 --- */
  int32_t arbitration_budget_ms; /* 1-3600000; 0: the context's */
  /* --- API 0.15 --- */
  const char* host_cpu; /* host: the CPU machine code is generated for. NULL, "" or "native":
                           this machine's, with every feature it has; else a 64-bit x86 CPU LLVM
                           knows ("x86-64-v3", "skylake-avx512", "znver4"), whose code runs on
                           any machine with its features (an unknown name is INVALID_ARGUMENT
                           listing them). Code this machine cannot run compiles, with every Tile
                           op on its compiled lowering (nothing can be measured), for a package
                           (tessera_jit_package_write): its functions are FAILED_PRECONDITION
                           here. Ignored for nvptx. */
} tessera_jit_compile_options_t;
#define TESSERA_JIT_COMPILE_OPTIONS_STRUCT_SIZE \
  TESSERA_JIT_STRUCT_SIZE(tessera_jit_compile_options_t, host_cpu)

/* Fills `out_options` with the defaults (inline, like tessera_jit_context_options_init). */
static inline void tessera_jit_compile_options_init(tessera_jit_compile_options_t* out_options) {
  memset(out_options, 0, sizeof(*out_options));
  out_options->struct_size = TESSERA_JIT_COMPILE_OPTIONS_STRUCT_SIZE;
  out_options->opt_level = 2;
}

/* Compiles Tessera IR (`source`, `source_size` bytes, MLIR text; no NUL terminator needed, and
 * nothing past `source_size` is read; NULL with size 0 is the empty module) into a module the
 * caller owns. `options` may be NULL. Errors carry every diagnostic with its location: bad or
 * disallowed IR (docs/ir.md), IR nested deeper than 256 levels, a broken contract →
 * INVALID_ARGUMENT; see docs/capi.md for every code. Thread-safe. */
tessera_jit_error_t* tessera_jit_compile(tessera_jit_context_t* context, const char* source,
                                         size_t source_size,
                                         const tessera_jit_compile_options_t* options,
                                         tessera_jit_module_t** out_module);

/* Releases the module and its functions (NULL is allowed). Not while another thread uses the
 * module or one of its functions. Background decisions not yet started are dropped; one being
 * measured finishes on the worker (the context, destroyed last, waits for it). */
void tessera_jit_module_destroy(tessera_jit_module_t* module);

/* The module's entry functions (public func.func). Borrowed strings, valid while the module.
 * Thread-safe. */
size_t tessera_jit_module_get_entry_count(const tessera_jit_module_t* module);
const char* tessera_jit_module_get_entry_name(const tessera_jit_module_t* module, size_t index,
                                              size_t* out_size);

typedef enum tessera_jit_text_kind_t {
  TESSERA_JIT_TEXT_LLVM = 0,      /* the host code as LLVM IR */
  TESSERA_JIT_TEXT_PTX = 1,       /* the PTX of every device image (nvptx) */
  TESSERA_JIT_TEXT_CUBIN = 2,     /* a cubin with every kernel (nvptx; binary). Since API 0.12 each
                                     kernel is a device image of its own, compiled in parallel; a
                                     module of several is linked into one cubin on the first
                                     request (nvJitLink's time, once) */
  TESSERA_JIT_TEXT_DECISIONS = 3, /* API 0.3: the arbiter's decision records, one per Tile op,
                                     as a JSON array (docs/arbiter.md) */
  TESSERA_JIT_TEXT_PLAN = 4,      /* API 0.10: the module's decisions as a plan file (JSON) that
                                     tessera_jit_context_options_t.plan_path replays */
  TESSERA_JIT_TEXT_PACKAGE = 5,   /* API 0.14: the module as an ahead-of-time package (binary;
                                     docs/capi.md, "Packages") that tessera_jit_module_load
                                     loads in another process: its code for this target (host:
                                     the CPU it was compiled for; nvptx: its arch), shape
                                     contracts and decision records, made on the first request
                                     from the code serving then */
  TESSERA_JIT_TEXT_ENUM_MAX = 0x7FFFFFFF, /* not a value (see TESSERA_JIT_POINTERS_ENUM_MAX) */
} tessera_jit_text_kind_t;

/* Borrows an artifact of the module (valid while the module). NOT_FOUND when the module has
 * none of that kind (e.g. PTX of a host module). Thread-safe. */
tessera_jit_error_t* tessera_jit_module_get_text(const tessera_jit_module_t* module,
                                                 tessera_jit_text_kind_t kind,
                                                 const char** out_data, size_t* out_size);

/* API 0.14: loads an ahead-of-time package (`data`, `size` bytes: TESSERA_JIT_TEXT_PACKAGE of a
 * module, tessera_jit_package_write, or `tessera-jit compile --emit package`) into a module the
 * caller owns, with no code generation and no cache directory. `target` picks the package's
 * entry: "host" (this machine's exact CPU if the package has code for it, else, of the named
 * CPUs whose features this CPU has, the one with the widest vectors, then the most features) or
 * "nvptx" (`arch`, or the
 * context's device's when NULL); NULL: the context's default target. Both must come from this
 * build of the library.
 * INVALID_ARGUMENT: not a package, another format, a bad target; DATA_LOSS: truncated or
 * altered bytes; FAILED_PRECONDITION: no entry fits, naming what differs for each.
 * Thread-safe. */
tessera_jit_error_t* tessera_jit_module_load(tessera_jit_context_t* context, const void* data,
                                             size_t size, const char* target, const char* arch,
                                             tessera_jit_module_t** out_module);

/* API 0.15: one package holding every module of `modules` (`count` of them, 1-64), each an
 * entry for the target and machine it was compiled for — host code for several CPUs
 * (tessera_jit_compile_options_t.host_cpu), device code for several archs — so that
 * tessera_jit_module_load picks the one that fits where it runs. Each module contributes the
 * code serving at the call (after a background swap, the measured code). Writes the package to
 * `buffer` when `buffer_size` holds it, and its size to `*out_size` whenever it could be made:
 * call with NULL and 0 to learn the size (OK), then with a buffer that large. OUT_OF_RANGE when
 * `buffer_size` is too small (nothing written; `*out_size` says what is needed — it can grow
 * between the two calls when background decisions land in between: call again).
 * INVALID_ARGUMENT for NULL `modules`, a NULL module, NULL `out_size`, a NULL `buffer` with a
 * non-zero size, a count of 0 or over 64, or two modules for the same target and machine.
 * Thread-safe. */
tessera_jit_error_t* tessera_jit_package_write(const tessera_jit_module_t* const* modules,
                                               size_t count, void* buffer, size_t buffer_size,
                                               size_t* out_size);

/* Looks up entry `name`; the function is borrowed from the module. NOT_FOUND names the entries
 * that exist. Thread-safe. */
tessera_jit_error_t* tessera_jit_module_get_function(tessera_jit_module_t* module, const char* name,
                                                     size_t name_size,
                                                     tessera_jit_function_t** out_function);

/* API 0.11: where one decision of a module stands (TESSERA_JIT_BACKGROUND_DECISIONS). */
typedef enum tessera_jit_decision_state_t {
  TESSERA_JIT_DECISION_DECIDED = 0, /* `winner` serves: decided at compile, or measured in the
                                       background and swapped in */
  TESSERA_JIT_DECISION_PENDING = 1, /* being measured in the background; `serving` (the
                                       incumbent) runs meanwhile */
  TESSERA_JIT_DECISION_FAILED = 2,  /* the background measurement failed (`detail` says why);
                                       the incumbent keeps serving */
  TESSERA_JIT_DECISION_STATE_ENUM_MAX = 0x7FFFFFFF, /* not a value */
} tessera_jit_decision_state_t;

typedef struct tessera_jit_decision_info_t {
  size_t struct_size;   /* TESSERA_JIT_DECISION_INFO_STRUCT_SIZE */
  int32_t state;        /* a tessera_jit_decision_state_t */
  const char* op;       /* "tile.matmul" */
  const char* location; /* "model.mlir:12:5" */
  const char* function; /* the entry it is in */
  const char* serving;  /* the candidate the next invoke runs unless a swap comes first */
  const char* winner;   /* the decided candidate; "" while PENDING or after FAILED */
  const char* detail;   /* how it was decided, or why it is not */
} tessera_jit_decision_info_t;
#define TESSERA_JIT_DECISION_INFO_STRUCT_SIZE \
  TESSERA_JIT_STRUCT_SIZE(tessera_jit_decision_info_t, detail)

/* One record per Tile op, in program order (the order of TESSERA_JIT_TEXT_DECISIONS). */
size_t tessera_jit_module_get_decision_count(const tessera_jit_module_t* module);
/* The decision `index`; the strings are borrowed from the module (valid while it lives).
 * INVALID_ARGUMENT for an index out of range or a struct_size short of the 0.11 struct.
 * Thread-safe. */
tessera_jit_error_t* tessera_jit_module_get_decision(tessera_jit_module_t* module, size_t index,
                                                     tessera_jit_decision_info_t* out_info);
/* Waits until no decision of the module is PENDING, at most `timeout_ms` (< 0: no limit; 0:
 * just look). `out_pending` (may be NULL) gets how many still are. Thread-safe. */
tessera_jit_error_t* tessera_jit_module_wait_decisions(tessera_jit_module_t* module,
                                                       int64_t timeout_ms, size_t* out_pending);

/* ------------------------------------------------------------------------------------------- */
/* Invoke                                                                                       */

typedef enum tessera_jit_arg_kind_t {
  TESSERA_JIT_ARG_TENSOR = 0, /* a DLTensor*: host memory for host modules, CUDA for nvptx */
  TESSERA_JIT_ARG_INT = 1,    /* any integer or index scalar, passed as int64 */
  TESSERA_JIT_ARG_FLOAT = 2,  /* any float scalar, passed as double (converted to the type) */
  /* API 0.4: a DLTensor* the caller may only read (a DLPack 1.0 tensor flagged
   * DLPACK_FLAG_BITMASK_READ_ONLY, a NumPy array that is not writeable); refused for an
   * argument the entry writes. */
  TESSERA_JIT_ARG_TENSOR_READ_ONLY = 3,
  TESSERA_JIT_ARG_ENUM_MAX = 0x7FFFFFFF, /* not a value (see TESSERA_JIT_POINTERS_ENUM_MAX) */
} tessera_jit_arg_kind_t;

/* What an entry expects for one argument (or result). */
typedef struct tessera_jit_arg_info_t {
  size_t struct_size; /* TESSERA_JIT_ARG_INFO_STRUCT_SIZE */
  tessera_jit_arg_kind_t kind;
  DLDataType dtype;     /* the tensor's or scalar's element type (i1: uint8) */
  int32_t ndim;         /* tensors only */
  const int64_t* shape; /* tensors only; -1 for a dynamic size; borrowed */
  const char* type;     /* the MLIR type, e.g. "memref<?x10xf32>"; borrowed */
  /* API 0.4 (filled when struct_size covers them): */
  const char* name; /* the argument's SSA name in the source ("" if unknown); borrowed */
  int32_t written;  /* tensors: non-zero when the entry may write it (an output) */
  /* API 0.13: tensors only, `ndim` entries: the index of the integer argument each size must
   * equal by the entry's shape contract (e.g. an imported launch kernel's M, N, K:
   * docs/original-ir.md), or -1; borrowed. */
  const int64_t* size_from;
} tessera_jit_arg_info_t;
#define TESSERA_JIT_ARG_INFO_STRUCT_SIZE TESSERA_JIT_STRUCT_SIZE(tessera_jit_arg_info_t, size_from)

/* The number of arguments and of (scalar) results of `function`. Thread-safe. */
size_t tessera_jit_function_get_arg_count(const tessera_jit_function_t* function);
size_t tessera_jit_function_get_result_count(const tessera_jit_function_t* function);
/* Describes argument `index` (or result `index` when `result` is non-zero); borrowed pointers
 * stay valid while the module. `out_info->struct_size` from API 0.1's size (ending with `type`)
 * on. INVALID_ARGUMENT for a bad index or struct_size. Thread-safe. */
tessera_jit_error_t* tessera_jit_function_get_arg_info(const tessera_jit_function_t* function,
                                                       int result, size_t index,
                                                       tessera_jit_arg_info_t* out_info);

typedef struct tessera_jit_arg_t {
  tessera_jit_arg_kind_t kind;
  union {
    const DLTensor* tensor;
    int64_t i;
    double f;
  } value;
} tessera_jit_arg_t;

/* Runs `function` on `args`. Every argument is checked before anything runs: count, kind,
 * dtype, rank, static sizes, element-count and byte-size overflow, NULL data with elements,
 * alignment for the element type, dense row-major strides, the device of each tensor,
 * read-only tensors passed for outputs, integer ranges, and the entry's contract, derived from
 * its Tile ops: which dynamic sizes must agree, and which tensors may share memory (a tensor an
 * op writes shares no byte with the op's other tensors, or is the very same buffer as one the op
 * reads element by element, such as tile.map's `outs` over its `ins`) — each failure is
 * INVALID_ARGUMENT naming the function, the argument and what was expected (docs/capi.md). Host
 * modules run synchronously on the calling thread. nvptx modules enqueue their kernels on `stream`
 * (a CUstream; NULL: the legacy default stream) and return without waiting; without a GPU they are
 * UNAVAILABLE. A run-time check that fails inside the entry (docs/capi.md) stops it and is
 * OUT_OF_RANGE with the op and its location. `out_result` (may be NULL) receives a scalar result.
 * Thread-safe: many threads may invoke at once. */
tessera_jit_error_t* tessera_jit_function_invoke(tessera_jit_function_t* function,
                                                 const tessera_jit_arg_t* args, size_t num_args,
                                                 void* stream, tessera_jit_arg_t* out_result);

/* ------------------------------------------------------------------------------------------- */
/* Buffers, for callers without a tensor framework                                              */

typedef enum tessera_jit_copy_kind_t {
  TESSERA_JIT_COPY_HOST_TO_DEVICE = 0,
  TESSERA_JIT_COPY_DEVICE_TO_HOST = 1,
  TESSERA_JIT_COPY_DEVICE_TO_DEVICE = 2,
  TESSERA_JIT_COPY_ENUM_MAX = 0x7FFFFFFF, /* not a value (see TESSERA_JIT_POINTERS_ENUM_MAX) */
} tessera_jit_copy_kind_t;

/* Allocates `size` bytes of device memory on the context's device; the caller frees it with
 * tessera_jit_buffer_free. UNAVAILABLE without a GPU. Thread-safe. */
tessera_jit_error_t* tessera_jit_buffer_alloc(tessera_jit_context_t* context, size_t size,
                                              void** out_device_pointer);
/* Frees a pointer from tessera_jit_buffer_alloc (NULL is allowed). UNAVAILABLE without a GPU.
 * Thread-safe. */
tessera_jit_error_t* tessera_jit_buffer_free(tessera_jit_context_t* context, void* device_pointer);
/* Copies `size` bytes and waits for the copy. INVALID_ARGUMENT for an unknown kind or a NULL
 * pointer with a size; UNAVAILABLE without a GPU. Thread-safe. */
tessera_jit_error_t* tessera_jit_buffer_copy(tessera_jit_context_t* context, void* destination,
                                             const void* source, size_t size,
                                             tessera_jit_copy_kind_t kind);

/* ------------------------------------------------------------------------------------------- */
/* Streams and events (API 0.9)
 *
 * A stream is a CUstream of the context's device, passed as `void*`: one made here or one a
 * framework made (torch.cuda.Stream.cuda_stream, cupy.cuda.Stream.ptr) are interchangeable;
 * NULL is the legacy default stream. tessera_jit_function_invoke enqueues an nvptx module's
 * kernels on the stream it is given and returns without waiting for them; host modules run
 * synchronously on the calling thread whatever stream is passed. Without a GPU every call below
 * that would touch the device is UNAVAILABLE (NULL handles, unknown flags and an event pair
 * that cannot be timed are refused first; destroying a NULL stream is no error). Thread-safe; a
 * stream or event must not be used while (or after) another thread destroys it.              */

typedef struct tessera_jit_event tessera_jit_event_t;

#define TESSERA_JIT_STREAM_NON_BLOCKING               \
  0x1u /* no implicit synchronisation with the legacy \
          default stream (cudaStreamNonBlocking) */

/* Creates a stream on the context's device; the caller destroys it. `flags`: 0 or
 * TESSERA_JIT_STREAM_NON_BLOCKING. */
tessera_jit_error_t* tessera_jit_stream_create(tessera_jit_context_t* context, uint32_t flags,
                                               void** out_stream);
/* Destroys a stream from tessera_jit_stream_create (NULL is allowed). Work already enqueued
 * on it still completes. */
tessera_jit_error_t* tessera_jit_stream_destroy(tessera_jit_context_t* context, void* stream);
/* Waits on the host for all work on `stream` (NULL: the legacy default stream). */
tessera_jit_error_t* tessera_jit_stream_synchronize(tessera_jit_context_t* context, void* stream);
/* *out_done = 1 when all work on `stream` has completed, else 0. Never blocks. */
tessera_jit_error_t* tessera_jit_stream_query(tessera_jit_context_t* context, void* stream,
                                              int32_t* out_done);
/* Work enqueued on `stream` after this call waits (on the device) for the work before
 * `event`'s last record. The host does not wait. */
tessera_jit_error_t* tessera_jit_stream_wait_event(tessera_jit_context_t* context, void* stream,
                                                   tessera_jit_event_t* event);

#define TESSERA_JIT_EVENT_DISABLE_TIMING                  \
  0x1u /* cheaper to record and wait for; no elapsed time \
        */

/* Creates an event on the context's device; the caller destroys it. `flags`: 0 or
 * TESSERA_JIT_EVENT_DISABLE_TIMING. */
tessera_jit_error_t* tessera_jit_event_create(tessera_jit_context_t* context, uint32_t flags,
                                              tessera_jit_event_t** out_event);
/* Releases an event (NULL is allowed). */
void tessera_jit_event_destroy(tessera_jit_event_t* event);
/* Captures the work enqueued on `stream` so far (NULL: the legacy default stream). */
tessera_jit_error_t* tessera_jit_event_record(tessera_jit_event_t* event, void* stream);
/* *out_done = 1 when the work its last record captured has completed (or it was never
 * recorded), else 0. Never blocks. */
tessera_jit_error_t* tessera_jit_event_query(tessera_jit_event_t* event, int32_t* out_done);
/* Waits on the host for the work its last record captured. */
tessera_jit_error_t* tessera_jit_event_synchronize(tessera_jit_event_t* event);
/* Waits for both, then *out_ms = the milliseconds between the two records (about 0.5 µs
 * resolution). FAILED_PRECONDITION if either was never recorded or was created with
 * TESSERA_JIT_EVENT_DISABLE_TIMING; INVALID_ARGUMENT if they belong to different devices. */
tessera_jit_error_t* tessera_jit_event_elapsed_time(tessera_jit_event_t* start,
                                                    tessera_jit_event_t* stop, float* out_ms);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_JIT_H_ */
