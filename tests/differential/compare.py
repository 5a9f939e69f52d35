"""Compares the compiled program's outputs with the evaluator's expectations.

* An element expected bit for bit (relative bound or tolerance 0) must have the same bits,
  except that any NaN matches any NaN (the sign of zero matters).
* A `tile.map` element with a relative bound r > 0 may be k = ⌈r·|ref| / ulp(ref)⌉ + 1 units in
  the last place of its type away (counted over the format's ordered values, so ±inf is one past
  the largest finite); a NaN must be a NaN.
* A model-op element with an absolute tolerance a > 0 must be within a (a NaN must be a NaN, an
  infinity the same infinity).
* Elements whose bound is inf are not determined and not compared.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from evaluator import Expected
from floats import FLOATS, float_bits, int_patterns, is_float, ordinal, ulp


@dataclass
class Mismatch:
    """The outcome of one output: how many elements were compared, and the bad ones."""
    output: str
    what: str
    compared: int
    bad: list[tuple[tuple[int, ...], str, str]] = field(default_factory=list)
    count: int = 0

    def describe(self, limit: int = 4) -> str:
        lines = [f"{self.output} ({self.what}): {self.count} of {self.compared} compared "
                 f"element(s) differ"]
        for index, want, got in self.bad[:limit]:
            lines.append(f"  at {list(index)}: expected {want}, got {got}")
        return "\n".join(lines)


def fmt(value: Any, t: str) -> str:
    """A value with its bit pattern."""
    if is_float(t):
        bits = int(float_bits(np.array([value]), t)[0])
        return f"{float(value)!r} ({t} 0x{bits:0{FLOATS[t].bits // 4}X})"
    return f"{int(value)} ({t})"


def actual_values(array: np.ndarray, t: str) -> np.ndarray:
    if is_float(t):
        return np.asarray(array).astype(np.float64)
    return int_patterns(array, t)


def compare_output(name: str, t: str, expected: Expected, got: np.ndarray) -> Optional[Mismatch]:
    """None when the output agrees, else the mismatch."""
    ref = expected.values
    act = actual_values(got, t)
    shape = ref.shape
    if is_float(t):
        ref = np.asarray(ref, dtype=np.float64)
        if expected.rel is not None:
            bound = np.broadcast_to(expected.rel, shape)
        else:
            bound = np.broadcast_to(expected.atol, shape)
        exact = bound == 0
        checked = np.isfinite(bound)
        same_bits = (np.isnan(ref) & np.isnan(act)) | (
            float_bits(np.nan_to_num(ref, nan=0.0), t) == float_bits(np.nan_to_num(act, nan=0.0), t)
        ) & ~np.isnan(ref) & ~np.isnan(act)
        ok = np.where(exact, same_bits, True)
        loose = checked & ~exact
        if np.any(loose):
            nan_ok = np.isnan(ref) == np.isnan(act)
            with np.errstate(all="ignore"):
                if expected.rel is not None:
                    k = np.ceil(np.where(loose, bound, 0) * np.abs(np.nan_to_num(ref)) /
                                ulp(np.nan_to_num(ref), t)) + 1
                    idx = np.flatnonzero(loose & nan_ok & ~np.isnan(ref))
                    close = np.zeros(shape, bool)
                    if idx.size:
                        o_ref = ordinal(ref.ravel()[idx], t)
                        o_act = ordinal(act.ravel()[idx], t)
                        dist = np.array([abs(int(x) - int(y)) for x, y in zip(o_ref, o_act)])
                        close.ravel()[idx] = dist <= k.ravel()[idx]
                    close |= np.isnan(ref) & np.isnan(act)
                else:
                    inf_same = np.isinf(ref) & (ref == act)
                    close = (np.abs(act - ref) <= bound) | inf_same | (np.isnan(ref) & np.isnan(act))
            ok = np.where(loose, nan_ok & close, ok)
        ok = ok | ~checked
    else:
        ref = np.asarray(ref, dtype=object)
        bound = expected.rel if expected.rel is not None else expected.atol
        checked = np.isfinite(np.broadcast_to(bound, shape)) if bound is not None else np.ones(
            shape, bool)
        ok = np.asarray(ref == act, dtype=bool) | ~checked
    count = int(np.sum(~ok))
    if count == 0:
        return None
    bad = []
    for index in ([()] if ok.ndim == 0 else zip(*np.nonzero(~ok))):  # a 0-d output: index ()
        bad.append((tuple(int(i) for i in index), fmt(ref[index], t), fmt(act[index], t)))
        if len(bad) >= 8:
            break
    return Mismatch(name, expected.what, int(np.sum(checked)), bad, count)
