"""DeviceArray: memory of the context's GPU holding a dense row-major array, exchangeable with
any DLPack consumer (torch.from_dlpack, cupy.from_dlpack, jax.dlpack; np.from_dlpack gets a host
copy)."""
import ctypes
import math
from typing import Any, Optional, Tuple

import numpy as np

from . import _dlpack
from . import _library as L
from . import _structs as S
from ._check import check
from ._handle import Handle, live
from ._native import export_capsule


def _free_buffer(context: Handle) -> Any:
    def release(pointer: int) -> None:
        L.error_destroy(L.buffer_free(context.value, pointer))  # nothing to report to
    return release


class DeviceArray:
    """`shape` × `dtype` on the context's device (Context.empty / Context.to_device). Its memory
    is freed when the array and every capsule exported from it are gone (or free() and the
    capsules)."""

    _allocation: Optional[Handle] = None

    def __init__(self, context: Any, shape: Tuple[int, ...], dtype: Any) -> None:
        self.shape = tuple(int(s) for s in shape)
        if any(size < 0 for size in self.shape):
            raise ValueError(f"shape {self.shape} has a negative size")
        self.dtype = np.dtype(dtype)
        self._code, self._bits = _dlpack.dl_dtype(self.dtype)
        self.size = math.prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize
        if self.nbytes > 2**63 - 1:
            raise ValueError(f"shape {self.shape} of {self.dtype} spans more than 2^63 bytes")
        self._context = context._live()
        self.device = context.device
        pointer = ctypes.c_void_p()
        check(L.buffer_alloc(self._context.value, max(self.nbytes, 1), ctypes.byref(pointer)))
        self._allocation = Handle(int(pointer.value or 0), _free_buffer(self._context),
                                  keep=self._context)

    @classmethod
    def from_numpy(cls, context: Any, array: Any) -> "DeviceArray":
        array = np.ascontiguousarray(array)
        device = cls(context, array.shape, array.dtype)
        if device.nbytes:
            allocation = device._live()
            check(L.buffer_copy(device._context.value, allocation.value, array.ctypes.data,
                                device.nbytes, S.COPY_H2D))
        return device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def pointer(self) -> Optional[int]:
        """The device address (None once freed)."""
        allocation = self._allocation
        return allocation.value if allocation is not None else None

    def _live(self) -> Handle:
        return live(self._allocation, "DeviceArray (freed)")

    def numpy(self) -> np.ndarray:
        """A host copy (waits for the copy)."""
        allocation = self._live()
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            check(L.buffer_copy(self._context.value, out.ctypes.data, allocation.value,
                                self.nbytes, S.COPY_D2H))
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
        host copy. `stream`: the consumer's stream; it is made to wait, on the device, for the
        work on the legacy default stream (copies, calls without stream=). Work you enqueued
        on streams of your own, order yourself (an Event)."""
        if dl_device is not None and tuple(dl_device) == (S.KDL_CPU, 0):
            # A host consumer: a host copy, unless copying is refused.
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
        allocation = self._live()
        if stream is not None and stream not in (-1, 1):
            from .streams import Event
            ready = Event.__new__(Event)
            ready._create(self._context, False)
            ready.record(None)
            check(L.stream_wait_event(self._context.value, stream, ready._live().value))
            ready.close()
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        # The capsule keeps the allocation (not this array) alive: free() cannot pull memory
        # from under a consumer.
        return export_capsule(allocation, int(allocation.value or 0), self.shape, self._code,
                              self._bits, S.KDL_CUDA, self.device, versioned, False)

    # Lifetime --------------------------------------------------------------------------------

    def free(self) -> None:
        """Releases the memory now, or when the last capsule exported from it is released."""
        self._allocation = None

    def __repr__(self) -> str:
        pointer = self.pointer
        state = "freed" if pointer is None else f"0x{pointer:x}"
        return (f"<tessera_jit.DeviceArray {self.dtype}{list(self.shape)} on cuda:{self.device}"
                f" at {state}>")
