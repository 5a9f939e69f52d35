"""ctypes mirrors of the C API's structs and constants (capi/include/tessera_jit.h, dlpack.h)."""
import ctypes

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT, KDL_BOOL = 0, 1, 2, 4, 6
KDL_FLOAT8_E4M3FN, KDL_FLOAT8_E5M2 = 10, 12  # DLPack 1.1
ARG_TENSOR, ARG_INT, ARG_FLOAT, ARG_TENSOR_READ_ONLY = 0, 1, 2, 3
TEXT_LLVM, TEXT_PTX, TEXT_CUBIN, TEXT_DECISIONS, TEXT_PLAN, TEXT_PACKAGE = 0, 1, 2, 3, 4, 5
COPY_H2D, COPY_D2H, COPY_D2D = 0, 1, 2
STREAM_NON_BLOCKING = 0x1
EVENT_DISABLE_TIMING = 0x1
LOG_WARNING = 1
DETERMINISTIC = 0x1
BATCH_INVARIANT = 0x2
BACKGROUND_DECISIONS = 0x4
BACKGROUND_DETERMINISTIC = 0x8
PTX_ONLY = 0x10
DECISION_STATES = {0: "decided", 1: "pending", 2: "failed"}


class DecisionInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("state", ctypes.c_int32),
                ("op", ctypes.c_char_p), ("location", ctypes.c_char_p),
                ("function", ctypes.c_char_p), ("serving", ctypes.c_char_p),
                ("winner", ctypes.c_char_p), ("detail", ctypes.c_char_p)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class ContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("default_target", ctypes.c_char_p),
                ("device_ordinal", ctypes.c_int32), ("log_level", ctypes.c_int),
                ("cache_dir", ctypes.c_char_p), ("cache_memory_bytes", ctypes.c_uint64),
                ("cache_disk_bytes", ctypes.c_uint64), ("cache_read_only", ctypes.c_int32),
                ("cache_lock_timeout_ms", ctypes.c_int64), ("num_threads", ctypes.c_int32),
                ("remote_cache", ctypes.c_char_p), ("plan_path", ctypes.c_char_p),
                ("plan_strict", ctypes.c_int32), ("arbitration_budget_ms", ctypes.c_int32)]


class CacheStats(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("memory_hits", ctypes.c_uint64),  # type: ignore
                ("disk_hits", ctypes.c_uint64), ("compiles", ctypes.c_uint64),
                ("misses_not_cached", ctypes.c_uint64), ("misses_stale", ctypes.c_uint64),
                ("misses_damaged", ctypes.c_uint64), ("memory_entries", ctypes.c_uint64),
                ("memory_bytes", ctypes.c_uint64), ("disk_entries", ctypes.c_uint64),
                ("disk_bytes", ctypes.c_uint64), ("disk_enabled", ctypes.c_int32),
                ("last_miss_reason", ctypes.c_char * 256),
                ("disk_read_only", ctypes.c_int32), ("disk_lock_timeouts", ctypes.c_uint64),
                ("disk_lock_failures", ctypes.c_uint64), ("remote_enabled", ctypes.c_int32)] + [
        ("remote_" + name, ctypes.c_uint64)
        for name in ("hits", "misses", "misses_damaged", "misses_unavailable", "stores",
                     "store_failures", "lease_waits", "lease_takeovers", "lease_timeouts",
                     "errors", "reconnects")
    ] + [("remote_latency_p50_us", ctypes.c_double), ("remote_latency_p99_us", ctypes.c_double)]


class CompileOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("target", ctypes.c_char_p),
                ("arch", ctypes.c_char_p), ("flags", ctypes.c_uint32),
                ("opt_level", ctypes.c_int32), ("matmul_delegate", ctypes.c_char_p),
                ("arbitration_budget_ms", ctypes.c_int32), ("host_cpu", ctypes.c_char_p)]


class MatmulProvider(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t)] + [
        (name, ctypes.c_char_p) for name in ("name", "library", "callee", "target", "arch",
                                             "provenance", "covers", "determinism", "accuracy")
    ] + [("tolerance", ctypes.c_double), ("tolerance_rel", ctypes.c_double)]


class ArgInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("kind", ctypes.c_int), ("dtype", DLDataType),
                ("ndim", ctypes.c_int32), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("type", ctypes.c_char_p), ("name", ctypes.c_char_p), ("written", ctypes.c_int32),
                ("size_from", ctypes.POINTER(ctypes.c_int64))]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ordinal", ctypes.c_int32),
                ("name", ctypes.c_char * 256), ("arch", ctypes.c_char * 16),
                ("total_memory_bytes", ctypes.c_uint64), ("multiprocessors", ctypes.c_int32)]
