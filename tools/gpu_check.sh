#!/usr/bin/env bash
# The GPU check, run from the unpacked bundle on the GPU machine (tools/gpu_bundle.sh builds
# it): the GPU tests, the Python package's tests (where python3 has NumPy), the differential
# suite on the device against the host (with ml_dtypes, bundled as wheels), then the GPU
# benchmark, then one results table. Needs the NVIDIA driver
# and, from the machine's CUDA 13 toolkit, libnvJitLink.so.13, libnvrtc.so.13, libcublas.so.13
# and nvvm/libdevice
# ($CUDA_HOME, default /usr/local/cuda).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cuda="${CUDA_HOME:-/usr/local/cuda}"
export CUDA_HOME="$cuda"
export LD_LIBRARY_PATH="$here/lib:$cuda/lib64:$cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
results="$here/results"
mkdir -p "$results"

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null ||
  echo "nvidia-smi: not available"
for need in "$cuda/nvvm/libdevice/libdevice.10.bc"; do
  [ -f "$need" ] || echo "warning: $need is missing (kernels using math functions will not compile)"
done
# The library opens NVRTC and nvJitLink at run time ($CUDA_HOME/lib64 or lib among the places
# it looks; jit/codegen/cuda_libraries.cc): without them nothing for the GPU compiles.
for soname in libnvJitLink.so.13 libnvrtc.so.13; do
  if [ ! -e "$cuda/lib64/$soname" ] && [ ! -e "$cuda/lib/$soname" ] &&
     [ ! -e "$cuda/targets/x86_64-linux/lib/$soname" ] && ! ldconfig -p 2>/dev/null | grep "$soname" >/dev/null; then
    echo "error: $soname not found (looked in $cuda and the loader's cache); set CUDA_HOME" >&2
    exit 1
  fi
done

echo "== host smoke test (C API, host target)"
smoke_status=0
"$here/bin/run_mlp" "$here/examples/mlp.mlir" || { smoke_status=$?; echo "host smoke test FAILED"; }

echo "== the original's launch bridge (a C program on its signatures; on the GPU)"
bridge_status=0
"$here/bin/bridge_program" || { bridge_status=$?; echo "bridge program FAILED (exit $bridge_status)"; }

echo "== GPU tests"
TESSERA_EXAMPLES_DIR="$here/examples" "$here/bin/gpu_test" --gtest_output="xml:$results/gpu_test.xml" > "$results/gpu_test.log" 2>&1
test_status=$?
tail -n 3 "$results/gpu_test.log"

echo "== Python package (device arrays, streams, events; the host cases on this CPU)"
python_status=0
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import numpy, sys; sys.exit(tuple(map(int, numpy.__version__.split(".")[:2])) < (1, 22))' 2>/dev/null; then
    python="$candidate"
    break
  fi
done
if [ -n "$python" ]; then
  echo "($("$python" --version), NumPy $("$python" -c 'import numpy; print(numpy.__version__)'))"
  TESSERA_JIT_LIBRARY="$here/lib/libtessera_jit.so" PYTHONPATH="$here/python" \
    TESSERA_JIT_CACHE_DIR="$results/python-cache" \
    "$python" "$here/python/python_package_test.py" > "$results/python.log" 2>&1
  python_status=$?
  tail -n 3 "$results/python.log"
else
  echo "skipped: no python3 here has NumPy >= 1.22"
fi

echo "== differential (tests/differential: generated programs on the device vs the host)"
differential_status=0
if [ -n "$python" ]; then
  site="$results/differential-site"
  if ! "$python" -c 'import ml_dtypes' 2>/dev/null; then  # the bundled wheel of this CPython
    "$python" - "$here/wheels" "$site" <<'PY' || true
import glob, sys, zipfile
tag = "cp%d%d" % sys.version_info[:2]
for wheel in glob.glob(f"{sys.argv[1]}/ml_dtypes-*-{tag}-{tag}-*.whl")[:1]:
    zipfile.ZipFile(wheel).extractall(sys.argv[2])
PY
  fi
  if PYTHONPATH="$site" "$python" -c 'import ml_dtypes' 2>/dev/null; then
    TESSERA_JIT_LIBRARY="$here/lib/libtessera_jit.so" PYTHONPATH="$here/python:$site" \
      TESSERA_JIT_CACHE_DIR="$results/differential-cache" \
      "$python" "$here/differential/run_differential.py" --target nvptx --count 200 \
      --time-budget 240 --junit "$results/differential.xml" \
      --artifacts "$results/differential" > "$results/differential.log" 2>&1
    differential_status=$?
    grep -E "FAIL|failure" "$results/differential.log" | tail -n 5
  else
    echo "skipped: ml_dtypes is not importable and no bundled wheel fits $("$python" --version)"
  fi
else
  echo "skipped: no python3 here has NumPy >= 1.22"
fi

echo "== GPU benchmark"
"$here/bin/gpu_bench" --json "$results/gpu_bench.json" > "$results/gpu_bench.log" 2>&1
bench_status=$?

echo
echo "== results ($(cat "$here/COMMIT"))"
# A test case with a <failure> failed, whatever its result attribute says ("completed" only
# means it ran to the end); a missing or unreadable report counts as one failure.
read -r passed failed skipped < <(python3 - "$results/gpu_test.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
except Exception:
    print(0, 1, 0)
    sys.exit()
passed = failed = skipped = 0
for case in cases:
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif case.get("result") == "skipped" or case.find("skipped") is not None:
        skipped += 1
    else:
        passed += 1
print(passed, failed, skipped)
PY
)
echo "GPU tests: ${passed:-0} passed, ${failed:-1} failed, ${skipped:-0} skipped (exit $test_status)"
echo "host smoke test: exit $smoke_status"
echo "launch bridge program: exit $bridge_status"
echo "Python package: exit $python_status (results/python.log)"
echo "differential (device vs host): exit $differential_status (results/differential.log)"
cat "$results/gpu_bench.log"
[ "$test_status" -eq 0 ] && [ "$bench_status" -eq 0 ] && [ "$smoke_status" -eq 0 ] &&
  [ "$bridge_status" -eq 0 ] &&
  [ "$python_status" -eq 0 ] && [ "$differential_status" -eq 0 ] && [ "${failed:-1}" -eq 0 ]
