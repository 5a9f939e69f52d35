"""CUDA streams and events of a context's device (C API 0.9).

An nvptx function called with `stream=` enqueues its kernels there and returns without waiting;
host functions always run synchronously. Without a GPU, creating either raises UnavailableError.
"""
import ctypes
from typing import Any, Optional, Tuple

from . import _library as L
from . import _structs as S
from ._check import check
from ._dlpack import stream_handle


class Stream:
    """A stream on the context's device. `handle` is its CUstream (also offered through the
    CUDA stream protocol, `__cuda_stream__`), so PyTorch, CuPy or CUDA Python can use it."""

    handle: int = 0
    _owned = False

    def __init__(self, context: Any, non_blocking: bool = True) -> None:
        self._context = context
        stream = ctypes.c_void_p()
        flags = S.STREAM_NON_BLOCKING if non_blocking else 0
        check(L.stream_create(context._live_handle(), flags, ctypes.byref(stream)))
        self.handle = stream.value or 0
        self._owned = True

    def __cuda_stream__(self) -> Tuple[int, int]:
        return (0, self.handle)

    def synchronize(self) -> None:
        """Waits on the host for everything enqueued so far."""
        check(L.stream_synchronize(self._context._live_handle(), self.handle or None))

    def query(self) -> bool:
        """Whether everything enqueued so far has completed (never blocks)."""
        done = ctypes.c_int32()
        check(L.stream_query(self._context._live_handle(), self.handle or None,
                             ctypes.byref(done)))
        return bool(done.value)

    def wait_event(self, event: "Event") -> None:
        """Work enqueued after this waits, on the device, for `event`'s last record."""
        check(L.stream_wait_event(self._context._live_handle(), self.handle or None,
                                  event._live_handle()))

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        """Records `event` (a new one when None) here and returns it."""
        event = event if event is not None else Event(self._context)
        event.record(self)
        return event

    def close(self) -> None:
        handle, self.handle = self.handle, 0
        if self._owned and handle and self._context._handle is not None:
            check(L.stream_destroy(self._context._handle, handle))

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at collection
            pass

    def __repr__(self) -> str:
        return f"<tessera_jit.Stream 0x{self.handle:x}>"


class Event:
    """An event on the context's device: ordering between streams and GPU-side timing."""

    _handle: Optional[int] = None

    def __init__(self, context: Any, timing: bool = True) -> None:
        self._context = context
        self.timing = timing
        event = ctypes.c_void_p()
        flags = 0 if timing else S.EVENT_DISABLE_TIMING
        check(L.event_create(context._live_handle(), flags, ctypes.byref(event)))
        self._handle = event.value

    def _live_handle(self) -> int:
        if self._handle is None:
            raise RuntimeError("the event was closed")
        return self._handle

    def record(self, stream: Any = None) -> None:
        """Captures the work enqueued on `stream` so far (None: the legacy default stream)."""
        handle = None if stream is None else (stream_handle(stream) or None)
        check(L.event_record(self._live_handle(), handle))

    def query(self) -> bool:
        done = ctypes.c_int32()
        check(L.event_query(self._live_handle(), ctypes.byref(done)))
        return bool(done.value)

    def synchronize(self) -> None:
        check(L.event_synchronize(self._live_handle()))

    def elapsed_time(self, stop: "Event") -> float:
        """Milliseconds from this event's record to `stop`'s (waits for `stop`)."""
        ms = ctypes.c_float()
        check(L.event_elapsed_time(self._live_handle(), stop._live_handle(), ctypes.byref(ms)))
        return float(ms.value)

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            L.event_destroy(handle)

    def __enter__(self) -> "Event":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<tessera_jit.Event{' closed' if self._handle is None else ''}>"
