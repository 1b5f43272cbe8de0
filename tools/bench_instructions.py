#!/usr/bin/env python3
"""Instructions per item of benchmark rows, counted by callgrind: a measure the machine's load
does not move, for costs too small for a timed run on a shared VM (the channel counters).

    python3 tools/bench_instructions.py BINARY FUNCTION_GLOB MEASURED_FILTER BASELINE_FILTER [TARGET]

runs BINARY twice under `valgrind --tool=callgrind`, once per filter (a Google Benchmark
--benchmark_filter that selects one row), counting only inside functions matching FUNCTION_GLOB
(callgrind's --toggle-collect: the benchmark's own function, so start-up and the harness are
left out), and divides each count by the items the row processed (from its JSON output:
items_per_second x time per iteration x iterations). Prints both, and their ratio; with TARGET
(e.g. 1.02) exits 1 when the measured row needs more than TARGET times the baseline's
instructions. Only rows whose work does not depend on timing give exact figures: one thread
doing a fixed loop (a spin loop's count depends on the other thread, so two-thread rows do not).

Example (the counters of the in-process channel, one thread):
    python3 tools/bench_instructions.py build/bench/channel/bench-channel-counters '*same_thread*' \\
        '^counters/on/same_thread' '^counters/off/same_thread' 1.02
"""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def items_of(bench_json):
    """Items the one selected row processed, from Google Benchmark's JSON."""
    runs = [r for r in json.loads(Path(bench_json).read_text())["benchmarks"]
            if r.get("run_type") != "aggregate"]
    if len(runs) != 1:
        raise SystemExit(f"the filter must select exactly one row (got {len(runs)})")
    run = runs[0]
    if run.get("error_occurred"):
        raise SystemExit(f"{run['name']}: {run.get('error_message', 'error')}")
    seconds = run["real_time"] * TIME_UNITS[run["time_unit"]] * run["iterations"]
    return run["name"], round(run["items_per_second"] * seconds)


def instructions(binary, function_glob, row_filter):
    """(row name, instructions counted, items) for one row."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        bench_json = Path(tmp) / "bench.json"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--collect-atstart=no", f"--toggle-collect={function_glob}",
                        binary, f"--benchmark_filter={row_filter}", "--benchmark_min_time=0.01",
                        "--benchmark_repetitions=1", f"--benchmark_out={bench_json}",
                        "--benchmark_out_format=json"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        totals = re.search(r"^(?:summary|totals):\s+(\d+)", out.read_text(), re.MULTILINE)
        if totals is None:
            raise SystemExit(f"no instruction total in callgrind's output for {row_filter}")
        name, items = items_of(bench_json)
    if items == 0:
        raise SystemExit(f"{name}: no items processed")
    return name, int(totals.group(1)), items


def main(argv):
    if len(argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    binary, glob, measured, baseline = argv[1:5]
    target = float(argv[5]) if len(argv) == 6 else None
    rows = [instructions(binary, glob, f) for f in (measured, baseline)]
    per_item = [count / items for _, count, items in rows]
    for (name, count, items), value in zip(rows, per_item):
        print(f"{name}: {count} instructions / {items} items = {value:.2f} per item")
    ratio = per_item[0] / per_item[1]
    verdict = "" if target is None else (" (met: <= %.2fx)" % target if ratio <= target
                                          else " (NOT met: > %.2fx)" % target)
    print(f"ratio {ratio:.4f}x (+{(ratio - 1) * 100:.2f} %){verdict}")
    return 1 if target is not None and ratio > target else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
