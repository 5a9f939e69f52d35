#!/usr/bin/env bash
# Tessera host code against NumPy (bench/numpy_bench.py), one thread and all threads: builds
# libtessera_jit.so and the package's extension with -c opt, makes a virtual environment with NumPy from PyPI (its own
# current OpenBLAS) under ~/.cache/tessera-jit/numpy-bench-venv, and writes
# numpy_bench_1.json / numpy_bench_all.json, each naming the CPU (model, vendor, family/model,
# the ISA extensions that choose host kernels). Usage: bench/numpy_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/python_bench_env.sh
bench_env numpy-bench "numpy>=2.4"
cores="$(nproc)"
OPENBLAS_NUM_THREADS=1 "$venv/bin/python" bench/numpy_bench.py --threads 1 \
  --json numpy_bench_1.json "$@"
OPENBLAS_NUM_THREADS="$cores" "$venv/bin/python" bench/numpy_bench.py --threads "$cores" \
  --json numpy_bench_all.json "$@"
