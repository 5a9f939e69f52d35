# Shared by the test scripts (tools/python_package_test.sh, tools/differential_test.sh,
# tools/cuda_optional_test.sh, tools/install_test.sh); sourced, defines functions only.

# tessera_test_python — prints a CPython >= 3.9 that is not the distribution's (the tests want
# a Python a user would install into): $TESSERA_TEST_PYTHON, else pyenv's newest, else PATH's
# python3; /usr/bin/python3 as the last resort (with a notice on stderr).
tessera_test_python() {
  local candidate real
  for candidate in "${TESSERA_TEST_PYTHON:-}" \
                   $(ls -d "$HOME"/.pyenv/versions/3.* 2>/dev/null | grep -E '/3\.[0-9]+\.[0-9]+$' |
                     sort -rV | sed 's|$|/bin/python3|') \
                   "$(command -v python3 || true)"; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    real="$(readlink -f "$candidate")"
    case "$real" in /usr/bin/*|/bin/*) continue ;; esac
    if "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "no Python besides the distribution's; using /usr/bin/python3" >&2
  echo /usr/bin/python3
}

# tessera_failed_report SUITE REPORT.xml MESSAGE — a JUnit report of one failed case, for a
# suite whose setup failed before its tests ran.
tessera_failed_report() {
  python3 - "$@" <<'PY'
import sys
from xml.sax.saxutils import quoteattr
suite, path, message = sys.argv[1:4]
with open(path, "w") as f:
    f.write(f'<testsuites><testsuite name="{suite}" tests="1" failures="1">'
            f'<testcase classname="{suite}" name="setup"><failure message={quoteattr(message)}/>'
            "</testcase></testsuite></testsuites>\n")
PY
}

# tessera_junit_report SUITE REPORT.xml "NAME|MESSAGE"... — a JUnit report of the cases given:
# an empty MESSAGE passed, "SKIP: why" was skipped, anything else failed with that message.
tessera_junit_report() {
  python3 - "$@" <<'PY'
import sys
from xml.sax.saxutils import quoteattr
suite, path, *cases = sys.argv[1:]
parsed = [case.split("|", 1) for case in cases]
skipped = sum(1 for _, message in parsed if message.startswith("SKIP:"))
failures = sum(1 for _, message in parsed if message) - skipped
with open(path, "w") as f:
    f.write(f'<testsuites><testsuite name="{suite}" tests="{len(parsed)}" '
            f'failures="{failures}" skipped="{skipped}">')
    for name, message in parsed:
        f.write(f'<testcase classname="{suite}" name={quoteattr(name)}>')
        if message.startswith("SKIP:"):
            f.write(f'<skipped message={quoteattr(message[5:].strip())}/>')
        elif message:
            f.write(f'<failure message={quoteattr(message)}/>')
        f.write("</testcase>")
    f.write("</testsuite></testsuites>\n")
PY
}

# tessera_record_case LABEL NAME MESSAGE — appends "NAME|MESSAGE" to the caller's `cases` array
# (for tessera_junit_report) and prints "LABEL: ok NAME" or "LABEL: FAIL NAME: MESSAGE".
tessera_record_case() {
  cases+=("$2|$3")
  if [ -n "$3" ]; then echo "$1: FAIL $2: $3" >&2; else echo "$1: ok $2"; fi
}
