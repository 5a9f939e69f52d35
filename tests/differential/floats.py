"""Floating-point formats of Tessera IR (f16, bf16, f32, f64; the fp8 formats tile.matmul takes,
f8E4M3FN and f8E5M2) and integer widths, with exact
rounding helpers. Values of every float format are held in float64 arrays (every f16/bf16/f32
value is exactly a float64); rounding into a format is always a single round-to-nearest-even
step from the exact value, never float64-then-narrow (double rounding).

Imports nothing of the compiler: NumPy and ml_dtypes only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Union

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE-style binary format: `p` significand bits (with the implicit one), exponents of
    normal numbers in [emin, emax]."""
    name: str
    bits: int
    p: int
    emin: int
    emax: int
    dtype: type
    largest: Optional[float] = None  # the largest finite where the top code is NaN (E4M3FN)

    @property
    def max_finite(self) -> float:
        if self.largest is not None:
            return self.largest
        return float((2 - Fraction(2) ** (1 - self.p)) * Fraction(2) ** self.emax)

    @property
    def min_normal(self) -> float:
        return math.ldexp(1.0, self.emin)

    @property
    def min_subnormal(self) -> float:
        return math.ldexp(1.0, self.emin - self.p + 1)

    @property
    def uint(self) -> type:
        return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[self.bits]


FLOATS = {
    "f16": FloatFormat("f16", 16, 11, -14, 15, np.float16),
    "bf16": FloatFormat("bf16", 16, 8, -126, 127, ml_dtypes.bfloat16),
    "f32": FloatFormat("f32", 32, 24, -126, 127, np.float32),
    "f64": FloatFormat("f64", 64, 53, -1022, 1023, np.float64),
    # OCP FP8: E4M3 without infinities (S.1111.111 is NaN), E5M2 IEEE-like. Inputs only: values
    # are drawn by bit pattern or rounded by ml_dtypes' casts (FP8), never by round_array.
    "f8E4M3FN": FloatFormat("f8E4M3FN", 8, 4, -6, 8, ml_dtypes.float8_e4m3fn, 448.0),
    "f8E5M2": FloatFormat("f8E5M2", 8, 3, -14, 15, ml_dtypes.float8_e5m2),
}
FP8 = ["f8E4M3FN", "f8E5M2"]
INTS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64}
INT_DTYPES = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}


def is_float(t: str) -> bool:
    return t in FLOATS


def is_int(t: str) -> bool:
    return t in INTS


def width(t: str) -> int:
    """Bit width of a float or integer type."""
    return FLOATS[t].bits if t in FLOATS else INTS[t]


def round_array(x: np.ndarray, t: str) -> np.ndarray:
    """Rounds float64 values (taken as exact) to format `t` by round-to-nearest-even, overflowing
    to ±inf; returns float64. A single rounding: exact for every format up to f64."""
    x = np.asarray(x, dtype=np.float64)
    f = FLOATS[t]
    if t == "f64":
        return x.copy()
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)
        lead = e.astype(np.int64) - 1
        q = np.maximum(lead, f.emin) - (f.p - 1)
        finite = np.isfinite(x) & (x != 0)
        q = np.where(finite, q, 0)
        r = np.ldexp(np.rint(np.ldexp(x, -q)), q)
        r = np.where(np.abs(r) > f.max_finite, np.copysign(np.inf, x), r)
        return np.where(finite, r, x)


def round_fraction(value: Union[Fraction, int], t: str, negative_zero: bool = False) -> float:
    """Rounds an exact rational to format `t` (round-to-nearest-even, overflow to ±inf)."""
    q = Fraction(value)
    if q == 0:
        return -0.0 if negative_zero else 0.0
    f = FLOATS[t]
    sign = -1.0 if q < 0 else 1.0
    a = abs(q)
    lead = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** lead > a:
        lead -= 1
    qexp = max(lead, f.emin) - (f.p - 1)
    r = round(a / Fraction(2) ** qexp)  # Fraction rounds half to even
    v = Fraction(r) * Fraction(2) ** qexp
    if v > Fraction(f.max_finite):
        return sign * math.inf
    return sign * float(v)


def to_storage(values: np.ndarray, t: str) -> np.ndarray:
    """float64 values exactly representable in float type `t` → an array of `t`'s NumPy dtype."""
    with np.errstate(over="ignore"):  # ±inf are values too; a cast of them is not an overflow
        return np.asarray(values, dtype=np.float64).astype(FLOATS[t].dtype)


def float_bits(values: np.ndarray, t: str) -> np.ndarray:
    """Bit patterns (unsigned ints) of float64 values exactly representable in `t`."""
    f = FLOATS[t]
    return to_storage(values, t).view(f.uint)


def bits_to_float(bits: np.ndarray, t: str) -> np.ndarray:
    """float64 values of the bit patterns of format `t`."""
    f = FLOATS[t]
    return np.asarray(bits).astype(f.uint).view(f.dtype).astype(np.float64)


def ulp(values: np.ndarray, t: str) -> np.ndarray:
    """The spacing of format `t` at each value (its quantum; the largest finite's for ±inf)."""
    f = FLOATS[t]
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(all="ignore"):
        a = np.where(np.isfinite(v), np.abs(v), f.max_finite)
        _, e = np.frexp(a)
        lead = np.where(a == 0, f.emin, e.astype(np.int64) - 1)
        return np.ldexp(1.0, np.maximum(lead, f.emin) - (f.p - 1))


def ordinal(values: np.ndarray, t: str) -> np.ndarray:
    """Maps float64 values of format `t` to integers that are consecutive for adjacent values of
    the format (±0 both map to 0; +inf is one past the largest finite)."""
    f = FLOATS[t]
    bits = float_bits(values, t).astype(np.uint64).astype(object)
    sign = 1 << (f.bits - 1)
    out = np.array([(-(b - sign) if b >= sign else b) for b in bits.ravel()], dtype=object)
    return out.reshape(np.shape(values))


def int_range(t: str, signed: bool) -> tuple[int, int]:
    n = INTS[t]
    return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)


def to_signed(u: np.ndarray, n: int) -> np.ndarray:
    """Unsigned n-bit patterns (object array of Python ints) → their two's-complement values."""
    half = 1 << (n - 1)
    return np.where(u >= half, u - (1 << n), u) if n > 0 else u


def wrap(v: np.ndarray, n: int) -> np.ndarray:
    """Python ints → unsigned n-bit patterns (object array)."""
    mask = (1 << n) - 1
    return np.asarray(v, dtype=object) & mask


def int_storage(u: np.ndarray, t: str) -> np.ndarray:
    """Unsigned patterns → the NumPy array passed for integer type `t` (bool for i1)."""
    n = INTS[t]
    if t == "i1":
        return np.asarray(u, dtype=object).astype(bool)
    return np.array([int(x) for x in to_signed(np.asarray(u, dtype=object), n).ravel()],
                    dtype=INT_DTYPES[t]).reshape(np.shape(u))


def int_patterns(a: np.ndarray, t: str) -> np.ndarray:
    """An integer (or bool) NumPy array of type `t` → unsigned patterns (object array)."""
    n = INTS[t]
    flat = [int(x) & ((1 << n) - 1) for x in np.asarray(a).ravel()]
    return np.array(flat, dtype=object).reshape(np.shape(a))


def largest_below(limit: int, t: str) -> float:
    """The largest value of float format `t` that is ≤ `limit` (an integer), or the largest finite."""
    f = FLOATS[t]
    v = Fraction(limit)
    if v >= Fraction(f.max_finite):
        return f.max_finite
    r = round_fraction(v, t)
    return r if r <= limit else float(np.nextafter(r, -np.inf)) if t == "f64" else _prev(r, t)


def smallest_above(limit: int, t: str) -> float:
    return -largest_below(-limit, t)


def _prev(x: float, t: str) -> float:
    """The next smaller value of format `t` than finite positive `x`."""
    u = float(ulp(np.array([x]), t)[0])
    down = x - u
    # at a binade boundary the spacing below is half
    if float(ulp(np.array([down]), t)[0]) < u and x - u / 2 < x:
        down = x - u / 2
    return down
