#!/usr/bin/env python3
"""Turns bench-ipc's Google Benchmark JSON into the tables and plot of docs/performance/ipc.md.

    bench-ipc --benchmark_repetitions=15 --benchmark_enable_random_interleaving=true \\
        --benchmark_out=ipc.json --benchmark_out_format=json
    python3 tools/bench_ipc_plot.py ipc.json docs/performance

The pairing, the ratio table and the verdict rule are tools/bench_channel_plot.py's (imported,
with the comparisons below): repetition i of a measured side is divided by repetition i of its
baseline; met = at least 90 % of at least 10 pairs meet the target. Prints the ratio table, then
every benchmark's own median with its spread (so the baselines show even before ferry's rows
exist); writes ipc.png into the output folder. Exits 1 when any run reports error_occurred (a
wrong echo, a checksum mismatch, a peer that failed): that run is void, never a gap.
"""

import statistics
import sys

import bench_channel_plot as bench
from bench_channel_plot import Comparison

COMPARISONS = [
    Comparison("roundtrip", "ferry", "socketpair", "64 B round trip between processes vs Unix socketpair",
               "us_per_item", "lower", 0.2, "us"),
    Comparison("roundtrip", "ferry", "posix_mq", "64 B round trip between processes vs POSIX mq",
               "us_per_item", "lower", None, "us"),
    Comparison("roundtrip", "ferry", "boost_mq", "64 B round trip between processes vs boost message_queue",
               "us_per_item", "lower", None, "us"),
    Comparison("throughput", "ferry", "baseline", "64-bit items between processes vs in-process ferry::Channel",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("dataset", "ferry_copy", "memcpy", "MessageChannel copying path between processes vs one memcpy",
               "bytes_per_second", "higher", 0.8, "GiB/s"),
    Comparison("dataset", "ferry_loan", "ferry_copy", "MessageChannel zero-copy (loan) vs copying path",
               "bytes_per_second", "higher", 2.0, "GiB/s", ("4MiB",)),
    Comparison("dataset", "ferry_loan", "ferry_copy", "MessageChannel zero-copy (loan) vs copying path",
               "bytes_per_second", "higher", None, "GiB/s", ("64KiB",)),
]


def figures_table(runs):
    """Every benchmark's own figure: median, IQR and min..max over its repetitions."""
    lines = ["| benchmark | repetitions | median | IQR | min..max |", "|---|---:|---:|---:|---:|"]
    for (measure, param), sides in sorted(runs.items()):
        c = next((c for c in COMPARISONS if c.measure == measure), None)
        if c is None:
            continue
        for side, reps in sorted(sides.items()):
            values = [bench.absolute(run, c.metric) for run in reps.values()]
            low, high = bench.quartiles(values)
            lines.append(f"| {measure}/{side}/{param} | {len(values)} | {statistics.median(values):.3g} {c.unit} "
                         f"| {low:.3g}..{high:.3g} | {min(values):.3g}..{max(values):.3g} |")
    return "\n".join(lines)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        runs = bench.load_runs(argv[1])
    except bench.BenchError as error:
        print(error, file=sys.stderr)
        return 1
    rows = bench.summarise(runs, COMPARISONS)
    if rows:
        print(bench.table(rows))
        bench.plot(rows, argv[2], "ipc.png")
    else:
        print("No ferry rows in this run: the baselines' own figures only.")
    print()
    print(figures_table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
