"""DLPack on the Python side: element types, the fallback description of arrays whose
__dlpack__ cannot serve (tessera_jit/_native.c calls it), and stream handles."""
from typing import Any, Optional, Tuple

import numpy as np

from . import _structs as S

try:  # bfloat16 and the fp8 formats for NumPy, when ml_dtypes is installed (JAX depends on it)
    import ml_dtypes as _ml_dtypes

    BFLOAT16: Optional[np.dtype] = np.dtype(_ml_dtypes.bfloat16)
    FLOAT8_E4M3FN: Optional[np.dtype] = np.dtype(_ml_dtypes.float8_e4m3fn)
    FLOAT8_E5M2: Optional[np.dtype] = np.dtype(_ml_dtypes.float8_e5m2)
except ImportError:  # pragma: no cover - depends on the environment
    BFLOAT16 = FLOAT8_E4M3FN = FLOAT8_E5M2 = None

# ml_dtypes' types by name: (DLPack code, bits).
_NAMED = {"bfloat16": (S.KDL_BFLOAT, 16), "float8_e4m3fn": (S.KDL_FLOAT8_E4M3FN, 8),
          "float8_e5m2": (S.KDL_FLOAT8_E5M2, 8)}

Description = Tuple[Any, int, Tuple[int, ...], Optional[Tuple[int, ...]], int, int, bool]


def dl_dtype(dtype: Any) -> Tuple[int, int]:
    """(DLPack type code, bits) of a NumPy dtype: kDLBool for bool (one byte; it serves i1
    only), kDLBfloat for ml_dtypes' bfloat16, DLPack 1.1's fp8 codes for its float8_e4m3fn and
    float8_e5m2; TypeError for others DLPack has no code for or another byte order."""
    dtype = np.dtype(dtype)
    if not dtype.isnative:
        raise TypeError(f"dtype {dtype.str} is not in the machine's byte order (convert it with "
                        ".astype(dtype.newbyteorder('=')))")
    if dtype == np.bool_:
        return S.KDL_BOOL, 8
    if dtype.name in _NAMED:
        return _NAMED[dtype.name]
    kind = {"f": S.KDL_FLOAT, "i": S.KDL_INT, "u": S.KDL_UINT}.get(dtype.kind)
    if kind is None:
        raise TypeError(f"dtype {dtype} has no Tessera element type")
    return kind, dtype.itemsize * 8


def numpy_dtype(code: int, bits: int) -> Optional[np.dtype]:
    """The NumPy dtype of a DLPack type (None when NumPy has none: bfloat16 without ml_dtypes)."""
    if code == S.KDL_BFLOAT and bits == 16:
        return BFLOAT16
    if code == S.KDL_FLOAT8_E4M3FN and bits == 8:
        return FLOAT8_E4M3FN
    if code == S.KDL_FLOAT8_E5M2 and bits == 8:
        return FLOAT8_E5M2
    if code == S.KDL_BOOL:
        return np.dtype(np.bool_)
    letter = {S.KDL_FLOAT: "f", S.KDL_INT: "i", S.KDL_UINT: "u"}.get(code)
    if letter is None or bits % 8:
        return None
    return np.dtype(f"{letter}{bits // 8}")


def describe(index: int, value: Any) -> Description:
    """The memory of a host array whose __dlpack__ cannot describe it (NumPy < 1.22, a read-only
    array of NumPy 1.x, ml_dtypes' bfloat16): (owner, data address, shape, strides in elements
    or None, DLPack code, bits, read-only), from its __array_interface__ (ml_dtypes' types
    too)."""
    interface = getattr(value, "__array_interface__", None)
    if interface is None:
        raise TypeError(f"argument #{index}: {type(value).__name__} has neither a usable "
                        "__dlpack__ nor __array_interface__")
    # The memory is what typestr says; an object's .dtype only names what typestr cannot
    # (ml_dtypes' bfloat16 is "<V2"), and must then be of the same size.
    # ml_dtypes' float8 types are "<f1", which NumPy cannot parse.
    typestr = interface["typestr"]
    try:
        dtype: Optional[np.dtype] = np.dtype(typestr)
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind == "V":
        named = np.dtype(getattr(value, "dtype", dtype if dtype is not None else "V1"))
        if named.name not in _NAMED or str(named.itemsize) != typestr[2:]:
            raise TypeError(f"argument #{index}: dtype {named} ({typestr}) has no Tessera "
                            "element type")
        dtype = named
    code, bits = dl_dtype(dtype)
    data, read_only = interface["data"]
    shape = tuple(int(size) for size in interface["shape"])
    strides = interface.get("strides")
    if strides is not None:
        if any(stride % dtype.itemsize for stride in strides):
            raise ValueError(f"argument #{index}: strides {strides} are not whole elements")
        strides = tuple(int(stride) // dtype.itemsize for stride in strides)
    return value, int(data or 0), shape, strides, code, bits, bool(read_only)


def stream_handle(stream: Any) -> Tuple[int, Any]:
    """(the CUstream, what keeps it valid while it is used) of a stream object:
    tessera_jit.Stream (its handle, which a concurrent close() then cannot destroy; a closed one
    is RuntimeError), the CUDA stream protocol (__cuda_stream__), PyTorch's torch.cuda.Stream
    (.cuda_stream), CuPy's (.ptr), or an int."""
    if isinstance(stream, bool) or stream is None:
        raise TypeError(f"stream: expected an int (a CUstream) or a stream object, found "
                        f"{type(stream).__name__}")
    if isinstance(stream, int):
        return stream, None
    live = getattr(stream, "_live_stream", None)
    if live is not None:  # tessera_jit.Stream
        handle = live()
        return int(handle.value or 0), handle
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1]), stream
    for attribute in ("cuda_stream", "ptr"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value, stream
    raise TypeError(f"stream: expected None, an int (a CUstream) or a stream object, found "
                    f"{type(stream).__name__}")
