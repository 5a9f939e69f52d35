"""Loads libtessera_jit.so and declares the C API's functions for ctypes.

The library is the package's own copy (`_lib/libtessera_jit.so`, with the abseil libraries it
needs beside it), unless $TESSERA_JIT_LIBRARY names another — e.g. a Bazel build's
bazel-bin/capi/libtessera_jit.so. From a source tree without a wheel installed, the Bazel
build's copy is used; the same holds for the extension (_native.abi3.so, overridden by
$TESSERA_JIT_NATIVE).
"""
import ctypes
import importlib.util
import os
import sys

from . import _structs as S

_HERE = os.path.dirname(os.path.abspath(__file__))


def library_path() -> str:
    """Where the library is loaded from."""
    override = os.environ.get("TESSERA_JIT_LIBRARY")
    if override:
        return override
    bundled = os.path.join(_HERE, "_lib", "libtessera_jit.so")
    if os.path.exists(bundled):
        return bundled
    return os.path.join(_HERE, "..", "..", "..", "bazel-bin", "capi", "libtessera_jit.so")


def _load() -> ctypes.CDLL:
    path = library_path()
    try:
        return ctypes.CDLL(path)
    except OSError as error:
        raise ImportError(
            f"tessera_jit: cannot load its library {path}: {error}. An installed wheel carries "
            "it; from a source tree, build //capi:libtessera_jit.so or set "
            "TESSERA_JIT_LIBRARY. It needs NVRTC and nvJitLink from the CUDA 13 toolkit on the "
            "loader's path (/usr/local/cuda/lib64).") from error


def _load_native():
    """tessera_jit._native: the package's own, else (a source tree) the Bazel build's."""
    built = os.environ.get("TESSERA_JIT_NATIVE")  # a build's extension, e.g. an opt build's
    try:
        if built:
            raise ImportError("TESSERA_JIT_NATIVE is set")
        from . import _native
        return _native
    except ImportError as error:
        built = built or os.path.join(_HERE, "..", "..", "..", "bazel-bin", "capi", "python",
                                      "tessera_jit", "_native.abi3.so")
        if not os.path.exists(built):
            raise ImportError("tessera_jit: its extension _native is missing (install the "
                              "wheel, or build //capi/python:package)") from error
        spec = importlib.util.spec_from_file_location("tessera_jit._native", built)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["tessera_jit._native"] = module
        return module


lib = _load()
native = _load_native()
_P = ctypes.c_void_p
_ERR = ctypes.c_void_p
_SIZE = ctypes.c_size_t


def _declare(name, restype, *argtypes):
    function = getattr(lib, name)
    function.restype = restype
    function.argtypes = list(argtypes)
    return function


def address(name: str) -> int:
    """The address of a C API function (for tessera_jit._native)."""
    return int(ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0)


error_code = _declare("tessera_jit_error_code", ctypes.c_int, _ERR)
error_message = _declare("tessera_jit_error_message", ctypes.c_char_p, _ERR,
                         ctypes.POINTER(_SIZE))
error_destroy = _declare("tessera_jit_error_destroy", None, _ERR)
get_api_version = _declare("tessera_jit_get_api_version", None, ctypes.POINTER(ctypes.c_int),
                           ctypes.POINTER(ctypes.c_int))
get_build_info = _declare("tessera_jit_get_build_info", ctypes.c_char_p)
context_create = _declare("tessera_jit_context_create", _ERR, ctypes.POINTER(S.ContextOptions),
                          ctypes.POINTER(_P))
context_destroy = _declare("tessera_jit_context_destroy", None, _P)
context_write_plan = _declare("tessera_jit_context_write_plan", _ERR, _P, ctypes.c_char_p,
                              ctypes.c_size_t)
declare_provider = _declare("tessera_jit_context_declare_matmul_provider", _ERR, _P,
                            ctypes.POINTER(S.MatmulProvider))
register_library = _declare("tessera_jit_context_register_library", _ERR, _P, ctypes.c_char_p,
                            ctypes.c_char_p)
register_defaults = _declare("tessera_jit_context_register_default_libraries", _ERR, _P,
                             ctypes.c_char_p)
register_kernel_image = _declare("tessera_jit_context_register_kernel_image", _ERR, _P,
                                 ctypes.c_char_p, ctypes.c_char_p, _SIZE, ctypes.c_int,
                                 ctypes.c_char_p)
delegate_count = _declare("tessera_jit_context_get_delegate_count", _SIZE, _P)
delegate_identity = _declare("tessera_jit_context_get_delegate_identity", ctypes.c_char_p, _P,
                             _SIZE, ctypes.POINTER(_SIZE))
dispatch_count = _declare("tessera_jit_get_delegate_dispatch_count", ctypes.c_uint64)
context_cache_stats = _declare("tessera_jit_context_get_cache_stats", _ERR, _P,
                               ctypes.POINTER(S.CacheStats))
is_gpu_available = _declare("tessera_jit_is_gpu_available", ctypes.c_int)
device_count = _declare("tessera_jit_device_count", ctypes.c_int32)
device_get_info = _declare("tessera_jit_device_get_info", _ERR, ctypes.c_int32,
                           ctypes.POINTER(S.DeviceInfo))
supported_arch_count = _declare("tessera_jit_get_supported_arch_count", _SIZE)
supported_arch = _declare("tessera_jit_get_supported_arch", ctypes.c_char_p, _SIZE)
compile = _declare("tessera_jit_compile", _ERR, _P, ctypes.c_char_p, _SIZE,
                   ctypes.POINTER(S.CompileOptions), ctypes.POINTER(_P))
module_load = _declare("tessera_jit_module_load", _ERR, _P, ctypes.c_char_p, _SIZE,
                       ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_P))
package_write = _declare("tessera_jit_package_write", _ERR, ctypes.POINTER(_P), _SIZE,
                         ctypes.c_void_p, _SIZE, ctypes.POINTER(_SIZE))
module_destroy = _declare("tessera_jit_module_destroy", None, _P)
module_entry_count = _declare("tessera_jit_module_get_entry_count", _SIZE, _P)
module_entry_name = _declare("tessera_jit_module_get_entry_name", ctypes.c_char_p, _P, _SIZE,
                             ctypes.POINTER(_SIZE))
module_get_text = _declare("tessera_jit_module_get_text", _ERR, _P, ctypes.c_int,
                           ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_SIZE))
module_decision_count = _declare("tessera_jit_module_get_decision_count", _SIZE, _P)
module_get_decision = _declare("tessera_jit_module_get_decision", _ERR, _P, _SIZE,
                               ctypes.POINTER(S.DecisionInfo))
module_wait_decisions = _declare("tessera_jit_module_wait_decisions", _ERR, _P, ctypes.c_int64,
                                 ctypes.POINTER(_SIZE))
module_get_function = _declare("tessera_jit_module_get_function", _ERR, _P, ctypes.c_char_p,
                               _SIZE, ctypes.POINTER(_P))
function_arg_count = _declare("tessera_jit_function_get_arg_count", _SIZE, _P)
function_result_count = _declare("tessera_jit_function_get_result_count", _SIZE, _P)
function_arg_info = _declare("tessera_jit_function_get_arg_info", _ERR, _P, ctypes.c_int, _SIZE,
                             ctypes.POINTER(S.ArgInfo))
buffer_alloc = _declare("tessera_jit_buffer_alloc", _ERR, _P, _SIZE, ctypes.POINTER(_P))
buffer_free = _declare("tessera_jit_buffer_free", _ERR, _P, _P)
buffer_copy = _declare("tessera_jit_buffer_copy", _ERR, _P, _P, _P, _SIZE, ctypes.c_int)
stream_create = _declare("tessera_jit_stream_create", _ERR, _P, ctypes.c_uint32,
                         ctypes.POINTER(_P))
stream_destroy = _declare("tessera_jit_stream_destroy", _ERR, _P, _P)
stream_synchronize = _declare("tessera_jit_stream_synchronize", _ERR, _P, _P)
stream_query = _declare("tessera_jit_stream_query", _ERR, _P, _P, ctypes.POINTER(ctypes.c_int32))
stream_wait_event = _declare("tessera_jit_stream_wait_event", _ERR, _P, _P, _P)
event_create = _declare("tessera_jit_event_create", _ERR, _P, ctypes.c_uint32,
                        ctypes.POINTER(_P))
event_destroy = _declare("tessera_jit_event_destroy", None, _P)
event_record = _declare("tessera_jit_event_record", _ERR, _P, _P)
event_query = _declare("tessera_jit_event_query", _ERR, _P, ctypes.POINTER(ctypes.c_int32))
event_synchronize = _declare("tessera_jit_event_synchronize", _ERR, _P)
event_elapsed_time = _declare("tessera_jit_event_elapsed_time", _ERR, _P, _P,
                              ctypes.POINTER(ctypes.c_float))
