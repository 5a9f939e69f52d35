#!/usr/bin/env bash
# The generated differential test suite (tests/differential/): every reproducer of
# tests/differential/corpus/ and a few hundred fresh random Tessera IR programs, compiled for the
# host through the Python package of the default build and compared with an independent NumPy
# evaluator. Needs //capi:libtessera_jit.so and //capi/python:package built (`bazel build //...`).
#
#   tools/differential_test.sh [REPORT.xml] [run_differential.py options...]
#
# Before them, tests/original/run_original.py runs the original Tessera's launch-level fixtures
# against float64 NumPy (report: REPORT.original.xml).
#
# Makes its own virtual environment (in a temporary directory) with a Python that is not the
# distribution's (pyenv's newest, when present; else /usr/bin/python3) and NumPy >= 2 and
# ml_dtypes from PyPI. Reproducers of failures go to $TESSERA_DIFFERENTIAL_ARTIFACTS (default: a
# temporary directory that is kept and printed). The harness's self-test
# (tests/differential/selftest.py) runs first. On a failure to set up, or of the self-test,
# REPORT.xml holds one failed case.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

report="${1:-$(mktemp --suffix=.xml)}"
shift || true
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

source "$root/tools/test_python.sh"

# A report with one failed case, for steps that fail before the driver runs.
fail() {
  local message="$1"
  echo "differential: $message" >&2
  tessera_failed_report differential "$report" "$message"
  exit 1
}

python="$(tessera_test_python)"

library="$root/bazel-bin/capi/libtessera_jit.so"
native="$root/bazel-bin/capi/python/tessera_jit/_native.abi3.so"
[ -f "$library" ] || fail "$library is missing (bazel build //capi:libtessera_jit.so)"
[ -f "$native" ] || fail "$native is missing (bazel build //capi/python:package)"

"$python" -m venv "$work/venv" || fail "$python -m venv failed"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "numpy>=2" ml_dtypes ||
  fail "installing NumPy and ml_dtypes from PyPI failed"
echo "differential: $("$work/venv/bin/python" --version) ($python), $("$work/venv/bin/python" -c \
  'import numpy, ml_dtypes; print(f"numpy {numpy.__version__}, ml_dtypes {ml_dtypes.__version__}")')"

export TESSERA_JIT_LIBRARY="$library"
export PYTHONPATH="$root/capi/python"
export TESSERA_JIT_CACHE_DIR="$work/cache"
# The harness's own self-test (shrinker, encode/decode, comparison rules; no compiler, < 5 s)
# first: a broken harness must not report a pass.
"$work/venv/bin/python" tests/differential/selftest.py > "$work/selftest.log" 2>&1 || {
  cat "$work/selftest.log" >&2
  fail "the harness self-test (tests/differential/selftest.py) failed: $(grep -m1 FAILED \
    "$work/selftest.log" || tail -1 "$work/selftest.log")"
}
tail -1 "$work/selftest.log"
# The original Tessera's launch-level fixtures run against NumPy too (tests/original/), in this
# environment; their report lies beside REPORT.xml as REPORT.original.xml.
original_status=0
"$work/venv/bin/python" tests/original/run_original.py --junit "${report%.xml}.original.xml" |
  grep -v "^ok " || original_status=1
# tile.attention's training features: dropout statistics, thread and batch invariance, shape
# contracts (tests/attention/properties.py); report REPORT.attention.xml.
"$work/venv/bin/python" tests/attention/properties.py --junit "${report%.xml}.attention.xml" |
  grep -v "^ok " || original_status=1
# tile.attention_backward against an analytic float64 gradient (itself checked by finite
# differences); report REPORT.attention_gradients.xml.
"$work/venv/bin/python" tests/attention/gradients.py \
  --junit "${report%.xml}.attention_gradients.xml" | grep -v "^ok " || original_status=1
artifacts="${TESSERA_DIFFERENTIAL_ARTIFACTS:-$(mktemp -d -t differential-artifacts.XXXXXX)}"
# A program that kills the driver (a fault in compiled code: every operand lies against an
# inaccessible page, see tests/differential/guarded.py) leaves the case it was running in
# $artifacts/in_progress.json; faulthandler prints where Python was.
driver_status=0
"$work/venv/bin/python" -X faulthandler tests/differential/run_differential.py --junit "$report" \
  --artifacts "$artifacts" "$@" || driver_status=$?
if [ "$driver_status" -gt 128 ]; then
  crashed="$artifacts/in_progress.json"
  message="the driver was killed by signal $((driver_status - 128)) while running the case in \
$crashed (its reproducer: run_differential.py $crashed)"
  if [ -f "$crashed" ]; then
    message="$message"$'\n'"$("$work/venv/bin/python" -c \
      'import json, sys; r = json.load(open(sys.argv[1])); print(r["name"]); print(r["mlir"])' \
      "$crashed" 2>&1 || true)"
  fi
  echo "differential: FAIL $message" >&2
  tessera_failed_report differential "$report" "$message"
  exit 1
fi
[ "$driver_status" -eq 0 ] || exit "$driver_status"
exit "$original_status"
