#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything, runs the GoogleTest
# suites (Bazel) and the lit/FileCheck suites (tests/), and ends with `N passed, N failed`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"

reports_dir="$(mktemp -d)"
trap 'rm -rf "$reports_dir"' EXIT

if ! tessera_build //...; then
  echo "build failed"
  echo "0 passed, 1 failed"
  exit 1
fi

echo "== GoogleTest (bazel test //...)"
bazel test "${TESSERA_BAZEL_FLAGS[@]}" --test_summary=terse //... 2>&1 |
  grep -E "^(//|FAIL|ERROR|Executed)" || true
reports=()
for target in $(bazel query 'tests(//...)' 2>/dev/null); do
  path="${target#//}"
  reports+=("bazel-testlogs/${path/://}/test.xml")
done

echo "== house (tools/house_check.py: clang-format, no references outside the repository,"
echo "   file length)"
python3 tools/house_check.py "$reports_dir/house.xml" || true
reports+=("$reports_dir/house.xml")

echo "== lit (tests/)"
lit-22 -q --xunit-xml-output="$reports_dir/lit.xml" tests || true
reports+=("$reports_dir/lit.xml")

echo "== Python package (the wheel in a fresh venv with NumPy 2 and JAX from PyPI)"
tools/python_package_test.sh "$reports_dir/python_package.xml" || true
reports+=("$reports_dir/python_package.xml" "$reports_dir/python_package.mypy.xml")

echo "== CUDA optional (the wheel with the toolkit hidden: host only, then NVIDIA's wheels)"
tools/cuda_optional_test.sh "$reports_dir/cuda_optional.xml" || true
reports+=("$reports_dir/cuda_optional.xml")

echo "== C and C++ programs (tools/install.sh into a prefix; pkg-config and CMake consumers)"
tools/install_test.sh "$reports_dir/install.xml" || true
reports+=("$reports_dir/install.xml")

echo "== differential (tests/differential: the corpus and fresh generated programs vs NumPy;"
echo "   tests/original: the original Tessera's launch-level fixtures vs NumPy;"
echo "   tests/attention: attention's dropout statistics, invariances and gradients)"
tools/differential_test.sh "$reports_dir/differential.xml" || true
reports+=("$reports_dir/differential.xml" "$reports_dir/differential.original.xml"
          "$reports_dir/differential.attention.xml"
          "$reports_dir/differential.attention_gradients.xml")

# The sanitizer configurations and a bounded fuzzing session (docs/building.md). Their own
# output base; failures show in the summary through their reports.
sanitizer_reports="$reports_dir/sanitizers.txt"
tools/sanitizers.sh "$sanitizer_reports" || true
while read -r report; do reports+=("$report"); done < "$sanitizer_reports"
echo "== fuzzing (${TESSERA_FUZZ_SECONDS:-60} s per target)"
tools/fuzz.sh "${TESSERA_FUZZ_SECONDS:-60}" "$reports_dir/fuzz.xml" || true
reports+=("$reports_dir/fuzz.xml")

echo "== summary"
python3 tools/summarize_tests.py "${reports[@]}"
