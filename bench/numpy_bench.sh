#!/usr/bin/env bash
# Tessera host code against NumPy (bench/numpy_bench.py), one thread and all threads: builds
# libtessera_jit.so and the package's extension with -c opt, makes a virtual environment with NumPy from PyPI (its own
# current OpenBLAS) under ~/.cache/tessera-jit/numpy-bench-venv, and writes
# numpy_bench_1.json / numpy_bench_all.json. Usage: bench/numpy_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${HOME}/.cache/tessera-jit/numpy-bench-venv"
python="${TESSERA_BENCH_PYTHON:-/usr/bin/python3}"
if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet "numpy>=2.4"
fi
bazel build -c opt --disk_cache="${HOME}/.cache/tessera-jit/bazel-disk-cache" \
  --symlink_prefix=/ //capi:libtessera_jit.so //capi/python:package >/dev/null
objects="$(bazel info -c opt output_path)/k8-opt/bin"
export TESSERA_JIT_LIBRARY="$objects/capi/libtessera_jit.so" PYTHONPATH="$PWD/capi/python"
export TESSERA_JIT_NATIVE="$objects/capi/python/tessera_jit/_native.abi3.so"
cores="$(nproc)"
OPENBLAS_NUM_THREADS=1 "$venv/bin/python" bench/numpy_bench.py --threads 1 \
  --json numpy_bench_1.json "$@"
OPENBLAS_NUM_THREADS="$cores" "$venv/bin/python" bench/numpy_bench.py --threads "$cores" \
  --json numpy_bench_all.json "$@"
