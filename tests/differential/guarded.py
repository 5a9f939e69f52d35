"""Arrays that end (or begin) at an inaccessible page, so a compiled program that reads or
writes one element past its operand faults at once, on every machine, instead of reading
whatever the allocator placed there (which crashed on one CPU and passed on another).

    guarded_bytes(nbytes, after=True) -> np.ndarray of uint8

`after=True` puts the first byte past the array on a PROT_NONE page (overruns fault);
`after=False` puts the byte before it there (underruns fault). The array is as aligned as its
position in the page makes it (often not to 16 bytes): a load the compiler wrongly marks as
aligned faults too. The mapping lives as long as the array (NumPy keeps the mmap as its base).
"""
from __future__ import annotations

import ctypes
import mmap

import numpy as np

_PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.mprotect.restype = ctypes.c_int
_PROT_NONE = 0


def guarded_bytes(nbytes: int, after: bool = True) -> np.ndarray:
    if nbytes < 0:
        raise ValueError(f"guarded_bytes: negative size {nbytes}")
    data_pages = (nbytes + _PAGE - 1) // _PAGE
    span = (data_pages + 1) * _PAGE
    region = mmap.mmap(-1, span, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    anchor = ctypes.c_char.from_buffer(region)
    base = ctypes.addressof(anchor)
    del anchor  # the export must end, or NumPy's view below would pin a second one for nothing
    guard = base + data_pages * _PAGE if after else base
    if _libc.mprotect(guard, _PAGE, _PROT_NONE) != 0:
        raise OSError(ctypes.get_errno(), "mprotect of the guard page failed")
    offset = data_pages * _PAGE - nbytes if after else _PAGE
    return np.frombuffer(region, dtype=np.uint8, count=nbytes, offset=offset)
