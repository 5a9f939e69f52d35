# Sourced by the Python benchmarks' scripts (bench/numpy_bench.sh, bench/attention_bench.sh):
# `bench_env NAME PACKAGE...` makes (once) a virtual environment with PACKAGE... from PyPI under
# ~/.cache/tessera-jit/NAME-venv, builds libtessera_jit.so and the package's extension with
# -c opt, and exports what the package needs to find them. Sets $venv.
bench_env() {
  local name="$1"
  shift
  venv="${HOME}/.cache/tessera-jit/${name}-venv"
  local python="${TESSERA_BENCH_PYTHON:-/usr/bin/python3}"
  if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet "$@"
  fi
  bazel build -c opt --disk_cache="${HOME}/.cache/tessera-jit/bazel-disk-cache" \
    --symlink_prefix=/ //capi:libtessera_jit.so //capi/python:package >/dev/null
  local objects
  objects="$(bazel info -c opt output_path)/k8-opt/bin"
  export TESSERA_JIT_LIBRARY="$objects/capi/libtessera_jit.so" PYTHONPATH="$PWD/capi/python"
  export TESSERA_JIT_NATIVE="$objects/capi/python/tessera_jit/_native.abi3.so"
}
