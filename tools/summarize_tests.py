#!/usr/bin/env python3
"""Sums JUnit-style XML reports (GoogleTest via Bazel, lit) into one closing line.

Usage: summarize_tests.py REPORT.xml...  Prints one line per report, then `N passed, N failed`
(the line CI reads). Exits 1 when anything failed or a report is missing.
"""
import sys
import xml.etree.ElementTree as ET


def count(path, skip_reasons):
    """Returns (passed, failed, skipped) for one report; a missing or broken report is a failure.
    Adds the reason of every skip to `skip_reasons`."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as error:
        print(f"  {path}: unreadable report ({error})")
        return 0, 1, 0
    passed = failed = skipped = 0
    for case in root.iter("testcase"):
        skip = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif skip is not None or case.get("status") == "notrun":
            skipped += 1
            message = (skip.get("message") if skip is not None else None) or "no reason given"
            skip_reasons.add(message.strip().splitlines()[-1])
        else:
            passed += 1
    if passed + failed + skipped == 0:
        # A binary that died before writing cases: Bazel writes a report with a failure count only.
        failed = int(root.get("failures", "0")) + int(root.get("errors", "0")) or 1
    return passed, failed, skipped


def main(paths):
    total_passed = total_failed = total_skipped = 0
    skip_reasons = set()
    for path in paths:
        passed, failed, skipped = count(path, skip_reasons)
        print(f"  {path}: {passed} passed, {failed} failed, {skipped} skipped")
        total_passed += passed
        total_failed += failed
        total_skipped += skipped
    if total_skipped:
        print(f"{total_skipped} skipped:")
        for reason in sorted(skip_reasons):
            print(f"  {reason}")
    print(f"{total_passed} passed, {total_failed} failed")
    return 1 if total_failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
