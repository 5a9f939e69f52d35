#!/usr/bin/env bash
# Runs the bridge program as the original's users would: without the opt-in it must run on the
# GPU (exit 0) or report the original's "no GPU" (exit 2); with TESSERA_NVIDIA_BRIDGE_HOST=1 it
# must pass everywhere (on the host when there is no GPU).
set -u
program="$1"
export TESSERA_JIT_CACHE_DIR="${TEST_TMPDIR:-$(mktemp -d)}/cache"
"$program"
status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 2 ]; then
  echo "bridge program failed without the host opt-in (exit $status)"
  exit 1
fi
TESSERA_NVIDIA_BRIDGE_HOST=1 "$program" || { echo "bridge program failed with the host opt-in"; exit 1; }
