"""Tessera JIT from Python: the reference binding over the C API (ctypes), NumPy arrays in and
out through DLPack structures.

    import numpy as np, tessera_jit as tj
    ctx = tj.Context(default_target="host")
    module = ctx.compile(open("examples/elementwise.mlir").read())
    x = np.arange(8, dtype=np.float32); y = np.ones(8, np.float32); out = np.empty_like(x)
    module.function("saxpy")(2.0, x, y, out)      # out = 2x + y

Errors raise TesseraError carrying the C API's code and message. The shared library is found
through $TESSERA_JIT_LIBRARY, else bazel-bin/capi/libtessera_jit.so in the source tree.
"""
import ctypes
import json
import os

import numpy as np

__all__ = ["TesseraError", "Context", "Module", "Function", "DeviceArray", "is_gpu_available",
           "device_count", "api_version", "delegate_dispatch_count"]

# ---------------------------------------------------------------------------------------------
# DLPack and C API structures (tessera_jit.h, dlpack.h 0.6)

_KDL_CPU, _KDL_CUDA = 1, 2
_KDL_INT, _KDL_UINT, _KDL_FLOAT, _KDL_BFLOAT = 0, 1, 2, 4
_ARG_TENSOR, _ARG_INT, _ARG_FLOAT, _ARG_TENSOR_READ_ONLY = 0, 1, 2, 3
_TEXT_LLVM, _TEXT_PTX, _TEXT_CUBIN, _TEXT_DECISIONS = 0, 1, 2, 3
_COPY_H2D, _COPY_D2H = 0, 1

_CODE_NAMES = {0: "OK", 1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT",
               4: "DEADLINE_EXCEEDED", 5: "NOT_FOUND", 6: "ALREADY_EXISTS",
               7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION",
               10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED", 13: "INTERNAL",
               14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _ArgValue(ctypes.Union):
    _fields_ = [("tensor", ctypes.POINTER(_DLTensor)), ("i", ctypes.c_int64),
                ("f", ctypes.c_double)]


class _Arg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("value", _ArgValue)]


class _ContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("default_target", ctypes.c_char_p),
                ("device_ordinal", ctypes.c_int32), ("log_level", ctypes.c_int),
                ("cache_dir", ctypes.c_char_p), ("cache_memory_bytes", ctypes.c_uint64),
                ("cache_disk_bytes", ctypes.c_uint64), ("cache_read_only", ctypes.c_int32),
                ("cache_lock_timeout_ms", ctypes.c_int64), ("num_threads", ctypes.c_int32),
                ("remote_cache", ctypes.c_char_p)]


class _CacheStats(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("memory_hits", ctypes.c_uint64),
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


class _CompileOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("target", ctypes.c_char_p),
                ("arch", ctypes.c_char_p), ("flags", ctypes.c_uint32),
                ("opt_level", ctypes.c_int32), ("matmul_delegate", ctypes.c_char_p)]


class _MatmulProvider(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t)] + [
        (name, ctypes.c_char_p) for name in ("name", "library", "callee", "target", "arch",
                                             "provenance", "covers", "determinism", "accuracy")
    ] + [("tolerance", ctypes.c_double), ("tolerance_rel", ctypes.c_double)]


class _ArgInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("kind", ctypes.c_int), ("dtype", _DLDataType),
                ("ndim", ctypes.c_int32), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("type", ctypes.c_char_p), ("name", ctypes.c_char_p), ("written", ctypes.c_int32)]


class _DeviceInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ordinal", ctypes.c_int32),
                ("name", ctypes.c_char * 256), ("arch", ctypes.c_char * 16),
                ("total_memory_bytes", ctypes.c_uint64), ("multiprocessors", ctypes.c_int32)]


def _find_library():
    path = os.environ.get("TESSERA_JIT_LIBRARY")
    if path:
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "bazel-bin", "capi", "libtessera_jit.so")


_lib = ctypes.CDLL(_find_library())
_P = ctypes.c_void_p
_ERR = ctypes.c_void_p


def _declare(name, restype, *argtypes):
    function = getattr(_lib, name)
    function.restype = restype
    function.argtypes = list(argtypes)
    return function


_error_code = _declare("tessera_jit_error_code", ctypes.c_int, _ERR)
_error_message = _declare("tessera_jit_error_message", ctypes.c_char_p, _ERR,
                          ctypes.POINTER(ctypes.c_size_t))
_error_destroy = _declare("tessera_jit_error_destroy", None, _ERR)
_get_api_version = _declare("tessera_jit_get_api_version", None, ctypes.POINTER(ctypes.c_int),
                            ctypes.POINTER(ctypes.c_int))
_context_create = _declare("tessera_jit_context_create", _ERR, ctypes.POINTER(_ContextOptions),
                           ctypes.POINTER(_P))
_context_destroy = _declare("tessera_jit_context_destroy", None, _P)
_declare_provider = _declare("tessera_jit_context_declare_matmul_provider", _ERR, _P,
                             ctypes.POINTER(_MatmulProvider))
_register_library = _declare("tessera_jit_context_register_library", _ERR, _P, ctypes.c_char_p,
                             ctypes.c_char_p)
_register_defaults = _declare("tessera_jit_context_register_default_libraries", _ERR, _P,
                              ctypes.c_char_p)
_delegate_count = _declare("tessera_jit_context_get_delegate_count", ctypes.c_size_t, _P)
_delegate_identity = _declare("tessera_jit_context_get_delegate_identity", ctypes.c_char_p, _P,
                              ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t))
_dispatch_count = _declare("tessera_jit_get_delegate_dispatch_count", ctypes.c_uint64)
_context_cache_stats = _declare("tessera_jit_context_get_cache_stats", _ERR, _P,
                                ctypes.POINTER(_CacheStats))
_is_gpu_available = _declare("tessera_jit_is_gpu_available", ctypes.c_int)
_device_count = _declare("tessera_jit_device_count", ctypes.c_int32)
_device_get_info = _declare("tessera_jit_device_get_info", _ERR, ctypes.c_int32,
                            ctypes.POINTER(_DeviceInfo))
_compile = _declare("tessera_jit_compile", _ERR, _P, ctypes.c_char_p, ctypes.c_size_t,
                    ctypes.POINTER(_CompileOptions), ctypes.POINTER(_P))
_module_destroy = _declare("tessera_jit_module_destroy", None, _P)
_module_entry_count = _declare("tessera_jit_module_get_entry_count", ctypes.c_size_t, _P)
_module_entry_name = _declare("tessera_jit_module_get_entry_name", ctypes.c_char_p, _P,
                              ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t))
_module_get_text = _declare("tessera_jit_module_get_text", _ERR, _P, ctypes.c_int,
                            ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t))
_module_get_function = _declare("tessera_jit_module_get_function", _ERR, _P, ctypes.c_char_p,
                                ctypes.c_size_t, ctypes.POINTER(_P))
_function_arg_count = _declare("tessera_jit_function_get_arg_count", ctypes.c_size_t, _P)
_function_result_count = _declare("tessera_jit_function_get_result_count", ctypes.c_size_t, _P)
_function_arg_info = _declare("tessera_jit_function_get_arg_info", _ERR, _P, ctypes.c_int,
                              ctypes.c_size_t, ctypes.POINTER(_ArgInfo))
_function_invoke = _declare("tessera_jit_function_invoke", _ERR, _P, ctypes.POINTER(_Arg),
                            ctypes.c_size_t, _P, ctypes.POINTER(_Arg))
_buffer_alloc = _declare("tessera_jit_buffer_alloc", _ERR, _P, ctypes.c_size_t,
                         ctypes.POINTER(_P))
_buffer_free = _declare("tessera_jit_buffer_free", _ERR, _P, _P)
_buffer_copy = _declare("tessera_jit_buffer_copy", _ERR, _P, _P, _P, ctypes.c_size_t,
                        ctypes.c_int)
_stream_synchronize = _declare("tessera_jit_stream_synchronize", _ERR, _P, _P)


class TesseraError(Exception):
    """A failed C API call: `code` (e.g. "INVALID_ARGUMENT") and `message`."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _check(error):
    if not error:
        return
    code = _CODE_NAMES.get(_error_code(error), "UNKNOWN")
    message = _error_message(error, None).decode("utf-8", "replace")
    _error_destroy(error)
    raise TesseraError(code, message)


def api_version():
    major, minor = ctypes.c_int(), ctypes.c_int()
    _get_api_version(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def delegate_dispatch_count():
    """Delegate calls made by JIT'd code in this process so far."""
    return int(_dispatch_count())


def is_gpu_available():
    return bool(_is_gpu_available())


def device_count():
    return int(_device_count())


_NUMPY_DTYPES = {
    (_KDL_FLOAT, 16): np.float16, (_KDL_FLOAT, 32): np.float32, (_KDL_FLOAT, 64): np.float64,
    (_KDL_INT, 8): np.int8, (_KDL_INT, 16): np.int16, (_KDL_INT, 32): np.int32,
    (_KDL_INT, 64): np.int64, (_KDL_UINT, 8): np.uint8,
}


def _dl_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return _DLDataType(_KDL_UINT, 8, 1)
    kind = {"f": _KDL_FLOAT, "i": _KDL_INT, "u": _KDL_UINT}.get(dtype.kind)
    if kind is None:
        raise TypeError(f"unsupported dtype {dtype}")
    return _DLDataType(kind, dtype.itemsize * 8, 1)


class DeviceArray:
    """Device memory of the context's GPU holding an array (for nvptx modules)."""

    def __init__(self, context, shape, dtype):
        self._context = context
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        pointer = _P()
        _check(_buffer_alloc(context._handle, self.nbytes, ctypes.byref(pointer)))
        self.pointer = pointer.value

    @classmethod
    def from_numpy(cls, context, array):
        array = np.ascontiguousarray(array)
        device = cls(context, array.shape, array.dtype)
        _check(_buffer_copy(context._handle, device.pointer, array.ctypes.data, device.nbytes,
                            _COPY_H2D))
        return device

    def numpy(self):
        out = np.empty(self.shape, self.dtype)
        _check(_buffer_copy(self._context._handle, out.ctypes.data, self.pointer, self.nbytes,
                            _COPY_D2H))
        return out

    def __del__(self):
        if getattr(self, "pointer", None):
            error = _buffer_free(self._context._handle, self.pointer)
            if error:
                _error_destroy(error)
            self.pointer = None


class Function:
    """An entry function of a module. Call it with NumPy arrays (host modules), DeviceArrays
    (nvptx modules) and Python numbers; returns the scalar result, or None."""

    def __init__(self, module, handle, name):
        self._module = module
        self._handle = handle
        self.name = name
        self.args = [self._info(0, i) for i in range(_function_arg_count(handle))]
        self.results = [self._info(1, i) for i in range(_function_result_count(handle))]

    def _info(self, result, index):
        info = _ArgInfo()
        info.struct_size = ctypes.sizeof(_ArgInfo)
        _check(_function_arg_info(self._handle, result, index, ctypes.byref(info)))
        shape = tuple(info.shape[d] for d in range(info.ndim)) if info.kind == _ARG_TENSOR else ()
        return {"kind": ("tensor", "int", "float")[info.kind], "type": info.type.decode(),
                "name": info.name.decode(), "written": bool(info.written), "shape": shape,
                "dtype": _NUMPY_DTYPES.get((info.dtype.code, info.dtype.bits))}

    def __call__(self, *values, stream=None):
        keep = []  # keeps ctypes buffers alive during the call
        args = (_Arg * max(len(values), 1))()
        for i, value in enumerate(values):
            if isinstance(value, (np.ndarray, DeviceArray)):
                if isinstance(value, np.ndarray):
                    if not value.flags["C_CONTIGUOUS"]:
                        raise TesseraError("INVALID_ARGUMENT",
                                           f"argument #{i} of @{self.name}: expected a "
                                           "C-contiguous array")
                    data, device = value.ctypes.data, _DLDevice(_KDL_CPU, 0)
                else:
                    data, device = value.pointer, _DLDevice(_KDL_CUDA, 0)
                shape = (ctypes.c_int64 * max(len(value.shape), 1))(*value.shape)
                tensor = _DLTensor(data, device, len(value.shape), _dl_dtype(value.dtype), shape,
                                   None, 0)
                keep += [shape, tensor]
                read_only = isinstance(value, np.ndarray) and not value.flags["WRITEABLE"]
                args[i].kind = _ARG_TENSOR_READ_ONLY if read_only else _ARG_TENSOR
                args[i].value.tensor = ctypes.pointer(tensor)
            elif isinstance(value, (bool, int, np.integer)):
                args[i].kind = _ARG_INT
                args[i].value.i = int(value)
            elif isinstance(value, (float, np.floating)):
                args[i].kind = _ARG_FLOAT
                args[i].value.f = float(value)
            else:
                raise TypeError(f"argument #{i}: unsupported type {type(value).__name__}")
        result = _Arg()
        _check(_function_invoke(self._handle, args, len(values), stream, ctypes.byref(result)))
        if not self.results:
            return None
        return result.value.f if result.kind == _ARG_FLOAT else result.value.i


class Module:
    """A compiled module; `entries` lists its entry functions."""

    def __init__(self, context, handle):
        self._context = context
        self._handle = handle
        self.entries = [_module_entry_name(handle, i, None).decode()
                        for i in range(_module_entry_count(handle))]
        self._functions = {}

    def function(self, name):
        if name not in self._functions:
            handle = _P()
            encoded = name.encode()
            _check(_module_get_function(self._handle, encoded, len(encoded), ctypes.byref(handle)))
            self._functions[name] = Function(self, handle.value, name)
        return self._functions[name]

    def _text(self, kind):
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        _check(_module_get_text(self._handle, kind, ctypes.byref(data), ctypes.byref(size)))
        return ctypes.string_at(data, size.value)

    @property
    def llvm_ir(self):
        return self._text(_TEXT_LLVM).decode()

    @property
    def ptx(self):
        return self._text(_TEXT_PTX).decode()

    @property
    def cubin(self):
        return self._text(_TEXT_CUBIN)

    def decisions(self):
        """The arbiter's decision records, one dict per Tile op (docs/arbiter.md)."""
        return json.loads(self._text(_TEXT_DECISIONS).decode())

    def __del__(self):
        if getattr(self, "_handle", None):
            _module_destroy(self._handle)
            self._handle = None


class Context:
    """A Tessera JIT context. `default_target`: "host", "nvptx" or None (the GPU when present);
    `cache_dir`: the compile cache directory (None: the default; "": memory only);
    `num_threads`: threads for host code's parallel loops (0: $TESSERA_JIT_NUM_THREADS, else
    the cores the process may use); `remote_cache`: the fleet's Redis tier,
    "redis://[user:password@]host:port[/db]" (None: $TESSERA_JIT_REMOTE_CACHE; "": none)."""

    def __init__(self, default_target=None, device=0, cache_dir=None, num_threads=0,
                 remote_cache=None):
        # The _init functions are inline in the header; the binding fills its own structs.
        options = _ContextOptions()
        options.struct_size = ctypes.sizeof(_ContextOptions)
        options.log_level = 1  # TESSERA_JIT_LOG_WARNING
        options.default_target = default_target.encode() if default_target else None
        options.device_ordinal = device
        self._cache_dir = cache_dir.encode() if cache_dir is not None else None
        options.cache_dir = self._cache_dir
        options.num_threads = num_threads
        self._remote_cache = remote_cache.encode() if remote_cache is not None else None
        options.remote_cache = self._remote_cache
        handle = _P()
        _check(_context_create(ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle.value
        self._modules = []

    def register_library(self, name, path):
        """Registers a vendor library as delegate `name` (kernel_call callees resolve in it)."""
        _check(_register_library(self._handle, name.encode(), path.encode()))

    def declare_matmul_provider(self, name, library, callee, target="host", arch=None,
                                provenance="handwritten_kernel", covers="root_only",
                                determinism="deterministic", accuracy="reference_exact",
                                tolerance=0.0, tolerance_rel=0.0):
        """Declares that registered `library` serves tile.matmul through `callee` (cblas_sgemm's
        ABI on the host, cublasSgemm_v2's on nvptx): a new arbiter candidate. `arch` is its
        envelope; None: "host" for the host target, "sm_75+" (any GPU) for nvptx."""
        if arch is None:
            arch = "host" if target == "host" else "sm_75+"
        provider = _MatmulProvider()
        provider.struct_size = ctypes.sizeof(_MatmulProvider)
        for field, value in (("name", name), ("library", library), ("callee", callee),
                             ("target", target), ("arch", arch), ("provenance", provenance),
                             ("covers", covers), ("determinism", determinism),
                             ("accuracy", accuracy)):
            setattr(provider, field, value.encode())
        provider.tolerance = tolerance
        provider.tolerance_rel = tolerance_rel
        _check(_declare_provider(self._handle, ctypes.byref(provider)))

    def register_default_libraries(self, target=None):
        _check(_register_defaults(self._handle, target.encode() if target else None))

    def delegates(self):
        """The registered delegates' identities, one string each."""
        return [_delegate_identity(self._handle, i, None).decode()
                for i in range(_delegate_count(self._handle))]

    def compile(self, source, target=None, arch=None, deterministic=False, opt_level=2,
                matmul_delegate=None):
        options = _CompileOptions()
        options.struct_size = ctypes.sizeof(_CompileOptions)
        options.matmul_delegate = matmul_delegate.encode() if matmul_delegate else None
        options.target = target.encode() if target else None
        options.arch = arch.encode() if arch else None
        options.flags = 1 if deterministic else 0
        options.opt_level = opt_level
        encoded = source.encode() if isinstance(source, str) else bytes(source)
        handle = _P()
        _check(_compile(self._handle, encoded, len(encoded), ctypes.byref(options),
                        ctypes.byref(handle)))
        module = Module(self, handle.value)
        self._modules.append(module)
        return module

    def to_device(self, array):
        return DeviceArray.from_numpy(self, array)

    def synchronize(self, stream=None):
        _check(_stream_synchronize(self._handle, stream))

    def cache_stats(self):
        stats = _CacheStats()
        stats.struct_size = ctypes.sizeof(_CacheStats)
        _check(_context_cache_stats(self._handle, ctypes.byref(stats)))
        return {name: (getattr(stats, name).decode() if name == "last_miss_reason"
                       else getattr(stats, name))
                for name, _ in _CacheStats._fields_ if name != "struct_size"}

    def device_info(self, ordinal=0):
        info = _DeviceInfo()
        info.struct_size = ctypes.sizeof(_DeviceInfo)
        _check(_device_get_info(ordinal, ctypes.byref(info)))
        return {"name": info.name.decode(), "arch": info.arch.decode(),
                "total_memory_bytes": info.total_memory_bytes,
                "multiprocessors": info.multiprocessors}

    def close(self):
        for module in self._modules:
            module.__del__()
        self._modules = []
        if self._handle:
            _context_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
