#!/usr/bin/env python3
"""Properties of tile.attention's training features that a reference comparison cannot show
(docs/ir.md, tile.attention), on the host target:

* dropout(0, seed) is bit for bit no dropout;
* the kept fraction of dropout(p) with the default rule lies within 5 binomial standard
  deviations of 1 − p (p = 0.1, 0.5), and a different seed keeps a different set;
* every feature together (bias, lse, window, alignment, softcap, dropout) gives the same bits
  for 1, 2 and 3 threads, and for a batch computed alone or inside a larger batch (the kept set
  is a function of the position, not of the schedule or the batch size);
* the host's two paths give the same bits: query rows computed together (blocks of rows sharing
  packed K) and each row alone (a decoding step, which reads K in place);
* a bias or an lse of the wrong shape is INVALID_ARGUMENT before anything runs, naming both.

    properties.py [--junit PATH]

Needs NumPy, TESSERA_JIT_LIBRARY and PYTHONPATH=capi/python (tools/differential_test.sh runs it).
"""
from __future__ import annotations

import argparse
import math
import sys
from typing import Callable, Optional

import numpy as np

import tessera_jit as tj
from checks import run_checks

FEATURES = """
func.func @f(%q: memref<?x4x?x8xf32>, %k: memref<?x2x?x8xf32>, %v: memref<?x2x?x8xf32>,
             %o: memref<?x4x?x8xf32>, %b: memref<1x4x?x?xf32>, %l: memref<?x4x?xf32>) {
  tile.attention %q, %k, %v -> %o bias(%b : memref<1x4x?x?xf32>) lse(%l : memref<?x4x?xf32>)
      causal window(40, 3) aligned(top_left) softcap(4.0) dropout(0.3, 99)
      : memref<?x4x?x8xf32>, memref<?x2x?x8xf32>, memref<?x2x?x8xf32> -> memref<?x4x?x8xf32>
  return
}
"""


def uniform_attention(p: Optional[float], seed: int = 5) -> str:
    """Zero scores (uniform weights 1/Sk) over V = 1: O[i] = kept(i) / (Sk (1 − p))."""
    clause = f" dropout({p}, {seed})" if p is not None else ""
    return f"""
func.func @f(%q: memref<1x1x?x1xf32>, %k: memref<1x1x?x1xf32>, %v: memref<1x1x?x1xf32>,
             %o: memref<1x1x?x1xf32>) {{
  tile.attention %q, %k, %v -> %o{clause}
      : memref<1x1x?x1xf32>, memref<1x1x?x1xf32>, memref<1x1x?x1xf32> -> memref<1x1x?x1xf32>
  return
}}
"""


def features_inputs(rng: np.random.Generator, batch: int, sq: int, sk: int):
    q = rng.standard_normal((batch, 4, sq, 8)).astype(np.float32)
    k = rng.standard_normal((batch, 2, sk, 8)).astype(np.float32)
    v = rng.standard_normal((batch, 2, sk, 8)).astype(np.float32)
    bias = (0.5 * rng.standard_normal((1, 4, sq, sk))).astype(np.float32)
    return q, k, v, bias


def run_features(module, q, k, v, bias):
    batch, _, sq, _ = q.shape
    o = np.full((batch, 4, sq, 8), np.nan, np.float32)
    lse = np.full((batch, 4, sq), np.nan, np.float32)
    module.f(q, k, v, o, bias, lse)
    return o, lse


def dropout_zero_is_no_dropout(ctx) -> None:
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 1, 300, 1)).astype(np.float32) for _ in range(3))
    outputs = []
    for p in (None, 0.0):
        o = np.zeros((1, 1, 300, 1), np.float32)
        with ctx.compile(uniform_attention(p)) as module:
            module.f(q, k, v, o)
        outputs.append(o)
    if not np.array_equal(outputs[0].view(np.uint32), outputs[1].view(np.uint32)):
        raise AssertionError("dropout(0, seed) differs from no dropout")


def kept_fraction_is_binomial(ctx) -> None:
    sq, sk = 64, 1024
    q = np.zeros((1, 1, sq, 1), np.float32)
    k = np.zeros((1, 1, sk, 1), np.float32)
    v = np.ones((1, 1, sk, 1), np.float32)
    for p in (0.1, 0.5):
        kept_sets = []
        for seed in (5, 6):
            o = np.zeros((1, 1, sq, 1), np.float32)
            with ctx.compile(uniform_attention(p, seed)) as module:
                module.f(q, k, v, o)
            kept = np.rint(o.astype(np.float64) * sk * (1 - np.float32(p))).sum()
            n = sq * sk
            sigma = math.sqrt(n * p * (1 - p))
            if abs(kept - n * (1 - p)) > 5 * sigma:
                raise AssertionError(f"p = {p}, seed {seed}: kept {kept:.0f} of {n}, expected "
                                     f"{n * (1 - p):.0f} ± {5 * sigma:.0f}")
            kept_sets.append(o.copy())
        if np.array_equal(kept_sets[0], kept_sets[1]):
            raise AssertionError(f"p = {p}: seeds 5 and 6 keep the same weights")


def same_bits_for_threads_and_batches() -> None:
    rng = np.random.default_rng(2)
    sq, sk = 37, 45
    q, k, v, bias = features_inputs(rng, 3, sq, sk)
    results = []
    for threads in (1, 2, 3):
        ctx = tj.Context(num_threads=threads, cache_dir="")
        with ctx.compile(FEATURES) as module:
            results.append(run_features(module, q, k, v, bias))
            # batch 0 alone, and batches 0-1 of a batch of 2, give the bits of the batch of 3
            alone = run_features(module, q[:1], k[:1], v[:1], bias)
            pair = run_features(module, q[:2], k[:2], v[:2], bias)
        ctx.close()
        for name, part, rows in (("alone", alone, 1), ("in a batch of 2", pair, 2)):
            for got, want in zip(part, results[-1]):
                if not np.array_equal(got.view(np.uint32), want[:rows].view(np.uint32)):
                    raise AssertionError(f"{threads} thread(s): a batch computed {name} differs")
    for threads, (o, lse) in zip((2, 3), results[1:]):
        if not (np.array_equal(o.view(np.uint32), results[0][0].view(np.uint32)) and
                np.array_equal(lse.view(np.uint32), results[0][1].view(np.uint32))):
            raise AssertionError(f"{threads} threads differ from 1 thread")
    if np.isnan(results[0][0]).any():
        raise AssertionError("a row has no visible key: the case should not test empty rows")


# Everything that does not depend on the query's position (so a row computed alone is that row),
# with D and Dv not multiples of a vector and Sk of three blocks, the last partial.
PATHS = """
func.func @f(%q: memref<?x4x?x40xf32>, %k: memref<?x2x?x40xf32>, %v: memref<?x2x?x24xf32>,
             %o: memref<?x4x?x24xf32>, %b: memref<1x4x?x?xf32>, %l: memref<?x4x?xf32>,
             %n: memref<?xi32>) {
  tile.attention %q, %k, %v -> %o key_lengths(%n : memref<?xi32>) bias(%b : memref<1x4x?x?xf32>)
      lse(%l : memref<?x4x?xf32>) softcap(6.0)
      : memref<?x4x?x40xf32>, memref<?x2x?x40xf32>, memref<?x2x?x24xf32> -> memref<?x4x?x24xf32>
  return
}
"""


def blocked_and_direct_paths_agree(ctx) -> None:
    rng = np.random.default_rng(4)
    batch, sq, sk = 2, 37, 70
    q = rng.standard_normal((batch, 4, sq, 40)).astype(np.float32)
    k = rng.standard_normal((batch, 2, sk, 40)).astype(np.float32)
    v = rng.standard_normal((batch, 2, sk, 24)).astype(np.float32)
    bias = (0.5 * rng.standard_normal((1, 4, sq, sk))).astype(np.float32)
    lengths = np.array([70, 33], np.int32)

    def run(module, rows: slice):
        n = rows.stop - rows.start
        o = np.full((batch, 4, n, 24), np.nan, np.float32)
        lse = np.full((batch, 4, n), np.nan, np.float32)
        module.f(np.ascontiguousarray(q[:, :, rows]), k, v, o, np.ascontiguousarray(bias[:, :, rows]),
                 lse, lengths)
        return o, lse

    with ctx.compile(PATHS) as module:
        together = run(module, slice(0, sq))
        for i in range(sq):  # one row and H/Hkv = 2 heads: 2 rows per key, below the packing bar
            alone = run(module, slice(i, i + 1))
            for name, got, want in zip(("O", "lse"), alone, together):
                if not np.array_equal(got.view(np.uint32), want[:, :, i:i + 1].view(np.uint32)):
                    raise AssertionError(f"row {i} alone: {name} differs from the row computed "
                                         "among the others")
    if not np.isfinite(together[0]).all():
        raise AssertionError("every row sees keys here: O must be finite")


def wrong_shapes_are_refused(ctx) -> None:
    rng = np.random.default_rng(3)
    q, k, v, bias = features_inputs(rng, 2, 5, 6)
    with ctx.compile(FEATURES) as module:
        cases = [("bias", (q, k, v, np.zeros((1, 4, 5, 7), np.float32),
                           np.zeros((2, 4, 5), np.float32)), "dimension 3 of argument #4 'b'"),
                 ("lse", (q, k, v, bias, np.zeros((2, 4, 6), np.float32)),
                  "dimension 2 of argument #5 'l'")]
        for what, (qq, kk, vv, bb, ll), expected in cases:
            o = np.full((2, 4, 5, 8), 3.0, np.float32)
            try:
                module.f(qq, kk, vv, o, bb, ll)
            except tj.TesseraError as error:
                text = str(error)
                if "INVALID_ARGUMENT" not in text or expected not in text:
                    raise AssertionError(f"a wrong {what}: unexpected message {text}")
                if not (o == 3.0).all():
                    raise AssertionError(f"a wrong {what}: the output was written")
                continue
            raise AssertionError(f"a wrong {what} shape was accepted")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", help="write a JUnit XML report here")
    options = parser.parse_args(argv)
    ctx = tj.Context()
    checks: list[tuple[str, Callable[[], None]]] = [
        ("dropout_zero_is_no_dropout", lambda: dropout_zero_is_no_dropout(ctx)),
        ("kept_fraction_is_binomial", lambda: kept_fraction_is_binomial(ctx)),
        ("same_bits_for_threads_and_batches", same_bits_for_threads_and_batches),
        ("blocked_and_direct_paths_agree", lambda: blocked_and_direct_paths_agree(ctx)),
        ("wrong_shapes_are_refused", lambda: wrong_shapes_are_refused(ctx)),
    ]
    return run_checks("attention_properties", checks, options.junit)


if __name__ == "__main__":
    sys.exit(main())
