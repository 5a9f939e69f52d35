#!/usr/bin/env bash
# Runs the C example (capi/examples/run_mlp.c) on examples/mlp.mlir; it checks itself against a
# C reference and exits non-zero on any mismatch.
set -euo pipefail
"$1" "$2" 5
