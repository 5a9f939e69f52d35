#!/usr/bin/env python3
"""A self-test of the differential harness itself (no compiler needed: NumPy and ml_dtypes
only), run by tools/differential_test.sh before the driver. It checks that

* inputs encode and decode exactly (bit patterns, every float and integer type, scalars and
  empty arrays, through JSON);
* the comparison rules hold: any NaN matches any NaN, −0 ≠ +0 where bits are expected, an
  element with a relative bound may be ⌈r·|ref|/ulp⌉ + 1 ulps off and no more (counted over
  the format's values, across a binade), an absolute tolerance is inclusive, an undetermined
  element is not compared;
* resizing keeps every input consistent with its argument (broadcast inputs, inputs whose
  shape list is shared with the argument's, generated programs, JSON-loaded ones);
* the shrinker reduces a known program under a synthetic predicate to the expected minimum,
  and survives a predicate or a variant family that raises;
* a bitcast between a float and an integer is printed with its NaN guard on the integer side
  (no `cmpf`), and the evaluator maps every NaN pattern, and only those, to the canonical NaN's.

    python tests/differential/selftest.py     # exit status 0 when every check passes
"""
from __future__ import annotations

import copy
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import shrinker  # noqa: E402
from compare import compare_output  # noqa: E402
from evaluator import Expected, evaluate  # noqa: E402
from floats import FLOATS, bits_to_float, float_bits, int_patterns, ulp  # noqa: E402
from generator import (FLOAT_TYPES, INT_TYPES, canonical_nan, decode_input,  # noqa: E402
                       draw_floats, draw_ints, encode_input, generate, nan_guard_bits, nan_masks,
                       print_program)

CHECKS: list = []


def check(fn):
    CHECKS.append(fn)
    return fn


# ----------------------------------------------------------------------------- encode/decode

@check
def encode_decode_round_trips() -> None:
    rng = np.random.default_rng(7)
    for t in FLOAT_TYPES + INT_TYPES:
        for shape in (None, [0], [5], [2, 3, 4]):
            dims = tuple(shape) if shape is not None else ()
            if t in FLOATS:
                values = draw_floats(t, dims, rng, "general")
                # every special value, and a NaN with a payload, must survive
                flat = values.reshape(-1)
                specials = [0.0, -0.0, np.inf, -np.inf, np.nan, FLOATS[t].min_subnormal,
                            -FLOATS[t].max_finite]
                flat[:min(flat.size, len(specials))] = specials[:flat.size]
                want = float_bits(values, t)
            else:
                values = draw_ints(t, dims, rng, "general")
                want = np.asarray(values, dtype=object)
            entry = json.loads(json.dumps(encode_input(t, shape, values)))
            got = decode_input(entry)
            assert got.shape == dims, (t, shape, got.shape)
            if t in FLOATS:
                bits = got.view(FLOATS[t].uint)
                assert np.array_equal(bits, want), (t, shape, bits, want)
            else:
                assert np.array_equal(int_patterns(got, t), want), (t, shape, got, want)
    # a NaN payload (a pattern NumPy would not produce from float64) round-trips as bits
    raw = np.array([0x7FC00001, 0xFF800001, 0x80000000], dtype=np.uint32)
    entry = {"type": "f32", "shape": [3], "hex": raw.view(np.float32).tobytes().hex()}
    assert np.array_equal(decode_input(json.loads(json.dumps(entry))).view(np.uint32), raw)
    # an entry must not share its shape list with the caller's (the original resize crash)
    shape = [2, 2]
    entry = encode_input("f32", shape, np.zeros((2, 2)))
    assert entry["shape"] == shape and entry["shape"] is not shape


# ----------------------------------------------------------------------------- comparison

def _exp(values, t, rel=None, atol=None) -> Expected:
    v = np.asarray(values, dtype=np.float64 if t in FLOATS else object)
    rel = None if rel is None else np.broadcast_to(np.asarray(rel, float), v.shape)
    atol = None if atol is None else np.broadcast_to(np.asarray(atol, float), v.shape)
    return Expected(v, rel=rel, atol=atol, what="selftest")


def _got(values, t) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).astype(FLOATS[t].dtype)


def _steps(x: float, n: int, t: str) -> float:
    """The value n representable steps of format t away from x (n may be negative)."""
    assert x > 0
    b = int(float_bits(np.array([x]), t)[0])
    return float(bits_to_float(np.array([b + n], dtype=np.uint64), t)[0])


@check
def compare_rules() -> None:
    for t in FLOAT_TYPES:
        f = FLOATS[t]
        # NaN matches NaN, whatever the payload and sign (here: negative, payload 1)
        got = np.zeros(1, dtype=f.dtype)
        got.view(f.uint)[0] = int(float_bits(np.array([np.inf]), t)[0]) | (1 << (f.bits - 1)) | 1
        assert np.isnan(got.astype(np.float64)[0])
        assert compare_output("y", t, _exp([np.nan], t, rel=0.0), got) is None, t
        assert compare_output("y", t, _exp([np.nan], t, atol=0.0), got) is None, t
        # −0 ≠ +0 where bits are expected (relative bound 0 or tolerance 0)
        for kw in ({"rel": 0.0}, {"atol": 0.0}):
            assert compare_output("y", t, _exp([0.0], t, **kw), _got([-0.0], t)) is not None, t
            assert compare_output("y", t, _exp([-0.0], t, **kw), _got([0.0], t)) is not None, t
            assert compare_output("y", t, _exp([-0.0], t, **kw), _got([-0.0], t)) is None, t
            # a NaN is not a number and a number is not a NaN
            assert compare_output("y", t, _exp([np.nan], t, **kw), _got([1.0], t)) is not None
            assert compare_output("y", t, _exp([1.0], t, **kw), _got([np.nan], t)) is not None
            # one ulp off is a mismatch when bits are expected
            assert compare_output("y", t, _exp([1.5], t, **kw),
                                  _got([_steps(1.5, 1, t)], t)) is not None, t
        # the ulp bound: r = 2 ulp(ref)/|ref| allows ⌈2⌉ + 1 = 3 ulps, not 4
        for ref in (1.5, 3.0 * f.min_normal):
            r = 2 * float(ulp(np.array([ref]), t)[0]) / ref
            for n, ok in ((3, True), (-3, True), (4, False), (-4, False)):
                m = compare_output("y", t, _exp([ref], t, rel=r), _got([_steps(ref, n, t)], t))
                assert (m is None) == ok, (t, ref, n, m and m.describe())
        # across a binade: steps below 1.0 are half as wide but count one ordinal each
        r = 2 * float(ulp(np.array([1.0]), t)[0])
        assert compare_output("y", t, _exp([1.0], t, rel=r), _got([_steps(1.0, -3, t)], t)) \
            is None, t
        assert compare_output("y", t, _exp([1.0], t, rel=r), _got([_steps(1.0, -4, t)], t)) \
            is not None, t
        # with a relative bound a NaN must still be a NaN, an infinity the same infinity
        assert compare_output("y", t, _exp([2.0], t, rel=0.1), _got([np.nan], t)) is not None
        assert compare_output("y", t, _exp([np.inf], t, rel=0.1), _got([-np.inf], t)) is not None
        # an element whose bound is inf is not compared
        assert compare_output("y", t, _exp([1.0, 2.0], t, rel=[np.inf, 0.0]),
                              _got([-7.0, 2.0], t)) is None, t
        # an absolute tolerance is inclusive; an infinity must be the same infinity
        assert compare_output("y", t, _exp([1.0], t, atol=0.5), _got([1.5], t)) is None, t
        assert compare_output("y", t, _exp([1.0], t, atol=0.25), _got([1.5], t)) is not None
        assert compare_output("y", t, _exp([np.inf], t, atol=1.0), _got([np.inf], t)) is None
        assert compare_output("y", t, _exp([np.inf], t, atol=1.0), _got([-np.inf], t)) \
            is not None
    # a 0-d output's mismatch is reported (describing it once raised: seed 590000437)
    m = compare_output("y", "f64", _exp(np.array(np.nan), "f64", rel=0.0), _got(np.inf, "f64"))
    assert m is not None and m.count == 1 and m.bad[0][0] == (), m
    # integers: exact patterns; a mismatch reports the count of bad elements
    want = np.array([0, 255, 128], dtype=object)
    assert compare_output("y", "i8", _exp(want, "i8", atol=0.0),
                          np.array([0, -1, -128], dtype=np.int8)) is None
    m = compare_output("y", "i8", _exp(want, "i8", atol=0.0), np.array([0, -1, 127], np.int8))
    assert m is not None and m.count == 1 and m.bad[0][0] == (2,), m
    assert compare_output("y", "i1", _exp(np.array([1, 0], dtype=object), "i1", atol=0.0),
                          np.array([True, True])) is not None


# ----------------------------------------------------------------------------- references

@check
def libm_references_agree_with_numpy() -> None:
    """The evaluator's float64 reference of every math function (the C library through `math`)
    within 1 ulp of NumPy's at wide, tiny and subnormal arguments (x ** (1/3) as cbrt was ~100
    ulps off at subnormal x)."""
    from evaluator import NUMPY_MATH, libm_eval
    xs = np.array([255 * 2.0 ** -1074, 3e-310, 1e-300, 1e-30, 0.1, 0.5, 0.75, 1.5, 3.0, 100.0,
                   1e30, 1e300])
    xs = np.concatenate([xs, -xs])
    for name, fn in NUMPY_MATH.items():
        args = (xs,) if name not in ("powf", "atan2") else (np.abs(xs), xs[::-1])
        with np.errstate(all="ignore"):
            want = np.asarray(fn(*args), dtype=np.float64)
        got = libm_eval(name, *args)
        finite = np.isfinite(want) & (want != 0)
        assert np.array_equal(np.isnan(got), np.isnan(want)), name
        k = np.abs(got[finite] - want[finite]) / ulp(want[finite], "f64")
        assert np.all(k <= 1.0), (name, xs[finite][k > 1], k[k > 1])


@check
def fma_special_cases() -> None:
    """fma is one rounding of the exact a·b + c: a finite product plus an infinity is that
    infinity even where float64's a·b overflows (seed 590000437); inf·0 is NaN."""
    from evaluator import fma_exact
    m = FLOATS["f64"].max_finite
    a = np.array([-m, 2.0, np.inf, 3.0, -0.0])
    b = np.array([1109.8, 3.0, 0.0, 4.0, 5.0])
    c = np.array([np.inf, -np.inf, 1.0, np.nan, 0.0])
    r = fma_exact(a, b, c, "f64")
    assert r[0] == np.inf and r[1] == -np.inf and np.isnan(r[2]) and np.isnan(r[3]), r
    assert r[4] == 0 and not np.signbit(r[4]), r  # −0·5 + +0 = +0
    assert fma_exact(np.array([1.5]), np.array([2.0]), np.array([0.25]), "f32")[0] == 3.25


@check
def reduce_overflow_not_compared() -> None:
    """A sum or mean of finite f32 values whose Σ|x| exceeds the f32 range may overflow in the
    f32 partial sums (seed 560000189): not determined; an ordinary row keeps a finite bound."""
    from evaluator import reduce_row
    big = np.full(9, FLOATS["f32"].max_finite)
    for kind in ("sum", "mean"):
        assert reduce_row(kind, big, "f32")[1] == np.inf, kind
        # with an infinity: max + max may overflow to +inf, then + −inf gives NaN
        row = np.array([FLOATS["f32"].max_finite, -np.inf, FLOATS["f32"].max_finite])
        assert reduce_row(kind, row, "f32")[1] == np.inf, kind
        # a NaN in the row, or an infinity with small finite values: exact
        assert reduce_row(kind, np.array([1.0, np.nan, np.inf]), "f32")[1] == 0, kind
        assert reduce_row(kind, np.array([1.0, 2.0, -np.inf]), "f32") == (-np.inf, 0.0), kind
        value, bound = reduce_row(kind, np.array([1.0, 2.0, 3.0]), "f32")
        assert value == (6.0 if kind == "sum" else 2.0) and 0 < bound < 1e-5, (kind, bound)


# ----------------------------------------------------------------------------- resizing

def known_case(share_shapes: bool = False) -> dict:
    """A program whose map broadcasts (a [3,4] input, a [1,4] input, a rank-1 [4] input and a
    scalar into [3,4] outputs), followed by a reduce, with fixed inputs. With `share_shapes`
    every stored input's shape is the argument's own list (as the generator once stored them)."""
    def arg(name, t, shape, role):
        return {"name": name, "type": t, "shape": shape,
                "dynamic": None if shape is None else [i % 2 == 0 for i in range(len(shape))],
                "role": role}
    args = [arg("a0", "f32", [3, 4], "in"), arg("a1", "f32", [1, 4], "in"),
            arg("a2", "f16", [4], "in"), arg("a3", "f32", None, "in"),
            arg("a4", "f32", [3, 4], "out"), arg("a5", "i32", [3, 4], "out"),
            arg("a6", "f32", [5, 6], "in"), arg("a7", "f32", [5], "out")]
    body = [{"op": "arg", "index": 0, "type": "f32"}, {"op": "arg", "index": 1, "type": "f32"},
            {"op": "arg", "index": 2, "type": "f16"}, {"op": "arg", "index": 3, "type": "f32"},
            {"op": "addf", "type": "f32", "args": [0, 1]},             # 4
            {"op": "extf", "type": "f32", "from": "f16", "args": [2]},  # 5
            {"op": "mulf", "type": "f32", "args": [4, 5]},             # 6
            {"op": "sqrt", "type": "f32", "args": [6]},                # 7
            {"op": "subf", "type": "f32", "args": [7, 3]},             # 8
            {"op": "fptosi", "type": "i32", "from": "f32", "args": [8]}]  # 9
    ops = [{"op": "map", "ins": ["a0", "a1", "a2", "a3"], "outs": ["a4", "a5"], "body": body,
            "yields": [8, 9]},
           {"op": "reduce", "kind": "sum", "in": "a6", "out": "a7", "axis": 1,
            "keepdims": False}]
    rng = np.random.default_rng(11)
    inputs = {}
    for a in args:
        if a["role"] == "in":
            dims = tuple(a["shape"]) if a["shape"] is not None else ()
            entry = encode_input(a["type"], a["shape"], draw_floats(a["type"], dims, rng,
                                                                    "normal"))
            if share_shapes:
                entry["shape"] = a["shape"]
            inputs[a["name"]] = entry
    return {"program": {"entry": "f", "args": args, "ops": ops}, "inputs": inputs}


@check
def resize_keeps_inputs_consistent() -> None:
    for share in (False, True):
        case = known_case(share)
        before = {k: decode_input(v) for k, v in case["inputs"].items()}
        variants = list(shrinker.shrink_sizes(case))
        assert len(variants) >= 4, len(variants)
        for v in variants:
            assert shrinker.consistent(v), v["program"]["args"]
            evaluate(v)  # the evaluator accepts every resized variant
            print_program(v["program"])
        assert {k: decode_input(v).tobytes() for k, v in case["inputs"].items()} == \
            {k: b.tobytes() for k, b in before.items()}, "resizing changed the original case"
        # axis 1 of the map (4 → 2): a0 [3,2], a1 [1,2] (its broadcast axis 0 untouched),
        # a2 [2], outputs [3,2]; the data are the leading slices
        groups = shrinker.axis_groups(case["program"]["ops"][0],
                                      {a["name"]: a for a in case["program"]["args"]})
        v = shrinker.resize(case, groups[1], 2)
        shapes = {a["name"]: a["shape"] for a in v["program"]["args"]}
        assert shapes["a0"] == [3, 2] and shapes["a1"] == [1, 2] and shapes["a2"] == [2], shapes
        assert shapes["a4"] == [3, 2] and shapes["a5"] == [3, 2] and shapes["a3"] is None
        assert np.array_equal(decode_input(v["inputs"]["a0"]).view(np.uint32),
                              before["a0"][:, :2].view(np.uint32))
        assert np.array_equal(decode_input(v["inputs"]["a2"]).view(np.uint16),
                              before["a2"][:2].view(np.uint16))
        # axis 0 (3 → 1) leaves the [1,4] input and the rank-1 input alone
        v = shrinker.resize(case, groups[0], 1)
        shapes = {a["name"]: a["shape"] for a in v["program"]["args"]}
        assert shapes["a0"] == [1, 4] and shapes["a1"] == [1, 4] and shapes["a2"] == [4], shapes
        # a resize that cannot be built is skipped, not raised
        bad = copy.deepcopy(case)
        bad["inputs"]["a0"]["hex"] = bad["inputs"]["a0"]["hex"][:8]
        assert not shrinker.consistent(bad)
        assert shrinker.resize(bad, groups[1], 2) is None
    # generated programs, as generated and as loaded from JSON: every size variant consistent
    for seed in range(329042941, 329042961):
        case = generate(seed)
        for c in (case, json.loads(json.dumps(case))):
            for v in shrinker.shrink_sizes(c):
                assert shrinker.consistent(v), seed


# ----------------------------------------------------------------------------- shrinking

def _has_sqrt(case: dict) -> bool:
    evaluate(case)  # a candidate the evaluator rejects must not count (raises: not failing)
    return any(n["op"] == "sqrt" for op in case["program"]["ops"] if op["op"] == "map"
               for n in op["body"])


@check
def shrinker_reduces_known_program() -> None:
    errors: list[str] = []
    small, trials = shrinker.shrink(known_case(), _has_sqrt, budget_s=20, errors=errors)
    assert not errors, errors[0]
    prog = small["program"]
    assert len(prog["ops"]) == 1 and prog["ops"][0]["op"] == "map", prog["ops"]
    op = prog["ops"][0]
    assert len(op["outs"]) == 1, op["outs"]
    # what is left: the sqrt, and at most the cast to the output that was kept
    body_ops = [n["op"] for n in op["body"] if n["op"] != "arg"]
    assert body_ops in (["sqrt"], ["sqrt", "fptosi"]), op["body"]
    assert len(op["ins"]) <= 1 and len(small["inputs"]) == len(op["ins"]), op["ins"]
    for a in prog["args"]:
        assert a["shape"] is None or all(s == 1 for s in a["shape"]), a
    assert shrinker.consistent(small)
    assert 0 < trials < 400, trials
    # a predicate on values: output a4 has a NaN (sqrt of a negative); the inputs keep one
    case = known_case()
    for name in ("a0", "a1"):
        entry = case["inputs"][name]
        case["inputs"][name] = encode_input("f32", entry["shape"],
                                            -np.abs(decode_input(entry).astype(np.float64)) - 1)

    def nan_out(c: dict) -> bool:
        e = evaluate(c)
        return "a4" in e and bool(np.any(np.isnan(e["a4"].values)))
    assert nan_out(case)
    small, _ = shrinker.shrink(case, nan_out, budget_s=20)
    assert nan_out(small) and shrinker.consistent(small)
    assert int(np.prod(next(a["shape"] for a in small["program"]["args"]
                            if a["name"] == "a4"))) == 1


@check
def shrinker_survives_exceptions() -> None:
    case = known_case(share_shapes=True)

    def raises(c: dict) -> bool:
        raise RuntimeError("predicate")
    errors: list[str] = []
    small, trials = shrinker.shrink(case, raises, budget_s=5, max_trials=20, errors=errors)
    assert small is case and trials == 20 and errors and "predicate" in errors[0]

    def broken(c: dict):
        yield from ()
        raise ValueError("a broken variant family")
    saved = shrinker.FAMILIES[:]
    try:
        shrinker.FAMILIES.insert(0, broken)
        errors = []
        small, _ = shrinker.shrink(case, _has_sqrt, budget_s=20, errors=errors)
        assert errors and "broken variant family" in errors[0], errors
        assert len(small["program"]["ops"]) == 1  # the other families still ran
    finally:
        shrinker.FAMILIES[:] = saved


# ----------------------------------------------------------------------------- NaN guards

@check
def bitcast_nan_guard_is_integer_side() -> None:
    """A bitcast between a float and an integer canonicalizes NaN with integer ops (LLVM may
    fold a float-side `select(cmpf uno(v, v), NaN, v)`: NaN payloads are unspecified), and the
    evaluator's `nan_guard_bits` maps every NaN pattern, and nothing else, to the canonical
    quiet NaN's."""
    for t in FLOAT_TYPES:
        f = FLOATS[t]
        exponent, mantissa = nan_masks(t)
        sign = 1 << (f.bits - 1)
        assert exponent | mantissa | sign == (1 << f.bits) - 1 and not exponent & mantissa
        nans = [exponent | 1, exponent | mantissa, sign | exponent | 1,
                exponent | (mantissa + 1) >> 1, canonical_nan(t) | sign]
        others = [0, sign, exponent, sign | exponent, 1, mantissa, exponent - 1,
                  int(float_bits(np.array([1.0]), t)[0])]
        assert all(np.isnan(bits_to_float(np.array([b]), t)[0]) for b in nans)
        got = nan_guard_bits(np.array(nans + others, dtype=object), t)
        assert list(got) == [canonical_nan(t)] * len(nans) + others, (t, list(got))
        for it, body in ((f"i{f.bits}", [{"op": "arg", "index": 0, "type": t},
                                         {"op": "bitcast", "type": f"i{f.bits}", "from": t,
                                          "args": [0]}]),
                         (t, [{"op": "arg", "index": 0, "type": f"i{f.bits}"},
                              {"op": "bitcast", "type": t, "from": f"i{f.bits}", "args": [0]}])):
            src = body[0]["type"]
            program = {"entry": "f", "args": [
                {"name": "x", "type": src, "shape": [2], "dynamic": [False], "role": "in"},
                {"name": "y", "type": it, "shape": [2], "dynamic": [False], "role": "out"}],
                "ops": [{"op": "map", "ins": ["x"], "outs": ["y"], "body": body, "yields": [1]}]}
            text = print_program(program)
            assert "cmpf" not in text and text.count("arith.andi") == 3, text
            assert text.count("arith.cmpi") == 2 and "arith.bitcast" in text, text
            values = (np.array([np.nan, -1.5]) if src == t else
                      np.array([exponent | 1, 7], dtype=object))  # a signalling NaN pattern
            case = {"program": program, "inputs": {"x": encode_input(src, [2], values)}}
            out = evaluate(case)["y"].values
            if src == t:  # float → integer: the canonical NaN's pattern for any NaN
                assert [int(v) for v in out] == [canonical_nan(t),
                                                 int(float_bits(np.array([-1.5]), t)[0])], out
            else:  # integer → float: a quiet NaN (any NaN compares equal), 7 unchanged
                assert np.isnan(out[0]) and out[1] == bits_to_float(np.array([7]), t)[0], out


def main() -> int:
    np.seterr(all="ignore")  # NaN patterns are cast on purpose
    start = time.monotonic()
    failed = 0
    for fn in CHECKS:
        t0 = time.monotonic()
        try:
            fn()
            print(f"selftest: {fn.__name__}: ok ({time.monotonic() - t0:.2f} s)")
        except Exception:
            failed += 1
            print(f"selftest: {fn.__name__}: FAILED\n{traceback.format_exc()}")
    print(f"selftest: {len(CHECKS) - failed} of {len(CHECKS)} passed in "
          f"{time.monotonic() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
