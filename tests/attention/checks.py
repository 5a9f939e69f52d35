"""Runs named checks of the attention scripts (properties.py, gradients.py), prints each, and
writes their JUnit report."""
from __future__ import annotations

import time
import traceback
from typing import Callable, Optional
from xml.sax.saxutils import escape, quoteattr


def run_checks(suite: str, checks: list[tuple[str, Callable[[], None]]],
               junit: Optional[str]) -> int:
    """Runs every check (a failure is its exception's traceback), prints a line per check and a
    summary, writes `junit` when given; 1 when any check failed, else 0."""
    report = []
    for name, check in checks:
        start = time.monotonic()
        message = None
        try:
            check()
        except Exception:  # noqa: BLE001 - every failure is reported
            message = traceback.format_exc()
        report.append((name, time.monotonic() - start, message))
        print(("FAIL " if message else "ok   ") + name + (f"\n{message}" if message else ""))
    failures = sum(1 for _, _, m in report if m)
    print(f"{suite.replace('_', ' ')}: {len(report) - failures} passed, {failures} failed")
    if junit:
        with open(junit, "w") as f:
            f.write(f'<testsuites><testsuite name="{suite}" tests="{len(report)}" '
                    f'failures="{failures}">\n')
            for name, seconds, msg in report:
                f.write(f'<testcase classname="{suite}" name={quoteattr(name)} '
                        f'time="{seconds:.3f}">')
                if msg:
                    f.write(f"<failure message={quoteattr(msg.strip().splitlines()[-1])}>"
                            f"{escape(msg)}</failure>")
                f.write("</testcase>\n")
            f.write("</testsuite></testsuites>\n")
    return 1 if failures else 0
