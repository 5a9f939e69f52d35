"""Cold compile latency of XLA:CPU (through JAX) or Numba for the host compile benchmark's
modules: saxpy, row softmax, relu(A·B + bias) and the MLP head of examples/mlp.mlir.

Run by bench/host_compile_bench with the interpreter of a virtual environment that has JAX and
Numba from PyPI; prints one JSON object: {"version": VERSION, "kernels": {NAME: {"median_ms": M,
"min_ms": m, "first_ms": f}}}. Every sample compiles a fresh function, so nothing comes from a
cache: for JAX `jax.jit(f).lower(*shapes).compile()` (tracing, lowering to StableHLO, XLA's
compile); for Numba the first call of a new `numba.njit` dispatcher on small inputs (type
inference, Numba's and LLVM's passes, the call). Numba's functions are the loops a Numba user
writes for these computations (its matmul loops, not np.dot's BLAS call).

    python host_compile_bench.py --tool jax|numba [--runs N]
"""
import argparse
import json
import math
import statistics
import time

import numpy as np


def jax_modules():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")
    f32 = jnp.float32

    def saxpy(alpha, x, y):
        return alpha * x + y

    def softmax(x):
        return jax.nn.softmax(x, axis=1)

    def dense(a, b, bias):
        return jnp.maximum(a @ b + bias, 0)

    def mlp(x, w1, b1, w2, b2):
        hidden = jnp.maximum(x @ w1 + b1, 0)
        logits = hidden @ w2 + b2
        probs = jax.nn.softmax(logits, axis=1)
        return hidden, logits, probs, jnp.max(probs, axis=1), jnp.mean(jnp.max(probs, axis=1))

    s = jax.ShapeDtypeStruct
    shapes = {
        "saxpy": (saxpy, (s((), f32), s((4096,), f32), s((4096,), f32))),
        "row softmax": (softmax, (s((256, 256), f32),)),
        "matmul+bias+relu": (dense, (s((256, 256), f32), s((256, 256), f32), s((256,), f32))),
        "mlp": (mlp, (s((64, 784), f32), s((784, 256), f32), s((256,), f32),
                      s((256, 10), f32), s((10,), f32))),
    }

    def compiler(name):
        function, args = shapes[name]

        def compile_once():
            # A new function object each time: jax.jit's caches are keyed by it.
            fresh = lambda *a: function(*a)  # noqa: E731
            jax.jit(fresh).lower(*args).compile()

        return compile_once

    return jax.__version__, compiler


def numba_modules():
    import numba

    def saxpy(alpha, x, y, out):
        for i in range(x.shape[0]):
            out[i] = alpha * x[i] + y[i]

    def softmax(x, y):
        for r in range(x.shape[0]):
            top = -math.inf
            for c in range(x.shape[1]):
                top = max(top, x[r, c])
            total = np.float32(0)
            for c in range(x.shape[1]):
                total += math.exp(x[r, c] - top)
            for c in range(x.shape[1]):
                y[r, c] = math.exp(x[r, c] - top) / total

    def dense(a, b, bias, c):
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                c[i, j] = 0
            for k in range(a.shape[1]):
                for j in range(b.shape[1]):
                    c[i, j] += a[i, k] * b[k, j]
            for j in range(b.shape[1]):
                c[i, j] = max(c[i, j] + bias[j], 0)

    def mlp(x, w1, b1, w2, b2, hidden, logits, probs, top):
        for i in range(x.shape[0]):
            for j in range(w1.shape[1]):
                acc = np.float32(0)
                for k in range(x.shape[1]):
                    acc += x[i, k] * w1[k, j]
                hidden[i, j] = max(acc + b1[j], 0)
            for j in range(w2.shape[1]):
                acc = np.float32(0)
                for k in range(w1.shape[1]):
                    acc += hidden[i, k] * w2[k, j]
                logits[i, j] = acc + b2[j]
            best = -math.inf
            for j in range(w2.shape[1]):
                best = max(best, logits[i, j])
            total = np.float32(0)
            for j in range(w2.shape[1]):
                total += math.exp(logits[i, j] - best)
            for j in range(w2.shape[1]):
                probs[i, j] = math.exp(logits[i, j] - best) / total
            top[i] = probs[i, :].max()
        return top.mean()

    z = lambda *shape: np.zeros(shape, np.float32)  # noqa: E731
    inputs = {
        "saxpy": (saxpy, lambda: (np.float32(2), z(8), z(8), z(8))),
        "row softmax": (softmax, lambda: (z(2, 8), z(2, 8))),
        "matmul+bias+relu": (dense, lambda: (z(2, 8), z(8, 8), z(8), z(2, 8))),
        "mlp": (mlp, lambda: (z(2, 784), z(784, 256), z(256), z(256, 10), z(10), z(2, 256),
                              z(2, 10), z(2, 10), z(2))),
    }

    def compiler(name):
        function, make = inputs[name]

        def compile_once():
            numba.njit(function)(*make())

        return compile_once

    return numba.__version__, compiler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", choices=["jax", "numba"], required=True)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    version, compiler = jax_modules() if args.tool == "jax" else numba_modules()
    out = {"version": version, "kernels": {}}
    for name in ["saxpy", "row softmax", "matmul+bias+relu", "mlp"]:
        compile_once = compiler(name)
        start = time.perf_counter()
        compile_once()
        first = (time.perf_counter() - start) * 1e3
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            compile_once()
            times.append((time.perf_counter() - start) * 1e3)
        out["kernels"][name] = {"median_ms": statistics.median(times), "min_ms": min(times),
                                "first_ms": first}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
