#!/usr/bin/env bash
# How long `tessera-jit --version` takes to start and exit, against `python3 -c pass` (what a
# user compares a command-line tool with), interleaved in one run: median and spread of N runs
# each, a table and a JSON line. Builds the CLI with -c opt. Usage:
#   bench/cli_startup_bench.sh [--runs N] [--python PATH] [--json PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=41
python=/usr/bin/python3
json=""
while (($#)); do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --json) json="$2"; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--python PATH] [--json PATH]" >&2; exit 2 ;;
  esac
done
source tools/setup.sh >/dev/null
bazel build -c opt "${TESSERA_BAZEL_FLAGS[@]}" --symlink_prefix=/ //tools/tessera-jit >/dev/null
cli="$(bazel info -c opt "${TESSERA_BAZEL_FLAGS[@]}" output_path)/k8-opt/bin/tools/tessera-jit/tessera-jit"
"$python" - "$cli" "$python" "$runs" "$json" <<'PY'
import json, os, platform, statistics, subprocess, sys, time
cli, python, runs, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
commands = {"tessera-jit --version": [cli, "--version"], "python3 -c pass": [python, "-c", "pass"]}
times = {name: [] for name in commands}
for _ in range(3):  # warm the page cache
    for command in commands.values():
        subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
for _ in range(runs):  # interleaved: both see the same machine state
    for name, command in commands.items():
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
        times[name].append((time.perf_counter() - start) * 1e3)
def cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()
median = {name: statistics.median(t) for name, t in times.items()}
ratio = median["tessera-jit --version"] / median["python3 -c pass"]
print(f"CLI start-up, median of {runs} interleaved runs ({cpu()}, {os.cpu_count()} cores)")
print(f"| command | median ms | min ms | max ms |")
print(f"|---|---|---|---|")
for name, t in times.items():
    print(f"| `{name}` | {median[name]:.2f} | {min(t):.2f} | {max(t):.2f} |")
target = 0.5
print(f"ratio tessera-jit / python3: {ratio:.2f} (target <= {target}: {'met' if ratio <= target else 'missed'})")
record = {"bench": "cli_startup", "cpu": cpu(), "runs": runs, "median_ms": median,
          "ratio": ratio, "target": target, "met": ratio <= target}
print(json.dumps(record))
if out:
    with open(out, "w") as f:
        json.dump(record, f, indent=1)
PY
