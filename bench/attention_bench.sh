#!/usr/bin/env bash
# Tessera's host attention (forward with lse, backward) against PyTorch's CPU
# scaled_dot_product_attention and its autograd, one thread (bench/attention_bench.py): builds
# libtessera_jit.so and the package's extension with -c opt, makes a virtual environment with
# NumPy, ml_dtypes and torch from PyPI under ~/.cache/tessera-jit/attention-bench-venv (PyPI's
# Linux torch wheel brings its CUDA wheels: some 5 GB, once), and writes attention_bench.json.
# Usage: bench/attention_bench.sh [--seqs 512,2048,8192] [--depths 64,128] [--runs N]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/python_bench_env.sh
bench_env attention-bench "numpy>=2.4" ml_dtypes torch
OMP_NUM_THREADS=1 "$venv/bin/python" bench/attention_bench.py --json attention_bench.json "$@"
