#!/usr/bin/env bash
# The README's main-job command: verifies every program in examples/ (parse, verify, the
# determinism check) with tessera-opt and pretty-prints it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"

tessera_build //tools/tessera-opt
status=0
for example in examples/*.mlir; do
  echo "== $example"
  if ! bazel-bin/tools/tessera-opt/tessera-opt --tessera-verify-determinism "$example"; then
    echo "FAILED: $example" >&2
    status=1
  fi
done
exit "$status"
