#!/usr/bin/env bash
# Installs what building and testing Tessera JIT needs on a Debian 12 machine that already has the
# CUDA 13.0 toolkit, then builds the given Bazel targets. Idempotent and quiet when nothing is
# missing. Sourced by the README commands (tools/run_examples.sh, tools/test.sh).
set -euo pipefail

TESSERA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly TESSERA_ROOT
readonly TESSERA_PACKAGES=(
  bazel-bootstrap bazel-rules-java
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libabsl-dev libgtest-dev libgmock-dev libdlpack-dev libopenblas-dev
  python3 python3-numpy python3-dev python3-venv patchelf
  clang-22 libclang-rt-22-dev clang-format-22
  libhiredis-dev redis-server
)
# A disk cache outside the tree lets a fresh clone on the same machine (CI) reuse earlier outputs.
# The sanitizer and fuzzing builds (clang-22) live in an output base of their own.
readonly TESSERA_SANITIZER_OUTPUT_BASE="${XDG_CACHE_HOME:-$HOME/.cache}/tessera-jit/bazel-sanitizers"
readonly TESSERA_BAZEL_FLAGS=(
  "--disk_cache=${XDG_CACHE_HOME:-$HOME/.cache}/tessera-jit/bazel-disk-cache"
)

tessera_install_packages() {
  local missing=()
  local pkg
  for pkg in "${TESSERA_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "tessera: installing missing packages: ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  local log
  log="$(mktemp)"
  if ! { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
         $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } \
       >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "tessera: installing ${missing[*]} failed" >&2
    return 1
  fi
  rm -f "$log"
}

tessera_check_cuda() {
  if [ ! -f /usr/local/cuda/include/cuda.h ]; then
    echo "tessera: the CUDA 13 toolkit is expected at /usr/local/cuda (part of the machine image)" >&2
    return 1
  fi
}

# tessera_build TARGET... — builds the targets quietly; prints Bazel's output only on failure.
tessera_build() {
  local log
  log="$(mktemp)"
  if ! (cd "$TESSERA_ROOT" && bazel build "${TESSERA_BAZEL_FLAGS[@]}" "$@") >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

tessera_install_packages
tessera_check_cuda
