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
from ._handle import Closable, Handle, live


def _destroy_stream(context: Handle) -> Any:
    def release(value: int) -> None:
        L.error_destroy(L.stream_destroy(context.value, value))  # nothing to report to
    return release


class Stream(Closable):
    """A stream on the context's device. `handle` is its CUstream (also offered through the
    CUDA stream protocol, `__cuda_stream__`), so PyTorch, CuPy or CUDA Python can use it."""

    _stream: Optional[Handle] = None

    def __init__(self, context: Any, non_blocking: bool = True) -> None:
        self._context = context._live()
        stream = ctypes.c_void_p()
        flags = S.STREAM_NON_BLOCKING if non_blocking else 0
        check(L.stream_create(self._context.value, flags, ctypes.byref(stream)))
        self._stream = Handle(int(stream.value or 0), _destroy_stream(self._context),
                              keep=self._context)

    @property
    def handle(self) -> int:
        """The CUstream (0 once closed)."""
        stream = self._stream
        return int(stream.value or 0) if stream is not None else 0

    def __cuda_stream__(self) -> Tuple[int, int]:
        return (0, int(self._live().value or 0))

    def _live(self) -> Handle:
        return live(self._stream, "stream")

    _live_stream = _live  # what stream_handle() holds while another call uses the stream

    def synchronize(self) -> None:
        """Waits on the host for everything enqueued so far."""
        stream = self._live()
        check(L.stream_synchronize(self._context.value, stream.value))

    def query(self) -> bool:
        """Whether everything enqueued so far has completed (never blocks)."""
        done = ctypes.c_int32()
        stream = self._live()
        check(L.stream_query(self._context.value, stream.value, ctypes.byref(done)))
        return bool(done.value)

    def wait_event(self, event: "Event") -> None:
        """Work enqueued after this waits, on the device, for `event`'s last record."""
        stream, recorded = self._live(), event._live()
        check(L.stream_wait_event(self._context.value, stream.value, recorded.value))

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        """Records `event` (a new one on this stream's context when None) here; returns it."""
        if event is None:
            event = Event.__new__(Event)
            event._create(self._context, True)
        event.record(self)
        return event

    def close(self) -> None:
        """Destroys the stream once calls in flight on other threads are done with it (they
        hold its handle); work already enqueued still completes. Using it then is
        RuntimeError."""
        self._stream = None

    def __repr__(self) -> str:
        return f"<tessera_jit.Stream 0x{self.handle:x}>" if self._stream else \
            "<tessera_jit.Stream closed>"


class Event(Closable):
    """An event on the context's device: ordering between streams and GPU-side timing."""

    _event: Optional[Handle] = None

    def __init__(self, context: Any, timing: bool = True) -> None:
        self._create(context._live(), timing)

    def _create(self, context: Handle, timing: bool) -> None:
        self._context = context
        self.timing = timing
        event = ctypes.c_void_p()
        flags = 0 if timing else S.EVENT_DISABLE_TIMING
        check(L.event_create(context.value, flags, ctypes.byref(event)))
        self._event = Handle(int(event.value or 0), L.event_destroy, keep=context)

    def _live(self) -> Handle:
        return live(self._event, "event")

    def record(self, stream: Any = None) -> None:
        """Captures the work enqueued on `stream` so far (None: the legacy default stream)."""
        handle, keep = (0, None) if stream is None else stream_handle(stream)
        event = self._live()
        check(L.event_record(event.value, handle or None))
        del keep  # the stream's handle was held for the call

    def query(self) -> bool:
        done = ctypes.c_int32()
        event = self._live()
        check(L.event_query(event.value, ctypes.byref(done)))
        return bool(done.value)

    def synchronize(self) -> None:
        event = self._live()
        check(L.event_synchronize(event.value))

    def elapsed_time(self, stop: "Event") -> float:
        """Milliseconds from this event's record to `stop`'s (waits for `stop`)."""
        ms = ctypes.c_float()
        start, end = self._live(), stop._live()
        check(L.event_elapsed_time(start.value, end.value, ctypes.byref(ms)))
        return float(ms.value)

    def close(self) -> None:
        self._event = None

    def __repr__(self) -> str:
        return f"<tessera_jit.Event{' closed' if self._event is None else ''}>"
