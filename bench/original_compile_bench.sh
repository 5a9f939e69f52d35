#!/usr/bin/env bash
# Compile time of the original Tessera's fixtures in process vs its tool chain as subprocesses
# (bench/original_compile_bench.py): builds libtessera_jit.so and the Python package with -c opt
# (and tessera-jit, for the NVVM-level IR), then runs the benchmark. Usage:
#   bench/original_compile_bench.sh [--runs N] [--arch sm_120] [--json PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh >/dev/null
# The package imports NumPy: the benchmarks' virtual environment (bench/numpy_bench.sh's).
venv="${HOME}/.cache/tessera-jit/numpy-bench-venv"
if [[ ! -x "$venv/bin/python" ]]; then
  "${TESSERA_BENCH_PYTHON:-/usr/bin/python3}" -m venv "$venv"
  "$venv/bin/pip" install --quiet "numpy>=2.4"
fi
bazel build "${TESSERA_BAZEL_FLAGS[@]}" //tools/tessera-jit >/dev/null
bazel build -c opt "${TESSERA_BAZEL_FLAGS[@]}" --symlink_prefix=/ //capi:libtessera_jit.so \
  //capi/python:package >/dev/null
objects="$(bazel info -c opt output_path)/k8-opt/bin"
export TESSERA_JIT_LIBRARY="$objects/capi/libtessera_jit.so" PYTHONPATH="$PWD/capi/python"
export TESSERA_JIT_NATIVE="$objects/capi/python/tessera_jit/_native.abi3.so"
"$venv/bin/python" bench/original_compile_bench.py "$@"
