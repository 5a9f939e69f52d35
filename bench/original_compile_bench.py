#!/usr/bin/env python3
"""Compile time of the original Tessera's launch-level fixtures (tests/original/*.mlir), side by
side in one run: this project in process (tessera_jit: import, Tile -> NVVM, LLVM NVPTX, and
nvJitLink to a cubin), against the original's tool chain run as subprocesses on the same
NVVM-level IR (this project's 'nvvm' stage, each gpu.module alone): mlir-translate-22
--mlir-to-llvmir, llvm-link-22 with libdevice (--only-needed), llc-22 to PTX, ptxas to a cubin.
The original runs two more subprocesses before these (tessera-nvidia-opt, mlir-opt), which are
not counted: the subprocess column is a lower bound of its chain.

    bench/original_compile_bench.sh [--runs N] [--arch sm_120] [--json PATH]

Prints a table of medians (ms) and their ratio, and writes JSON.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import tessera_jit as tj

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESSERA_JIT = os.path.join(ROOT, "bazel-bin", "tools", "tessera-jit", "tessera-jit")
PTX_FEATURES = {"sm_90": "+ptx80", "sm_120": "+ptx87"}
LIBDEVICE = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"


def positives() -> list[str]:
    return [p for p in sorted(glob.glob(os.path.join(ROOT, "tests", "original", "*.mlir")))
            if "tessera-jit compile %s --target host" in open(p).read()]


def nvvm_modules(path: str, arch: str, cache: str) -> list[str]:
    """Each gpu.module of the fixture's 'nvvm' stage, as a module mlir-translate reads."""
    out = subprocess.run([TESSERA_JIT, "compile", path, "--target", "nvptx", "--arch", arch,
                          "--emit", "mlir"], capture_output=True, text=True, check=True,
                         env=dict(os.environ, TESSERA_JIT_CACHE_DIR=cache)).stdout
    stage = out.split("// ----- after stage 'nvvm'", 1)[1].split("// ----- after stage", 1)[0]
    modules, lines, inside = [], [], False
    for line in stage.splitlines():
        if re.match(r"  gpu\.module @\w+", line):
            inside, lines = True, ["module {"]
            continue
        if inside and line == "  }":
            modules.append("\n".join(lines + ["}"]) + "\n")
            inside = False
            continue
        if inside:
            lines.append(line)
    return modules


def time_subprocess_chain(modules: list[str], arch: str, work: str) -> float:
    start = time.perf_counter()
    for i, text in enumerate(modules):
        mlir, ll, bc, ptx, cubin = (os.path.join(work, f"k{i}.{e}")
                                    for e in ("mlir", "ll", "bc", "ptx", "cubin"))
        with open(mlir, "w") as f:
            f.write(text)
        subprocess.run(["mlir-translate-22", "--mlir-to-llvmir", mlir, "-o", ll], check=True)
        subprocess.run(["llvm-link-22", ll, "--only-needed", LIBDEVICE, "-o", bc], check=True)
        subprocess.run(["llc-22", "-O3", "-march=nvptx64", f"-mcpu={arch}",
                        f"-mattr={PTX_FEATURES.get(arch, '+ptx87')}", bc, "-o", ptx], check=True)
        subprocess.run(["ptxas", f"-arch={arch}", "-O3", ptx, "-o", cubin], check=True)
    return (time.perf_counter() - start) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--arch", default="sm_120")
    parser.add_argument("--json", default="original_compile_bench.json")
    options = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for path in positives():
            name = os.path.basename(path)
            text = open(path).read()
            modules = nvvm_modules(path, options.arch, os.path.join(work, "stage-cache"))
            in_process, chain = [], []
            for run in range(options.runs):
                # A fresh context with no disk cache: every sample compiles from text.
                ctx = tj.Context(cache_dir="")
                start = time.perf_counter()
                ctx.compile(text, target="nvptx", arch=options.arch).close()
                in_process.append((time.perf_counter() - start) * 1e3)
                chain.append(time_subprocess_chain(modules, options.arch, work))
            rows.append({"fixture": name, "kernels": len(modules),
                         "tessera_in_process_ms": statistics.median(in_process),
                         "original_chain_ms": statistics.median(chain)})
    print(f"compile of the original's fixtures for {options.arch}, median of {options.runs} "
          f"({platform.node()}, {os.cpu_count()} CPUs)")
    print(f"{'fixture':30} {'kernels':>7} {'in process':>11} {'4 subprocs':>11} {'ratio':>6}")
    for row in rows:
        ratio = row["original_chain_ms"] / row["tessera_in_process_ms"]
        row["ratio"] = ratio
        print(f"{row['fixture']:30} {row['kernels']:7d} {row['tessera_in_process_ms']:9.1f} ms "
              f"{row['original_chain_ms']:8.1f} ms {ratio:5.2f}x")
    with open(options.json, "w") as f:
        json.dump({"arch": options.arch, "runs": options.runs, "rows": rows}, f, indent=2)
    print(f"wrote {options.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
