#!/usr/bin/env python3
"""Runs every area's benchmark for docs/performance.md's table, one after another, each on a
machine as quiet as it gets, and writes one JSON per area into OUT_DIR.

    python3 tools/bench_run_all.py BUILD_DIR OUT_DIR [AREA ...]
    python3 tools/bench_report.py OUT_DIR --write docs/performance.md

AREA is any of the names below (default: all). Each run has 10 interleaved repetitions (20 for
the counters, whose pairs differ by less; 40 for ipc and 30 for channel and net, whose pairs
count only where both sides ran in the same placement of the two CPUs: bench_channel_plot's
"Placement"), goes through bench_channel_plot.run_recorded (so it runs in rounds, one process
per round with one repetition of every benchmark in random order, and /proc/loadavg before and
after is in the JSON's context),
and starts only once the 1-minute load average is at or below bench_channel_plot.LOADED_ABOVE —
it waits up to WAIT_LIMIT seconds for that, then runs anyway and the report labels the run
loaded. Areas whose binary is not built (no UCX: no bench-net) are skipped with a note.
"""

import subprocess
import sys
import time
from pathlib import Path

import bench_channel_plot as bench

WAIT_LIMIT = 600
INTERLEAVED = ["--benchmark_enable_random_interleaving=true"]
AREAS = {
    "channel": ("bench/channel/bench-channel", ["--benchmark_repetitions=30"]),
    "channel-counters": ("bench/channel/bench-channel-counters", ["--benchmark_repetitions=20"]),
    "ipc": ("bench/ipc/bench-ipc", ["--benchmark_repetitions=40"]),
    "ipc-counters": ("bench/ipc/bench-ipc-counters", ["--benchmark_repetitions=20"]),
    "net": ("bench/net/bench-net", ["--benchmark_repetitions=30"]),
    "acl": ("bench/acl/bench-acl", ["--benchmark_repetitions=10"]),
    "afd": ("bench/afd/afd_bench", ["--benchmark_repetitions=20"]),
    "runtime": ("bench/runtime/bench-runtime", ["--benchmark_repetitions=10"]),
    "kernel": ("bench/kernel/bench-kernel_args", ["--benchmark_repetitions=10"]),
}


def one_minute_load():
    return float(Path("/proc/loadavg").read_text().split()[0])


def wait_for_quiet():
    deadline = time.monotonic() + WAIT_LIMIT
    while one_minute_load() > bench.LOADED_ABOVE and time.monotonic() < deadline:
        time.sleep(5)


def main(argv):
    if len(argv) < 3 or any(a not in AREAS for a in argv[3:]):
        print(__doc__, file=sys.stderr)
        print("areas: " + ", ".join(AREAS), file=sys.stderr)
        return 2
    build, out = Path(argv[1]), Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    failed = []
    for area in argv[3:] or list(AREAS):
        binary, args = AREAS[area]
        if not (build / binary).exists():
            print(f"{area}: {build / binary} not built, skipped", flush=True)
            continue
        wait_for_quiet()
        started = time.monotonic()
        print(f"{area}: running at load {one_minute_load():.2f}", flush=True)
        try:
            bench.run_recorded([str(build / binary)] + args + INTERLEAVED, str(out / f"{area}.json"))
        except subprocess.CalledProcessError as error:
            failed.append(area)
            print(f"{area}: FAILED ({error})", flush=True)
            continue
        print(f"{area}: done in {time.monotonic() - started:.0f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
