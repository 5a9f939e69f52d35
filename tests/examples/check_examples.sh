#!/usr/bin/env bash
# Keeps examples/ valid: every example verifies, passes the determinism check, and its printed
# form parses back to the same text (custom and generic forms). Usage: check_examples.sh DIR
set -euo pipefail
dir="$1"
shopt -s nullglob
examples=("$dir"/*.mlir)
if [ ${#examples[@]} -eq 0 ]; then
  echo "no examples found in $dir" >&2
  exit 1
fi
for example in "${examples[@]}"; do
  printed="$(tessera-opt --tessera-verify-determinism "$example")" || {
    echo "FAILED: $example does not verify" >&2; exit 1; }
  reprinted="$(printf '%s\n' "$printed" | tessera-opt)"
  generic="$(tessera-opt --mlir-print-op-generic "$example" | tessera-opt)"
  if [ "$printed" != "$reprinted" ] || [ "$printed" != "$generic" ]; then
    echo "FAILED: $example does not round-trip" >&2; exit 1
  fi
  echo "ok: $(basename "$example")"
done
