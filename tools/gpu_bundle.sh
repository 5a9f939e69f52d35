#!/usr/bin/env bash
# Builds the self-contained GPU check bundle (docs/building.md, "The GPU check bundle": no LLVM, no
# Bazel, no network there): libtessera_jit.so with MLIR/LLVM linked in statically (the Bazel
# target itself), stripped,
# the GPU tests and the GPU benchmark, the abseil libraries they need, and run.sh, which runs
# everything and prints one results table. Output: gpu-bundle/tessera-gpu-check.tar.xz (and the
# unpacked directory next to it); prints its size.
#
#   tools/gpu_bundle.sh            # then copy the .tar.xz over, unpack, ./tessera-gpu-check/run.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"

out="$TESSERA_ROOT/gpu-bundle"
dir="$out/tessera-gpu-check"
rm -rf "$out"
mkdir -p "$dir/bin" "$dir/lib"

echo "building (opt, -ffunction-sections) ..."
# libtessera_jit.so is Bazel's own (//capi:libtessera_jit.so: MLIR and LLVM static, only
# tessera_jit_* exported, tools/build_defs/self_contained_library.bzl), stripped here.
tessera_build -c opt --force_pic --copt=-ffunction-sections --copt=-fdata-sections \
  //capi:libtessera_jit.so //capi/python:package //tests/gpu:gpu_test //bench:gpu_bench
objects="bazel-out/k8-opt/bin"
abseil=$(sed -n '/linkopts = \[/,/\]/p' third_party/system/absl.BUILD | grep -o '"-l[a-z_]*"' | tr -d '"')
cp "$objects/capi/libtessera_jit.so" "$dir/lib/libtessera_jit.so"
chmod u+w "$dir/lib/libtessera_jit.so"
strip --strip-unneeded "$dir/lib/libtessera_jit.so"

echo "linking the GPU tests and benchmark ..."
# shellcheck disable=SC2086
g++ -no-pie -o "$dir/bin/gpu_test" "$objects/tests/gpu/_objs/gpu_test/gpu_test.pic.o" \
  -L"$dir/lib" -ltessera_jit -l:libgmock.a -l:libgtest.a -l:libgtest_main.a -ldl -pthread \
  -Wl,-rpath,'$ORIGIN/../lib' -Wl,-s
# shellcheck disable=SC2046,SC2086
g++ -no-pie -o "$dir/bin/gpu_bench" "$objects/bench/_objs/gpu_bench/gpu_bench.pic.o" \
  "$objects/runtime/_objs/gpu_runtime/gpu_runtime.pic.o" \
  "$objects/runtime/_objs/cuda_driver/cuda_driver.pic.o" \
  -L"$dir/lib" -ltessera_jit $abseil -ldl -pthread -Wl,-rpath,'$ORIGIN/../lib' -Wl,-s

gcc -std=c11 -o "$dir/bin/run_mlp" capi/examples/run_mlp.c -Icapi/include -L"$dir/lib" -lm \
  -ltessera_jit -Wl,-rpath,'$ORIGIN/../lib' -Wl,-s
# The original Tessera's launch bridge (//bridge) and a program written against it.
g++ -std=c++17 -O2 -fPIC -shared -o "$dir/lib/libtessera_nvidia_ptx_launch.so" \
  bridge/ptx_launch.cc bridge/ptx_abi.cc bridge/cuda_driver.cc -I. -Icapi/include -L"$dir/lib" \
  -ltessera_jit -ldl -Wl,-rpath,'$ORIGIN' -Wl,-s
gcc -std=c11 -o "$dir/bin/bridge_program" tests/bridge/bridge_program.c -I. -Ibridge -L"$dir/lib" \
  -ltessera_nvidia_ptx_launch -lm -Wl,-rpath,'$ORIGIN/../lib' -Wl,-s

# The abseil shared libraries (the GPU machine has none); glibc and libstdc++ are the system's.
for library in $(ldd "$dir/lib/libtessera_jit.so" "$dir/bin/gpu_bench" | awk '/libabsl_/ {print $3}' | sort -u); do
  cp -L "$library" "$dir/lib/"
done
strip --strip-unneeded "$dir"/lib/libabsl_* 2>/dev/null || true

# The Python package over the bundled library (TESSERA_JIT_LIBRARY) and its tests, which
# run.sh runs where the GPU machine's python3 has NumPy: device arrays, streams and events
# from Python (GpuPackageTest), and the host cases on that machine's CPU.
mkdir -p "$dir/python/tessera_jit"
cp capi/python/tessera_jit/*.py capi/python/tessera_jit/*.pyi capi/python/tessera_jit/py.typed \
  "$objects/capi/python/tessera_jit/_native.abi3.so" "$dir/python/tessera_jit/"
chmod u+w "$dir/python/tessera_jit/_native.abi3.so"
strip --strip-unneeded "$dir/python/tessera_jit/_native.abi3.so"
cp tests/capi/python_package_test.py "$dir/python/"

# The differential suite (tests/differential): run.sh runs its corpus and fresh programs on the
# device against the host. The GPU machine has no network: ml_dtypes (bf16 for NumPy) comes
# along as wheels for CPython 3.10-3.13, installed there only if its Python lacks it.
mkdir -p "$dir/differential/corpus" "$dir/wheels"
cp tests/differential/*.py "$dir/differential/"
cp tests/differential/corpus/*.json "$dir/differential/corpus/"
wheel_venv="$(mktemp -d)"
if python3 -m venv "$wheel_venv" >/dev/null 2>&1; then
  for version in 3.10 3.11 3.12 3.13; do
    "$wheel_venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
      --only-binary=:all: --python-version "$version" --platform manylinux2014_x86_64 \
      -d "$dir/wheels" ml_dtypes ||
      echo "warning: no ml_dtypes wheel for CPython $version (the suite needs it there)"
  done
fi
rm -rf "$wheel_venv"

cp tools/gpu_check.sh "$dir/run.sh"
chmod +x "$dir/run.sh"
git rev-parse HEAD > "$dir/COMMIT" 2>/dev/null || echo unknown > "$dir/COMMIT"

echo "self-check: the bundled library compiles and runs the MLP example on the host target ..."
mkdir -p "$dir/examples" && cp examples/*.mlir examples/*.cu "$dir/examples/"
LD_LIBRARY_PATH="/usr/local/cuda/lib64" "$dir/bin/run_mlp" "$dir/examples/mlp.mlir"
echo "self-check: the bundled Python package on the bundled library (host cases) ..."
LD_LIBRARY_PATH="$dir/lib:/usr/local/cuda/lib64" TESSERA_JIT_LIBRARY="$dir/lib/libtessera_jit.so" \
  TESSERA_JIT_CACHE_DIR="$(mktemp -d)" PYTHONPATH="$dir/python" \
  /usr/bin/python3 "$dir/python/python_package_test.py" 2>&1 | tail -n 3

tar -C "$out" -cf - tessera-gpu-check | xz -6 -T2 > "$out/tessera-gpu-check.tar.xz"
echo
echo "bundle: $out/tessera-gpu-check.tar.xz ($(du -h "$out/tessera-gpu-check.tar.xz" | cut -f1)," \
     "$(du -sh "$dir" | cut -f1) unpacked)"
