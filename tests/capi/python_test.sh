#!/usr/bin/env bash
# Runs a Python script against the binding (tests/capi/python_test.py, or the runfiles path
# given as $1) with the system Python (which has NumPy from Debian) and the libtessera_jit.so
# built by Bazel.
set -euo pipefail
runfiles="${TEST_SRCDIR:-$0.runfiles}/${TEST_WORKSPACE:-tessera_jit}"
export TESSERA_JIT_CACHE_DIR="${TEST_TMPDIR:-/tmp}/tessera-jit-cache"
export TESSERA_JIT_LIBRARY="$runfiles/capi/libtessera_jit.so"
export PYTHONPATH="$runfiles/capi/python"
exec /usr/bin/python3 "$runfiles/${1:-tests/capi/python_test.py}"
