"""C handles owned by reference count.

A Handle releases its C object when the last reference to it goes, not when the Python object
it came from is closed: a call that holds a reference (a local variable for the duration of a
ctypes call, which releases the GIL) keeps the C object valid even if another thread closes
the Python object meanwhile. What the release needs (the context's handle, for a stream or a
buffer) is held by `keep`, so a context outlives its streams, events and device memory, as the
C API's modules already make it outlive them."""
from typing import Any, Callable, Optional, TypeVar

_Self = TypeVar("_Self", bound="Closable")


class Handle:
    __slots__ = ("value", "_release", "_keep")

    def __init__(self, value: int, release: Callable[[int], None], keep: Any = None) -> None:
        self.value: Optional[int] = value
        self._release = release
        self._keep = keep

    def __del__(self) -> None:
        value, self.value = self.value, None
        if value:
            try:
                self._release(value)
            except Exception:  # noqa: BLE001 - at interpreter exit, or nothing to report to
                pass


def live(handle: Optional[Handle], what: str) -> Handle:
    """`handle`, or RuntimeError when its object was closed."""
    if handle is None:
        raise RuntimeError(f"the {what} was closed")
    return handle


class Closable:
    """close(), and `with` for it."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
