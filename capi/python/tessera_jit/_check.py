"""Turns a C API error into its exception (tessera_jit.errors)."""
import ctypes

from . import _library as L
from .errors import make_error


def check(error: int) -> None:
    """Raises the error's exception (and releases the error); nothing for NULL."""
    if not error:
        return
    size = ctypes.c_size_t()
    text = ctypes.string_at(L.error_message(error, ctypes.byref(size)) or b"", size.value)
    code = L.error_code(error)
    L.error_destroy(error)
    raise make_error(code, text.decode("utf-8", "replace"))
