#!/usr/bin/env bash
# Runs the binding's notebook-style example (capi/python/example_mlp.py), which asserts its
# results against NumPy.
set -euo pipefail
runfiles="${TEST_SRCDIR:-$0.runfiles}/${TEST_WORKSPACE:-tessera_jit}"
export TESSERA_JIT_CACHE_DIR="${TEST_TMPDIR:-/tmp}/tessera-jit-cache"
export TESSERA_JIT_LIBRARY="$runfiles/capi/libtessera_jit.so"
exec /usr/bin/python3 "$runfiles/capi/python/example_mlp.py"
