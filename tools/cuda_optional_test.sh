#!/usr/bin/env bash
# The CUDA libraries are optional at load (docs/building.md): with the CUDA toolkit hidden from
# the test — a mount namespace (`unshare -m`) binds an empty directory over /usr/local/cuda, and
# CUDA_HOME, CUDA_PATH and TESSERA_JIT_CUDA_HOME are unset — the wheel, installed in fresh
# venvs with PyPI packages only:
#   * plain: imports, runs the host examples, build_info() reports NVRTC, nvJitLink and
#     libdevice missing, and an nvptx compile is FAILED_PRECONDITION naming libdevice and where
#     it looked (so is the C API's documented case, documented_errors_test);
#   * with NVIDIA's wheels (what `tessera_jit[cuda]` installs): an nvptx compile produces PTX
#     and a cubin, a CUDA C++ kernel compiles with NVRTC, and build_info() names the wheels.
# libtessera_jit.so has no NEEDED entry on NVRTC or nvJitLink.
#
#   tools/cuda_optional_test.sh [REPORT.xml]
#
# Needs root for the mount namespace; where `unshare -m` is refused the report says so (skipped).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"
source tools/test_python.sh

report="${1:-$(mktemp --suffix=.xml)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cases=()  # "name|message" (message empty: passed)
record() { tessera_record_case "cuda optional" "$1" "$2"; }
write_report() { tessera_junit_report cuda_optional "$report" "$@"; }

if ! unshare -m true 2>/dev/null; then
  record "toolkit hidden" "SKIP: unshare -m is refused here (needs root)"
  write_report "${cases[@]}"
  exit 0
fi

library=bazel-bin/capi/libtessera_jit.so
needed="$(readelf -d "$library" | grep NEEDED | grep -i -E 'nvrtc|nvjitlink' || true)"
record "no NEEDED entry on NVRTC or nvJitLink" "${needed:+libtessera_jit.so: $needed}"

python="$(tessera_test_python)"
tools/build_wheel.sh --mode fastbuild --out "$work/dist" > "$work/wheel.log" 2>&1 ||
  { record "wheel" "tools/build_wheel.sh failed: $(tail -3 "$work/wheel.log")";
    write_report "${cases[@]}"; exit 1; }
pip_args=(-m pip install -q --disable-pip-version-check)
"$python" -m venv "$work/plain" && "$work/plain/bin/python" "${pip_args[@]}" \
  "$work"/dist/tessera_jit-*.whl "numpy>=2" ||
  { record "plain venv" "installing the wheel and NumPy failed"; write_report "${cases[@]}";
    exit 1; }
"$python" -m venv "$work/cuda" && "$work/cuda/bin/python" "${pip_args[@]}" \
  "$(ls "$work"/dist/tessera_jit-*.whl)[cuda]" "numpy>=2" ||
  { record "[cuda] venv" "installing the wheel with its cuda extra from PyPI failed";
    write_report "${cases[@]}"; exit 1; }
cp examples/elementwise.mlir "$work/"

# Everything below runs with the toolkit hidden.
hidden() {
  mkdir -p "$work/empty"
  unshare -m bash -c 'mount --bind "$1" /usr/local/cuda && shift && exec "$@"' _ \
    "$work/empty" env -u CUDA_HOME -u CUDA_PATH -u TESSERA_JIT_CUDA_HOME -u LD_LIBRARY_PATH \
    -u TESSERA_JIT_LIBRARY -u PYTHONPATH TESSERA_JIT_CACHE_DIR="$work/cache" "$@"
}

# Visible from inside? (/usr/local/cuda must be empty there.)
inside="$(hidden ls -A /usr/local/cuda | wc -l)"
record "toolkit hidden in the namespace" "$([ "$inside" = 0 ] || echo "/usr/local/cuda lists $inside entries")"

out="$(hidden bazel-bin/tests/capi/documented_errors_test \
  --gtest_filter='DocumentedErrorsToolkitTest.*' 2>&1)" && status=0 || status=$?
if [ "$status" -ne 0 ]; then
  record "C API: nvptx compile without libdevice" "documented_errors_test failed: $(echo "$out" | tail -5)"
elif echo "$out" | grep -q SKIPPED; then
  record "C API: nvptx compile without libdevice" "skipped although the toolkit is hidden: $(echo "$out" | grep -m1 -A1 Skipped)"
else
  record "C API: nvptx compile without libdevice" ""
fi

cat > "$work/plain.py" <<'PY'
import sys
import numpy as np
import tessera_jit as tj
info = tj.build_info()
assert "site-packages" in tj.library_path(), tj.library_path()
for name in ("nvrtc", "nvjitlink", "libdevice"):
    assert not info["cuda"][name]["found"], (name, info["cuda"][name])
    assert any("/usr/local/cuda" in step for step in info["cuda"][name]["steps"]), info
source = open(sys.argv[1]).read()
with tj.Context(default_target="host") as ctx:
    module = ctx.compile(source)
    x = np.arange(8, dtype=np.float32); y = np.ones(8, np.float32); out = np.empty_like(x)
    module.saxpy(2.0, x, y, out)
    assert np.array_equal(out, 2 * x + y), out
    try:
        ctx.compile(source, target="nvptx", arch="sm_90")
        raise SystemExit("an nvptx compile succeeded without libdevice")
    except tj.FailedPreconditionError as error:
        assert "needs libdevice, which was not found; looked in: " in str(error), error
        assert "/usr/local/cuda" in str(error), error
print("plain wheel: host saxpy ok; nvptx refused:", tj.build_info()["cuda"]["libdevice"]["steps"])
PY
out="$(hidden "$work/plain/bin/python" "$work/plain.py" "$work/elementwise.mlir" 2>&1)" &&
  record "plain wheel: host works, nvptx is FAILED_PRECONDITION" "" ||
  record "plain wheel: host works, nvptx is FAILED_PRECONDITION" "$(echo "$out" | tail -5)"

cat > "$work/cuda.py" <<'PY'
import sys
import tessera_jit as tj
info = tj.build_info()
for name in ("nvrtc", "nvjitlink", "libdevice"):
    component = info["cuda"][name]
    assert component["found"] and component["origin"] == "NVIDIA wheel", (name, component)
    assert "/site-packages/nvidia/cu13/" in component["path"], component
source = open(sys.argv[1]).read()
kernel = 'extern "C" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }'
with tj.Context(default_target="host") as ctx:
    module = ctx.compile(source, target="nvptx", arch="sm_90")
    assert ".entry" in module.ptx and module.cubin[:4] == b"\x7fELF", module.ptx[:200]
    ctx.register_kernel_image("scaled", kernel.encode(), format="cuda", arch="sm_90")
    print("[cuda] wheel: PTX", len(module.ptx), "bytes, cubin", len(module.cubin), "bytes;",
          {name: info["cuda"][name]["path"] for name in ("nvrtc", "nvjitlink", "libdevice")})
PY
out="$(hidden "$work/cuda/bin/python" "$work/cuda.py" "$work/elementwise.mlir" 2>&1)" &&
  record "[cuda] wheel: nvptx compile to PTX and a cubin, NVRTC kernel" "" ||
  record "[cuda] wheel: nvptx compile to PTX and a cubin, NVRTC kernel" "$(echo "$out" | tail -5)"
echo "$out" | tail -1

write_report "${cases[@]}"
for case in "${cases[@]}"; do
  message="${case#*|}"
  if [ -n "$message" ] && [ "${message#SKIP:}" = "$message" ]; then exit 1; fi
done
