#!/usr/bin/env bash
# The README's main-job command: verifies every program in examples/ with tessera-opt (parse,
# verify, the determinism check), compiles each example that names its delegates on a
# `// tessera-jit flags:` header line with those flags, checks the decoder block against a float64
# NumPy decoder layer (examples/decoder_block_check.py, host target), then compiles and runs the
# MLP example (matmul + bias + relu → softmax → reduce) with `tessera-jit run` — on the GPU when
# one is present, otherwise on the host target, saying which.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"

tessera_build //tools/tessera-opt //tools/tessera-jit //capi:libtessera_jit.so //capi/python:package
status=0
for example in examples/*.mlir; do
  if bazel-bin/tools/tessera-opt/tessera-opt --tessera-verify-determinism "$example" >/dev/null; then
    echo "verified: $example"
  else
    echo "FAILED: $example" >&2
    status=1
  fi
done
# An example with a header line `// tessera-jit flags: …` (its delegates) compiles as written,
# from the examples folder.
for example in examples/*.mlir; do
  flags="$(sed -n 's|^// tessera-jit flags: ||p' "$example" | head -n 1)"
  [ -n "$flags" ] || continue
  # shellcheck disable=SC2086  # the header's flags are words
  if (cd examples && ../bazel-bin/tools/tessera-jit/tessera-jit compile "$(basename "$example")" \
        $flags); then
    echo "compiled: $example ($flags)"
  else
    echo "FAILED: $example with its header flags ($flags)" >&2
    status=1
  fi
done
echo
echo "== examples/decoder_block.mlir against a float64 NumPy decoder layer (host target)"
TESSERA_JIT_LIBRARY="$PWD/bazel-bin/capi/libtessera_jit.so" PYTHONPATH="$PWD/capi/python" \
  /usr/bin/python3 examples/decoder_block_check.py || status=1
echo
echo "== examples/attention_training_step.mlir against a float64 NumPy training step (host target)"
TESSERA_JIT_LIBRARY="$PWD/bazel-bin/capi/libtessera_jit.so" PYTHONPATH="$PWD/capi/python" \
  /usr/bin/python3 examples/attention_training_step_check.py || status=1
echo
echo "== tessera-jit run examples/mlp.mlir --entry mlp --size 64"
bazel-bin/tools/tessera-jit/tessera-jit run examples/mlp.mlir --entry mlp --size 64 || status=1
exit "$status"
