#!/usr/bin/env python3
"""The differential test driver: runs every case of tests/differential/corpus/*.json, then fresh
generated programs, through `tessera_jit` on the host, and compares each output with the
independent evaluator (evaluator.py) as compare.py describes. A failing case is shrunk
(shrinker.py) and its reproducer written, as JSON, to the artifacts directory.

    run_differential.py [--seed N] [--count N] [--time-budget S] [--junit PATH]
                        [--artifacts DIR] [--target host|nvptx] [--no-shrink] [CASE.json ...]

With `--target nvptx` the programs also run on the GPU and are compared with the host's results
(bit for bit where the evaluator expects bits, else within the same bounds); without a GPU it
says so and skips.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Optional
from xml.sax.saxutils import escape, quoteattr

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from compare import Mismatch, compare_output  # noqa: E402
from evaluator import Expected, evaluate  # noqa: E402
from floats import FLOATS, INT_DTYPES, int_patterns, is_float  # noqa: E402
from generator import Case, decode_input, generate, print_program  # noqa: E402
from guarded import guarded_bytes  # noqa: E402
from shrinker import shrink  # noqa: E402

import tessera_jit as tj  # noqa: E402

FILL = 0xA5  # outputs start as this byte pattern, so an element the program skips shows
IN_PROGRESS = "in_progress.json"  # in the artifacts directory: the case being run


class Watchdog:
    """Bounds each step of one case (compile, run, evaluate, compare). A step in native code
    cannot be interrupted, so when one takes longer than `limit` seconds the watchdog calls
    `on_timeout(case, step, seconds)` — which reports the case as a `timeout` failure and writes
    the JUnit report — and ends the process with status 1."""

    def __init__(self, limit: float, on_timeout: Any):
        self.limit = limit
        self.on_timeout = on_timeout
        self.current: Optional[tuple[Case, str, float]] = None
        if limit > 0:
            threading.Thread(target=self._watch, name="differential-watchdog",
                             daemon=True).start()

    def enter(self, case: Case, step: str) -> None:
        self.current = (case, step, time.monotonic())

    def leave(self) -> None:
        self.current = None

    def _watch(self) -> None:
        while True:
            time.sleep(min(1.0, self.limit / 4))
            current = self.current
            if current is not None and time.monotonic() - current[2] > self.limit:
                try:
                    self.on_timeout(current[0], current[1], time.monotonic() - current[2])
                finally:
                    sys.stdout.flush()
                    os._exit(1)


WATCHDOG: Optional[Watchdog] = None


def _step(case: Case, step: str) -> None:
    if WATCHDOG is not None:
        WATCHDOG.enter(case, step)


@dataclass
class Outcome:
    """What running one case gave: `ok`, `compile` (the compile failed), `run` (the call
    failed), `mismatch` or `evaluator` (the harness itself failed). `key` identifies the way it
    failed, for shrinking."""
    status: str
    key: str = ""
    message: str = ""
    compared: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def call_arguments(case: Case) -> list[Any]:
    """The arguments of the entry: input arrays (copies), scalars, and filled outputs. Every
    array lies against an inaccessible page (guarded.py), after it for even argument positions
    and before it for odd ones, so an access one element outside an operand faults."""
    values = []
    for position, arg in enumerate(case["program"]["args"]):
        t = arg["type"]
        if arg["role"] == "in":
            data = decode_input(case["inputs"][arg["name"]])
            if arg["shape"] is None:
                if is_float(t):
                    values.append(float(data.astype(np.float64)))
                else:
                    values.append(int(data))
                continue
        else:
            dtype = FLOATS[t].dtype if is_float(t) else INT_DTYPES[t]
            count = int(np.prod(arg["shape"], dtype=np.int64))
            data = np.full(count * np.dtype(dtype).itemsize, FILL, dtype=np.uint8)
            if t == "i1":
                data[:] = 1
            data = data.view(dtype).reshape(tuple(arg["shape"]))
        raw = guarded_bytes(data.nbytes, after=position % 2 == 0)
        array = raw.view(data.dtype).reshape(data.shape)
        array[...] = data
        values.append(array)
    return values


def error_key(status: str, message: str) -> str:
    """A failure's identity without locations, names and numbers."""
    text = message.split("error: ", 1)[-1].splitlines()[0] if message else ""
    text = re.sub(r"[%@]?[\w.]*\d[\w.]*", "#", text)
    return f"{status}:{text[:80]}"


def run_case(ctx: Any, case: Case, target: str = "host") -> Outcome:
    """Compiles, runs and checks one case."""
    try:
        return _run_case(ctx, case, target)
    finally:
        if WATCHDOG is not None:
            WATCHDOG.leave()


def _run_case(ctx: Any, case: Case, target: str) -> Outcome:
    program = case["program"]
    text = print_program(program)
    _step(case, "compile")
    try:
        module = ctx.compile(text, target=target)
    except tj.TesseraError as error:
        return Outcome("compile", error_key("compile", error.message), error.message)
    args = call_arguments(case)
    _step(case, "run")
    try:
        getattr(module, program["entry"])(*args)
    except tj.TesseraError as error:
        return Outcome("run", error_key("run", error.message), error.message)
    finally:
        module.close()
    _step(case, "evaluate")
    try:
        expected = evaluate(case)
    except Exception as error:  # the evaluator's own failure: reported, never passed
        return Outcome("evaluator", evaluator_key(error), "the evaluator raised (a bug of the "
                       "suite, not of the compiler):\n" + traceback.format_exc())
    _step(case, "compare")
    return check(case, expected, args)


def evaluator_key(error: BaseException) -> str:
    """An evaluator exception's identity: its type and the innermost frame of the evaluator's
    code (for shrinking a case that makes the evaluator raise)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if f.filename.startswith(HERE)]
    where = f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else "?"
    return f"evaluator:{type(error).__name__}:{where}"


def check(case: Case, expected: dict[str, Expected], args: list[Any]) -> Outcome:
    mismatches, compared = [], 0
    missing = [a["name"] for a in case["program"]["args"]
               if a["role"] == "out" and a["name"] not in expected]
    if missing:  # an output the evaluator has no reference for would go unchecked
        return Outcome("evaluator", "evaluator:missing-output", "the evaluator gave no "
                       f"reference for output(s) {', '.join(missing)} (a bug of the suite)")
    for arg, value in zip(case["program"]["args"], args):
        if arg["role"] != "out":
            continue
        m = compare_output(arg["name"], arg["type"], expected[arg["name"]], value)
        exp = expected[arg["name"]]
        bound = exp.rel if exp.rel is not None else exp.atol
        compared += int(np.sum(np.isfinite(bound))) if bound is not None else value.size
        if m:
            mismatches.append(m)
    if mismatches:
        first = mismatches[0]
        key = f"mismatch:{first.what.split()[0]}:{_out_type(case, first.output)}"
        return Outcome("mismatch", key, "\n".join(m.describe() for m in mismatches), compared,
                       mismatches)
    return Outcome("ok", compared=compared)


def _out_type(case: Case, name: str) -> str:
    return next(a["type"] for a in case["program"]["args"] if a["name"] == name)


def describe_case(case: Case, outcome: Outcome) -> str:
    return f"{outcome.status}: {outcome.message}\n--- program\n{safe_print(case)}"


def safe_describe(case: Case, outcome: Outcome) -> str:
    try:
        return describe_case(case, outcome)
    except Exception:
        return f"{outcome.status}: {outcome.message}\n(describing the case raised)\n"


def safe_print(case: Case) -> str:
    """The program's MLIR, or what went wrong printing it (the JSON model is kept anyway)."""
    try:
        return print_program(case["program"])
    except Exception:
        return "(printing the program raised)\n" + traceback.format_exc()


class Driver:
    """Runs cases, shrinks failures, writes reproducers and the JUnit report."""

    def __init__(self, options: argparse.Namespace):
        self.options = options
        self.ctx = tj.Context(default_target="host")
        self.artifacts = options.artifacts or tempfile.mkdtemp(prefix="differential-")
        os.makedirs(self.artifacts, exist_ok=True)
        self.shrink_deadline = time.monotonic() + options.shrink_budget
        self.failures: list[tuple[str, Case, Outcome, Optional[str]]] = []
        self.report: list[tuple[str, float, Optional[str]]] = []  # the JUnit test cases
        self.current = ""  # the case being run (or shrunk), for the watchdog
        self.shrinking = False
        self.started = time.monotonic()
        self.pending: tuple[int, list[str]] = (0, [])  # the fresh batch under way, for on_timeout

    def on_timeout(self, case: Case, step: str, seconds: float) -> None:
        """The watchdog's report of a step that does not end: the case (the shrink candidate,
        when it hung while shrinking) is the reproducer, and the JUnit report is written as it
        stands plus this failure; then the process ends."""
        name = self.current + ("_shrink_candidate" if self.shrinking else "")
        outcome = Outcome("timeout", f"timeout:{step}",
                          f"{step} did not finish within {seconds:.0f} s (--program-timeout "
                          f"{self.options.program_timeout:g}); the run is ended here")
        try:
            path = self.write_reproducer(name, case, outcome)
        except Exception:
            path = f"(writing it raised: {traceback.format_exc()})"
        print(f"differential: FAIL {name} ({outcome.key}): {outcome.message}; reproducer {path}\n"
              f"{safe_describe(case, outcome)}", flush=True)
        self.failures.append((name, case, outcome, path))
        start, messages = self.pending
        if messages:  # failures of the unfinished batch of fresh programs
            self.report.append((f"fresh seeds {start}.. (unfinished)", 0.0,
                                "\n\n".join(messages)))
        self.report.append((f"{name} timeout", seconds,
                            f"{outcome.key}: {outcome.message}\n--- program\n{safe_print(case)}"))
        if self.options.junit:
            junit(self.options.junit, self.report)
        print(f"differential: ended by the watchdog after {time.monotonic() - self.started:.1f} s "
              f"with {len(self.failures)} failure(s); reproducers in {self.artifacts}", flush=True)

    def run(self, name: str, case: Case, shrink_it: bool = True) -> Outcome:
        """Runs a case; a failure is recorded, shrunk and written. Never raises: an exception of
        the harness itself is a failure (status `evaluator`, a bug of the suite)."""
        self.current, self.shrinking = name, False
        try:
            outcome = self.attempt(name, case)
        except Exception:
            outcome = Outcome("evaluator", "harness", "the harness raised (a bug of the suite, "
                              "not of the compiler):\n" + traceback.format_exc())
        if not outcome.ok:
            try:
                path = self.reproduce(name, case, outcome, shrink_it)
            except Exception:  # writing the reproducer failed: still a reported failure
                path = None
                print(f"differential: FAIL {name} ({outcome.key}); writing the reproducer "
                      f"raised:\n{traceback.format_exc()}{safe_describe(case, outcome)}",
                      flush=True)
            self.failures.append((name, case, outcome, path))
        return outcome

    def attempt(self, name: str, case: Case) -> Outcome:
        """run_case, with the case written to IN_PROGRESS first: a program that kills the
        process (a fault in compiled code) leaves its reproducer there for
        tools/differential_test.sh to report. `finish` removes it."""
        record = {"name": name, **case, "mlir": safe_print(case)}
        with open(os.path.join(self.artifacts, IN_PROGRESS), "w") as f:
            json.dump(record, f, indent=1)
        return run_case(self.ctx, case)

    def finish(self) -> None:
        try:
            os.remove(os.path.join(self.artifacts, IN_PROGRESS))
        except FileNotFoundError:
            pass

    def reproduce(self, name: str, case: Case, outcome: Outcome,
                  shrink_it: bool = True) -> Optional[str]:
        """Shrinks a failing case (within the shrink budget) and writes the reproducer (a
        corpus case is a reproducer already: it is written as it is). Whatever goes wrong while
        shrinking, the unshrunk case is the reproducer and the run goes on."""
        small, final, trials = case, outcome, 0
        notes: list[str] = []
        errors: list[str] = []
        remaining = self.shrink_deadline - time.monotonic()
        if shrink_it and not self.options.no_shrink and remaining > 1 and \
                outcome.key != "harness":
            def still_fails(candidate: Case) -> bool:
                return self.attempt(name + "_shrink_candidate", candidate).key == outcome.key
            try:
                self.shrinking = True
                small, trials = shrink(case, still_fails, budget_s=min(remaining, 60.0),
                                       errors=errors)
                self.shrinking = False
                if small is not case:
                    final = self.attempt(name, small)
                    if final.key != outcome.key:  # not reproducible after all: keep the original
                        notes.append(f"the shrunk case gave {final.key}; kept the original")
                        small, final = case, outcome
            except Exception:
                notes.append("shrinking raised; the reproducer is the unshrunk case:\n" +
                             traceback.format_exc())
                small, final = case, outcome
            finally:
                self.shrinking = False
        if errors:
            notes.append(f"{len(errors)} exception(s) while shrinking (candidates skipped); "
                         f"the first:\n{errors[0]}")
        path = self.write_reproducer(name, small, final)
        print(f"differential: FAIL {name} ({outcome.key}); shrunk in {trials} trial(s), "
              f"reproducer {path}\n" + "".join(f"note: {n}\n" for n in notes) +
              safe_describe(small, final), flush=True)
        return path


    def write_reproducer(self, name: str, case: Case, outcome: Outcome) -> str:
        record = dict(case)
        record["failure"] = {"status": outcome.status, "key": outcome.key,
                             "message": outcome.message[:4000]}
        record["mlir"] = safe_print(case)
        safe = re.sub(r"[^\w.-]+", "_", name)
        path = os.path.join(self.artifacts, f"{safe}.json")
        with open(path, "w") as f:
            json.dump(record, f, indent=1)
        return path


def load_case(path: str) -> Case:
    with open(path) as f:
        return json.load(f)


def junit(path: str, cases: list[tuple[str, float, Optional[str]]]) -> None:
    failures = sum(1 for _, _, msg in cases if msg is not None)
    with open(path, "w") as f:
        f.write(f'<testsuites><testsuite name="differential" tests="{len(cases)}" '
                f'failures="{failures}">\n')
        for name, seconds, msg in cases:
            f.write(f'<testcase classname="differential" name={quoteattr(name)} '
                    f'time="{seconds:.3f}">')
            if msg is not None:
                first = msg.strip().splitlines()[0] if msg.strip() else "failed"
                f.write(f"<failure message={quoteattr(first)}>{escape(msg)}</failure>")
            f.write("</testcase>\n")
        f.write("</testsuite></testsuites>\n")


def gpu_check(options: argparse.Namespace, cases: list[tuple[str, Case]]) -> list[tuple[str, float,
                                                                                     Optional[str]]]:
    """--target nvptx: the same cases on the GPU against the host's outputs."""
    if tj.device_count() == 0:
        print("differential: --target nvptx: no GPU here; skipped", flush=True)
        return []
    results = []
    gpu = tj.Context(default_target="nvptx")
    host = tj.Context(default_target="host")
    for name, case in cases:
        start = time.monotonic()
        message = None
        try:
            host_args = call_arguments(case)
            getattr(host.compile(print_program(case["program"])), case["program"]["entry"])(
                *host_args)
            dev_args = [gpu.to_device(a) if isinstance(a, np.ndarray) else a
                        for a in call_arguments(case)]
            getattr(gpu.compile(print_program(case["program"])), case["program"]["entry"])(
                *dev_args)
            expected = evaluate(case)
            for arg, h, d in zip(case["program"]["args"], host_args, dev_args):
                if arg["role"] != "out" or arg["name"] not in expected:
                    continue
                e = expected[arg["name"]]
                ref = h.astype(np.float64) if is_float(arg["type"]) else h
                ref = ref if is_float(arg["type"]) else int_patterns(h, arg["type"])
                m = compare_output(arg["name"], arg["type"], Expected(ref, e.rel, e.atol, e.what),
                                   d.numpy())
                if m:
                    message = (message or "") + m.describe() + "\n"
        except Exception:
            message = traceback.format_exc()
        results.append((f"nvptx {name}", time.monotonic() - start, message))
        print(f"differential: nvptx {name}: {'ok' if message is None else 'FAIL'}", flush=True)
    return results


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", help="case files to run instead of the corpus")
    parser.add_argument("--seed", type=int, default=None, help="base seed of fresh programs")
    parser.add_argument("--count", type=int, default=300, help="fresh programs to run")
    parser.add_argument("--time-budget", type=float, default=150.0,
                        help="seconds for everything (fresh programs stop when it runs out)")
    parser.add_argument("--shrink-budget", type=float, default=60.0,
                        help="seconds of shrinking in all")
    parser.add_argument("--corpus", default=os.path.join(HERE, "corpus"))
    parser.add_argument("--junit", help="write a JUnit XML report here")
    parser.add_argument("--artifacts", help="directory for reproducers (default: a temp dir)")
    parser.add_argument("--batch", type=int, default=50, help="fresh programs per test case")
    parser.add_argument("--target", choices=["host", "nvptx"], default="host")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--program-timeout", type=float, default=120.0,
                        help="seconds one compile, run or evaluation may take before the run "
                        "is ended and the case reported as a timeout (0: no limit)")
    parser.add_argument("--print", type=int, metavar="SEED", help="print a seed's program, exit")
    options = parser.parse_args(argv)

    if options.print is not None:
        case = generate(options.print)
        print(print_program(case["program"]), end="")
        return 0
    seed = options.seed if options.seed is not None else int(time.time() * 1000) % 1_000_000_000
    start = time.monotonic()
    deadline = start + options.time_budget
    driver = Driver(options)
    global WATCHDOG
    WATCHDOG = Watchdog(options.program_timeout, driver.on_timeout)
    print(f"differential: seed {seed}, {options.count} fresh program(s), time budget "
          f"{options.time_budget:.0f} s, tessera_jit {tj.__version__} ({tj.library_path()}), "
          f"artifacts {driver.artifacts}", flush=True)
    report = driver.report
    explicit = bool(options.cases)
    paths = options.cases or sorted(glob.glob(os.path.join(options.corpus, "*.json")))
    all_cases: list[tuple[str, Case]] = []
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        t0 = time.monotonic()
        try:
            case = load_case(path)
        except Exception:
            message = f"cannot load {path}:\n{traceback.format_exc()}"
            driver.failures.append((f"corpus_{name}", {}, Outcome("evaluator", "load", message),
                                    None))
            report.append((f"corpus {name}", time.monotonic() - t0, message))
            print(f"differential: corpus {name}: {message}", flush=True)
            continue
        all_cases.append((name, case))
        outcome = driver.run(f"corpus_{name}", case, shrink_it=False)
        report.append((f"corpus {name}", time.monotonic() - t0,
                       None if outcome.ok else describe_case(case, outcome)))
        print(f"differential: corpus {name}: {outcome.status}", flush=True)
    ran = compared = 0
    if not explicit:
        batch_start, batch_messages, t0 = seed, [], time.monotonic()
        driver.pending = (batch_start, batch_messages)
        for i in range(options.count):
            if time.monotonic() > deadline:
                print(f"differential: time budget reached after {i} fresh program(s)", flush=True)
                break
            s = seed + i
            try:
                case = generate(s)
            except Exception:  # the generator's own failure: a bug of the suite, reported
                case = None
                outcome = Outcome("evaluator", "generator", "the generator raised (a bug of the "
                                  "suite):\n" + traceback.format_exc())
                driver.failures.append((f"seed_{s}", {}, outcome, None))
                print(f"differential: FAIL seed_{s} (generator)\n{outcome.message}", flush=True)
            if case is not None:
                all_cases.append((f"seed_{s}", case))
                outcome = driver.run(f"seed_{s}", case)
            ran += 1
            compared += outcome.compared
            if not outcome.ok:
                text = f"seed {s}: {outcome.key}\n{outcome.message}"
                if outcome.status == "evaluator":  # a bug of the suite: show what it ran on
                    text += f"\n--- program\n{safe_print(case)}"
                batch_messages.append(text)
            if (i + 1) % options.batch == 0 or i + 1 == options.count:
                report.append((f"fresh seeds {batch_start}..{s}", time.monotonic() - t0,
                               "\n\n".join(batch_messages) if batch_messages else None))
                batch_start, batch_messages, t0 = s + 1, [], time.monotonic()
                driver.pending = (batch_start, batch_messages)
        else:
            batch_messages = []
        if batch_messages or (ran and ran % options.batch and batch_start <= seed + ran - 1):
            report.append((f"fresh seeds {batch_start}..{seed + ran - 1}", time.monotonic() - t0,
                           "\n\n".join(batch_messages) if batch_messages else None))
    driver.finish()
    if options.target == "nvptx":
        report += gpu_check(options, all_cases)
    failed = len(driver.failures)
    elapsed = time.monotonic() - start
    print(f"differential: seed {seed}: {len(paths)} corpus case(s), {ran} fresh program(s), "
          f"{compared} element(s) compared, {failed} failure(s) in {elapsed:.1f} s"
          + (f"; reproducers in {driver.artifacts}" if failed else ""), flush=True)
    if options.junit:
        junit(options.junit, report)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
