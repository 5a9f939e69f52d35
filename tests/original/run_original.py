#!/usr/bin/env python3
"""The original Tessera's launch-level fixtures (tests/original/*_kernel*.mlir), compiled by
tessera_jit for the host and run on ragged shapes (not multiples of 16 or 8) and size 1 against
float64 NumPy references written here, within the tolerances docs/original-ir.md states. Also:
a mismatched dimension is INVALID_ARGUMENT naming both arguments, and NaN propagates through
max/min reductions.

    run_original.py [--junit PATH]

Needs NumPy and ml_dtypes, TESSERA_JIT_LIBRARY and PYTHONPATH=capi/python (tools/differential_test.sh
runs it in its environment).
"""
from __future__ import annotations

import argparse
import glob
import math
import os
import re
import sys
import time
import traceback
from typing import Any, Callable, Optional
from xml.sax.saxutils import escape, quoteattr

import ml_dtypes
import numpy as np

import tessera_jit as tj

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64,
          "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "s8": np.int8,
          "int8": np.int8, "i32": np.int32}
# The unit roundoff of each storage type: a result rounded to it is within this relative error.
ROUNDOFF = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f32": 2.0 ** -24, "f64": 2.0 ** -53, "i32": 0.0}
# Half the spacing of each storage type's subnormals: the absolute error of rounding there.
SUBNORMAL = {"f16": 2.0 ** -25, "bf16": 2.0 ** -134, "f32": 2.0 ** -150, "f64": 2.0 ** -1075,
             "i32": 0.0}
F32 = 2.0 ** -24


class Kernel:
    """One `llvm.func`/`func.func` of a fixture: its name, launch op and attributes."""

    def __init__(self, name: str, op: str, attrs: str):
        self.name, self.op, self.attrs = name, op, attrs

    def attr(self, key: str) -> Optional[str]:
        m = re.search(r"\b" + re.escape(key) + r'\s*=\s*("([^"]*)"|[\w.+-]+)', self.attrs)
        if not m:
            return None
        return m.group(2) if m.group(2) is not None else m.group(1)


def kernels(text: str) -> list[Kernel]:
    found = []
    for m in re.finditer(r"(?:llvm|func)\.func @(\w+)\((.*?)\n\s*(?:llvm\.)?return", text, re.S):
        body = m.group(2)
        op = re.search(r"tile\.(\w+_kernel)\b[^{]*\{(.*?)\}\s*:", body, re.S)
        eps = re.search(r"arith\.constant ([0-9.eE+-]+) : f32", body)
        kernel = Kernel(m.group(1), op.group(1), op.group(2) + (f" epsilon = {eps.group(1)}" if eps else ""))
        found.append(kernel)
    return found


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any, scale: float = 1.0) -> np.ndarray:
    if np.dtype(dtype) == np.int8:  # the whole range, -128 included
        return rng.integers(-128, 128, shape, dtype=np.int8)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


def check(name: str, got: np.ndarray, ref: np.ndarray, bound: np.ndarray) -> None:
    got = f64(got)
    nan = np.isnan(ref)
    if not np.array_equal(np.isnan(got), nan):
        raise AssertionError(f"{name}: NaN positions differ")
    err = np.abs(got - ref)
    bad = (err > bound) & ~nan
    if bad.any():
        i = np.unravel_index(np.argmax(np.where(bad, err - bound, -np.inf)), ref.shape)
        raise AssertionError(f"{name}: at {i} got {got[i]!r}, expected {ref[i]!r} within "
                             f"{bound[i]:.3g} ({int(bad.sum())} of {ref.size} elements off)")


def activation(kind: str, x: np.ndarray) -> np.ndarray:
    if kind == "relu":
        return np.maximum(x, 0)
    if kind == "gelu":  # the original's gelu is the tanh form
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if kind == "silu":
        return x / (1 + np.exp(-x))
    return x


def run_matmul(fn: Callable[..., Any], k: Kernel, rng: np.random.Generator, shape: tuple[int, ...]) -> None:
    m, n, kk = shape
    a_type = k.attr("a")
    stored = DTYPES["f32" if a_type == "tf32" else a_type]
    out_name = k.attr("output")
    bias_on = k.attr("bias") == "true"
    residual_on = k.attr("residual") == "true"
    a_col = k.attr("a_layout") == "col_major"
    b_col = k.attr("b_layout") == "col_major"  # the original's canonical B: [N, K]
    a = rand(rng, (kk, m) if a_col else (m, kk), stored)
    b = rand(rng, (n, kk) if b_col else (kk, n), stored)
    args: list[Any] = [a, b]
    a64 = f64(a).T if a_col else f64(a)
    b64 = f64(b).T if b_col else f64(b)
    acc = a64 @ b64
    magnitude = np.abs(a64) @ np.abs(b64)
    if bias_on:
        bias = rand(rng, (n,), np.float32)
        args.append(bias)
        acc = acc + f64(bias)
        magnitude = magnitude + np.abs(f64(bias))
    ref = activation(k.attr("activation") or "none", acc)
    if residual_on:
        residual = rand(rng, (m, n), np.float32)
        args.append(residual)
        ref = ref + f64(residual)
        magnitude = magnitude + np.abs(f64(residual))
    if out_name == "i32":  # s8: exact i32 sums (these shapes stay far from wrap-around)
        d = np.full((m, n), -1, np.int32)
        fn(*args, d, m, n, kk)
        if not np.array_equal(d.astype(np.int64), ref.astype(np.int64)):
            raise AssertionError(f"{k.name}: i32 sums differ from the exact products")
        return
    d = np.full((m, n), np.nan, DTYPES[out_name])
    fn(*args, d, m, n, kk)
    # Accumulation in f32 (f64 for f64; about K roundings; fp8 inputs are exact in f32), TF32
    # inputs (2^-11 each), one output rounding.
    unit = 2.0 ** -53 if a_type == "f64" else F32
    input_error = 2 * 2.0 ** -11 if a_type == "tf32" else 0.0
    bound = (kk + 4) * unit * magnitude + input_error * magnitude
    bound = bound + ROUNDOFF[out_name] * np.abs(ref) + SUBNORMAL[out_name]
    if (k.attr("activation") or "none") in ("gelu", "silu"):
        bound = bound * 2 + 4 * F32 * (np.abs(ref) + 1)
    check(k.name, d, ref, bound)


def run_reduce(fn: Callable[..., Any], k: Kernel, rng: np.random.Generator, shape: tuple[int, ...]) -> None:
    outer, axis, inner = shape
    if k.attr("inner_is_one") == "true":
        inner = 1
    storage = k.attr("storage")
    x = rand(rng, (outer, axis, inner), DTYPES[storage])
    kind = k.attr("kind")
    if kind in ("max", "min") and x.size > 2:
        x.reshape(-1)[x.size // 2] = np.nan  # NaN propagates (nan_mode = "propagate")
    o = np.full((outer, inner), np.nan, np.float32)
    fn(x, o, outer, axis, inner)
    xs = f64(x)
    ref = {"sum": xs.sum(1), "mean": xs.mean(1), "max": xs.max(1), "min": xs.min(1)}[kind]
    bound = (axis + 2) * F32 * np.abs(xs).sum(1) + F32 * np.abs(np.nan_to_num(ref))
    check(k.name, o, ref, bound)


def run_softmax(fn: Callable[..., Any], k: Kernel, rng: np.random.Generator, shape: tuple[int, ...]) -> None:
    rows, cols = shape
    storage = k.attr("storage")
    x = rand(rng, (rows, cols), DTYPES[storage], 3.0)
    o = np.full((rows, cols), np.nan, DTYPES[storage])
    fn(x, o, rows, cols)
    xs = f64(x)
    e = np.exp(xs - xs.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    bound = ROUNDOFF[storage] * ref + (cols + 8) * 4 * F32 * ref + SUBNORMAL[storage]
    check(k.name, o, ref, bound)


def run_norm(fn: Callable[..., Any], k: Kernel, rng: np.random.Generator, shape: tuple[int, ...]) -> None:
    rows, cols = shape
    storage = k.attr("storage")
    eps = float(k.attr("epsilon"))
    x = rand(rng, (rows, cols), DTYPES[storage])
    o = np.full((rows, cols), np.nan, DTYPES[storage])
    fn(x, o, rows, cols)
    xs = f64(x)
    if k.attr("kind") == "layernorm":
        centered = xs - xs.mean(1, keepdims=True)
        ref = centered / np.sqrt((centered ** 2).mean(1, keepdims=True) + eps)
    else:
        ref = xs / np.sqrt((xs ** 2).mean(1, keepdims=True) + eps)
    bound = (ROUNDOFF[storage] * np.abs(ref) + (cols + 8) * 4 * F32 * (np.abs(ref) + 1) +
             SUBNORMAL[storage])
    check(k.name, o, ref, bound)


def lcg_keeps(counter: np.ndarray, seed: int, p: float) -> np.ndarray:
    """The original's dropout rule: (counter · 1664525 + seed + 1013904223) mod 2^32 >= p · 2^32."""
    hashed = (counter.astype(object) * 1664525 + seed + 1013904223) % (1 << 32)
    return (hashed >= int(p * 4294967296.0)).astype(bool)


def run_attention(fn: Callable[..., Any], k: Kernel, rng: np.random.Generator, shape: tuple[int, ...]) -> None:
    """The original's forward attention: causal and windows at the top left (key j vs query i),
    bias + soft cap before the mask, LCG dropout with the undropped denominator, NaN rows."""
    b, hq, hkv, sq, sk, d, dv = shape
    stored = DTYPES[k.attr("storage")]
    scale = float(np.float32(float(k.attr("scale"))))
    causal = k.attr("causal") == "true"
    left, right = int(k.attr("window_left")), int(k.attr("window_right"))
    cap = float(np.float32(float(k.attr("softcap"))))
    p_drop = float(np.float32(float(k.attr("dropout_p"))))
    seed = int(k.attr("dropout_seed"))
    q = rand(rng, (b, hq, sq, d), stored)
    kk = rand(rng, (b, hkv, sk, d), stored)
    v = rand(rng, (b, hkv, sk, dv), stored)
    args: list[Any] = [q, kk, v]
    bias = None
    if k.attr("bias") == "true":
        bias = rand(rng, (b, hq, sq, sk), np.float32, 0.5)
        args.append(bias)
    o = np.full((b, hq, sq, dv), 7.0, np.float32)
    args.append(o)
    saved = k.attr("lse_checkpoint") == "saved"
    lse = np.full((b, hq, sq), 7.0, np.float32)
    if saved:
        args.append(lse)
    fn(*args, b, hq, hkv, sq, sk, d, dv)
    ref = np.full((b, hq, sq, dv), np.nan)
    bound = np.zeros((b, hq, sq, dv))
    ref_lse = np.full((b, hq, sq), np.nan)
    lse_bound = np.zeros((b, hq, sq))
    inverse = float(np.float32(1.0 / (1.0 - p_drop))) if p_drop > 0 else 1.0
    for bi in range(b):
        for hi in range(hq):
            g = hi // (hq // hkv)
            for i in range(sq):
                keys = np.arange(sk)
                visible = np.ones(sk, bool)
                if causal:
                    visible &= keys <= i
                if left >= 0:
                    visible &= keys >= i - left
                if right >= 0:
                    visible &= keys <= i + right
                if not visible.any():
                    continue  # NaN, as the original
                dot = f64(kk[bi, g]) @ f64(q[bi, hi, i])
                s = scale * dot
                err = (d + 2) * F32 * scale * (np.abs(f64(kk[bi, g])) @ np.abs(f64(q[bi, hi, i])))
                if bias is not None:
                    s = s + f64(bias[bi, hi, i])
                if cap > 0:
                    s = cap * np.tanh(s / cap)
                    err = err + 8 * F32 * (np.abs(s) + 1)
                s = np.where(visible, s, -np.inf)
                m = s.max()
                w = np.exp(s - m)
                out_w = w
                if p_drop > 0:
                    counter = (((bi * hq + hi) * sq + i) * sk + keys).astype(np.int64)
                    out_w = np.where(lcg_keeps(counter, seed, p_drop), w * inverse, 0.0)
                ref[bi, hi, i] = (out_w @ f64(v[bi, g])) / w.sum()
                vmax = np.abs(f64(v[bi, g][visible])).max(axis=0) * inverse
                n = int(visible.sum())
                bound[bi, hi, i] = vmax * (4 * err.max() + (n + d + 16) * 4 * F32) + 2 * F32
                ref_lse[bi, hi, i] = m + math.log(w.sum())
                lse_bound[bi, hi, i] = 2 * err.max() + (n + 16) * F32 + 4 * F32 * abs(ref_lse[bi, hi, i])
    check(k.name, o, ref, bound)
    if saved:
        check(k.name + " row_lse", lse, ref_lse, lse_bound)


RUNNERS = {"matmul_kernel": run_matmul, "reduce_kernel": run_reduce,
           "softmax_kernel": run_softmax, "norm_kernel": run_norm,
           "attention_kernel": run_attention}
SHAPES = {"matmul_kernel": [(1, 1, 1), (5, 3, 7), (17, 9, 33), (33, 17, 70)],
          "reduce_kernel": [(1, 1, 1), (3, 5, 7), (2, 33, 1), (4, 1, 3), (5, 130, 2)],
          "softmax_kernel": [(1, 1), (3, 5), (7, 33), (2, 130)],
          "norm_kernel": [(1, 1), (3, 5), (7, 33), (2, 130)],
          # B, Hq, Hkv, Sq, Sk, D, Dv: size 1, grouped heads, Sq > Sk (empty windowed rows)
          "attention_kernel": [(1, 1, 1, 1, 1, 1, 1), (2, 4, 2, 5, 7, 3, 5),
                               (1, 2, 1, 9, 33, 8, 4), (1, 1, 1, 40, 17, 16, 16)]}


def wrap_around(fn: Callable[..., Any], k: Kernel) -> None:
    """An s8 matmul whose sums pass 2^31 wraps around in i32, as mma.sync's s32 accumulator does
    (no saturation): K = 140000 products of -128 · -128 sum to 2293760000 = -2001207296 + 2^32."""
    if (k.attr("a") not in ("s8", "int8") or k.attr("a_layout") == "col_major" or
            k.attr("b_layout") != "col_major"):
        return
    kk = 140000
    a = np.full((1, kk), -128, np.int8)
    b = np.full((2, kk), -128, np.int8)
    b[1, ::2] = 127  # the second column: 70000 · (-128 · 127) + 70000 · 16384 = 9800000
    d = np.zeros((1, 2), np.int32)
    fn(a, b, d, 1, 2, kk)
    expected = [2293760000 - 2 ** 32, 70000 * (-128 * 127) + 70000 * 16384]
    if d.tolist() != [expected]:
        raise AssertionError(f"{k.name}: wrap-around sums {d.tolist()}, expected {[expected]}")


def mismatch(module: Any, k: Kernel) -> None:
    """A dimension that disagrees with its buffer is INVALID_ARGUMENT naming both."""
    if k.op != "softmax_kernel":
        return
    storage = DTYPES[k.attr("storage")]
    x = np.zeros((3, 5), storage)
    o = np.zeros((3, 5), storage)
    try:
        getattr(module, k.name)(x, o, 3, 6)
    except tj.TesseraError as error:
        text = str(error)
        if ("INVALID_ARGUMENT" not in text or "dimension 1 of argument #0" not in text or
                "argument #3" not in text):
            raise AssertionError(f"{k.name}: unexpected message for a mismatched dim: {text}")
        return
    raise AssertionError(f"{k.name}: a mismatched dimension was accepted")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", help="write a JUnit XML report here")
    options = parser.parse_args(argv)
    rng = np.random.default_rng(20261206)
    report: list[tuple[str, float, Optional[str]]] = []
    ctx = tj.Context()
    for path in sorted(glob.glob(os.path.join(HERE, "*.mlir"))):
        text = open(path).read()
        if "tessera-jit compile %s --target host" not in text:
            continue  # the negative fixtures
        module = ctx.compile(text, target="host")
        for k in kernels(text):
            for shape in SHAPES[k.op]:
                name = f"{os.path.basename(path)}:{k.name}{list(shape)}"
                start = time.monotonic()
                message = None
                try:
                    RUNNERS[k.op](getattr(module, k.name), k, rng, shape)
                    if shape == SHAPES[k.op][1]:
                        mismatch(module, k)
                        wrap_around(getattr(module, k.name), k)
                except Exception:  # noqa: BLE001 - every failure is reported
                    message = traceback.format_exc()
                report.append((name, time.monotonic() - start, message))
                print(("FAIL " if message else "ok   ") + name + (f"\n{message}" if message else ""))
        module.close()
    failures = sum(1 for _, _, m in report if m)
    print(f"original: {len(report) - failures} passed, {failures} failed")
    if options.junit:
        with open(options.junit, "w") as f:
            f.write(f'<testsuites><testsuite name="original" tests="{len(report)}" '
                    f'failures="{failures}">\n')
            for name, seconds, msg in report:
                f.write(f'<testcase classname="original" name={quoteattr(name)} time="{seconds:.3f}">')
                if msg:
                    f.write(f"<failure message={quoteattr(msg.strip().splitlines()[-1])}>"
                            f"{escape(msg)}</failure>")
                f.write("</testcase>\n")
            f.write("</testsuite></testsuites>\n")
    return 1 if failures or not report else 0


if __name__ == "__main__":
    sys.exit(main())
