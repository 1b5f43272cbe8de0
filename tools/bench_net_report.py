#!/usr/bin/env python3
"""Turns bench-net's Google Benchmark JSON into the tables of docs/performance/net.md.

    bench-net --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true \\
        --benchmark_out=net.json --benchmark_out_format=json
    python3 tools/bench_net_report.py net.json

The pairing, the ratio table and the verdict rule are tools/bench_channel_plot.py's (imported,
with the comparisons below): repetition i of a measured side is divided by repetition i of its
baseline, both from the same round of the interleaved run; met = at least 90 % of at least 10
pairs meet the target. Prints the load average Google Benchmark recorded at the start, the
ratio table (when ferry's rows ran), then every benchmark's own median with its spread, so the
raw baselines show even before ferry's rows exist. Exits 1 when any run reports error_occurred
(a lost, duplicated or torn message, a peer that failed): that run is void, never a gap.
"""

import json
import statistics
import sys
from pathlib import Path

import bench_channel_plot as bench
from bench_channel_plot import Comparison

# Published AFD systems' budget for one layer's attention <-> FFN exchange, in microseconds.
LAYER_BUDGET_US = 273

COMPARISONS = [
    Comparison("rate", "ferry", "raw_am", "64 B ChannelSender rate vs raw ucp_am_send_nbx",
               "items_per_second", "higher", 0.9, "M msg/s"),
    Comparison("rate", "ferry", "raw_tag", "64 B ChannelSender rate vs raw ucp_tag_send_nbx",
               "items_per_second", "higher", 0.9, "M msg/s"),
    Comparison("rate", "ferry_batch", "raw_am", "64 B ChannelSender::send_n (batches of 64) vs raw ucp_am_send_nbx (one per call)",
               "items_per_second", "higher", 0.9, "M msg/s"),
    Comparison("rate", "ferry_batch", "ferry", "64 B send_n batches vs one-at-a-time send (both ferry)",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("rate", "ferry", "raw_am_spin", "64 B ChannelSender rate vs raw AM, both sides spinning",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("rate", "raw_tag", "raw_am", "raw tag rate vs raw AM rate (the two baselines)",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("rate", "ipc", "raw_am", "same host: ipc::Channel rate vs raw UCX AM over tcp",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("bandwidth", "ferry", "raw_am", "MessageSender bandwidth vs raw AM into preallocated buffers",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("bandwidth", "ferry", "raw_am_spin", "MessageSender bandwidth vs raw AM, both sides spinning",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("bandwidth", "ferry_dataset", "raw_am_spin", "Dataset channel bandwidth vs raw AM, both sides spinning",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("bandwidth", "ferry_dataset", "raw_am", "Dataset channel bandwidth (send(Dataset), parse in place) vs raw AM",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("exchange", "ferry", "raw_put", "AFD exchange round trip (p50) vs raw put+fence+flag",
               "p50_us", "lower", 1.2, "us"),
    Comparison("exchange", "ferry", "raw_put_spin", "AFD exchange round trip (p50) vs raw put+fence+flag, spinning",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "raw_put_spin", "raw_put", "raw exchange spinning vs sleeping (the two baselines)",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "ipc", "raw_put", "same host: shared-window exchange (p50) vs raw UCX put over tcp",
               "p50_us", "lower", None, "us"),
]


def exchange_detail(measure, reps, values):
    """After an exchange's median: its p99 and the share of one layer's budget it takes."""
    if measure != "exchange":
        return ""
    p99 = statistics.median(run["p99_us"] for run in reps.values())
    share = statistics.median(values) / LAYER_BUDGET_US
    return f" (p99 {p99:.3g} us; {share:.0%} of a {LAYER_BUDGET_US} us layer)"


# A run started above this 1-minute load average is labelled "loaded".
LOADED_ABOVE = 1.0


def load_average(path):
    """The load at the start (Google Benchmark's context), the range of the 1-minute load the
    rows recorded after their repetitions (counter load_after), and the label."""
    data = json.loads(Path(path).read_text())
    load = data.get("context", {}).get("load_avg")
    start = "unknown" if not load else " / ".join(f"{x:.2f}" for x in load)
    after = [run["load_after"] for run in data.get("benchmarks", [])
             if run.get("run_type") != "aggregate" and run.get("load_after", -1) >= 0]
    if after:
        start += f"; 1 min after the repetitions: {min(after):.2f}..{max(after):.2f}"
    if not load or load[0] > LOADED_ABOVE:
        start += f" -- LOADED (started above {LOADED_ABOVE})" if load else " -- load unknown"
    return start


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        runs = bench.load_runs(argv[1])
    except bench.BenchError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"Load average at the start (1 / 5 / 15 min): {load_average(argv[1])}")
    print()
    rows = bench.summarise(runs, COMPARISONS)
    if rows:
        print(bench.table(rows))
    else:
        print("No pairs in this run: the benchmarks' own figures only.")
    print()
    print(bench.figures_table(runs, COMPARISONS, extra=exchange_detail))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
