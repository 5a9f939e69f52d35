#!/usr/bin/env bash
# A bounded fuzzing session: builds the libFuzzer targets (tests/fuzz, clang-22 with ASan +
# UBSan and coverage instrumentation of the whole project) and runs each for SECONDS (default
# 60) on a corpus seeded from tests/fuzz/regressions, examples/ and the lit fixtures, with the
# IR dictionary. A crash saves its input under $TESSERA_FUZZ_ARTIFACTS (default
# /tmp/tessera-fuzz-artifacts) and fails; add it to tests/fuzz/regressions/ with the fix.
# With a second argument, writes a JUnit report there (one test case per target).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
# setup.sh turns on errexit; this script reads every exit status itself (a fuzzer that finds a
# crash exits non-zero, and the report and the log's tail must still be written).
set +e
cd "$TESSERA_ROOT"
seconds="${1:-60}"
report="${2:-}"
artifacts="${TESSERA_FUZZ_ARTIFACTS:-/tmp/tessera-fuzz-artifacts}"
mkdir -p "$artifacts"
sanitizer_bazel() { bazel --output_base="$TESSERA_SANITIZER_OUTPUT_BASE" "$@"; }


if ! sanitizer_bazel build --symlink_prefix=/ "${TESSERA_BAZEL_FLAGS[@]}" --config=fuzz \
    //tests/fuzz:compile_fuzzer //tests/fuzz:invoke_fuzzer //tests/fuzz:package_fuzzer \
    >"$artifacts/build.log" 2>&1; then
  cat "$artifacts/build.log" >&2
  echo "fuzz: building the fuzzers failed" >&2
  exit 1
fi
bin="$(sanitizer_bazel info --config=fuzz bazel-bin 2>/dev/null)/tests/fuzz"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/compile" "$work/invoke" "$work/package"
cp tests/fuzz/regressions/compile/* examples/*.mlir tests/original/*.mlir "$work/compile/"
# The lit fixtures, flattened (their folders mirror the sources; names stay unique).
find tests/dialect tests/jit -name '*.mlir' -not -path '*/Output/*' -exec cp -t "$work/compile/" {} +
cp tests/fuzz/regressions/invoke/* "$work/invoke/"
cp tests/fuzz/regressions/package/* "$work/package/"

status=0
cases=""
write_report() {
  if [ -n "$report" ]; then
    echo "<testsuites><testsuite name=\"fuzz\">$cases$1</testsuite></testsuites>" > "$report"
  fi
}
# Whatever a fuzzer does to its process group, this script reports.
trap '' HUP TERM
for target in compile invoke package; do
  # Until the fuzzer has finished, the report says it did not.
  write_report "<testcase classname=\"fuzz\" name=\"${target}_fuzzer\"><failure message=\"did not finish\"/></testcase>"
  log="$artifacts/${target}_fuzzer.log"
  # In a session of its own: on a crash libFuzzer signals its whole process group.
  ASAN_OPTIONS="detect_leaks=0:detect_container_overflow=0" \
    setsid -w "$bin/${target}_fuzzer" "$work/$target" -dict=tests/fuzz/dictionary.txt \
      -max_total_time="$seconds" -timeout=30 -rss_limit_mb=6144 -print_final_stats=1 \
      -artifact_prefix="$artifacts/${target}-" >"$log" 2>&1
  code=$?
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
  echo "fuzz: ${target}_fuzzer ran ${runs:-0} inputs in ${seconds}s, exit $code (log: $log)"
  if [ "$code" -ne 0 ]; then
    status=1
    tail -n 40 "$log" >&2
    cases+="<testcase classname=\"fuzz\" name=\"${target}_fuzzer\"><failure message=\"crash, see $log\"/></testcase>"
  else
    cases+="<testcase classname=\"fuzz\" name=\"${target}_fuzzer\"/>"
  fi
done
write_report ""
exit $status
