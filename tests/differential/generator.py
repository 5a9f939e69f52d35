"""Random, well-typed Tessera IR programs from a seed, as a JSON-serialisable model, their
inputs, and a printer to MLIR text.

A *case* is `{"program": PROGRAM, "inputs": {name: INPUT}}`:

* PROGRAM: `{"entry": "f", "args": [ARG...], "ops": [OP...]}`; an ARG is
  `{"name", "type", "shape": [sizes] or null for a scalar, "dynamic": [bool per axis], "role":
  "in" | "out"}` (`shape` holds the run-time sizes; a dynamic axis prints as `?`).
* OP: `{"op": "map", "ins": [names], "outs": [names], "body": [NODE...], "yields": [node ids]}`,
  or one of `reduce`, `softmax`, `norm`, `matmul`, `attention`, `rope` with their operands named
  and attributes as in docs/ir.md.
* NODE (a `tile.map` body, in order; operands are earlier node ids): `{"op": "arg", "index": i,
  "type"}`, `{"op": "constant", "type", "bits": pattern}`, or an arith/math op `{"op": "addf",
  "type", "args": [ids]}` (plus `"pred"` for compares, `"from"` for casts).
* INPUT: `{"type", "shape", "hex"}`: the little-endian bytes of the value, exactly.

Every program has defined semantics. Ops that MLIR leaves undefined on some inputs are printed
with a guard that the model implies (the evaluator computes the guarded semantics):
shift amounts are masked to the width (`andi` with width−1), `fptosi`/`fptoui` operands have a
NaN replaced by 0 and are clamped to the integer type's range (a float-side guard: it needs only
"is NaN", never a NaN's bits), and both bitcasts between a float and an integer canonicalize NaN
**on the integer side**: the integer pattern i (the bitcast's result, or its operand) is tested
with integer ops, `(i & exp_mask) == exp_mask && (i & mantissa_mask) != 0`, and replaced by the
canonical quiet NaN's pattern (`nan_guard_bits`). A float-side guard `select(cmpf uno(v, v),
NaN, v)` would not do: NaN payloads are unspecified in MLIR's and LLVM's float semantics, so
LLVM may fold it away (`select(x < 0, NaN, sqrt x)` → `sqrt x`); no float fold touches integer
ops. So a float bitcast to an integer gives the canonical NaN's pattern for any NaN, and an
integer bitcast to a float never gives a signalling NaN (none reaches maxnumf/minnumf).
"""
from __future__ import annotations

import random
from typing import Any, Optional

import numpy as np

from floats import (FLOATS, FP8, INTS, float_bits, int_range, int_storage, is_float, largest_below,
                    round_array, smallest_above, wrap)

Program = dict[str, Any]
Case = dict[str, Any]

FLOAT_TYPES = ["f16", "bf16", "f32", "f64"]
INT_TYPES = ["i1", "i8", "i16", "i32", "i64"]
STORAGE = ["f32", "f16", "bf16"]

# Float ops by family. Correctly rounded (or exact) ones must agree bit for bit.
FLOAT_UNARY_EXACT = ["negf", "absf", "sqrt", "floor", "ceil", "round", "roundeven", "trunc"]
# Transcendental: compared within an ulp bound (evaluator.TRANSCENDENTAL_ULPS).
FLOAT_UNARY_MATH = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "erf",
                    "sin", "cos", "atan", "rsqrt", "cbrt", "tan", "sinh", "cosh", "asin", "acos",
                    "asinh", "acosh", "atanh", "erfc"]
FLOAT_BINARY_EXACT = ["addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf",
                      "minnumf", "copysign"]
FLOAT_BINARY_MATH = ["powf", "atan2"]
INT_BINARY = ["addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "ceildivsi",
              "ceildivui", "floordivsi", "maxsi", "minsi", "maxui", "minui", "andi", "ori", "xori",
              "shli", "shrsi", "shrui"]
INT_UNARY = ["absi", "ctlz", "cttz", "ctpop"]
CMPF_PREDICATES = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
                   "ult", "ule", "une", "uno", "true"]
CMPI_PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
FLOAT_CLASSIFY = ["isnan", "isinf", "isfinite", "isnormal"]
MATH_OPS = set(FLOAT_UNARY_MATH + FLOAT_BINARY_MATH + INT_UNARY + FLOAT_CLASSIFY +
               ["absf", "sqrt", "floor", "ceil", "round", "roundeven", "trunc", "fma", "copysign"])
REDUCE_KINDS = ["sum", "mean", "max", "min", "prod", "argmax", "argmin"]
SIZES = [0, 1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 32, 33, 40, 64, 65]


def float_specials(t: str) -> list[float]:
    """Values every float type should see: zeros, infinities, NaN, extremes, subnormals."""
    f = FLOATS[t]
    return [0.0, -0.0, np.inf, -np.inf, np.nan, f.max_finite, -f.max_finite, f.min_normal,
            -f.min_normal, f.min_subnormal, -f.min_subnormal, 3 * f.min_subnormal, 1.0, -1.0,
            0.5, 2.0, -2.5, 3.0, 127.0, -128.0, 255.0, 65504.0 if t != "f16" else 2048.0]


def int_specials(t: str) -> list[int]:
    lo, hi = int_range(t, True)
    return [0, 1, -1, lo, hi, lo + 1, hi - 1, 2, 7, -8, 31, 63, 64, 255, 256, 1 << (INTS[t] // 2)]


def memref_type(arg: dict[str, Any]) -> str:
    if arg["shape"] is None:
        return arg["type"]
    dims = ["?" if d else str(s) for s, d in zip(arg["shape"], arg["dynamic"])]
    return "memref<" + "".join(d + "x" for d in dims) + arg["type"] + ">"


# ----------------------------------------------------------------------------- inputs

def draw_floats(t: str, shape: tuple[int, ...], rng: np.random.Generator, dist: str) -> np.ndarray:
    """float64 values, exactly representable in `t`, for an input of the given distribution:
    `general` (wide magnitudes and special values), `normal`, `unit` (near 1: products), `small`
    (|x| <= 4, for attention scores), `table` (cos/sin-like)."""
    n = int(np.prod(shape)) if shape else 1
    f = FLOATS[t]
    if t in FP8:  # every code (NaN, E5M2's infinities, subnormals) or values rounded by ml_dtypes
        v = draw_floats("f32", shape, rng, "normal" if dist == "general" else dist).ravel()
        codes = rng.integers(0, 256, n).astype(np.uint8).view(f.dtype).astype(np.float64)
        share = 0.7 if dist == "general" else 0.0
        v = np.where(rng.random(n) < share, codes, v.astype(f.dtype).astype(np.float64))
        return v.reshape(shape)
    if dist == "general":
        mags = rng.choice([0, 0, 1, 2, 4, 8, 16, 30], size=n)
        base = rng.standard_normal(n) * np.exp2(rng.integers(-8, 8, n)) * np.exp2(
            rng.integers(-1, 2, n) * mags)
        v = np.where(rng.random(n) < 0.3, np.round(base * 4) / 4, base)
        p_special = rng.choice([0.0, 0.05, 0.2])
        specials = np.array(float_specials(t))
        v = np.where(rng.random(n) < p_special, specials[rng.integers(0, len(specials), n)], v)
    elif dist == "normal":
        v = rng.standard_normal(n) * rng.choice([0.5, 1.0, 3.0]) + rng.choice([0.0, 0.0, 2.0])
    elif dist == "unit":
        v = rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)
    elif dist == "small":
        v = rng.uniform(-2.0, 2.0, n)
    elif dist == "table":
        v = np.cos(rng.uniform(-4, 4, n))
    else:
        raise ValueError(dist)
    v = round_array(np.clip(v, -f.max_finite * 2, f.max_finite * 2), t)
    return v.reshape(shape)


def draw_ints(t: str, shape: tuple[int, ...], rng: np.random.Generator, dist: str) -> np.ndarray:
    """Unsigned patterns (object array) for integer type `t`; `lengths:LO:HI` draws in [LO, HI]."""
    n = int(np.prod(shape)) if shape else 1
    bits = INTS[t]
    if dist.startswith("lengths:"):
        lo, hi = (int(x) for x in dist.split(":")[1:])
        vals = [int(x) for x in rng.integers(lo, hi + 1, n)]
    else:
        specials = int_specials(t)
        vals = []
        for _ in range(n):
            r = rng.random()
            if r < 0.25:
                vals.append(specials[int(rng.integers(0, len(specials)))])
            elif r < 0.6:
                vals.append(int(rng.integers(-20, 21)))
            else:
                vals.append(int(rng.integers(0, 1 << min(bits, 62))) *
                            (1 << max(0, bits - 62)) + int(rng.integers(0, 4)))
    return wrap(np.array(vals, dtype=object), bits).reshape(shape)


def encode_input(t: str, shape: Optional[list[int]], values: np.ndarray) -> dict[str, Any]:
    """Stores a value exactly: the little-endian bytes of its storage array, as hex."""
    storage = float_storage_or_int(t, values)
    # a copy: an INPUT must never share its shape list with the ARG (a shrinker that resizes
    # the argument would otherwise change the stored input's shape under its data)
    return {"type": t, "shape": list(shape) if shape is not None else None,
            "hex": np.ascontiguousarray(storage).tobytes().hex()}


def float_storage_or_int(t: str, values: np.ndarray) -> np.ndarray:
    if is_float(t):
        return np.asarray(values, dtype=np.float64).astype(FLOATS[t].dtype)
    return int_storage(values, t)


def decode_input(entry: dict[str, Any]) -> np.ndarray:
    """The storage array (float16/bfloat16/float32/float64, int8…int64, bool) of an INPUT."""
    t = entry["type"]
    dtype = FLOATS[t].dtype if is_float(t) else np.dtype(
        {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}[t])
    shape = tuple(entry["shape"]) if entry["shape"] is not None else ()
    return np.frombuffer(bytes.fromhex(entry["hex"]), dtype=dtype).reshape(shape).copy()


# ----------------------------------------------------------------------------- programs

class Generator:
    """Draws one case from `random.Random(seed)` (inputs from a NumPy generator of the same
    seed)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.r = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.args: list[dict[str, Any]] = []
        self.dists: dict[str, str] = {}

    # -- helpers
    def new_arg(self, t: str, shape: Optional[list[int]], role: str, dist: str = "general",
                dynamic: Optional[list[bool]] = None) -> str:
        name = f"a{len(self.args)}"
        if shape is not None and dynamic is None:
            dynamic = [self.r.random() < 0.5 for _ in shape]
        # every ARG owns its lists (the shrinker edits shapes in place)
        self.args.append({"name": name, "type": t,
                          "shape": list(shape) if shape is not None else None,
                          "dynamic": list(dynamic) if shape is not None else None, "role": role})
        self.dists[name] = dist
        return name

    def size(self, small: bool = False) -> int:
        s = self.r.choice(SIZES)
        return min(s, 9) if small else s

    def shape(self, rank: int, budget: int = 1500) -> list[int]:
        while True:
            shape = [self.size(small=rank >= 3) for _ in range(rank)]
            if int(np.prod(shape)) <= budget:
                return shape

    # -- the case
    def case(self) -> Case:
        count = self.r.choice([1, 1, 1, 2, 2, 3])
        ops = []
        for _ in range(count):
            kind = self.r.choices(["map", "reduce", "softmax", "norm", "matmul", "attention",
                                   "rope"], weights=[12, 4, 2, 2, 3, 2, 2])[0]
            ops.append(getattr(self, "op_" + kind)())
        program = {"entry": "f", "args": self.args, "ops": ops}
        inputs = {a["name"]: self.draw_input(a) for a in self.args if a["role"] == "in"}
        return {"seed": self.seed, "program": program, "inputs": inputs}

    def draw_input(self, arg: dict[str, Any]) -> dict[str, Any]:
        t, shape = arg["type"], arg["shape"]
        dims = tuple(shape) if shape is not None else ()
        dist = self.dists[arg["name"]]
        values = (draw_floats(t, dims, self.np, dist) if is_float(t)
                  else draw_ints(t, dims, self.np, dist))
        return encode_input(t, shape, values)

    # -- tile.map
    def op_map(self) -> dict[str, Any]:
        rank = self.r.choice([0, 1, 1, 2, 2, 3, 4])
        out_shape = self.shape(rank, budget=800)
        dynamic = [self.r.random() < 0.5 for _ in out_shape]
        n_in = self.r.choice([0, 1, 1, 2, 2, 3, 4])
        n_out = self.r.choice([1, 1, 1, 2])
        ins = []
        for _ in range(n_in):
            t = self.r.choice(FLOAT_TYPES + FLOAT_TYPES + INT_TYPES)
            if self.r.random() < 0.2:
                ins.append(self.new_arg(t, None, "in"))
                continue
            in_rank = self.r.randint(0, rank)
            shape, dyn = [], []
            for k in range(in_rank):
                full = out_shape[rank - in_rank + k]
                if self.r.random() < 0.3:
                    shape.append(1)
                    dyn.append(self.r.random() < 0.3)
                else:
                    shape.append(full)
                    dyn.append(self.r.random() < 0.5)
            ins.append(self.new_arg(t, shape, "in", dynamic=dyn))
        in_types = [self.args_by_name(n)["type"] for n in ins]
        out_types = [self.r.choice(FLOAT_TYPES + FLOAT_TYPES + INT_TYPES) for _ in range(n_out)]
        outs = [self.new_arg(t, list(out_shape), "out", dynamic=list(dynamic)) for t in out_types]
        body = BodyGenerator(self.r, in_types)
        yields = [body.expr(t, self.r.randint(1, 8)) for t in out_types]
        return {"op": "map", "ins": ins, "outs": outs, "body": body.nodes, "yields": yields}

    def args_by_name(self, name: str) -> dict[str, Any]:
        return next(a for a in self.args if a["name"] == name)

    # -- the model ops
    def op_reduce(self) -> dict[str, Any]:
        rank = self.r.randint(1, 3)
        shape = self.shape(rank, budget=2000)
        axis = self.r.randrange(rank)
        kind = self.r.choice(REDUCE_KINDS)
        keepdims = self.r.random() < 0.3
        t_in = self.r.choice(STORAGE)
        t_out = self.r.choice(["i32", "i64"]) if kind.startswith("arg") else self.r.choice(STORAGE)
        dist = "unit" if kind == "prod" else self.r.choice(["general", "normal"])
        x = self.new_arg(t_in, shape, "in", dist)
        out_shape = [1 if k == axis else s for k, s in enumerate(shape)] if keepdims else [
            s for k, s in enumerate(shape) if k != axis]
        y = self.new_arg(t_out, out_shape, "out")
        return {"op": "reduce", "kind": kind, "in": x, "out": y, "axis": axis,
                "keepdims": keepdims}

    def op_softmax(self) -> dict[str, Any]:
        shape = self.shape(self.r.randint(1, 3), budget=2000)
        t = self.r.choice(STORAGE)
        x = self.new_arg(t, shape, "in", self.r.choice(["normal", "normal", "general"]))
        dyn = self.args_by_name(x)["dynamic"]
        y = self.new_arg(t, list(shape), "out", dynamic=[d or self.r.random() < 0.3 for d in dyn])
        return {"op": "softmax", "in": x, "out": y}

    def op_norm(self) -> dict[str, Any]:
        shape = self.shape(self.r.randint(1, 3), budget=2000)
        t = self.r.choice(STORAGE)
        t_out = t if self.r.random() < 0.7 else self.r.choice(STORAGE)
        n = shape[-1]
        x = self.new_arg(t, shape, "in", "normal")
        residual = self.new_arg(t, list(shape), "in", "normal") if self.r.random() < 0.4 else None
        residual_out = (self.new_arg(t, list(shape), "out")
                        if residual and self.r.random() < 0.6 else None)
        weight = self.new_arg(t, [n], "in", "normal") if self.r.random() < 0.6 else None
        bias = self.new_arg(t, [n], "in", "normal") if self.r.random() < 0.5 else None
        y = self.new_arg(t_out, list(shape), "out")
        eps = self.r.choice([None, 1e-5, 1e-6, 0.0, 0.5])
        return {"op": "norm", "kind": self.r.choice(["layer", "rms"]), "in": x, "out": y,
                "weight": weight, "bias": bias, "residual": residual,
                "residual_out": residual_out, "eps": eps}

    def op_matmul(self) -> dict[str, Any]:
        ra, rb = self.r.choice([(2, 2), (2, 2), (3, 3), (3, 2), (2, 3), (4, 3), (3, 4), (4, 4)])
        rc = max(ra, rb)
        batch = [self.size(small=True) for _ in range(rc - 2)]
        m, k, n = self.size(), self.size(), self.size()
        while (int(np.prod(batch)) if batch else 1) * (m * k + k * n + m * n) > 6000:
            m, k, n = max(m // 2, 1), max(k // 2, 0), max(n // 2, 1)
        # the numeric policies of f16/bf16/f32 operands, and the operand types that fix their
        # own accumulation: fp8 (f32), f64 (f64), i8 (i32, no epilogue)
        policy = self.r.choice(["f32", "f32", "tf32", "f16", "fp8", "f64", "i8", "fma"])
        t_ab = {"f32": self.r.choice(STORAGE), "fma": self.r.choice(STORAGE), "tf32": "f32",
                "f16": "f16",
                "fp8": self.r.choice(FP8), "f64": "f64", "i8": "i8"}[policy]
        t_c = {"f64": "f64", "i8": "i32"}.get(policy) or self.r.choice(STORAGE)
        ta, tb = self.r.random() < 0.3, self.r.random() < 0.3

        def operand(rank: int, rows: int, cols: int, trans: bool) -> str:
            b = [s if self.r.random() < 0.7 else 1 for s in batch[len(batch) - (rank - 2):]]
            return self.new_arg(t_ab, b + ([cols, rows] if trans else [rows, cols]), "in",
                                self.r.choice(["normal", "small", "general"]))

        a = operand(ra, m, k, ta)
        b = operand(rb, k, n, tb)
        epilogue = policy != "i8"
        bias = (self.new_arg(t_c if self.r.random() < 0.7 else "f32", [n], "in", "normal")
                if epilogue and self.r.random() < 0.4 else None)
        c = self.new_arg(t_c, batch + [m, n], "out")
        return {"op": "matmul", "a": a, "b": b, "c": c, "bias": bias,
                "activation": (self.r.choice(["none", "none", "relu", "gelu", "silu"])
                               if epilogue else "none"),
                "transpose_a": ta, "transpose_b": tb, "policy": policy}

    def op_attention(self) -> dict[str, Any]:
        b = self.r.choice([1, 1, 2, 3])
        hkv = self.r.choice([1, 1, 2])
        h = hkv * self.r.choice([1, 2, 3])
        sq, sk = self.size(), self.size()
        d, dv = self.r.choice([1, 4, 8, 16, 33, 0]), self.r.choice([1, 4, 8, 16, 17])
        while b * h * (sq + sk) * max(d, dv, 1) > 8000:
            sq, sk = max(sq // 2, 1), max(sk // 2, 1)
        t = self.r.choice(STORAGE)
        q = self.new_arg(t, [b, h, sq, d], "in", "small")
        k = self.new_arg(t, [b, hkv, sk, d], "in", "small")
        v = self.new_arg(t, [b, hkv, sk, dv], "in", "normal")
        lengths = (self.new_arg(self.r.choice(["i32", "i64"]), [b], "in", f"lengths:-2:{sk + 2}")
                   if self.r.random() < 0.4 else None)
        bias = (self.new_arg("f32", [self.r.choice([1, b]), self.r.choice([1, h]), sq, sk], "in",
                             "small") if self.r.random() < 0.3 else None)
        o = self.new_arg(t, [b, h, sq, dv], "out")
        lse = self.new_arg("f32", [b, h, sq], "out") if self.r.random() < 0.3 else None
        scale = self.r.choice([None, None, 0.125, 0.3, 1.0])
        causal = self.r.random() < 0.5
        window = ([self.r.choice([-1, 0, 1, 3, 7]), self.r.choice([-1, 0, 1, 3, 7])]
                  if self.r.random() < 0.3 else None)
        aligned = (self.r.choice(["bottom_right", "top_left"])
                   if (causal or window) and self.r.random() < 0.4 else None)
        dropout = ([self.r.choice([0.0, 0.1, 0.5]), self.r.randrange(-(1 << 40), 1 << 40),
                    self.r.choice([None, "mix", "lcg"])] if self.r.random() < 0.25 else None)
        return {"op": "attention", "q": q, "k": k, "v": v, "o": o, "key_lengths": lengths,
                "scale": scale, "causal": causal, "bias": bias, "lse": lse, "window": window,
                "aligned": aligned,
                "softcap": self.r.choice([1.0, 5.0, 30.0]) if self.r.random() < 0.25 else None,
                "dropout": dropout,
                "empty_rows": self.r.choice(["zeros", "nan"]) if self.r.random() < 0.3 else None}

    def op_rope(self) -> dict[str, Any]:
        rank = self.r.randint(2, 4)
        shape = self.shape(rank, budget=2000)
        shape[-1] = 2 * (shape[-1] // 2)
        t = self.r.choice(STORAGE)
        x = self.new_arg(t, shape, "in", "general")
        table = [shape[-2], shape[-1] // 2]
        cos = self.new_arg(t, table, "in", "table")
        sin = self.new_arg(t, list(table), "in", "table")
        y = self.new_arg(t, list(shape), "out")
        return {"op": "rope", "mode": self.r.choice(["half", "interleaved"]), "in": x,
                "cos": cos, "sin": sin, "out": y}


class BodyGenerator:
    """Builds a `tile.map` body: a DAG of arith/math nodes over the block arguments."""

    def __init__(self, r: random.Random, arg_types: list[str]):
        self.r = r
        self.nodes: list[dict[str, Any]] = [
            {"op": "arg", "index": i, "type": t} for i, t in enumerate(arg_types)]
        self.math_budget = r.choice([0, 1, 1, 2, 3])

    def add(self, node: dict[str, Any]) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def of_type(self, t: str) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n["type"] == t]

    def constant(self, t: str) -> int:
        if is_float(t):
            specials = float_specials(t)
            v = (self.r.choice(specials) if self.r.random() < 0.6
                 else self.r.uniform(-100, 100) * 2.0 ** self.r.randint(-10, 10))
            value = float(round_array(np.array([v]), t)[0])
            bits = int(float_bits(np.array([value]), t)[0])
        else:
            v = (self.r.choice(int_specials(t)) if self.r.random() < 0.6
                 else self.r.randint(-1000, 1000))
            bits = v & ((1 << INTS[t]) - 1)
        return self.add({"op": "constant", "type": t, "bits": bits})

    def leaf(self, t: str) -> int:
        same = self.of_type(t)
        args = [i for i in same if self.nodes[i]["op"] == "arg"]
        if args and self.r.random() < 0.75:
            return self.r.choice(args)
        if same and self.r.random() < 0.5:
            return self.r.choice(same)
        return self.constant(t)

    def expr(self, t: str, depth: int) -> int:
        if depth <= 0 or self.r.random() < 0.15:
            return self.leaf(t)
        d = depth - 1
        return self.float_expr(t, d) if is_float(t) else self.int_expr(t, d)

    def float_expr(self, t: str, d: int) -> int:
        families = ["unary", "binary", "binary", "select", "cast", "cast", "fma"]
        if self.math_budget > 0:
            families += ["math", "math"]
        fam = self.r.choice(families)
        if fam == "unary":
            return self.add({"op": self.r.choice(FLOAT_UNARY_EXACT), "type": t,
                             "args": [self.expr(t, d)]})
        if fam == "binary":
            return self.add({"op": self.r.choice(FLOAT_BINARY_EXACT), "type": t,
                             "args": [self.expr(t, d), self.expr(t, d)]})
        if fam == "math":
            self.math_budget -= 1
            if self.r.random() < 0.85:
                return self.add({"op": self.r.choice(FLOAT_UNARY_MATH), "type": t,
                                 "args": [self.expr(t, d)]})
            return self.add({"op": self.r.choice(FLOAT_BINARY_MATH), "type": t,
                             "args": [self.expr(t, d), self.expr(t, d)]})
        if fam == "fma":
            return self.add({"op": "fma", "type": t,
                             "args": [self.expr(t, d), self.expr(t, d), self.expr(t, d)]})
        if fam == "select":
            return self.add({"op": "select", "type": t, "args": [
                self.expr("i1", d), self.expr(t, d), self.expr(t, d)]})
        return self.float_cast(t, d)

    def float_cast(self, t: str, d: int) -> int:
        bits = FLOATS[t].bits
        options = []
        narrower = [s for s in FLOAT_TYPES if FLOATS[s].bits < bits]
        wider = [s for s in FLOAT_TYPES if FLOATS[s].bits > bits]
        if narrower:
            options.append(("extf", self.r.choice(narrower)))
        if wider:
            options.append(("truncf", self.r.choice(wider)))
        options.append((self.r.choice(["sitofp", "uitofp"]), self.r.choice(INT_TYPES)))
        options.append(("bitcast", {16: "i16", 32: "i32", 64: "i64"}[bits]))
        op, src = self.r.choice(options)
        return self.add({"op": op, "type": t, "from": src, "args": [self.expr(src, d)]})

    def int_expr(self, t: str, d: int) -> int:
        families = ["binary", "binary", "binary", "unary", "select", "cast", "cast"]
        if t == "i1":
            families += ["cmpf", "cmpf", "cmpi", "cmpi", "classify"]
        fam = self.r.choice(families)
        if fam == "binary":
            return self.add({"op": self.r.choice(INT_BINARY), "type": t,
                             "args": [self.expr(t, d), self.expr(t, d)]})
        if fam == "unary":
            return self.add({"op": self.r.choice(INT_UNARY), "type": t, "args": [self.expr(t, d)]})
        if fam == "select":
            return self.add({"op": "select", "type": t, "args": [
                self.expr("i1", d), self.expr(t, d), self.expr(t, d)]})
        if fam == "cmpf":
            s = self.r.choice(FLOAT_TYPES)
            return self.add({"op": "cmpf", "type": t, "pred": self.r.choice(CMPF_PREDICATES),
                             "from": s, "args": [self.expr(s, d), self.expr(s, d)]})
        if fam == "cmpi":
            s = self.r.choice(INT_TYPES)
            return self.add({"op": "cmpi", "type": t, "pred": self.r.choice(CMPI_PREDICATES),
                             "from": s, "args": [self.expr(s, d), self.expr(s, d)]})
        if fam == "classify":
            s = self.r.choice(FLOAT_TYPES)
            return self.add({"op": self.r.choice(FLOAT_CLASSIFY), "type": t, "from": s,
                             "args": [self.expr(s, d)]})
        n = INTS[t]
        options = [(self.r.choice(["fptosi", "fptoui"]), self.r.choice(FLOAT_TYPES))]
        narrower = [s for s in INT_TYPES if INTS[s] < n]
        wider = [s for s in INT_TYPES if INTS[s] > n]
        if narrower:
            options.append((self.r.choice(["extsi", "extui"]), self.r.choice(narrower)))
        if wider:
            options.append(("trunci", self.r.choice(wider)))
        if n in (16, 32, 64):
            options.append(("bitcast", {16: self.r.choice(["f16", "bf16"]), 32: "f32",
                                        64: "f64"}[n]))
        op, src = self.r.choice(options)
        return self.add({"op": op, "type": t, "from": src, "args": [self.expr(src, d)]})


def generate(seed: int) -> Case:
    """The case of a seed."""
    return Generator(seed).case()


# ----------------------------------------------------------------------------- printing

def fptoint_bounds(src: str, dst: str, signed: bool) -> tuple[float, float]:
    """The clamp of a guarded fptosi/fptoui: the extreme `src` values whose truncation fits."""
    lo, hi = int_range(dst, signed)
    return smallest_above(lo, src), largest_below(hi, src)


def float_literal(t: str, bits: int) -> str:
    return f"0x{bits:0{FLOATS[t].bits // 4}X}"


def int_literal(t: str, bits: int) -> str:
    if t == "i1":
        return "true" if bits & 1 else "false"
    n = INTS[t]
    v = bits - (1 << n) if bits >= 1 << (n - 1) else bits
    return str(v)


def canonical_nan(t: str) -> int:
    f = FLOATS[t]
    return {"f16": 0x7E00, "bf16": 0x7FC0, "f32": 0x7FC00000, "f64": 0x7FF8000000000000}[f.name]


def nan_masks(t: str) -> tuple[int, int]:
    """The exponent and mantissa (trailing significand) masks of float format `t`'s patterns."""
    f = FLOATS[t]
    mantissa = (1 << (f.p - 1)) - 1
    exponent = ((1 << (f.bits - 1)) - 1) & ~mantissa
    return exponent, mantissa


def nan_guard_bits(bits: np.ndarray, t: str) -> np.ndarray:
    """The integer-side NaN guard of a bitcast, as printed: unsigned patterns of float format
    `t` (object array) with every NaN pattern (exponent all ones, mantissa non-zero) replaced by
    the canonical quiet NaN's."""
    exponent, mantissa = nan_masks(t)
    flat = [int(b) for b in np.asarray(bits, dtype=object).reshape(-1)]
    out = [canonical_nan(t) if (b & exponent) == exponent and (b & mantissa) != 0 else b
           for b in flat]
    return np.array(out, dtype=object).reshape(np.shape(bits))


class Printer:
    """Prints a program as MLIR text."""

    def __init__(self, program: Program):
        self.p = program
        self.lines: list[str] = []
        self.fresh = 0

    def arg(self, name: str) -> dict[str, Any]:
        return next(a for a in self.p["args"] if a["name"] == name)

    def ty(self, name: str) -> str:
        return memref_type(self.arg(name))

    def text(self) -> str:
        sig = ", ".join(f"%{a['name']}: {memref_type(a)}" for a in self.p["args"])
        self.lines = [f"func.func @{self.p['entry']}({sig}) {{"]
        for op in self.p["ops"]:
            getattr(self, "print_" + op["op"])(op)
        self.lines += ["  return", "}"]
        return "\n".join(self.lines) + "\n"

    def tmp(self) -> str:
        self.fresh += 1
        return f"%t{self.fresh}"

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)

    def print_map(self, op: dict[str, Any]) -> None:
        ins = op["ins"]
        head = "  tile.map "
        if ins:
            head += (f"ins({', '.join('%' + n for n in ins)} : "
                     f"{', '.join(self.ty(n) for n in ins)}) ")
        head += f"outs({', '.join('%' + n for n in op['outs'])} : " \
                f"{', '.join(self.ty(n) for n in op['outs'])}) {{"
        self.lines.append(head)
        nodes = op["body"]
        block_args = [n for n in nodes if n["op"] == "arg"]
        self.lines.append("  ^bb0(" + ", ".join(
            f"%b{n['index']}: {n['type']}" for n in block_args) + "):")
        names: dict[int, str] = {}
        for i, node in enumerate(nodes):
            names[i] = self.print_node(i, node, names)
        ys = [names[y] for y in op["yields"]]
        types = [nodes[y]["type"] for y in op["yields"]]
        self.emit(f"tile.yield {', '.join(ys)} : {', '.join(types)}")
        self.lines.append("  }")

    def const(self, t: str, bits: int) -> str:
        name = self.tmp()
        lit = float_literal(t, bits) if is_float(t) else int_literal(t, bits)
        self.emit(f"{name} = arith.constant {lit} : {t}" if t != "i1"
                  else f"{name} = arith.constant {lit}")
        return name

    def nan_guard(self, raw: str, it: str, ft: str, out: str) -> None:
        """`out` = `raw` (an integer of type `it` holding a pattern of float type `ft`) with a NaN
        pattern replaced by the canonical quiet NaN's: integer ops only, which no float fold can
        touch (`nan_guard_bits` is the evaluator's side)."""
        exponent, mantissa = nan_masks(ft)
        exp_c, man_c = self.const(it, exponent), self.const(it, mantissa)
        zero, nan = self.const(it, 0), self.const(it, canonical_nan(ft))
        e, m, all_ones, frac, isnan = (self.tmp() for _ in range(5))
        self.emit(f"{e} = arith.andi {raw}, {exp_c} : {it}")
        self.emit(f"{m} = arith.andi {raw}, {man_c} : {it}")
        self.emit(f"{all_ones} = arith.cmpi eq, {e}, {exp_c} : {it}")
        self.emit(f"{frac} = arith.cmpi ne, {m}, {zero} : {it}")
        self.emit(f"{isnan} = arith.andi {all_ones}, {frac} : i1")
        self.emit(f"{out} = arith.select {isnan}, {nan}, {raw} : {it}")

    def print_node(self, i: int, node: dict[str, Any], names: dict[int, str]) -> str:
        op, t = node["op"], node["type"]
        if op == "arg":
            return f"%b{node['index']}"
        if op == "constant":
            return self.const(t, node["bits"])
        a = [names[k] for k in node["args"]]
        out = f"%v{i}"
        dialect = "math" if op in MATH_OPS else "arith"
        if op in ("shli", "shrsi", "shrui"):
            mask = self.const(t, INTS[t] - 1)
            amount = self.tmp()
            self.emit(f"{amount} = arith.andi {a[1]}, {mask} : {t}")
            self.emit(f"{out} = arith.{op} {a[0]}, {amount} : {t}")
        elif op in ("fptosi", "fptoui"):
            src = node["from"]
            lo, hi = fptoint_bounds(src, t, op == "fptosi")
            isnan, zeroed, low, high = self.tmp(), self.tmp(), self.tmp(), self.tmp()
            zero = self.const(src, 0)
            self.emit(f"{isnan} = arith.cmpf uno, {a[0]}, {a[0]} : {src}")
            self.emit(f"{zeroed} = arith.select {isnan}, {zero}, {a[0]} : {src}")
            lo_c = self.const(src, int(float_bits(np.array([lo]), src)[0]))
            hi_c = self.const(src, int(float_bits(np.array([hi]), src)[0]))
            self.emit(f"{low} = arith.maximumf {zeroed}, {lo_c} : {src}")
            self.emit(f"{high} = arith.minimumf {low}, {hi_c} : {src}")
            self.emit(f"{out} = arith.{op} {high} : {src} to {t}")
        elif op == "bitcast" and is_float(node["from"]):
            # float → integer: bitcast first, then canonicalize a NaN pattern with integer ops
            raw = self.tmp()
            self.emit(f"{raw} = arith.bitcast {a[0]} : {node['from']} to {t}")
            self.nan_guard(raw, t, node["from"], out)
        elif op == "bitcast":
            # integer → float: canonicalize a NaN pattern with integer ops, then bitcast
            clean = self.tmp()
            self.nan_guard(a[0], node["from"], t, clean)
            self.emit(f"{out} = arith.bitcast {clean} : {node['from']} to {t}")
        elif op in ("extf", "truncf", "sitofp", "uitofp", "extsi", "extui", "trunci"):
            self.emit(f"{out} = arith.{op} {a[0]} : {node['from']} to {t}")
        elif op in ("cmpf", "cmpi"):
            self.emit(f"{out} = arith.{op} {node['pred']}, {a[0]}, {a[1]} : {node['from']}")
        elif op in FLOAT_CLASSIFY:
            self.emit(f"{out} = math.{op} {a[0]} : {node['from']}")
        elif op == "select":
            self.emit(f"{out} = arith.select {a[0]}, {a[1]}, {a[2]} : {t}")
        else:
            self.emit(f"{out} = {dialect}.{op} {', '.join(a)} : {t}")
        return out

    def print_reduce(self, op: dict[str, Any]) -> None:
        keep = " keepdims" if op["keepdims"] else ""
        self.lines.append(f"  tile.reduce {op['kind']} %{op['in']} -> %{op['out']} axis = "
                          f"{op['axis']}{keep} : {self.ty(op['in'])} -> {self.ty(op['out'])}")

    def print_softmax(self, op: dict[str, Any]) -> None:
        self.lines.append(f"  tile.softmax %{op['in']} -> %{op['out']} : {self.ty(op['in'])} -> "
                          f"{self.ty(op['out'])}")

    def print_norm(self, op: dict[str, Any]) -> None:
        s = f"  tile.norm {op['kind']} %{op['in']}"
        if op["residual"]:
            s += f" residual(%{op['residual']} : {self.ty(op['residual'])})"
        s += f" -> %{op['out']}"
        if op["residual_out"]:
            s += f" residual_out(%{op['residual_out']} : {self.ty(op['residual_out'])})"
        for key in ("weight", "bias"):
            if op[key]:
                s += f" {key}(%{op[key]} : {self.ty(op[key])})"
        if op["eps"] is not None:
            s += f" eps({op['eps']:.17e})"
        self.lines.append(s + f" : {self.ty(op['in'])} -> {self.ty(op['out'])}")

    def print_matmul(self, op: dict[str, Any]) -> None:
        s = f"  tile.matmul %{op['a']}, %{op['b']} -> %{op['c']}"
        if op["bias"]:
            s += f" bias(%{op['bias']} : {self.ty(op['bias'])})"
        if op["activation"] != "none" or (self.fresh % 2 and op["policy"] != "i8"):
            s += f" activation({op['activation']})"
        if op["policy"] in ("tf32", "f16", "fma") or (op["policy"] == "f32" and self.fresh % 3 == 1):
            s += f" policy({op['policy']})"
        units = [k for k in ("transpose_a", "transpose_b") if op[k]]
        if units:
            s += " {" + ", ".join(units) + "}"
        self.lines.append(s + f" : {self.ty(op['a'])}, {self.ty(op['b'])} -> {self.ty(op['c'])}")

    def print_attention(self, op: dict[str, Any]) -> None:
        s = f"  tile.attention %{op['q']}, %{op['k']}, %{op['v']} -> %{op['o']}"
        if op["key_lengths"]:
            s += f" key_lengths(%{op['key_lengths']} : {self.ty(op['key_lengths'])})"
        for key in ("bias", "lse"):
            if op.get(key):
                s += f" {key}(%{op[key]} : {self.ty(op[key])})"
        if op["scale"] is not None:
            s += f" scale({op['scale']:.17e})"
        if op["causal"]:
            s += " causal"
        if op.get("window"):
            s += f" window({op['window'][0]}, {op['window'][1]})"
        if op.get("aligned"):
            s += f" aligned({op['aligned']})"
        if op.get("softcap") is not None:
            s += f" softcap({op['softcap']:.17e})"
        if op.get("dropout"):
            p, seed, rule = op["dropout"]
            s += f" dropout({p:.17e}, {seed})" + (f" dropout_rule({rule})" if rule else "")
        if op.get("empty_rows"):
            s += f" empty_rows({op['empty_rows']})"
        self.lines.append(s + f" : {self.ty(op['q'])}, {self.ty(op['k'])}, {self.ty(op['v'])}"
                          f" -> {self.ty(op['o'])}")

    def print_rope(self, op: dict[str, Any]) -> None:
        self.lines.append(
            f"  tile.rope {op['mode']} %{op['in']}, %{op['cos']}, %{op['sin']} -> %{op['out']} "
            f": {self.ty(op['in'])}, {self.ty(op['cos'])}, {self.ty(op['sin'])} -> "
            f"{self.ty(op['out'])}")


def print_program(program: Program) -> str:
    """The MLIR text of a program."""
    return Printer(program).text()


if __name__ == "__main__":
    import sys
    print(print_program(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 1)["program"]))
