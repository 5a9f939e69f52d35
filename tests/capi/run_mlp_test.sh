#!/usr/bin/env bash
# Runs the C example (capi/examples/run_mlp.c) on examples/mlp.mlir; it checks itself against a
# C reference and exits non-zero on any mismatch.
set -euo pipefail
export TESSERA_JIT_CACHE_DIR="${TEST_TMPDIR:-/tmp}/tessera-jit-cache"
"$1" "$2" 5
