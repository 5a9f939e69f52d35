"""Tessera JIT from Python: compile Tessera IR, call its entry functions on any DLPack array.

    import numpy as np, tessera_jit as tj
    with tj.Context(default_target="host") as ctx:
        module = ctx.compile(open("examples/elementwise.mlir").read())
        x = np.arange(8, dtype=np.float32); y = np.ones(8, np.float32); out = np.empty_like(x)
        module.saxpy(2.0, x, y, out)      # out = 2x + y

Arrays are any object with __dlpack__ (NumPy ≥ 1.22, PyTorch, CuPy, JAX, DeviceArray),
passed zero-copy; bfloat16 NumPy arrays come from ml_dtypes. Errors raise a subclass of
TesseraError per C API code (tessera_jit.errors). docs/capi.md, "Python", has the whole API.
"""
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from . import _dlpack
from . import _library as _L
from ._native import configure as _configure
from .arrays import DeviceArray
from .context import Context
from .errors import *  # noqa: F401,F403 - the exception classes
from .errors import TesseraError, make_error
from .module import ArgSpec, Function, Module
from .streams import Event, Stream

__version__ = "0.15.0"

_configure(
    invoke=_L.address("tessera_jit_function_invoke"),
    error_code=_L.address("tessera_jit_error_code"),
    error_message=_L.address("tessera_jit_error_message"),
    error_destroy=_L.address("tessera_jit_error_destroy"),
    make_error=make_error,
    fallback=_dlpack.describe,
    stream_handle=_dlpack.stream_handle,
    cpu_types=(np.ndarray,),
    scalar_types=(np.generic,),
    complex_types=(np.complexfloating,),
)


def api_version() -> Tuple[int, int]:
    """The C API version of the loaded library, (major, minor)."""
    import ctypes
    major, minor = ctypes.c_int(), ctypes.c_int()
    _L.get_api_version(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def build_info() -> Dict[str, Any]:
    """What the loaded library is built from and what it found at run time: its build identity,
    LLVM, the CUDA headers it was built with, the host CPU, and for NVRTC, nvJitLink and
    libdevice whether, where and from which origin ($TESSERA_JIT_CUDA_HOME, an NVIDIA wheel, the
    toolkit) they were found, with every step of the search; and whether a CUDA driver loaded."""
    import json
    return json.loads(_L.get_build_info().decode())


def write_package(modules: Sequence[Module]) -> bytes:
    """One ahead-of-time package holding every module (1 to 64): host code compiled for
    several CPUs (Context.compile(host_cpu=...)) and device code for several archs, one entry
    each, so that Context.load on any machine picks the entry that fits it. ValueError for no
    modules; InvalidArgumentError for two of the same target and machine."""
    import ctypes
    from ._check import check
    from ._handle import live
    from .errors import OutOfRangeError
    modules = list(modules)
    if not modules:
        raise ValueError("write_package needs at least one module")
    handles = [live(m._handle, "module") for m in modules]  # alive while the package is made
    array = (ctypes.c_void_p * len(handles))(*[h.value for h in handles])
    size = ctypes.c_size_t()
    check(_L.package_write(array, len(handles), None, 0, ctypes.byref(size)))
    while True:  # the size grows if background decisions land between the two calls
        buffer = ctypes.create_string_buffer(max(size.value, 1))
        try:
            check(_L.package_write(array, len(handles), buffer, size.value, ctypes.byref(size)))
            return buffer.raw[:size.value]
        except OutOfRangeError:
            continue


def library_path() -> str:
    """The libtessera_jit.so this package loaded."""
    return _L.library_path()


def delegate_dispatch_count() -> int:
    """Delegate calls made by JIT'd code in this process so far."""
    return int(_L.dispatch_count())


def is_gpu_available() -> bool:
    return bool(_L.is_gpu_available())


def device_count() -> int:
    return int(_L.device_count())


def supported_archs() -> List[str]:
    """The GPU archs the nvptx target compiles for, oldest first."""
    return [_L.supported_arch(i).decode() for i in range(_L.supported_arch_count())]


__all__ = ["ArgSpec", "Context", "DeviceArray", "Event", "Function", "Module", "Stream",
           "TesseraError", "api_version", "build_info", "delegate_dispatch_count", "device_count",
           "is_gpu_available", "library_path", "supported_archs", "write_package"] + [
    name for name in dir() if name.endswith("Error") and name != "TesseraError"]
