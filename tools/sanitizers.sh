#!/usr/bin/env bash
# The sanitizer configurations: ASan + UBSan over the whole GoogleTest suite (bazel test
# --config=asan //...) and TSan over the threaded tests (compile cache, C API concurrency, remote leases,
# background decisions),
# built with clang-22 in an output base of their own (the default gcc build stays as it is).
# Writes the paths of the JUnit reports, one per line, to the file named by $1 (for the
# summary of tools/test.sh). Exits non-zero when a build or a test fails.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"
reports_list="${1:-/dev/null}"
: > "$reports_list"
readonly TSAN_TESTS=(//tests/service:compile_service_test //tests/capi:capi_test
                     //tests/capi:boundary_test //tests/cache:remote_cache_test
                     //tests/capi:background_decisions_test)
# Every package, named so that the default build's convenience symlinks (bazel-<folder>) are not
# traversed; the sanitizer build makes no symlinks of its own (--symlink_prefix=/).
readonly PACKAGES=(//arbiter/... //base/... //bench/... //cache/... //capi/... //dialect/... //service/...
                   //examples/... //jit/... //tests/... //tools/...)
sanitizer_bazel() {
  local command="$1"
  shift
  bazel --output_base="$TESSERA_SANITIZER_OUTPUT_BASE" "$command" --symlink_prefix=/ "$@"
}

status=0
echo "== ASan + UBSan (bazel test --config=asan //...)"
log="$(mktemp)"
sanitizer_bazel test "${TESSERA_BAZEL_FLAGS[@]}" --config=asan --test_summary=terse "${PACKAGES[@]}" \
  >"$log" 2>&1 || status=1
grep -E "^(//|FAIL|ERROR|Executed)" "$log" || cat "$log"
asan_logs="$(bazel --output_base="$TESSERA_SANITIZER_OUTPUT_BASE" info --config=asan bazel-testlogs 2>/dev/null)"
pattern="set(${PACKAGES[*]})"
for target in $(bazel --output_base="$TESSERA_SANITIZER_OUTPUT_BASE" query \
    "tests($pattern) except attr(tags, no_sanitizer, tests($pattern))" 2>/dev/null); do
  path="${target#//}"
  echo "$asan_logs/${path/://}/test.xml" >> "$reports_list"
done

echo "== TSan (bazel test --config=tsan, the threaded tests)"
sanitizer_bazel test "${TESSERA_BAZEL_FLAGS[@]}" --config=tsan --test_summary=terse "${TSAN_TESTS[@]}" \
  >"$log" 2>&1 || status=1
grep -E "^(//|FAIL|ERROR|Executed)" "$log" || cat "$log"
rm -f "$log"
tsan_logs="$(bazel --output_base="$TESSERA_SANITIZER_OUTPUT_BASE" info --config=tsan bazel-testlogs 2>/dev/null)"
for target in "${TSAN_TESTS[@]}"; do
  path="${target#//}"
  echo "$tsan_logs/${path/://}/test.xml" >> "$reports_list"
done
exit $status
