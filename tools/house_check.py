#!/usr/bin/env python3
"""The house rules a build cannot check, as a JUnit report (tools/test.sh).

Usage: house_check.py REPORT.xml [--clang-format BINARY]

Cases:
  clang-format      every tracked C/C++ source is formatted as .clang-format says
  own-files-only    nothing in the repository refers to a file outside it
  file-length       no C++ source over 600 lines without a reason in its opening comment
                    ("Over 600 lines: ...")
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

ROOT = Path(__file__).resolve().parent.parent
CXX_SUFFIXES = (".c", ".cc", ".cpp", ".h")
# Vendored or generated trees that keep their own form.
EXCLUDED = ("third_party/", "tests/fuzz/regressions/", "tests/differential/corpus/")
MAX_LINES = 600
LENGTH_REASON = "Over 600 lines:"
# References to the design notes that lived beside the repository (now docs/design.md).
OUTSIDE = re.compile(r"\.\./shared/|\bDESIGN\.md|\bTOOLCHAIN\.md|\bSTYLE\.md|/work/shared")


def tracked(suffixes=None):
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    out = []
    for name in names:
        if not name or name.startswith(EXCLUDED) or not (ROOT / name).is_file():
            continue
        if suffixes is None or name.endswith(suffixes):
            out.append(name)
    return out


def check_format(binary):
    sources = tracked(CXX_SUFFIXES)
    unformatted = []
    # In batches: one process per file would take minutes.
    for start in range(0, len(sources), 64):
        batch = sources[start:start + 64]
        result = subprocess.run([binary, "--dry-run", "--style=file", *batch], cwd=ROOT,
                                capture_output=True, text=True)
        if result.returncode != 0 and not result.stderr:
            return [f"{binary} failed with status {result.returncode}"]
        for line in result.stderr.splitlines():
            match = re.match(r"(\S+?):\d+:\d+: (?:warning|error)", line)
            if match and match.group(1) not in unformatted:
                unformatted.append(match.group(1))
    return [f"{name}: not formatted (run {binary} -i {name})" for name in unformatted]


def check_outside_references():
    problems = []
    for name in tracked():
        if name == "tools/house_check.py":
            continue
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                problems.append(f"{name}:{number}: refers outside the repository: {line.strip()}")
    return problems


def check_lengths():
    problems = []
    for name in tracked((".cc", ".cpp", ".h")):
        lines = (ROOT / name).read_text(encoding="utf-8", errors="replace").splitlines()
        if len(lines) <= MAX_LINES:
            continue
        opening = "\n".join(lines[:12])
        if LENGTH_REASON not in opening:
            problems.append(f"{name}: {len(lines)} lines and no '{LENGTH_REASON} <why>' in its "
                            "opening comment")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("--clang-format", default="clang-format-22")
    args = parser.parse_args()
    cases = [
        ("clang-format", lambda: check_format(args.clang_format)),
        ("own-files-only", check_outside_references),
        ("file-length", check_lengths),
    ]
    xml = []
    failed = 0
    for name, check in cases:
        try:
            problems = check()
        except (OSError, subprocess.SubprocessError) as error:
            problems = [f"could not run: {error}"]
        if problems:
            failed += 1
            print(f"house: {name}: {len(problems)} problem(s)")
            for problem in problems[:20]:
                print(f"  {problem}")
            body = escape("\n".join(problems))
            xml.append(f'<testcase classname="house" name="{name}"><failure message='
                       f'{quoteattr(problems[0])}>{body}</failure></testcase>')
        else:
            print(f"house: {name}: ok")
            xml.append(f'<testcase classname="house" name="{name}"/>')
    Path(args.report).write_text(
        f'<?xml version="1.0"?>\n<testsuite name="house" tests="{len(cases)}" '
        f'failures="{failed}">\n' + "\n".join(xml) + "\n</testsuite>\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
