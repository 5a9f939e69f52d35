"""DeviceArray: memory of the context's GPU holding a dense row-major array, exchangeable with
any DLPack consumer (torch.from_dlpack, cupy.from_dlpack, jax.dlpack, np.from_dlpack for
host copies)."""
import ctypes
from typing import Any, Optional, Tuple

import numpy as np

from . import _dlpack
from . import _library as L
from ._native import export_capsule
from . import _structs as S
from ._check import check


class _Allocation:
    """Device memory, freed when the last of its DeviceArray and the capsules exported from it
    is gone."""

    pointer: Optional[int] = None

    def __init__(self, context: Any, nbytes: int) -> None:
        self._context = context
        pointer = ctypes.c_void_p()
        check(L.buffer_alloc(context._live_handle(), max(nbytes, 1), ctypes.byref(pointer)))
        self.pointer = pointer.value

    def __del__(self) -> None:
        pointer, self.pointer = self.pointer, None
        context_handle = getattr(getattr(self, "_context", None), "_handle", None)
        if pointer and context_handle:
            error = L.buffer_free(context_handle, pointer)
            if error:
                L.error_destroy(error)  # nothing to report to at collection


class DeviceArray:
    """`shape` × `dtype` on the context's device (Context.empty / Context.to_device)."""

    _allocation: Optional[_Allocation] = None

    def __init__(self, context: Any, shape: Tuple[int, ...], dtype: Any) -> None:
        self._context = context
        self.shape = tuple(int(s) for s in shape)
        if any(size < 0 for size in self.shape):
            raise ValueError(f"shape {self.shape} has a negative size")
        self.dtype = np.dtype(dtype)
        self._code, self._bits = _dlpack.dl_dtype(self.dtype)
        self.size = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        self.nbytes = self.size * self.dtype.itemsize
        self.device = context.device
        self._allocation = _Allocation(context, self.nbytes)

    @classmethod
    def from_numpy(cls, context: Any, array: Any) -> "DeviceArray":
        array = np.ascontiguousarray(array)
        device = cls(context, array.shape, array.dtype)
        if device.nbytes:
            check(L.buffer_copy(context._live_handle(), device.pointer, array.ctypes.data,
                                device.nbytes, S.COPY_H2D))
        return device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def pointer(self) -> Optional[int]:
        """The device address (None once freed)."""
        return self._allocation.pointer if self._allocation is not None else None

    def _live_pointer(self) -> int:
        if self._allocation is None or self._allocation.pointer is None:
            raise RuntimeError("the DeviceArray was freed")
        return self._allocation.pointer

    def numpy(self) -> np.ndarray:
        """A host copy (waits for the copy)."""
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            check(L.buffer_copy(self._context._live_handle(), out.ctypes.data,
                                self._live_pointer(), self.nbytes, S.COPY_D2H))
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    # DLPack producer -------------------------------------------------------------------------

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (S.KDL_CUDA, self.device)

    def __dlpack__(self, *, stream: Optional[int] = None,
                   max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None,
                   copy: Optional[bool] = None) -> Any:
        """A DLPack capsule of this memory, zero-copy (a 1.0 versioned one when the consumer
        asks with max_version ≥ (1, 0)); for dl_device=(kDLCPU, 0), as np.from_dlpack asks, a
        host copy. `stream`: the consumer's stream; it is made to wait,
        on the device, for the work on the legacy default stream (copies, calls without
        stream=). Work you enqueued on streams of your own, order yourself (an Event)."""
        if dl_device is not None and tuple(dl_device) == (S.KDL_CPU, 0):
            # A host consumer (np.from_dlpack asks so): a host copy, unless copying is refused.
            if copy is False:
                raise BufferError("a DeviceArray on the host needs a copy (copy=False refused)")
            host = self.numpy()
            if max_version is None:
                return host.__dlpack__()
            return host.__dlpack__(max_version=max_version)
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"a DeviceArray lives on {self.__dlpack_device__()}, not "
                              f"{tuple(dl_device)}, and is not copied across devices")
        if copy:
            raise BufferError("a DeviceArray is exported without a copy (copy=True refused)")
        if stream is not None and stream not in (-1, 1):
            from .streams import Event
            with Event(self._context, timing=False) as ready:
                ready.record(None)
                check(L.stream_wait_event(self._context._live_handle(), stream,
                                          ready._live_handle()))
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        pointer = self._live_pointer()
        return export_capsule(self._allocation, pointer, self.shape, self._code, self._bits,
                              S.KDL_CUDA, self.device, versioned, False)

    # Lifetime --------------------------------------------------------------------------------

    def free(self) -> None:
        """Releases the memory now, or when the last capsule exported from it is released."""
        self._allocation = None

    def __repr__(self) -> str:
        state = "freed" if self.pointer is None else f"0x{self.pointer:x}"
        return (f"<tessera_jit.DeviceArray {self.dtype}{list(self.shape)} on cuda:{self.device}"
                f" at {state}>")
