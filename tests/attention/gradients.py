#!/usr/bin/env python3
"""tile.attention_backward against float64 NumPy: an analytic reference written here (checked in
turn against central finite differences of a float64 forward on tiny shapes), on the host
target, for f32, f16 and bf16 storage, grouped heads, Sq != Sk, windows that empty rows, bias, soft
cap, dropout (both rules), key lengths and several blocks of keys and queries; and the same
bits for 1 and 3 threads.

    gradients.py [--junit PATH]

Needs NumPy and ml_dtypes, TESSERA_JIT_LIBRARY and PYTHONPATH=capi/python
(tools/differential_test.sh runs it).
"""
from __future__ import annotations

import argparse
import math
import sys
import zlib
from typing import Any, Optional

import ml_dtypes
import numpy as np

import tessera_jit as tj
from checks import run_checks

STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def keeps(rule: str, seed: int, p: float, counter: int) -> bool:
    """docs/ir.md's dropout keep rules."""
    m64 = (1 << 64) - 1
    if rule == "lcg":
        h = (counter * 1664525 + seed + 1013904223) & 0xFFFFFFFF
    else:
        golden = 0x9E3779B97F4A7C15
        z = ((counter ^ ((seed * golden) & m64)) + golden) & m64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m64
        z ^= z >> 31
        h = z >> 32
    return h >= int(p * 4294967296.0)


class Case:
    """One attention configuration: shapes and the settings both ops share."""

    def __init__(self, name: str, storage: str, b: int, h: int, hkv: int, sq: int, sk: int,
                 d: int, dv: int, clauses: dict[str, Any]):
        self.name, self.storage = name, storage
        self.b, self.h, self.hkv, self.sq, self.sk, self.d, self.dv = b, h, hkv, sq, sk, d, dv
        self.c = clauses

    def source(self) -> str:
        t = self.storage
        q, k, v = (f"memref<?x?x?x?x{t}>",) * 3
        o, lse, bias = f"memref<?x?x?x?x{t}>", "memref<?x?x?xf32>", "memref<?x?x?x?xf32>"
        extra = ""
        if self.c.get("lengths"):
            extra += " key_lengths(%len : memref<?xi32>)"
        if self.c.get("bias"):
            extra += f" bias(%bias : {bias})"
        tail = f" scale({self.c.get('scale', 0.5)})"
        if self.c.get("causal"):
            tail += " causal"
        if self.c.get("window"):
            tail += f" window({self.c['window'][0]}, {self.c['window'][1]})"
        if self.c.get("aligned"):
            tail += f" aligned({self.c['aligned']})"
        if self.c.get("softcap"):
            tail += f" softcap({self.c['softcap']})"
        if self.c.get("dropout"):
            p, seed, rule = self.c["dropout"]
            tail += f" dropout({p}, {seed}) dropout_rule({rule})"
        args = "%len: memref<?xi32>, %bias: memref<?x?x?x?xf32>"
        return f"""
func.func @fwd(%q: {q}, %k: {k}, %v: {v}, %o: {o}, %lse: {lse}, {args}) {{
  tile.attention %q, %k, %v -> %o{extra} lse(%lse : {lse}){tail} : {q}, {k}, {v} -> {o}
  return
}}
func.func @bwd(%do: {o}, %q: {q}, %k: {k}, %v: {v}, %o: {o}, %lse: {lse}, %dq: {q}, %dk: {k},
               %dv: {v}, {args}) {{
  tile.attention_backward %do, %q, %k, %v, %o, %lse -> %dq, %dk, %dv{extra}{tail}
      : {o}, {q}, {k}, {v}, {o}, {lse} -> {q}, {k}, {v}
  return
}}
"""

    def visible(self, bi: int, i: int, lengths: np.ndarray) -> np.ndarray:
        length = min(max(int(lengths[bi]), 0), self.sk)
        p = i if self.c.get("aligned") == "top_left" else i + length - self.sq
        j = np.arange(self.sk)
        seen = j < length
        if self.c.get("causal"):
            seen &= j <= p
        if self.c.get("window"):
            left, right = self.c["window"]
            if left >= 0:
                seen &= j >= p - left
            if right >= 0:
                seen &= j <= p + right
        return seen

    def dropout_factor(self, bi: int, hi: int, i: int) -> np.ndarray:
        if not self.c.get("dropout"):
            return np.ones(self.sk)
        p, seed, rule = self.c["dropout"]
        p = float(np.float32(p))
        base = ((bi * self.h + hi) * self.sq + i) * self.sk
        inverse = float(np.float32(1.0 / (1.0 - p)))
        return np.array([inverse if keeps(rule, seed, p, base + j) else 0.0
                         for j in range(self.sk)])

    def scores(self, q, k, bias, bi, hi, i):
        """Capped scores of row (bi, hi, i) over every key, and the capped-over-raw derivative."""
        g = hi // (self.h // self.hkv)
        scale = float(np.float32(self.c.get("scale", 0.5)))
        s = scale * (k[bi, g] @ q[bi, hi, i])
        if bias is not None:
            s = s + bias[0 if bias.shape[0] == 1 else bi, 0 if bias.shape[1] == 1 else hi, i]
        cap = self.c.get("softcap")
        derivative = np.ones_like(s)
        if cap:
            # a -inf score (a masking bias) stays -inf; its weight is 0 and so is its dS
            s = np.where(np.isneginf(s), s, cap * np.tanh(s / cap))
            derivative = np.where(np.isfinite(s), 1 - (s / cap) ** 2, 0.0)
        return s, derivative, scale

    def forward(self, q, k, v, bias, lengths):
        """float64 O and lse."""
        o = np.zeros((self.b, self.h, self.sq, self.dv))
        lse = np.full((self.b, self.h, self.sq), -np.inf)
        for bi in range(self.b):
            for hi in range(self.h):
                g = hi // (self.h // self.hkv)
                for i in range(self.sq):
                    seen = self.visible(bi, i, lengths)
                    if not seen.any():
                        continue
                    s, _, _ = self.scores(q, k, bias, bi, hi, i)
                    s = np.where(seen, s, -np.inf)
                    m = s.max()
                    if m == -np.inf:  # every visible key masked by the bias: NaN, lse -inf
                        o[bi, hi, i] = np.nan
                        continue
                    w = np.exp(s - m)
                    o[bi, hi, i] = ((w * self.dropout_factor(bi, hi, i)) @ v[bi, g]) / w.sum()
                    lse[bi, hi, i] = m + math.log(w.sum())
        return o, lse

    def backward(self, do, q, k, v, bias, lengths):
        """float64 dQ, dK, dV (analytic)."""
        o, lse = self.forward(q, k, v, bias, lengths)
        dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
        for bi in range(self.b):
            for hi in range(self.h):
                g = hi // (self.h // self.hkv)
                for i in range(self.sq):
                    seen = self.visible(bi, i, lengths)
                    if not seen.any() or not np.isfinite(lse[bi, hi, i]):
                        continue  # contributes nothing
                    s, derivative, scale = self.scores(q, k, bias, bi, hi, i)
                    p = np.where(seen, np.exp(s - lse[bi, hi, i]), 0.0)
                    z = self.dropout_factor(bi, hi, i)
                    dp = z * (v[bi, g] @ do[bi, hi, i])
                    delta = do[bi, hi, i] @ o[bi, hi, i]
                    ds = p * (dp - delta) * derivative
                    dq[bi, hi, i] = scale * (ds @ k[bi, g])
                    dk[bi, g] += scale * np.outer(ds, q[bi, hi, i])
                    dv[bi, g] += np.outer(z * p, do[bi, hi, i])
        return dq, dk, dv


CASES = [
    Case("causal_f32", "f32", 1, 2, 1, 5, 7, 4, 3, {"causal": True}),
    Case("grouped_window_bias_f32", "f32", 2, 4, 2, 6, 9, 3, 5,
         {"causal": True, "window": [2, 1], "aligned": "top_left", "bias": True}),
    Case("softcap_dropout_mix_f32", "f32", 1, 2, 2, 7, 6, 5, 4,
         {"softcap": 2.0, "dropout": [0.3, 11, "mix"], "scale": 0.7}),
    Case("dropout_lcg_lengths_bf16", "bf16", 2, 2, 1, 4, 8, 8, 8,
         {"dropout": [0.5, -3, "lcg"], "lengths": True, "causal": True}),
    # Sq > Sk with a window: rows that see no key (their dQ is zero, they add nothing to dK/dV)
    Case("empty_rows_f32", "f32", 1, 1, 1, 12, 5, 2, 2,
         {"causal": True, "window": [1, 0], "aligned": "top_left"}),
    Case("size_one_f32", "f32", 1, 1, 1, 1, 1, 1, 1, {}),
    # A bias of -inf masks key 0 everywhere and every key of row 2 (its O is NaN, its lse -inf):
    # with a soft cap, the masked keys keep weight 0 and the masked row contributes nothing.
    Case("masked_by_bias_softcap_f32", "f32", 1, 2, 1, 5, 6, 3, 4,
         {"bias": True, "mask_bias": True, "softcap": 3.0}),
    # Several blocks of 32 keys and of 32 queries, the last ones partial, with block edges inside
    # a row's window (the host's work units are such blocks).
    Case("blocks_causal_window_f32", "f32", 1, 4, 2, 70, 45, 16, 12,
         {"causal": True, "window": [40, 3]}),
    Case("blocks_lengths_bias_dropout_f16", "f16", 2, 2, 1, 33, 97, 8, 8,
         {"lengths": True, "bias": True, "dropout": [0.2, 5, "mix"], "softcap": 5.0}),
]


def inputs(case: Case, rng: np.random.Generator):
    st = STORAGE[case.storage]
    q = rng.standard_normal((case.b, case.h, case.sq, case.d)).astype(st)
    k = rng.standard_normal((case.b, case.hkv, case.sk, case.d)).astype(st)
    v = rng.standard_normal((case.b, case.hkv, case.sk, case.dv)).astype(st)
    bias = (0.5 * rng.standard_normal((1, case.h, case.sq, case.sk))).astype(np.float32)
    if case.c.get("mask_bias"):
        bias[..., 0] = -np.inf
        bias[:, :, 2, :] = -np.inf
    lengths = rng.integers(1, case.sk + 1, case.b).astype(np.int32) if case.c.get("lengths") \
        else np.full(case.b, case.sk, np.int32)
    do = rng.standard_normal((case.b, case.h, case.sq, case.dv)).astype(st)
    return q, k, v, bias, lengths, do


def f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


def run_compiled(module, case: Case, q, k, v, bias, lengths, do):
    st = STORAGE[case.storage]
    o = np.zeros((case.b, case.h, case.sq, case.dv), st)
    lse = np.zeros((case.b, case.h, case.sq), np.float32)
    module.fwd(q, k, v, o, lse, lengths, bias)
    dq, dk, dv = (np.full(x.shape, np.nan, st) for x in (q, k, v))
    module.bwd(do, q, k, v, o, lse, dq, dk, dv, lengths, bias)
    return o, lse, dq, dk, dv


def check_close(name: str, got: np.ndarray, want: np.ndarray, storage: str) -> None:
    got = f64(got)
    if not np.isfinite(got).all():
        raise AssertionError(f"{name}: {int((~np.isfinite(got)).sum())} element(s) not finite")
    # f32 sums of a few dozen terms, f32 probabilities from the f32 lse; bf16 outputs (and a bf16
    # O feeding D = dO·O) add their rounding.
    relative = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10}.get(storage, 2.0 ** -16)
    bound = relative * (np.abs(want) + np.abs(want).max() + 1e-3)
    bad = ~(np.abs(got - want) <= bound)
    if bad.any():
        i = np.unravel_index(np.argmax(np.where(bad, np.abs(got - want) - bound, -np.inf)),
                             want.shape)
        raise AssertionError(f"{name}: at {i} got {got[i]!r}, expected {want[i]!r} within "
                             f"{bound[i]:.3g} ({int(bad.sum())} of {want.size} off)")


def analytic_matches_finite_differences() -> None:
    """The reference's analytic gradient is the derivative of its forward (tiny shapes)."""
    rng = np.random.default_rng(7)
    for case in CASES[:3]:
        q, k, v, bias, lengths, do = (f64(x) for x in inputs(case, rng))
        bias = bias if case.c.get("bias") else None
        dq, dk, dv = case.backward(do, q, k, v, bias, lengths)
        eps = 1e-6
        for name, x, grad in (("Q", q, dq), ("K", k, dk), ("V", v, dv)):
            for index in list(np.ndindex(x.shape))[:: max(1, x.size // 12)]:
                saved = x[index]
                x[index] = saved + eps
                up = (case.forward(q, k, v, bias, lengths)[0] * do).sum()
                x[index] = saved - eps
                down = (case.forward(q, k, v, bias, lengths)[0] * do).sum()
                x[index] = saved
                numeric = (up - down) / (2 * eps)
                if abs(numeric - grad[index]) > 1e-6 * (1 + abs(numeric)):
                    raise AssertionError(f"{case.name}: d{name}{list(index)} analytic "
                                         f"{grad[index]!r}, finite differences {numeric!r}")


def compiled_matches_reference(ctx, case: Case) -> None:
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    q, k, v, bias, lengths, do = inputs(case, rng)
    with ctx.compile(case.source(), target="host") as module:
        o, lse, dq, dk, dv = run_compiled(module, case, q, k, v, bias, lengths, do)
    ref_bias = bias.astype(np.float64) if case.c.get("bias") else None
    want = case.backward(f64(do), f64(q), f64(k), f64(v), ref_bias, lengths)
    for name, got, ref in zip(("dQ", "dK", "dV"), (dq, dk, dv), want):
        check_close(f"{case.name} {name}", got, ref, case.storage)


def same_bits_for_thread_counts(case: Case) -> None:
    rng = np.random.default_rng(9)
    q, k, v, bias, lengths, do = inputs(case, rng)
    results = []
    for threads in (1, 3):
        ctx = tj.Context(num_threads=threads, cache_dir="")
        with ctx.compile(case.source(), target="host") as module:
            results.append(run_compiled(module, case, q, k, v, bias, lengths, do))
        ctx.close()
    for a, b in zip(*results):
        if a.tobytes() != b.tobytes():
            raise AssertionError(f"{case.name}: 1 and 3 threads give different bits")


DEGENERATE = """
func.func @fwd(%q: memref<?x?x?x?xf32>, %k: memref<?x?x?x?xf32>, %v: memref<?x?x?x?xf32>,
               %o: memref<?x?x?x?xf32>, %l: memref<?x?x?xf32>) {
  tile.attention %q, %k, %v -> %o lse(%l : memref<?x?x?xf32>) causal
      window(9223372036854775807, 9223372036854775807) dropout(0.5, -1)
      : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32> -> memref<?x?x?x?xf32>
  return
}
func.func @bwd(%do: memref<?x?x?x?xf32>, %q: memref<?x?x?x?xf32>, %k: memref<?x?x?x?xf32>,
               %v: memref<?x?x?x?xf32>, %o: memref<?x?x?x?xf32>, %l: memref<?x?x?xf32>,
               %dq: memref<?x?x?x?xf32>, %dk: memref<?x?x?x?xf32>, %dv: memref<?x?x?x?xf32>) {
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %dk, %dv causal
      window(9223372036854775807, 9223372036854775807) dropout(0.5, -1)
      : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>,
        memref<?x?x?x?xf32>, memref<?x?x?xf32>
        -> memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32>
  return
}
"""


def degenerate_shapes_write_every_output(ctx) -> None:
    """Empty extents leave no output unwritten: an lse when Dv = 0, dV when D = 0, zeros for dQ
    when Sk = 0 and for dK, dV when Sq = 0; windows of 2^63 - 1 are unbounded (no wrap)."""
    rng = np.random.default_rng(4)
    with ctx.compile(DEGENERATE, target="host") as module:
        for b, h, hkv, sq, sk, d, dv in [(1, 2, 1, 0, 5, 3, 3), (1, 2, 1, 5, 0, 3, 3),
                                         (1, 2, 1, 4, 4, 0, 3), (1, 2, 1, 4, 4, 3, 0),
                                         (1, 1, 1, 6, 6, 2, 2)]:
            q = rng.standard_normal((b, h, sq, d)).astype(np.float32)
            k = rng.standard_normal((b, hkv, sk, d)).astype(np.float32)
            v = rng.standard_normal((b, hkv, sk, dv)).astype(np.float32)
            o = np.full((b, h, sq, dv), 7.0, np.float32)
            lse = np.full((b, h, sq), 7.0, np.float32)
            module.fwd(q, k, v, o, lse)
            do = rng.standard_normal(o.shape).astype(np.float32)
            grads = [np.full(x.shape, 7.0, np.float32) for x in (q, k, v)]
            module.bwd(do, q, k, v, o, lse, *grads)
            shape = (b, h, sq, sk, d, dv)
            for name, x in (("O", o), ("lse", lse), ("dQ", grads[0]), ("dK", grads[1]),
                            ("dV", grads[2])):
                if (x == 7.0).any():
                    raise AssertionError(f"{shape}: {name} left unwritten")
            if sk == 0 and not ((grads[0] == 0).all() and (lse == -np.inf).all()):
                raise AssertionError(f"{shape}: no keys must give dQ = 0 and lse = -inf")
            if sq == 0 and not ((grads[1] == 0).all() and (grads[2] == 0).all()):
                raise AssertionError(f"{shape}: no queries must give dK = dV = 0")
            if sq == 6:
                # causal with an unbounded window: query i sees keys 0..i
                case = Case("unbounded", "f32", b, h, hkv, sq, sk, d, dv,
                            {"causal": True, "dropout": [0.5, -1, "mix"], "scale": 1 / math.sqrt(d)})
                want = case.backward(f64(do), f64(q), f64(k), f64(v), None,
                                     np.full(b, sk, np.int32))
                for name, got, ref in zip(("dQ", "dK", "dV"), grads, want):
                    check_close(f"unbounded window {name}", got, ref, "f32")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", help="write a JUnit XML report here")
    options = parser.parse_args(argv)
    ctx = tj.Context()
    checks = [("analytic_matches_finite_differences", analytic_matches_finite_differences)]
    checks += [(f"compiled_{c.name}", (lambda c=c: compiled_matches_reference(ctx, c)))
               for c in CASES]
    for case in (CASES[2], CASES[-1]):
        checks.append((f"same_bits_for_thread_counts_{case.name}",
                       lambda case=case: same_bits_for_thread_counts(case)))
    checks.append(("degenerate_shapes_write_every_output",
                   lambda: degenerate_shapes_write_every_output(ctx)))
    return run_checks("attention_gradients", checks, options.junit)


if __name__ == "__main__":
    sys.exit(main())
