#!/usr/bin/env bash
# Runs python_test.py with the system Python (which has NumPy from Debian) against the
# libtessera_jit.so built by Bazel.
set -euo pipefail
runfiles="${TEST_SRCDIR:-$0.runfiles}/${TEST_WORKSPACE:-tessera_jit}"
export TESSERA_JIT_CACHE_DIR="${TEST_TMPDIR:-/tmp}/tessera-jit-cache"
export TESSERA_JIT_LIBRARY="$runfiles/capi/libtessera_jit.so"
export PYTHONPATH="$runfiles/capi/python"
exec /usr/bin/python3 "$runfiles/tests/capi/python_test.py"
