"""Tessera host code against NumPy, side by side in one process.

Every Tile op at a small (L1-resident), medium and large size; for each, >= 11 interleaved
pairs (Tessera, NumPy) on the same inputs, the ratio time(Tessera)/time(NumPy) per pair, the
median and range. The machine's copy and read bandwidth (NumPy copyto / max over 64 MiB) are
measured in the same run as the ceiling of the memory-bound ops. Timings are invoke time
through the Python binding (its per-call overhead is measured and reported separately).

Run by bench/numpy_bench.sh, which builds the library and a virtual environment with NumPy
from PyPI. Usage: numpy_bench.py --threads N --json OUT
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import tessera_jit as tj

PAIRS = 11


def timed(fn, reps):
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - start) / reps


def reps_for(fn):
    """Repetitions so one sample takes >= 20 ms."""
    once = timed(fn, 1)
    return max(1, min(100000, int(0.02 / max(once, 1e-7))))


def pairs(tessera, numpy_fn):
    tessera()
    numpy_fn()  # warm up both
    reps = max(reps_for(tessera), reps_for(numpy_fn))
    ratios, t_times, n_times = [], [], []
    for _ in range(PAIRS):
        t = timed(tessera, reps)
        n = timed(numpy_fn, reps)
        t_times.append(t)
        n_times.append(n)
        ratios.append(t / n)
    return {"tessera_s": statistics.median(t_times), "numpy_s": statistics.median(n_times),
            "ratio_median": statistics.median(ratios), "ratio_min": min(ratios),
            "ratio_max": max(ratios), "reps": reps}


def gelu_tanh(x, out):
    # NumPy's best in-place form of 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
    np.multiply(x, x, out=out)
    out *= 0.044715 * x
    out += x
    out *= 0.7978845608
    np.tanh(out, out=out)
    out += 1.0
    out *= x
    out *= 0.5


def softmax_numpy(x, out):
    m = x.max(axis=1, keepdims=True)
    np.subtract(x, m, out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=1, keepdims=True)


def rms_norm_numpy(x, w, out):
    np.multiply(x, x, out=out)
    scale = out.mean(axis=1, keepdims=True)
    scale += 1e-5
    np.sqrt(scale, out=scale)
    np.divide(x, scale, out=out)
    out *= w


def layer_norm_numpy(x, w, b, out):
    mean = x.mean(axis=1, keepdims=True)
    np.subtract(x, mean, out=out)
    var = np.mean(out * out, axis=1, keepdims=True)
    var += 1e-5
    np.sqrt(var, out=var)
    out /= var
    out *= w
    out += b


def attention_numpy(q, k, v, causal):
    """NumPy's best float32 form: batched matmuls and an in-place softmax."""
    scores = np.matmul(q, np.swapaxes(k, -1, -2))
    scores *= np.float32(1.0 / np.sqrt(q.shape[-1]))
    if causal:
        length = q.shape[2]
        scores[..., ~np.tril(np.ones((length, length), bool))] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return np.matmul(scores, v)


ATTENTION = """
func.func @f(%q: memref<?x?x?x?xf32>, %k: memref<?x?x?x?xf32>, %v: memref<?x?x?x?xf32>, %o: memref<?x?x?x?xf32>) {{
  tile.attention %q, %k, %v -> %o{causal} : memref<?x?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xf32> -> memref<?x?x?x?xf32>
  return
}}"""

SOURCES = {
    "saxpy": """
func.func @f(%a: f32, %x: memref<?x?xf32>, %y: memref<?x?xf32>, %o: memref<?x?xf32>) {
  tile.map ins(%a, %x, %y : f32, memref<?x?xf32>, memref<?x?xf32>) outs(%o : memref<?x?xf32>) {
  ^bb0(%s: f32, %xi: f32, %yi: f32):
    %p = arith.mulf %s, %xi : f32
    %r = arith.addf %p, %yi : f32
    tile.yield %r : f32
  }
  return
}""",
    "gelu_tanh": """
func.func @f(%x: memref<?x?xf32>, %o: memref<?x?xf32>) {
  tile.map ins(%x : memref<?x?xf32>) outs(%o : memref<?x?xf32>) {
  ^bb0(%v: f32):
    %c = arith.constant 0.044715 : f32
    %k = arith.constant 0.7978845608 : f32
    %one = arith.constant 1.0 : f32
    %half = arith.constant 0.5 : f32
    %v2 = arith.mulf %v, %v : f32
    %v3 = arith.mulf %v2, %v : f32
    %cv3 = arith.mulf %c, %v3 : f32
    %in = arith.addf %v, %cv3 : f32
    %arg = arith.mulf %k, %in : f32
    %t = math.tanh %arg : f32
    %t1 = arith.addf %one, %t : f32
    %hv = arith.mulf %half, %v : f32
    %r = arith.mulf %hv, %t1 : f32
    tile.yield %r : f32
  }
  return
}""",
    "reduce_sum_axis0": """
func.func @f(%x: memref<?x?xf32>, %o: memref<?xf32>) {
  tile.reduce sum %x -> %o axis = 0 : memref<?x?xf32> -> memref<?xf32>
  return
}""",
    "reduce_sum_axis1": """
func.func @f(%x: memref<?x?xf32>, %o: memref<?xf32>) {
  tile.reduce sum %x -> %o axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}""",
    "reduce_max_axis0": """
func.func @f(%x: memref<?x?xf32>, %o: memref<?xf32>) {
  tile.reduce max %x -> %o axis = 0 : memref<?x?xf32> -> memref<?xf32>
  return
}""",
    "reduce_max_axis1": """
func.func @f(%x: memref<?x?xf32>, %o: memref<?xf32>) {
  tile.reduce max %x -> %o axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}""",
    "reduce_min_axis1": """
func.func @f(%x: memref<?x?xf32>, %o: memref<?xf32>) {
  tile.reduce min %x -> %o axis = 1 : memref<?x?xf32> -> memref<?xf32>
  return
}""",
    "softmax": """
func.func @f(%x: memref<?x?xf32>, %o: memref<?x?xf32>) {
  tile.softmax %x -> %o : memref<?x?xf32> -> memref<?x?xf32>
  return
}""",
    "rms_norm": """
func.func @f(%x: memref<?x?xf32>, %w: memref<?xf32>, %o: memref<?x?xf32>) {
  tile.norm rms %x -> %o weight(%w : memref<?xf32>) : memref<?x?xf32> -> memref<?x?xf32>
  return
}""",
    "layer_norm": """
func.func @f(%x: memref<?x?xf32>, %w: memref<?xf32>, %b: memref<?xf32>, %o: memref<?x?xf32>) {
  tile.norm layer %x -> %o weight(%w : memref<?xf32>) bias(%b : memref<?xf32>) : memref<?x?xf32> -> memref<?x?xf32>
  return
}""",
    "attention": ATTENTION.format(causal=""),
    "attention_causal": ATTENTION.format(causal=" causal"),
    "matmul": """
func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %o: memref<?x?xf32>) {
  tile.matmul %a, %b -> %o : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}""",
    "matmul_bias_relu": """
func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %bias: memref<?xf32>, %o: memref<?x?xf32>) {
  tile.matmul %a, %b -> %o bias(%bias : memref<?xf32>) activation(relu) : memref<?x?xf32>, memref<?x?xf32> -> memref<?x?xf32>
  return
}""",
}

# (op, label, shape); memory-bound ops carry the bytes they must move.
SIZES = {"small": (64, 64), "medium": (512, 512), "large": (4096, 4096)}
MATMUL_SIZES = [("small", 64), ("medium", 512), ("large", 1024)]


# The instruction-set extensions that choose host kernels (x86 /proc/cpuinfo flag names).
ISA_FLAGS = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
             "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16"]


def cpu_description():
    """The CPU's model name, vendor, family/model and the ISA_FLAGS it has, from /proc/cpuinfo."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    flags = set(fields.get("flags", "").split())
    return {"cpu": fields.get("model name", platform.processor() or platform.machine()),
            "vendor": fields.get("vendor_id", "?"),
            "family_model": f"{fields.get('cpu family', '?')}/{fields.get('model', '?')}",
            "isa": [flag for flag in ISA_FLAGS if flag in flags]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", default="numpy_bench.json")
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    options = parser.parse_args()

    context = tj.Context(default_target="host", cache_dir="", num_threads=options.threads)
    functions = {name: context.compile(src).function("f") for name, src in SOURCES.items()}
    rng = np.random.default_rng(7)

    rows = []
    # The ceiling: copy and read bandwidth over 64 MiB.
    big = rng.standard_normal((4096, 4096), dtype=np.float32)
    dst = np.empty_like(big)
    copy_s = statistics.median(timed(lambda: np.copyto(dst, big), 5) for _ in range(PAIRS))
    read_s = statistics.median(timed(lambda: big.max(), 5) for _ in range(PAIRS))
    copy_gbs = 2 * big.nbytes / copy_s / 1e9
    read_gbs = big.nbytes / read_s / 1e9
    tiny = np.ones((1, 1), np.float32)
    overhead_s = timed(lambda: functions["softmax"](tiny, tiny.copy()), 20000)

    sizes = {"small": SIZES["small"]} if options.quick else SIZES
    for label, shape in sizes.items():
        x = rng.standard_normal(shape, dtype=np.float32)
        y = rng.standard_normal(shape, dtype=np.float32)
        out = np.empty_like(x)
        ref = np.empty_like(x)
        vec = rng.standard_normal(shape[1], dtype=np.float32)
        col = np.empty(shape[0], np.float32)
        nbytes = x.nbytes
        cases = [
            ("saxpy", lambda: functions["saxpy"](1.5, x, y, out),
             lambda: (np.multiply(x, 1.5, out=ref), np.add(ref, y, out=ref)), 3 * nbytes, copy_gbs),
            ("gelu_tanh", lambda: functions["gelu_tanh"](x, out), lambda: gelu_tanh(x, ref),
             2 * nbytes, copy_gbs),
            ("reduce_sum_axis0", lambda: functions["reduce_sum_axis0"](x, vec),
             lambda: np.sum(x, axis=0, out=vec), nbytes, read_gbs),
            ("reduce_sum_axis1", lambda: functions["reduce_sum_axis1"](x, col),
             lambda: np.sum(x, axis=1, out=col), nbytes, read_gbs),
            ("reduce_max_axis0", lambda: functions["reduce_max_axis0"](x, vec),
             lambda: np.max(x, axis=0, out=vec), nbytes, read_gbs),
            ("reduce_max_axis1", lambda: functions["reduce_max_axis1"](x, col),
             lambda: np.max(x, axis=1, out=col), nbytes, read_gbs),
            ("reduce_min_axis1", lambda: functions["reduce_min_axis1"](x, col),
             lambda: np.min(x, axis=1, out=col), nbytes, read_gbs),
            ("softmax", lambda: functions["softmax"](x, out), lambda: softmax_numpy(x, ref),
             2 * nbytes, copy_gbs),
            ("rms_norm", lambda: functions["rms_norm"](x, vec, out),
             lambda: rms_norm_numpy(x, vec, ref), 2 * nbytes, copy_gbs),
            ("layer_norm", lambda: functions["layer_norm"](x, vec, vec, out),
             lambda: layer_norm_numpy(x, vec, vec, ref), 2 * nbytes, copy_gbs),
        ]
        for op, tessera, numpy_fn, moved, ceiling in cases:
            r = pairs(tessera, numpy_fn)
            gbs = moved / r["tessera_s"] / 1e9
            rows.append(dict(op=op, size=label, shape=list(shape), threads=options.threads,
                             **r, tessera_gbs=gbs, ceiling_gbs=ceiling,
                             of_ceiling=gbs / ceiling))
    matmuls = MATMUL_SIZES[:1] if options.quick else MATMUL_SIZES
    for label, n in matmuls:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        bias = rng.standard_normal(n, dtype=np.float32)
        c = np.empty((n, n), np.float32)
        cref = np.empty((n, n), np.float32)
        flops = 2.0 * n * n * n
        for op, tessera, numpy_fn in [
            ("matmul", lambda: functions["matmul"](a, b, c), lambda: np.matmul(a, b, out=cref)),
            ("matmul_bias_relu", lambda: functions["matmul_bias_relu"](a, b, bias, c),
             lambda: np.maximum(np.add(np.matmul(a, b, out=cref), bias, out=cref), 0, out=cref)),
        ]:
            r = pairs(tessera, numpy_fn)
            rows.append(dict(op=op, size=label, shape=[n, n, n], threads=options.threads, **r,
                             tessera_gflops=flops / r["tessera_s"] / 1e9,
                             numpy_gflops=flops / r["numpy_s"] / 1e9))
        if not np.allclose(c, cref, rtol=1e-3, atol=1e-2):
            sys.exit(f"matmul {n}: Tessera and NumPy disagree")

    # Attention [B, H, S, 64]: 4·B·H·S²·64 flops (half of them with causal masking).
    attentions = [("small", 1, 4, 64)] if options.quick else [("small", 1, 4, 64),
                                                               ("medium", 1, 8, 512),
                                                               ("large", 2, 8, 2048)]
    for label, batch, heads, length in attentions:
        q, k, v = (rng.standard_normal((batch, heads, length, 64), dtype=np.float32)
                   for _ in range(3))
        o = np.empty_like(q)
        flops = 4.0 * batch * heads * length * length * 64
        for op, causal in [("attention", False), ("attention_causal", True)]:
            r = pairs(lambda: functions[op](q, k, v, o), lambda: attention_numpy(q, k, v, causal))
            rows.append(dict(op=op, size=label, shape=[batch, heads, length, 64],
                             threads=options.threads, **r,
                             tessera_gflops=flops / r["tessera_s"] / 1e9,
                             numpy_gflops=flops / r["numpy_s"] / 1e9))
            if not np.allclose(o, attention_numpy(q, k, v, causal), rtol=1e-4, atol=1e-5):
                sys.exit(f"{op} {label}: Tessera and NumPy disagree")

    result = {
        "machine": {**cpu_description(), "cores": os.cpu_count(), "numpy": np.__version__,
                    "blas": np.show_config(mode="dicts").get("Build Dependencies", {})
                    .get("blas", {}).get("version", "?")},
        "threads": options.threads, "copy_gbs": copy_gbs, "read_gbs": read_gbs,
        "binding_overhead_us": overhead_s * 1e6, "rows": rows}
    with open(options.json, "w") as f:
        json.dump(result, f, indent=1)
    print(f"\n{result['machine']['cpu']}, NumPy {np.__version__} (OpenBLAS "
          f"{result['machine']['blas']}), {options.threads} thread(s); copy {copy_gbs:.1f} GB/s, "
          f"read {read_gbs:.1f} GB/s; binding overhead {overhead_s * 1e6:.1f} us/call")
    print(f"{result['machine']['vendor']} family/model {result['machine']['family_model']}, "
          f"{result['machine']['cores']} cores; ISA: {' '.join(result['machine']['isa'])}")
    print(f"{'op':18} {'size':7} {'tessera':>10} {'numpy':>10} {'ratio':>7} {'range':>13}  machine")
    for r in rows:
        extra = (f"{r['of_ceiling'] * 100:5.0f}% of ceiling" if "of_ceiling" in r else
                 f"{r['tessera_gflops']:6.1f} vs {r['numpy_gflops']:6.1f} GFLOP/s")
        print(f"{r['op']:18} {r['size']:7} {r['tessera_s'] * 1e3:8.3f}ms {r['numpy_s'] * 1e3:8.3f}ms "
              f"{r['ratio_median']:7.2f} {r['ratio_min']:5.2f}-{r['ratio_max']:<5.2f}  {extra}")


if __name__ == "__main__":
    main()
