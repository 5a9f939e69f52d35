"""Cold compile latency of Triton for the compile benchmark's three kernels, to a cubin.

Run by bench/compile_bench (its Triton column) with the interpreter of a virtual environment
that has Triton from PyPI; prints one JSON object: {"version": VERSION, "kernels": {NAME:
{"median_ms": M, "min_ms": m, "first_ms": f}}}. Triton needs no GPU to compile for a target
given explicitly (GPUTarget("cuda", <sm>, 32)); TRITON_ALWAYS_COMPILE makes every call a cold
compile (its cache is skipped). FP fusion is off, as in Tessera's kernels (no FMA contraction).

    python triton_compile_bench.py [--runs N] [--arch sm_90]
"""
import argparse
import json
import os
import statistics
import time

os.environ["TRITON_ALWAYS_COMPILE"] = "1"
os.environ["TRITON_DEFAULT_FP_FUSION"] = "0"

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402


@triton.jit
def saxpy(alpha, x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, alpha * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def row_softmax(x, y, cols, BLOCK: tl.constexpr):
    # One program per row, the row in blocks: max, then the sum of exp(x - max), then the
    # write (the schedule of Tessera's block-per-row kernel, for any row length).
    row = tl.program_id(0)
    base = row.to(tl.int64) * cols
    top = tl.full([BLOCK], -float("inf"), tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        top = tl.maximum(top, tl.load(x + base + offs, mask=offs < cols, other=-float("inf")))
    row_max = tl.max(top, 0)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x + base + offs, mask=offs < cols, other=-float("inf"))
        acc += tl.exp(v - row_max)
    total = tl.sum(acc, 0)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x + base + offs, mask=offs < cols, other=0.0)
        tl.store(y + base + offs, tl.exp(v - row_max) / total, mask=offs < cols)


@triton.jit
def dense(a, b, bias, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # relu(A·B + bias), row-major, f32 accumulation (no tensor cores: input_precision="ieee").
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        ta = tl.load(a + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K),
                     other=0.0)
        tb = tl.load(b + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N),
                     other=0.0)
        acc += tl.dot(ta, tb, input_precision="ieee")
    acc += tl.load(bias + rn, mask=rn < N, other=0.0)[None, :]
    acc = tl.maximum(acc, 0.0)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


KERNELS = {
    "elementwise (saxpy)": ASTSource(
        fn=saxpy, signature={"alpha": "fp32", "x": "*fp32", "y": "*fp32", "out": "*fp32",
                             "n": "i64", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 256}),
    "row softmax": ASTSource(
        fn=row_softmax, signature={"x": "*fp32", "y": "*fp32", "cols": "i64",
                                   "BLOCK": "constexpr"},
        constexprs={"BLOCK": 256}),
    "matmul+bias+relu": ASTSource(
        fn=dense, signature={"a": "*fp32", "b": "*fp32", "bias": "*fp32", "c": "*fp32",
                             "M": "i64", "N": "i64", "K": "i64", "BM": "constexpr",
                             "BN": "constexpr", "BK": "constexpr"},
        constexprs={"BM": 16, "BN": 16, "BK": 16}),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    target = GPUTarget("cuda", int(args.arch[3:].rstrip("a")), 32)
    out = {"version": triton.__version__, "kernels": {}}
    for name, source in KERNELS.items():
        start = time.perf_counter()
        triton.compile(source, target=target)
        first = (time.perf_counter() - start) * 1e3
        samples = []
        for _ in range(args.runs):
            start = time.perf_counter()
            compiled = triton.compile(source, target=target)
            samples.append((time.perf_counter() - start) * 1e3)
        assert compiled.asm["cubin"][:4] == b"\x7fELF"
        out["kernels"][name] = {"median_ms": statistics.median(samples), "min_ms": min(samples),
                                "first_ms": first}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
