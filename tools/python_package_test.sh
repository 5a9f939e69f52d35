#!/usr/bin/env bash
# The Python package as a user installs it: builds the wheel (tools/build_wheel.sh, from the
# default build's outputs), creates a fresh virtual environment with a Python that is not the
# distribution's (pyenv's, when present), installs the wheel, NumPy 2, JAX (CPU) and ml_dtypes
# from PyPI, and runs the Python tests there with pytest — from outside the source tree, with no
# TESSERA_JIT_LIBRARY, so that only the installed wheel can serve them.
#
#   tools/python_package_test.sh [REPORT.xml]     # JUnit reports for tools/summarize_tests.py:
#                                                 # REPORT.xml (pytest), REPORT.mypy.xml (the
#                                                 # package's type hints, checked by mypy)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"

report="${1:-$(mktemp --suffix=.xml)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/test_python.sh"

# A report with one failed case, for steps that fail before pytest runs.
fail() {
  local message="$1"
  echo "python package: $message" >&2
  tessera_failed_report python_package "$report" "$message"
  # mypy did not run: counted as skipped, not a second failure.
  echo '<testsuites><testsuite name="mypy" tests="1" skipped="1"><testcase classname="mypy"' \
       'name="tessera_jit"><skipped message="the setup failed"/></testcase></testsuite>' \
       '</testsuites>' > "${report%.xml}.mypy.xml"
  exit 1
}

python="$(tessera_test_python)"
echo "python package: $("$python" --version) ($python)"

tools/build_wheel.sh --mode fastbuild --out "$work/dist" || fail "the wheel did not build"
"$python" -m venv "$work/venv" || fail "$python -m venv failed"
pip=("$work/venv/bin/python" -m pip install -q --disable-pip-version-check)
"${pip[@]}" "$work"/dist/tessera_jit-*.whl || fail "pip install of the wheel failed"
"${pip[@]}" "numpy>=2" "jax[cpu]" ml_dtypes pytest mypy auditwheel ||
  fail "installing NumPy, JAX, ml_dtypes, pytest, mypy and auditwheel from PyPI failed"
# The wheel's platform tag as a package index checks it (docs/building.md, "The Python wheel").
shown="$("$work/venv/bin/auditwheel" show "$work"/dist/tessera_jit-*.whl 2>&1)" ||
  fail "auditwheel show failed: $shown"
echo "$shown" | tr '\n' ' ' | grep -q '"manylinux_2_36_x86_64"' ||
  fail "auditwheel show does not name manylinux_2_36_x86_64: $shown"
echo "python package: $(basename "$work"/dist/tessera_jit-*.whl): auditwheel: manylinux_2_36_x86_64"

"$work/venv/bin/python" -m pip list --disable-pip-version-check 2>/dev/null |
  grep -i -E '^(numpy|jax|jaxlib|ml.dtypes|pytest|mypy) ' | tr -s ' ' | paste -sd, |
  sed 's/^/python package: with /'
cp tests/capi/python_package_test.py tests/capi/python_test.py tests/capi/model_ops_test.py \
  "$work/"
mkdir -p "$work/run"
cd "$work/run"
unset TESSERA_JIT_LIBRARY PYTHONPATH
export TESSERA_JIT_CACHE_DIR="$work/cache"
"$work/venv/bin/python" - <<'PY' || fail "the installed package does not load its own library"
import tessera_jit, sys
path = tessera_jit.library_path()
assert "site-packages" in path, path
print(f"python package: tessera_jit {tessera_jit.__version__}, C API {tessera_jit.api_version()}, {path}")
PY
status=0
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$report" \
  "$work/python_package_test.py" "$work/python_test.py" "$work/model_ops_test.py" || status=1
# The installed package's type hints (py.typed, _native.pyi) as a user's type checker sees them.
"$work/venv/bin/python" -m mypy --no-incremental --cache-dir "$work/mypy-cache" \
  --junit-xml "${report%.xml}.mypy.xml" -p tessera_jit || status=1
exit $status
