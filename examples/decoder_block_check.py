"""Runs examples/decoder_block.mlir on the host target at several batch and sequence sizes and
checks it against a float64 NumPy implementation of the same decoder layer, written here.
Prints what it checked; exits 1 when a result is outside the tolerance.
Usage: python3 decoder_block_check.py (TESSERA_JIT_LIBRARY names libtessera_jit.so)."""
import os
import sys

import numpy as np

import tessera_jit as tj

HEADS, KV_HEADS, HEAD, MODEL, HIDDEN = 4, 2, 16, 64, 128
EPS = 1e-5
# f32 end to end against float64: each output is within this of the reference (absolute, the
# outputs are O(1)); measured max errors are ~1e-6.
TOLERANCE = 2e-5


def rms_norm(x, weight):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * weight


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def causal_attention(q, k, v):
    """q [B, H, S, D], k and v [B, Hkv, S, D]: each query sees keys up to its own position."""
    batch, heads, length, depth = q.shape
    group = heads // k.shape[1]
    out = np.zeros_like(q)
    for h in range(heads):
        scores = q[:, h] @ np.swapaxes(k[:, h // group], -1, -2) / np.sqrt(depth)
        scores = np.where(np.tril(np.ones((length, length), bool)), scores, -np.inf)
        p = np.exp(scores - scores.max(axis=-1, keepdims=True))
        out[:, h] = (p / p.sum(axis=-1, keepdims=True)) @ v[:, h // group]
    return out


def reference(x, cos, sin, w):
    """The decoder layer in float64; x [B, 1, S, 64]."""
    h = rms_norm(x, w["norm1"])
    q = np.einsum("bxsm,hmd->bhsd", h, w["wq"])
    k = np.einsum("bxsm,hmd->bhsd", h, w["wk"])
    v = np.einsum("bxsm,hmd->bhsd", h, w["wv"])
    q, k = rope(q, cos, sin), rope(k, cos, sin)
    a = causal_attention(q, k, v)
    o = np.einsum("bhsd,hdm->bsm", a, w["wo"])[:, None]
    r = x + o
    g = rms_norm(r, w["norm2"])
    gate, up = g @ w["wg"], g @ w["wu"]
    return r + (gate / (1 + np.exp(-gate)) * up) @ w["wd"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "decoder_block.mlir")) as f:
        source = f.read()
    module = tj.Context(default_target="host").compile(source)
    block = module.function("decoder_block")
    rng = np.random.default_rng(7)

    def weight(*shape, fan_in):
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    w = {"norm1": (1 + 0.1 * rng.standard_normal(MODEL)).astype(np.float32),
         "wq": weight(HEADS, MODEL, HEAD, fan_in=MODEL),
         "wk": weight(KV_HEADS, MODEL, HEAD, fan_in=MODEL),
         "wv": weight(KV_HEADS, MODEL, HEAD, fan_in=MODEL),
         "wo": weight(HEADS, HEAD, MODEL, fan_in=HEADS * HEAD),
         "norm2": (1 + 0.1 * rng.standard_normal(MODEL)).astype(np.float32),
         "wg": weight(MODEL, HIDDEN, fan_in=MODEL), "wu": weight(MODEL, HIDDEN, fan_in=MODEL),
         "wd": weight(HIDDEN, MODEL, fan_in=HIDDEN)}
    failures = 0
    for batch, length in [(1, 1), (2, 7), (3, 33), (1, 130)]:
        x = rng.standard_normal((batch, 1, length, MODEL)).astype(np.float32)
        angles = np.arange(length)[:, None] * 10000.0 ** (-np.arange(HEAD // 2) / (HEAD // 2))
        cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
        out = np.empty_like(x)
        workspace = [np.empty(shape, np.float32) for shape in [
            (batch, 1, length, MODEL), (batch, HEADS, length, HEAD),
            (batch, KV_HEADS, length, HEAD), (batch, KV_HEADS, length, HEAD),
            (batch, HEADS, length, HEAD), (batch, HEADS, length, MODEL),
            (batch, 1, length, MODEL), (batch, 1, length, HIDDEN), (batch, 1, length, HIDDEN)]]
        block(x, cos, sin, w["norm1"], w["wq"], w["wk"], w["wv"], w["wo"], w["norm2"], w["wg"],
              w["wu"], w["wd"], out, *workspace)
        expected = reference(x.astype(np.float64), cos.astype(np.float64),
                             sin.astype(np.float64),
                             {name: value.astype(np.float64) for name, value in w.items()})
        error = float(np.abs(out - expected).max())
        again = np.empty_like(x)
        block(x, cos, sin, w["norm1"], w["wq"], w["wk"], w["wv"], w["wo"], w["norm2"], w["wg"],
              w["wu"], w["wd"], again, *workspace)
        bitwise = np.array_equal(again, out)
        ok = error <= TOLERANCE and bitwise
        failures += not ok
        print(f"{'ok' if ok else 'FAILED'}: decoder_block B={batch} S={length}: max |error| "
              f"{error:.2e} against float64 NumPy (tolerance {TOLERANCE:.0e}); second run "
              f"{'bit-identical' if bitwise else 'DIFFERS'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
