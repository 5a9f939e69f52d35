"""Per-call overhead of the Python package, side by side with a NumPy ufunc call on the same
one-element arrays (the cost of a call, not of its work). Prints a table and writes JSON.

    tools/build_wheel.sh && python -m venv /tmp/v && /tmp/v/bin/pip install dist/*.whl
    /tmp/v/bin/python bench/python_call_bench.py [--json out.json] [--jax]

Target (docs/performance.md): a two-tensor call ≤ 3 µs and ≤ 1.5× NumPy's ufunc call.
"""
import argparse
import json
import platform
import timeit

import numpy as np

import tessera_jit as tj

SOURCE = """
func.func @negate(%x: memref<?xf32>, %y: memref<?xf32>) {
  tile.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32):
    %r = arith.negf %v : f32
    tile.yield %r : f32
  }
  return
}
func.func @add(%x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%x, %y : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tile.yield %r : f32
  }
  return
}
func.func @nothing(%n: i64) {
  return
}
"""


def best_us(call, number=200_000, repeat=7):
    """The best of `repeat` runs, per call, in µs (the least disturbed run)."""
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--jax", action="store_true", help="also time JAX arrays as inputs")
    options = parser.parse_args()

    ctx = tj.Context(default_target="host", cache_dir="", num_threads=1)
    module = ctx.compile(SOURCE)
    negate, add, nothing = module.negate, module.add, module.nothing
    x, y, z = (np.ones(1, np.float32) for _ in range(3))

    rows = []

    def row(name, tessera, numpy_call, numpy_name):
        t = best_us(tessera)
        n = best_us(numpy_call)
        rows.append({"call": name, "tessera_us": round(t, 3), "numpy_call": numpy_name,
                     "numpy_us": round(n, 3), "ratio": round(t / n, 2)})

    row("negate(x, y): 2 tensors", lambda: negate(x, y), lambda: np.negative(x, out=y),
        "np.negative(x, out=y)")
    row("add(x, y, out): 3 tensors", lambda: add(x, y, z), lambda: np.add(x, y, out=z),
        "np.add(x, y, out=z)")
    row("nothing(1): 1 scalar", lambda: nothing(1), lambda: np.negative(x, out=y),
        "np.negative(x, out=y)")
    if options.jax:
        import jax.numpy as jnp
        jx = jnp.ones(1, jnp.float32)
        row("negate(jax x, y): 2 tensors", lambda: negate(jx, y), lambda: np.negative(x, out=y),
            "np.negative(x, out=y)")

    print(f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"tessera_jit {tj.__version__} ({tj.library_path()})")
    print(f"{'call':32} {'tessera µs':>11} {'NumPy call':>24} {'NumPy µs':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['call']:32} {r['tessera_us']:11.3f} {r['numpy_call']:>24} "
              f"{r['numpy_us']:9.3f} {r['ratio']:6.2f}")
    if options.json:
        with open(options.json, "w") as f:
            json.dump({"python": platform.python_version(), "numpy": np.__version__,
                       "machine": platform.machine(), "rows": rows}, f, indent=2)
    ctx.close()


if __name__ == "__main__":
    main()
