#!/usr/bin/env bash
# The sanitizer configurations: ASan + UBSan over the whole GoogleTest suite (bazel test
# --config=asan //...) and TSan over the threaded tests (compile cache, C API concurrency),
# built with clang-22 in an output base of their own (the default gcc build stays as it is).
# Writes the paths of the JUnit reports, one per line, to the file named by $1 (for the
# summary of tools/test.sh). Exits non-zero when a build or a test fails.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"
reports_list="${1:-/dev/null}"
: > "$reports_list"
readonly TSAN_TESTS=(//tests/cache:compile_cache_test //tests/capi:capi_test
                     //tests/capi:boundary_test)
sanitizer_bazel() { bazel --output_base="$TESSERA_SANITIZER_OUTPUT_BASE" "$@"; }

status=0
echo "== ASan + UBSan (bazel test --config=asan //...)"
sanitizer_bazel test "${TESSERA_BAZEL_FLAGS[@]}" --config=asan --test_summary=terse //... 2>&1 |
  grep -E "^(//|FAIL|ERROR|Executed)" || true
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
asan_logs="$(sanitizer_bazel info --config=asan bazel-testlogs 2>/dev/null)"
for target in $(sanitizer_bazel query 'tests(//...) except attr(tags, no_sanitizer, tests(//...))' 2>/dev/null); do
  path="${target#//}"
  echo "$asan_logs/${path/://}/test.xml" >> "$reports_list"
done

echo "== TSan (bazel test --config=tsan, the threaded tests)"
sanitizer_bazel test "${TESSERA_BAZEL_FLAGS[@]}" --config=tsan --test_summary=terse "${TSAN_TESTS[@]}" 2>&1 |
  grep -E "^(//|FAIL|ERROR|Executed)" || true
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
tsan_logs="$(sanitizer_bazel info --config=tsan bazel-testlogs 2>/dev/null)"
for target in "${TSAN_TESTS[@]}"; do
  path="${target#//}"
  echo "$tsan_logs/${path/://}/test.xml" >> "$reports_list"
done
exit $status
