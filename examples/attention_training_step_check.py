"""Runs examples/attention_training_step.mlir on the host target at several batch and sequence
sizes and checks the step against float64 NumPy written here: the weight gradients of
L = ½‖O − T‖² (an analytic backward through causal windowed soft-capped grouped-query attention
and the projections, itself checked against central finite differences of the loss) and the
updated weights; a second step from the same inputs must give the same bits.
Prints what it checked; exits 1 when a result is outside the tolerance.
Usage: python3 attention_training_step_check.py (TESSERA_JIT_LIBRARY names libtessera_jit.so)."""
import os
import sys

import numpy as np

import tessera_jit as tj

HEADS, KV_HEADS, HEAD, MODEL = 4, 2, 16, 64
WINDOW, CAP, LR = 7, 20.0, 0.1
# f32 end to end against float64, relative to the largest gradient (sums over B·S·S terms).
TOLERANCE = 1e-4


def attention(q, k, v):
    """float64 forward: o, and per row the capped scores, probabilities and visibility."""
    batch, heads, length, depth = q.shape
    group = heads // k.shape[1]
    i = np.arange(length)[:, None]
    j = np.arange(length)[None, :]
    visible = (j <= i) & (j >= i - WINDOW)
    cache = []
    o = np.zeros_like(q)
    for h in range(heads):
        raw = q[:, h] @ np.swapaxes(k[:, h // group], -1, -2) / np.sqrt(depth)
        s = CAP * np.tanh(raw / CAP)
        masked = np.where(visible, s, -np.inf)
        p = np.exp(masked - masked.max(axis=-1, keepdims=True))
        p = p / p.sum(axis=-1, keepdims=True)
        o[:, h] = p @ v[:, h // group]
        cache.append((s, p))
    return o, cache


def step_gradients(x, t, wq, wk, wv):
    """float64 loss and dWq, dWk, dWv."""
    q = np.einsum("bxsm,hmd->bhsd", x, wq)
    k = np.einsum("bxsm,hmd->bhsd", x, wk)
    v = np.einsum("bxsm,hmd->bhsd", x, wv)
    o, cache = attention(q, k, v)
    do = o - t
    loss = 0.5 * float((do * do).sum())
    group = HEADS // KV_HEADS
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for h in range(HEADS):
        s, p = cache[h]
        g = h // group
        dv[:, g] += np.swapaxes(p, -1, -2) @ do[:, h]
        dp = do[:, h] @ np.swapaxes(v[:, g], -1, -2)
        ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * (1 - (s / CAP) ** 2)
        ds = ds / np.sqrt(HEAD)
        dq[:, h] = ds @ k[:, g]
        dk[:, g] += np.swapaxes(ds, -1, -2) @ q[:, h]
    grads = [np.einsum("bxsm,bhsd->hmd", x, d) for d in (dq, dk, dv)]
    return loss, grads


def finite_differences_agree(rng) -> bool:
    """The analytic dW is the derivative of the float64 loss (a few entries of each weight)."""
    x = rng.standard_normal((1, 1, 5, MODEL))
    t = rng.standard_normal((1, HEADS, 5, HEAD))
    w = [rng.standard_normal((n, MODEL, HEAD)) / 8 for n in (HEADS, KV_HEADS, KV_HEADS)]
    _, grads = step_gradients(x, t, *w)
    eps = 1e-6
    for which in range(3):
        for index in [(0, 0, 0), (1, 17, 5), (KV_HEADS - 1, 63, 15)]:
            saved = w[which][index]
            w[which][index] = saved + eps
            up = step_gradients(x, t, *w)[0]
            w[which][index] = saved - eps
            down = step_gradients(x, t, *w)[0]
            w[which][index] = saved
            numeric = (up - down) / (2 * eps)
            if abs(numeric - grads[which][index]) > 1e-6 * (1 + abs(numeric)):
                print(f"FAILED: dW{'qkv'[which]}{list(index)}: analytic {grads[which][index]!r}, "
                      f"finite differences {numeric!r}")
                return False
    return True


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "attention_training_step.mlir")) as f:
        source = f.read()
    module = tj.Context(default_target="host").compile(source)
    step = module.function("attention_training_step")
    rng = np.random.default_rng(11)
    failures = 0 if finite_differences_agree(rng) else 1
    print(f"{'ok' if not failures else 'FAILED'}: the float64 gradients agree with finite "
          "differences of the loss")
    for batch, length in [(1, 1), (2, 9), (3, 33)]:
        x = rng.standard_normal((batch, 1, length, MODEL)).astype(np.float32)
        t = rng.standard_normal((batch, HEADS, length, HEAD)).astype(np.float32)
        weights = [(rng.standard_normal((n, MODEL, HEAD)) / 8).astype(np.float32)
                   for n in (HEADS, KV_HEADS, KV_HEADS)]

        def run():
            w = [np.array(x_) for x_ in weights]  # updated in place
            grads = [np.empty_like(x_) for x_ in weights]
            workspace = [np.empty(shape, np.float32) for shape in [
                (batch, HEADS, length, HEAD), (batch, KV_HEADS, length, HEAD),
                (batch, KV_HEADS, length, HEAD), (batch, HEADS, length, HEAD),
                (batch, HEADS, length), (batch, HEADS, length, HEAD),
                (batch, HEADS, length, HEAD), (batch, KV_HEADS, length, HEAD),
                (batch, KV_HEADS, length, HEAD), (batch, HEADS, MODEL, HEAD),
                (batch, KV_HEADS, MODEL, HEAD)]]
            step(x, t, *w, *grads, *workspace)
            return w, grads

        new_weights, grads = run()
        _, expected = step_gradients(x.astype(np.float64), t.astype(np.float64),
                                     *[w_.astype(np.float64) for w_ in weights])
        scale = max(float(np.abs(g).max()) for g in expected)
        error = max(float(np.abs(got - want).max()) for got, want in zip(grads, expected))
        updated = max(float(np.abs(got - (w_.astype(np.float64) - LR * g)).max())
                      for got, w_, g in zip(new_weights, weights, expected))
        again_weights, again = run()
        bitwise = all(np.array_equal(a, b) for a, b in zip(again + again_weights,
                                                          grads + new_weights))
        ok = error <= TOLERANCE * scale and updated <= TOLERANCE * scale * LR + 1e-6 and bitwise
        failures += not ok
        print(f"{'ok' if ok else 'FAILED'}: attention_training_step B={batch} S={length}: max "
              f"|dW error| {error:.2e} (largest |dW| {scale:.2e}), max |W error| {updated:.2e}; "
              f"second step {'bit-identical' if bitwise else 'DIFFERS'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
