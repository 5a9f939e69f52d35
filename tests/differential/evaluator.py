"""An independent evaluator of the generator's program model, in NumPy and ml_dtypes (it imports
nothing of the compiler or of `tessera_jit`), following docs/ir.md and MLIR's arith/math
definitions.

`tile.map` bodies are evaluated exactly: float values are held in float64 arrays and rounded to
the declared type after every op (a single round-to-nearest-even from the exact value:
`fma` and int→float conversions go through `fractions.Fraction`); integers are unsigned bit
patterns in object arrays of Python ints, with MLIR's wrapping two's-complement semantics and
Tessera's division rule (a zero divisor, or INT_MIN / −1, is replaced by 1).

Every value carries, per element, a bound on its relative error (`err`): 0 for a value that
must agree bit for bit, a positive bound downstream of a transcendental function (its
documented ulp bound, then propagated to first order through the ops that follow by evaluating
them at the corners of the operands' error intervals), and `inf` where the value is not
determined (a discrete result whose corners disagree, a zero of unspecified sign from
maxnumf(+0, −0), …): such elements are not compared.

The model ops (`reduce`, `softmax`, `norm`, `matmul`, `attention`, `rope`) return reference
values with per-element absolute tolerances (0: bit for bit); see README.md for the bounds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Optional

import numpy as np

from floats import (FLOATS, INTS, bits_to_float, float_bits, int_patterns, is_float, round_array,
                    round_fraction, to_signed, ulp, wrap)
from generator import decode_input, fptoint_bounds, nan_guard_bits

U32 = 2.0 ** -24  # unit roundoff of f32
#: Documented max error of the host's f32 math (docs/compiler.md), in ulps, plus the result's
#: own rounding slack; functions left to libm get 1 ulp (glibc's are within 1 ulp).
TRANSCENDENTAL_ULPS = {"exp": 1.0, "expm1": 1.5, "tanh": 1.5, "log": 1.1, "log2": 1.6,
                       "log1p": 2.5, "erf": 1.0, "atan": 1.0, "sin": 1.0, "cos": 1.0}
LIBM_ULPS = 2.0        # other f32 functions (libm, or a two-rounding rsqrt)
F64_ULPS = 1.0         # f64 math is glibc's (an FMA or non-FMA variant): within 1 ulp
NARROW_ULPS = 1.0      # f16/bf16 math is computed in f32 and rounded: 1 ulp of the narrow type
UNKNOWN_ABOVE = 1e-3   # a propagated relative error above this: the element is not compared


@dataclass
class Val:
    """A value of a `tile.map` body: float64 data (floats) or unsigned patterns (ints), and a
    per-element relative error bound."""
    data: np.ndarray
    err: np.ndarray


def _libm(name: str) -> Callable[[float], float]:
    # cbrt: the C library's (NumPy's np.cbrt calls it); |x| ** (1/3) is ~100 ulps off for tiny
    # x (1/3 is inexact and the error scales with |log x|: seed 540000270, a subnormal f64)
    return {"exp2": lambda x: 2.0 ** x, "rsqrt": lambda x: 1.0 / math.sqrt(x),
            "cbrt": lambda x: float(np.cbrt(x)),
            "powf": math.pow, "atan2": math.atan2}.get(name) or getattr(math, name)


NUMPY_MATH: dict[str, Callable[..., np.ndarray]] = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "atan": np.arctan, "rsqrt": lambda x: 1.0 / np.sqrt(x), "cbrt": np.cbrt, "tan": np.tan,
    "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": np.vectorize(math.erf, otypes=[float]), "erfc": np.vectorize(math.erfc, otypes=[float]),
    "powf": np.power, "atan2": np.arctan2}


def libm_eval(name: str, *xs: np.ndarray) -> np.ndarray:
    """A math function in float64: NumPy for the special cases (IEEE results for ±0, ±inf, NaN,
    domain errors), the C library through `math` for accurate finite results."""
    with np.errstate(all="ignore"):
        y = np.asarray(NUMPY_MATH[name](*xs), dtype=np.float64)
    fn = _libm(name)
    out = y.copy()
    flat = [np.broadcast_to(x, y.shape).ravel() for x in xs]
    for i in np.flatnonzero(np.isfinite(y) & (y != 0)):
        try:
            out.flat[i] = fn(*(float(x[i]) for x in flat))
        except (ValueError, OverflowError):
            pass
    return out


def transcendental_ulps(name: str, t: str) -> float:
    if t in ("f16", "bf16"):
        return NARROW_ULPS
    if t == "f64":
        return F64_ULPS
    return TRANSCENDENTAL_ULPS.get(name, LIBM_ULPS)


# ----------------------------------------------------------------------------- float ops

def _round_half_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _maxnum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.maximum(a, b)))


def _minnum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.minimum(a, b)))


def _maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE maximum: NaN propagates, −0 < +0 (np.maximum compares ±0 equal)."""
    r = np.maximum(a, b)
    both_zero = (a == 0) & (b == 0)
    return np.where(both_zero, np.where(np.signbit(a) & np.signbit(b), -0.0, 0.0), r)


def _minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r = np.minimum(a, b)
    both_zero = (a == 0) & (b == 0)
    return np.where(both_zero, np.where(np.signbit(a) | np.signbit(b), -0.0, 0.0), r)


#: Exactly rounded float ops as float64 functions: with f32-or-narrower operands the float64
#: result rounded once more to the type is the correctly rounded result (53 ≥ 2·24 + 2); on
#: f64 it is NumPy's correctly rounded IEEE operation. remf (fmod), the min/max family, abs,
#: neg, copysign and the roundings are exact.
EXACT_FLOAT: dict[str, Callable[..., np.ndarray]] = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
    "remf": np.fmod, "negf": np.negative, "absf": np.abs, "sqrt": np.sqrt,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "roundeven": np.rint,
    "round": _round_half_away, "maximumf": _maximum, "minimumf": _minimum,
    "maxnumf": _maxnum, "minnumf": _minnum, "copysign": np.copysign,
}
DISCRETE_FLOAT = {"floor", "ceil", "trunc", "roundeven", "round"}


def fma_exact(a: np.ndarray, b: np.ndarray, c: np.ndarray, t: str) -> np.ndarray:
    """a·b + c with one rounding to `t`, exactly (Fraction); IEEE special cases from float64."""
    with np.errstate(all="ignore"):
        approx = a * b + c
    out = np.empty(approx.shape)
    for i in range(approx.size):
        x, y, z = float(a.flat[i]), float(b.flat[i]), float(c.flat[i])
        if math.isfinite(x) and math.isfinite(y) and math.isinf(z):
            # the exact product of finite operands is finite, whatever float64 would round it
            # to: the sum is z (float64's x·y + z gave NaN for x·y → −inf, z = +inf)
            out.flat[i] = z
            continue
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            out.flat[i] = approx.flat[i]
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact == 0:
            # the sign of an exact zero: −0 only when both the product and c are −0 (or the
            # product is −0 and c is −0); x·y + z = 0 with nonzero terms gives +0
            prod_neg = (math.copysign(1, x) * math.copysign(1, y)) < 0
            prod_zero = x == 0 or y == 0
            neg = (prod_zero and z == 0 and prod_neg and math.copysign(1, z) < 0)
            out.flat[i] = -0.0 if neg else 0.0
        else:
            out.flat[i] = round_fraction(exact, t)
    return out


def int_to_float(u: np.ndarray, n: int, signed: bool, t: str) -> np.ndarray:
    """sitofp/uitofp of n-bit patterns: the exact integer rounded once to `t`."""
    vals = to_signed(u, n) if signed else u
    return np.array([round_fraction(int(v), t) for v in np.asarray(vals).ravel()],
                    dtype=np.float64).reshape(np.shape(u))


# ----------------------------------------------------------------------------- integer ops

def _div_operands(a: np.ndarray, b: np.ndarray, n: int, signed: bool):
    """Tessera's division rule: a zero divisor, or INT_MIN / −1, becomes 1."""
    if signed:
        sa, sb = to_signed(a, n), to_signed(b, n)
        bad = (sb == 0) | ((sa == -(1 << (n - 1))) & (sb == -1))
        return sa, np.where(bad, 1, sb)
    return a, np.where(b == 0, 1, b)


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _elementwise(fn: Callable[[int, int], int], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    return np.array([fn(int(x), int(y)) for x, y in zip(a.ravel(), b.ravel())],
                    dtype=object).reshape(a.shape)


def int_binary(op: str, a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """An arith integer binary op on n-bit patterns (object arrays)."""
    sa, sb = to_signed(a, n), to_signed(b, n)
    if op == "addi":
        r = a + b
    elif op == "subi":
        r = a - b
    elif op == "muli":
        r = a * b
    elif op in ("divsi", "remsi", "ceildivsi", "floordivsi"):
        x, y = _div_operands(a, b, n, True)
        fn = {"divsi": _tdiv,
              "remsi": lambda p, q: p - _tdiv(p, q) * q,
              "ceildivsi": lambda p, q: -((-p) // q),
              "floordivsi": lambda p, q: p // q}[op]
        r = _elementwise(fn, x, y)
    elif op in ("divui", "remui", "ceildivui"):
        x, y = _div_operands(a, b, n, False)
        fn = {"divui": lambda p, q: p // q, "remui": lambda p, q: p % q,
              "ceildivui": lambda p, q: -((-p) // q)}[op]
        r = _elementwise(fn, x, y)
    elif op == "maxsi":
        r = np.where(sa >= sb, a, b)
    elif op == "minsi":
        r = np.where(sa <= sb, a, b)
    elif op == "maxui":
        r = np.where(a >= b, a, b)
    elif op == "minui":
        r = np.where(a <= b, a, b)
    elif op == "andi":
        r = a & b
    elif op == "ori":
        r = a | b
    elif op == "xori":
        r = a ^ b
    elif op in ("shli", "shrsi", "shrui"):
        amount = b & (n - 1) if n > 1 else b * 0  # the printed guard: andi with width − 1
        if op == "shli":
            r = _elementwise(lambda p, s: p << s, a, amount)
        elif op == "shrui":
            r = _elementwise(lambda p, s: p >> s, a, amount)
        else:
            r = _elementwise(lambda p, s: p >> s, sa, amount)
    else:
        raise ValueError(op)
    return wrap(r, n)


def int_unary(op: str, a: np.ndarray, n: int) -> np.ndarray:
    if op == "absi":
        return wrap(np.abs(to_signed(a, n)), n)
    if op == "ctpop":
        return np.array([bin(int(x)).count("1") for x in a.ravel()], dtype=object).reshape(a.shape)
    if op == "ctlz":
        return np.array([n - int(x).bit_length() for x in a.ravel()], dtype=object).reshape(a.shape)
    if op == "cttz":
        return np.array([((int(x) & -int(x)).bit_length() - 1) if x else n for x in a.ravel()],
                        dtype=object).reshape(a.shape)
    raise ValueError(op)


def cmpi(pred: str, a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    sa, sb = to_signed(a, n), to_signed(b, n)
    r = {"eq": lambda: a == b, "ne": lambda: a != b, "slt": lambda: sa < sb,
         "sle": lambda: sa <= sb, "sgt": lambda: sa > sb, "sge": lambda: sa >= sb,
         "ult": lambda: a < b, "ule": lambda: a <= b, "ugt": lambda: a > b,
         "uge": lambda: a >= b}[pred]()
    return np.asarray(r, dtype=bool).astype(int).astype(object)


def cmpf(pred: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    unordered = np.isnan(a) | np.isnan(b)
    base = {"eq": a == b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b, "ne": a != b}
    if pred == "false":
        r = np.zeros(a.shape, bool)
    elif pred == "true":
        r = np.ones(a.shape, bool)
    elif pred == "ord":
        r = ~unordered
    elif pred == "uno":
        r = unordered
    elif pred[0] == "o":
        r = ~unordered & base[pred[1:]]
    else:
        r = unordered | base[pred[1:]]
    return np.asarray(r, dtype=bool).astype(int).astype(object)


def classify(op: str, x: np.ndarray, t: str) -> np.ndarray:
    f = FLOATS[t]
    r = {"isnan": np.isnan(x), "isinf": np.isinf(x), "isfinite": np.isfinite(x),
         "isnormal": np.isfinite(x) & (np.abs(x) >= f.min_normal)}[op]
    return np.asarray(r, dtype=bool).astype(int).astype(object)


# ----------------------------------------------------------------------------- tile.map

class MapEvaluator:
    """Evaluates one `tile.map` body over the output shape."""

    def __init__(self, nodes: list[dict[str, Any]], inputs: list[Val], shape: tuple[int, ...]):
        self.nodes = nodes
        self.inputs = inputs
        self.shape = shape
        self.values: dict[int, Val] = {}

    def value(self, i: int) -> Val:
        if i not in self.values:
            self.values[i] = self.compute(self.nodes[i])
        return self.values[i]

    def compute(self, node: dict[str, Any]) -> Val:
        op, t = node["op"], node["type"]
        zeros = np.zeros(self.shape)
        if op == "arg":
            v = self.inputs[node["index"]]
            return Val(np.broadcast_to(v.data, self.shape).copy(),
                       np.broadcast_to(v.err, self.shape).copy())
        if op == "constant":
            if is_float(t):
                data = np.full(self.shape, float(bits_to_float(np.array([node["bits"]]), t)[0]))
            else:
                data = np.full(self.shape, node["bits"], dtype=object)
            return Val(data, zeros)
        args = [self.value(k) for k in node["args"]]
        exact = self.shaped(self.exact(node, [a.data for a in args]), t)
        errs = [a.err for a in args]
        if all(not np.any(e) for e in errs) and op not in self.UNSPECIFIED:
            return Val(exact, self.own_error(node, [a.data for a in args], exact))
        return Val(exact, self.propagate(node, args, exact))

    UNSPECIFIED = {"maxnumf", "minnumf", "copysign"} | set(TRANSCENDENTAL_ULPS) | {
        "exp2", "log10", "rsqrt", "cbrt", "tan", "sinh", "cosh", "asin", "acos", "asinh",
        "acosh", "atanh", "erfc", "powf", "atan2"}

    def shaped(self, x: Any, t: str) -> np.ndarray:
        """A result as an array of the output shape (NumPy returns scalars for 0-D operands)."""
        dtype = np.float64 if is_float(t) else object
        return np.broadcast_to(np.asarray(x, dtype=dtype), self.shape).copy()

    def exact(self, node: dict[str, Any], xs: list[np.ndarray]) -> np.ndarray:
        """The op's result on exact operands: rounded to the declared type once."""
        op, t = node["op"], node["type"]
        with np.errstate(all="ignore"):
            if op in EXACT_FLOAT:
                return round_array(EXACT_FLOAT[op](*xs), t)
            if op == "fma":
                return fma_exact(*xs, t)
            if op in NUMPY_MATH:
                return round_array(libm_eval(op, *xs), t)
            if op == "select":
                return np.where(xs[0].astype(bool), xs[1], xs[2])
            if op in ("extf", "truncf"):
                return round_array(xs[0], t)
            if op in ("sitofp", "uitofp"):
                return int_to_float(xs[0], INTS[node["from"]], op == "sitofp", t)
            if op in ("fptosi", "fptoui"):
                src = node["from"]
                lo, hi = fptoint_bounds(src, t, op == "fptosi")
                x = np.where(np.isnan(xs[0]), 0.0, xs[0])
                x = np.minimum(np.maximum(x, lo), hi)
                return wrap(np.array([int(v) for v in np.trunc(x).ravel()],
                                     dtype=object).reshape(x.shape), INTS[t])
            if op == "bitcast" and is_float(node["from"]):
                # the printed guard: bitcast, then any NaN pattern → the canonical NaN's, with
                # integer ops (whatever NaN pattern `float_bits` gives here, the guard replaces it)
                return nan_guard_bits(float_bits(xs[0], node["from"]).astype(object),
                                      node["from"])
            if op == "bitcast":
                # the printed guard: a NaN pattern → the canonical quiet NaN's, then bitcast
                bits = nan_guard_bits(xs[0], t)
                return bits_to_float(bits.astype(np.uint64), t)
            if op in ("extsi", "extui", "trunci"):
                src = INTS[node["from"]]
                v = to_signed(xs[0], src) if op == "extsi" else xs[0]
                return wrap(v, INTS[t])
            if op == "cmpf":
                return cmpf(node["pred"], xs[0], xs[1])
            if op == "cmpi":
                return cmpi(node["pred"], xs[0], xs[1], INTS[node["from"]])
            if op in ("isnan", "isinf", "isfinite", "isnormal"):
                return classify(op, xs[0], node["from"])
            if op in ("absi", "ctlz", "cttz", "ctpop"):
                return int_unary(op, xs[0], INTS[t])
            return int_binary(op, xs[0], xs[1], INTS[t])

    def own_error(self, node: dict[str, Any], xs: list[np.ndarray], r: np.ndarray) -> np.ndarray:
        """The error an op adds on exact operands: 0 for correctly rounded ops; the ulp bound
        for a transcendental; inf where MLIR leaves the result unspecified."""
        op, t = node["op"], node["type"]
        err = np.zeros(self.shape)
        if op in ("maxnumf", "minnumf"):
            # LLVM's maxnum/minnum may return either zero for (+0, −0)
            a, b = xs
            return np.where((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b)), np.inf, err)
        if op == "copysign":
            return np.where(np.isnan(xs[1]), np.inf, err)  # a NaN's sign is unspecified
        if op in NUMPY_MATH:
            bound = transcendental_ulps(op, t)
            with np.errstate(all="ignore"):
                unrounded = libm_eval(op, *xs)
                rel = bound * ulp(r, t) / np.abs(r)
            special = ~np.isfinite(r) | (r == 0)
            # special values are exact (docs/compiler.md); a result that underflowed to zero
            # from a nonzero value may be the smallest subnormal instead: a tiny marker bound
            rel = np.where(special, np.where((r == 0) & (unrounded != 0), 1e-300, 0.0), rel)
            return rel
        return err

    def propagate(self, node: dict[str, Any], args: list[Val], exact: np.ndarray) -> np.ndarray:
        """First-order error propagation: the op at the corners of its operands' intervals."""
        op, t = node["op"], node["type"]
        xs = [a.data for a in args]
        errs = [a.err for a in args]
        own = self.own_error(node, xs, exact)
        unknown = np.zeros(self.shape, bool)
        for x, e in zip(xs, errs):
            unknown |= ~np.isfinite(e) | (e > UNKNOWN_ABOVE)
            if x.dtype != object:
                unknown |= (e > 0) & ((x == 0) | ~np.isfinite(x))
        if op == "select":
            c, a, b = args
            chosen = np.where(xs[0].astype(bool), a.err, b.err)
            same = (a.err == 0) & (b.err == 0) & _same_value(a.data, b.data, t)
            err = np.where(c.err > 0, np.where(same, 0.0, np.inf), chosen)
            return np.maximum(err, own)
        if not is_float(t) or op in DISCRETE_FLOAT or not all(
                x.dtype != object for x in xs):
            # a discrete result: determined only if every corner gives it
            spread = np.zeros(self.shape, bool)
            for corner in self.corners(xs, errs):
                spread |= ~_same_value(self.shaped(self.exact(node, corner), t), exact, t if is_float(t) else None)
            return np.where(unknown | spread, np.inf, own)
        with np.errstate(all="ignore"):
            center = np.asarray(self.raw(node, xs), dtype=np.float64)
            worst = np.zeros(self.shape)
            for corner in self.corners(xs, errs):
                v = np.asarray(self.raw(node, corner), dtype=np.float64)
                worst = np.maximum(worst, np.abs(v - center) / np.abs(center))
            worst = np.where(np.isnan(center) | (center == 0), np.where(worst > 0, np.inf, 0),
                             worst)
            rounding = np.where(np.isfinite(exact) & (exact != 0),
                                0.5 * ulp(exact, t) / np.abs(exact), 0.0)
            err = worst + np.maximum(own, rounding)
        return np.where(unknown | np.isnan(err), np.inf, err)

    def raw(self, node: dict[str, Any], xs: list[np.ndarray]) -> np.ndarray:
        """The op in float64 without rounding to its type (for error propagation)."""
        op = node["op"]
        if op in EXACT_FLOAT:
            return EXACT_FLOAT[op](*xs)
        if op == "fma":
            return xs[0] * xs[1] + xs[2]
        if op in NUMPY_MATH:
            return np.asarray(NUMPY_MATH[op](*xs), dtype=np.float64)
        return xs[0]  # extf, truncf: the value itself

    @staticmethod
    def corners(xs: list[np.ndarray], errs: list[np.ndarray]):
        """Operand tuples at the ends of each float operand's error interval."""
        import itertools
        choices = []
        for x, e in zip(xs, errs):
            if x.dtype == object or not np.any(e):
                choices.append([x])
            else:
                e = np.where(np.isfinite(e), e, 0.0)
                choices.append([x * (1 - e), x * (1 + e)])
        for combo in itertools.product(*choices):
            yield list(combo)


def _same_value(a: np.ndarray, b: np.ndarray, t: Optional[str]) -> np.ndarray:
    if t is None or a.dtype == object:
        return np.asarray(a == b, dtype=bool)
    return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))


# ----------------------------------------------------------------------------- programs

@dataclass
class Expected:
    """The reference for one output: values in the output's type (float64 or unsigned patterns),
    and per element either a relative error bound (`rel`, map outputs: 0 = bit for bit, inf =
    not compared) or an absolute tolerance (`atol`, model ops: 0 = bit for bit)."""
    values: np.ndarray
    rel: Optional[np.ndarray] = None
    atol: Optional[np.ndarray] = None
    what: str = ""


def input_values(entry: dict[str, Any]) -> np.ndarray:
    """An INPUT as evaluator values: float64, or unsigned patterns (object)."""
    a = decode_input(entry)
    if is_float(entry["type"]):
        return a.astype(np.float64)
    return int_patterns(a, entry["type"])


def evaluate(case: dict[str, Any]) -> dict[str, Expected]:
    """The expected value of every output argument of a case."""
    program = case["program"]
    args = {a["name"]: a for a in program["args"]}
    env = {name: input_values(v) for name, v in case["inputs"].items()}
    expected: dict[str, Expected] = {}
    for op in program["ops"]:
        fn = OPS[op["op"]]
        expected.update(fn(op, args, env))
    return expected


def eval_map(op: dict[str, Any], args: dict[str, Any], env: dict[str, np.ndarray]
             ) -> dict[str, Expected]:
    shape = tuple(args[op["outs"][0]]["shape"])
    inputs = []
    for name in op["ins"]:
        data = env[name]
        inputs.append(Val(data, np.zeros(np.shape(data))))
    ev = MapEvaluator(op["body"], inputs, shape)
    out = {}
    for name, y in zip(op["outs"], op["yields"]):
        v = ev.value(y)
        out[name] = Expected(v.data, rel=v.err, what="tile.map")
    return out


def f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def fma_f32(x: np.ndarray, y: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """fma(x, y, acc) of f32 arrays, one rounding to f32: the product is exact in f64; the sum
    is rounded to odd in f64 (its TwoSum error decides the last bit), which rounds to f32
    exactly as the infinitely precise sum would (53 >= 24 + 2 bits)."""
    p = x.astype(np.float64) * y.astype(np.float64)
    c = acc.astype(np.float64)
    s = p + c
    t = s - p
    error = (p - (s - t)) + (c - t)
    even = (s.view(np.int64) & 1) == 0
    nudge = np.isfinite(s) & (error != 0) & even
    s = np.where(nudge, np.nextafter(s, np.where(error > 0, np.inf, -np.inf)), s)
    return s.astype(np.float32)


def eval_reduce(op: dict[str, Any], args: dict[str, Any], env: dict[str, np.ndarray]
                ) -> dict[str, Expected]:
    """tile.reduce: argmax/argmin/max/min exactly; sum/mean/prod within γ_n·Σ|x| (f32)."""
    x = env[op["in"]]
    axis, kind = op["axis"], op["kind"]
    t_out = args[op["out"]]["type"]
    out_shape = tuple(args[op["out"]]["shape"])
    xm = np.moveaxis(x, axis, -1)
    n = xm.shape[-1]
    rows = xm.reshape(int(np.prod(xm.shape[:-1])), n)
    vals = np.zeros(rows.shape[0])
    atol = np.zeros(rows.shape[0])
    for i, row in enumerate(rows):
        vals[i], atol[i] = reduce_row(kind, row, t_out)
    if kind.startswith("arg"):
        ivals = wrap(np.array([int(v) for v in vals], dtype=object), INTS[t_out])
        return {op["out"]: Expected(ivals.reshape(out_shape), atol=np.zeros(out_shape),
                                    what=f"tile.reduce {kind}")}
    return {op["out"]: Expected(vals.reshape(out_shape), atol=atol.reshape(out_shape),
                                what=f"tile.reduce {kind}")}


def reduce_row(kind: str, row: np.ndarray, t_out: str) -> tuple[float, float]:
    n = row.size
    with np.errstate(all="ignore"):
        if kind in ("argmax", "argmin"):
            if n == 0:
                return -1, 0.0
            nan = np.flatnonzero(np.isnan(row))
            if nan.size:
                return int(nan[0]), 0.0
            return int(np.argmax(row) if kind == "argmax" else np.argmin(row)), 0.0
        if kind in ("max", "min"):
            if n == 0:
                return (-np.inf if kind == "max" else np.inf), 0.0
            acc = row[0]
            fold = _maximum if kind == "max" else _minimum
            for v in row[1:]:
                acc = float(fold(np.array(acc), np.array(v)))
            return float(round_array(np.array([acc]), t_out)[0]), 0.0
        # accumulating kinds: the f32 accumulation's worst case over any order
        if kind == "prod":
            if n == 0:
                return 1.0, 0.0
            ref = float(np.prod(row))
            bound = (n + 1) * U32 * abs(ref) if np.all(np.isfinite(row)) and np.all(row != 0) \
                else 0.0
        else:
            if n == 0:
                return (0.0 if kind == "sum" else np.nan), 0.0
            if not np.all(np.isfinite(row)):
                ref = float(np.sum(row))
                bound = 0.0
            else:
                ref = math.fsum(row.tolist())
                bound = n * U32 * float(np.sum(np.abs(row))) * 1.01
            if kind == "mean":
                # a row with ±inf/NaN: exact (its bound was U32·|inf| = inf or NaN: not compared)
                ref, bound = ref / n, (bound / n + U32 * abs(ref / n)) if math.isfinite(ref) \
                    else 0.0
            finite = row[np.isfinite(row)]
            if not np.any(np.isnan(row)) and \
                    float(np.sum(np.abs(finite))) > FLOATS["f32"].max_finite:
                # the f32 partial sums of the finite values may overflow, depending on the
                # order: a sum of finite values may be ±inf (seed 560000189: 9 values up to
                # 3.4e38), and with an infinity of the other sign in the row, NaN (seed
                # 610000103: max + max overflowing, then + −inf). A NaN in the row stays exact.
                r = float(round_array(np.array([ref]), t_out)[0])
                return r, np.inf
        r = float(round_array(np.array([ref]), t_out)[0])
        if bound or np.isfinite(r):
            bound += float(ulp(np.array([r]), t_out)[0]) if bound else 0.0
        if not np.isfinite(r) and np.isfinite(ref):
            bound = np.inf  # overflow at the edge of the range: not compared
        return r, bound


def eval_softmax(op: dict[str, Any], args: dict[str, Any], env: dict[str, np.ndarray]
                 ) -> dict[str, Expected]:
    """tile.softmax within (n + 8)·u + |x − max|·u relative (f32), plus the output rounding."""
    x = env[op["in"]]
    t = args[op["out"]]["type"]
    with np.errstate(all="ignore"):
        m = np.max(x, axis=-1, keepdims=True) if x.shape[-1] else x
        e = np.exp(x - m)
        s = np.sum(e, axis=-1, keepdims=True)
        y = e / s
        n = x.shape[-1]
        rel = (n + 8) * U32 + np.abs(x - m) * U32 * 2
        r = round_array(y, t)
        atol = rel * np.abs(y) + ulp(r, t) + FLOATS["f32"].min_normal
        atol = np.where(np.isfinite(y), atol, 0.0)
    return {op["out"]: Expected(r, atol=atol, what="tile.softmax")}


def eval_norm(op: dict[str, Any], args: dict[str, Any], env: dict[str, np.ndarray]
              ) -> dict[str, Expected]:
    """tile.norm: residual_out bit for bit (s rounded to its type); y within a bound that covers
    the f32 statistics' rounding (mean, variance by a second pass, 1/√)."""
    x = env[op["in"]]
    t_in = args[op["in"]]["type"]
    n = x.shape[-1]
    out: dict[str, Expected] = {}
    with np.errstate(all="ignore"):
        s = x
        if op["residual"]:
            s = round_array(x + env[op["residual"]], "f32")
            if op["residual_out"]:
                ro = round_array(s, t_in)
                out[op["residual_out"]] = Expected(ro, atol=np.zeros(ro.shape),
                                                   what="tile.norm residual_out")
        eps = 1e-5 if op["eps"] is None else op["eps"]
        eps32 = float(round_array(np.array([eps]), "f32")[0])
        w = env[op["weight"]] if op["weight"] else np.ones(n)
        b = env[op["bias"]] if op["bias"] else np.zeros(n)
        if op["kind"] == "layer":
            mean = np.mean(s, axis=-1, keepdims=True) if n else s
            c = s - mean
            var = np.mean(c * c, axis=-1, keepdims=True) if n else s
            inv = 1.0 / np.sqrt(var + eps32)
            yn = c * inv
            # a mean error δ ≈ n·u·mean|s| moves every (s − mean) by δ
            delta = (n + 4) * U32 * (np.mean(np.abs(s), axis=-1, keepdims=True) if n else s)
            err_n = (delta + (n + 8) * U32 * np.abs(c)) * inv + 4 * (n + 8) * U32 * np.abs(yn)
        else:
            ms = np.mean(s * s, axis=-1, keepdims=True) if n else s
            inv = 1.0 / np.sqrt(ms + eps32)
            yn = s * inv
            err_n = 4 * (n + 8) * U32 * np.abs(yn)
        y = yn * w + b
        t_out = args[op["out"]]["type"]
        r = round_array(y, t_out)
        atol = err_n * np.abs(w) + 4 * U32 * (np.abs(yn * w) + np.abs(b)) + ulp(r, t_out)
        atol = np.where(np.isfinite(y), atol, 0.0)
    out[op["out"]] = Expected(r, atol=atol, what=f"tile.norm {op['kind']}")
    return out


def tf32_round(x: np.ndarray) -> np.ndarray:
    """f32 values to the TF32 precision (10 explicit significand bits, f32's exponent range);
    a value that rounds past TF32's largest finite becomes ±inf."""
    r = _round_bits(x, 11)
    tf32_max = (2 - 2.0 ** -10) * 2.0 ** 127
    return np.where(np.abs(r) > tf32_max, np.copysign(np.inf, x), r)


def _round_bits(x: np.ndarray, p: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)
        q = np.maximum(e.astype(np.int64) - 1, -126) - (p - 1)
        finite = np.isfinite(x) & (x != 0)
        q = np.where(finite, q, 0)
        return np.where(finite, np.ldexp(np.rint(np.ldexp(x, -q)), q), x)


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + NUMPY_MATH["erf"](x / math.sqrt(2.0)))


def eval_matmul(op: dict[str, Any], args: dict[str, Any], env: dict[str, np.ndarray]
                ) -> dict[str, Expected]:
    """tile.matmul. Policies f32 and fma, fp8 operands (exact in f32) and f64 operands (in f64)
    with activation none/relu: bit for bit (each product rounded to the accumulator and summed
    in ascending K from +0 — under fma each step one rounding — then + bias, activation,
    conversion: the documented order). tf32 / f16
    policies and gelu/silu: within K·u_acc·Σ|a·b| plus the activation's and output's rounding.
    i8 operands: the exact sums, wrapped to i32."""
    a, b = env[op["a"]], env[op["b"]]
    if op["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if op["transpose_b"]:
        b = np.swapaxes(b, -1, -2)
    c_arg = args[op["c"]]
    t_c = c_arg["type"]
    shape = tuple(c_arg["shape"])
    batch = shape[:-2]
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    k = a.shape[-1]
    policy = op["policy"]
    if policy == "i8":
        sums = np.matmul(to_signed(a, 8).astype(np.int64), to_signed(b, 8).astype(np.int64))
        sums = np.broadcast_to(sums, shape)
        return {op["c"]: Expected(wrap(sums.astype(object), 32), atol=np.zeros(shape),
                                  what="tile.matmul i8")}
    acc_type = "f64" if policy == "f64" else "f32"  # the accumulator of the exact paths
    bias = env[op["bias"]] if op["bias"] else None
    with np.errstate(all="ignore"):
        if policy == "tf32":
            a, b = tf32_round(a), tf32_round(b)
        exact_path = policy in ("f32", "fma", "fp8", "f64")
        if exact_path:
            cast = np.asarray if acc_type == "f64" else f32
            acc = np.zeros(shape, dtype=np.float64 if acc_type == "f64" else np.float32)
            a32, b32 = cast(a), cast(b)
            for kk in range(k):
                if policy == "fma":
                    acc = fma_f32(a32[..., :, kk:kk + 1], b32[..., kk:kk + 1, :], acc)
                else:
                    acc = acc + a32[..., :, kk:kk + 1] * b32[..., kk:kk + 1, :]
            z = acc
            if bias is not None:
                z = z + cast(bias)
            z = z.astype(np.float64)
        else:
            z = np.matmul(a, b) if k else np.zeros(shape)
            if bias is not None:
                z = z + bias
        mag = (np.matmul(np.abs(a), np.abs(b)) if k else np.zeros(shape)) + (
            np.abs(bias) if bias is not None else 0.0)
        u_acc = {"f32": U32, "fma": U32, "tf32": U32, "f16": 2.0 ** -11, "fp8": U32,
                 "f64": 2.0 ** -53}[policy]
        u_epilogue = 2.0 ** -53 if acc_type == "f64" else U32
        atol = 0.0 if exact_path else (k + 2) * u_acc * mag * 1.01
        if policy == "tf32":
            # docs/ir.md does not say how f32 rounds to TF32 (nearest-even or, as cvt.rna,
            # nearest-away): allow either rounding of each input, 2 TF32 ulps per product
            atol = atol + 2.0 ** -9 * mag
        if policy == "f16":
            atol = atol + (k + 2) * FLOATS["f16"].min_subnormal  # f16 partial sums underflow
        acc_max = FLOATS["f16" if policy == "f16" else "f32"].max_finite
        # partial sums may overflow the accumulator where Σ|a·b| does: not determined
        overflow = (mag > acc_max) if not exact_path else np.zeros(shape, bool)
        act = op["activation"]
        unknown = np.zeros(shape, bool)
        if act == "relu":
            unknown = np.isnan(z) | (z == 0)  # relu(NaN), relu(−0): either form is reasonable
            y = np.where(z > 0, z, 0.0)
        elif act == "gelu":
            y = gelu(z)
            atol = atol + 16 * u_epilogue * (np.abs(z) + np.abs(y)) + FLOATS[acc_type].min_normal
        elif act == "silu":
            y = z / (1.0 + np.exp(-z))
            atol = atol + 16 * u_epilogue * (np.abs(z) + np.abs(y)) + FLOATS[acc_type].min_normal
        else:
            y = z
        if act in ("gelu", "silu") and not exact_path:
            atol = atol * 2
        r = round_array(round_array(y, acc_type), t_c) if exact_path and act in ("none", "relu") \
            else round_array(y, t_c)
        atol = np.broadcast_to(atol, shape)
        if not (exact_path and act in ("none", "relu")):
            atol = atol + ulp(r, t_c)
            atol = np.where(np.isfinite(r), atol, np.where(np.isnan(r), 0.0, np.inf))
        atol = np.where(unknown | overflow, np.inf, atol)
    return {op["c"]: Expected(r, atol=atol, what=f"tile.matmul {policy} {act}")}


def dropout_keeps(rule: str, seed: int, p: float, counter: np.ndarray) -> np.ndarray:
    """docs/ir.md's keep rules over position counters ((b·H + h)·Sq + i)·Sk + j (uint64): the
    rule's 32-bit hash >= p·2^32."""
    m64 = (1 << 64) - 1
    threshold = int(p * 4294967296.0)
    out = np.zeros(counter.shape, dtype=bool)
    for index, c in np.ndenumerate(counter):
        c = int(c)
        if rule == "lcg":
            h = (c * 1664525 + seed + 1013904223) & 0xFFFFFFFF
        else:
            golden = 0x9E3779B97F4A7C15
            z = ((c ^ ((seed * golden) & m64)) + golden) & m64
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m64
            z ^= z >> 31
            h = z >> 32
        out[index] = h >= threshold
    return out


def visible_range(i: int, length: int, sq: int, op: dict[str, Any]) -> tuple[int, int]:
    """The keys [first, end) query i sees (docs/ir.md, tile.attention)."""
    position = i if op.get("aligned") == "top_left" else i + length - sq
    end = length
    left, right = op["window"] if op.get("window") else (-1, -1)
    if op["causal"]:
        end = min(end, position + 1)
    if right >= 0:
        end = min(end, position + right + 1)
    end = min(max(end, 0), length)
    first = max(0, position - left) if left >= 0 else 0
    return min(first, end), end


def eval_attention(op: dict[str, Any], args: dict[str, Any], env: dict[str, np.ndarray]
                   ) -> dict[str, Expected]:
    """tile.attention within a bound for the f32 scores (D·u·scale·Σ|q·k|, the bias's and the
    soft cap's roundings), the online softmax's sums and the weighted sum of V (scaled by
    1/(1 − p) under dropout, whose kept set is the rule's, exactly); lse within the score and
    sum errors. A query that sees no key gives exact zeros and -inf (or NaN in both)."""
    q, k, v = env[op["q"]], env[op["k"]], env[op["v"]]
    bsz, h, sq, d = q.shape
    hkv, sk, dv = k.shape[1], k.shape[2], v.shape[3]
    t = args[op["o"]]["type"]
    scale = op["scale"] if op["scale"] is not None else (1.0 / math.sqrt(d) if d else 1.0)
    scale = float(round_array(np.array([scale]), "f32")[0])
    lengths = (to_signed(env[op["key_lengths"]], INTS[args[op["key_lengths"]]["type"]])
               if op["key_lengths"] else [sk] * bsz)
    bias = env[op["bias"]] if op.get("bias") else None
    cap = float(round_array(np.array([op["softcap"]]), "f32")[0]) if op.get("softcap") else 0.0
    drop = op.get("dropout")
    p_drop = float(np.float32(drop[0])) if drop else 0.0
    inverse = float(np.float32(1.0 / (1.0 - p_drop))) if drop else 1.0
    nan_rows = op.get("empty_rows") == "nan"
    out = np.zeros((bsz, h, sq, dv))
    atol = np.zeros((bsz, h, sq, dv))
    lse = np.full((bsz, h, sq), np.nan if nan_rows else -np.inf)
    lse_atol = np.zeros((bsz, h, sq))
    group = h // hkv
    with np.errstate(all="ignore"):
        for bi in range(bsz):
            length = min(max(int(lengths[bi]), 0), sk)
            for hi in range(h):
                g = hi // group
                kk, vv = k[bi, g], v[bi, g]
                for i in range(sq):
                    first, end = visible_range(i, length, sq, op)
                    if first == end:
                        if nan_rows:
                            out[bi, hi, i] = np.nan
                        continue
                    qs = q[bi, hi, i]
                    keys = kk[first:end]
                    s = scale * (keys @ qs)
                    serr = (d + 2) * U32 * scale * (np.abs(keys) @ np.abs(qs)) + U32 * np.abs(s)
                    if bias is not None:
                        s = s + bias[min(bi, bias.shape[0] - 1), min(hi, bias.shape[1] - 1), i,
                                     first:end]
                        serr = serr + U32 * np.abs(s)
                    if cap > 0:
                        s = cap * np.tanh(s / cap)
                        serr = serr + 8 * U32 * (np.abs(s) + 1)
                    m = s.max()
                    p = np.exp(s - m)
                    weights = p
                    if drop and p_drop > 0:
                        counter = ((np.uint64(bi) * np.uint64(h) + np.uint64(hi)) * np.uint64(sq)
                                   + np.uint64(i)) * np.uint64(sk) + np.arange(
                                       first, end, dtype=np.uint64)
                        weights = np.where(dropout_keeps(drop[2] or "mix", drop[1], p_drop,
                                                         counter), p * inverse, 0.0)
                    o = (weights @ vv[first:end]) / p.sum()
                    vmax = np.abs(vv[first:end]).max(axis=0) * inverse
                    out[bi, hi, i] = o
                    visible = end - first
                    atol[bi, hi, i] = vmax * (4 * serr.max() + (visible + d + 16) * U32 * 4)
                    lse[bi, hi, i] = m + math.log(p.sum())
                    lse_atol[bi, hi, i] = (2 * serr.max() + (visible + 16) * U32 +
                                           4 * U32 * abs(lse[bi, hi, i]))
        r = round_array(out, t)
        atol = atol + ulp(r, t)
        atol = np.where(np.isfinite(r), atol, np.where(np.isnan(r), 0.0, np.inf))
        result = {op["o"]: Expected(r, atol=atol, what="tile.attention")}
        if op.get("lse"):
            lse_atol = np.where(np.isfinite(lse), lse_atol + ulp(lse, "f32"), 0.0)
            result[op["lse"]] = Expected(lse, atol=lse_atol, what="tile.attention lse")
    return result


def eval_rope(op: dict[str, Any], args: dict[str, Any], env: dict[str, np.ndarray]
              ) -> dict[str, Expected]:
    """tile.rope bit for bit: products rounded to f32, then the f32 sum, then the output type."""
    x, c, s = f32(env[op["in"]]), f32(env[op["cos"]]), f32(env[op["sin"]])
    d = x.shape[-1]
    half = d // 2
    with np.errstate(all="ignore"):
        if op["mode"] == "half":
            x1, x2 = x[..., :half], x[..., half:]
        else:
            x1, x2 = x[..., 0::2], x[..., 1::2]
        y1 = x1 * c - x2 * s
        y2 = x2 * c + x1 * s
        y = np.empty_like(x)
        if op["mode"] == "half":
            y[..., :half], y[..., half:] = y1, y2
        else:
            y[..., 0::2], y[..., 1::2] = y1, y2
    r = round_array(y.astype(np.float64), args[op["out"]]["type"])
    return {op["out"]: Expected(r, atol=np.zeros(r.shape), what=f"tile.rope {op['mode']}")}


OPS = {"map": eval_map, "reduce": eval_reduce, "softmax": eval_softmax, "norm": eval_norm,
       "matmul": eval_matmul, "attention": eval_attention, "rope": eval_rope}
