#!/usr/bin/env python3
"""Host attention for training, forward (with the lse output) and backward, one thread, f32:
time per call and GFLOP/s at several sequence lengths, head sizes and masks, and — where
PyTorch is importable in the interpreter that runs this — PyTorch's CPU
scaled_dot_product_attention and its autograd on the same shapes, side by side.

    bench/attention_bench.sh [--seqs 512,2048,8192] [--depths 64,128] [--runs N]

(which makes a virtual environment with torch), or with an interpreter of your own:

    TESSERA_JIT_LIBRARY=bazel-bin/capi/libtessera_jit.so PYTHONPATH=capi/python \\
        python3 bench/attention_bench.py [--seqs 512,2048] [--depths 64,128] [--json PATH]

FLOPs counted as FlashAttention does: forward 4·B·H·S²·D (halved when causal), backward 2.5×
the forward. The best of --runs timed calls after one warm-up (the least disturbed by other
work on a shared machine).
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from typing import Any, Callable, Optional

import numpy as np

import tessera_jit as tj

HEADS = 8


def source(depth: int, causal: bool) -> str:
    mask = " causal" if causal else ""
    t = f"memref<1x{HEADS}x?x{depth}xf32>"
    lse = f"memref<1x{HEADS}x?xf32>"
    return f"""
func.func @fwd(%q: {t}, %k: {t}, %v: {t}, %o: {t}, %l: {lse}) {{
  tile.attention %q, %k, %v -> %o lse(%l : {lse}){mask} : {t}, {t}, {t} -> {t}
  return
}}
func.func @bwd(%do: {t}, %q: {t}, %k: {t}, %v: {t}, %o: {t}, %l: {lse}, %dq: {t}, %dk: {t},
               %dv: {t}) {{
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %dk, %dv{mask}
      : {t}, {t}, {t}, {t}, {t}, {lse} -> {t}, {t}, {t}
  return
}}
"""


def best_ms(call: Callable[[], Any], runs: int) -> float:
    call()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1e3)
    return min(samples)


def torch_times(seq: int, depth: int, causal: bool, runs: int) -> Optional[tuple[float, float]]:
    try:
        import torch  # noqa: PLC0415 - optional
    except ImportError:
        return None
    torch.set_num_threads(1)
    q, k, v = (torch.randn(1, HEADS, seq, depth, requires_grad=True) for _ in range(3))
    grad = torch.randn(1, HEADS, seq, depth)
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def forward():
        with torch.no_grad():
            sdpa(q, k, v, is_causal=causal)

    out = sdpa(q, k, v, is_causal=causal)

    def backward():
        torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)

    return best_ms(forward, runs), best_ms(backward, runs)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def torch_version() -> Optional[str]:
    try:
        import torch  # noqa: PLC0415 - optional
    except ImportError:
        return None
    return torch.__version__


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seqs", default="512,2048")
    parser.add_argument("--depths", default="64,128")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", help="also write the rows as JSON here")
    options = parser.parse_args()
    ctx = tj.Context(num_threads=1, cache_dir="")
    rng = np.random.default_rng(0)
    rows = []
    print(f"host attention, 1 thread, f32, B = 1, H = {HEADS} ({cpu_model()})")
    print(f"{'S':>5} {'D':>4} {'mask':>7} | {'fwd ms':>9} {'GFLOP/s':>8} | {'bwd ms':>9} {'GFLOP/s':>8}"
          f" | {'torch fwd':>9} {'torch bwd':>9} | {'fwd ×':>6} {'bwd ×':>6}")
    for seq in (int(s) for s in options.seqs.split(",")):
        for depth in (int(d) for d in options.depths.split(",")):
            for causal in (False, True):
                module = ctx.compile(source(depth, causal), target="host")
                q, k, v, do = (rng.standard_normal((1, HEADS, seq, depth)).astype(np.float32)
                               for _ in range(4))
                o = np.empty_like(q)
                lse = np.empty((1, HEADS, seq), np.float32)
                grads = [np.empty_like(q) for _ in range(3)]
                fwd = best_ms(lambda: module.fwd(q, k, v, o, lse), options.runs)
                bwd = best_ms(lambda: module.bwd(do, q, k, v, o, lse, *grads), options.runs)
                module.close()
                flops = 4.0 * HEADS * seq * seq * depth / (2 if causal else 1)
                torch_ms = torch_times(seq, depth, causal, options.runs)
                row = {"seq": seq, "depth": depth, "causal": causal, "forward_ms": fwd,
                       "backward_ms": bwd, "forward_gflops": flops / fwd / 1e6,
                       "backward_gflops": 2.5 * flops / bwd / 1e6,
                       "torch_forward_ms": torch_ms[0] if torch_ms else None,
                       "torch_backward_ms": torch_ms[1] if torch_ms else None}
                rows.append(row)
                t = (f"{torch_ms[0]:9.1f} {torch_ms[1]:9.1f} | {fwd / torch_ms[0]:6.2f} "
                     f"{bwd / torch_ms[1]:6.2f}" if torch_ms
                     else f"{'—':>9} {'—':>9} | {'—':>6} {'—':>6}")
                print(f"{seq:5d} {depth:4d} {'causal' if causal else 'full':>7} | {fwd:9.1f} "
                      f"{row['forward_gflops']:8.2f} | {bwd:9.1f} {row['backward_gflops']:8.2f}"
                      f" | {t}")
    if options.json:
        with open(options.json, "w") as f:
            json.dump({"machine": platform.platform(), "processor": cpu_model(),
                       "torch": torch_version(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
