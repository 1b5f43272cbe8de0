#!/usr/bin/env python3
"""Turns bench-ipc's Google Benchmark JSON into the tables and plot of docs/performance/ipc.md.

    python3 tools/bench_ipc_plot.py --run build/bench/ipc/bench-ipc --benchmark_repetitions=10 \\
        --benchmark_enable_random_interleaving=true -- ipc.json docs/performance
    (then, for the JSON written: python3 tools/bench_ipc_plot.py ipc.json docs/performance)

The pairing, the ratio table and the verdict rule are tools/bench_channel_plot.py's (imported,
with the comparisons below): repetition i of a measured side is divided by repetition i of its
baseline; met = at least 90 % of at least 10 pairs meet the target. Prints the ratio table, then
every benchmark's own median with its spread (so the baselines show even before ferry's rows
exist); writes ipc.png into the output folder. Exits 1 when any run reports error_occurred (a
wrong echo, a checksum mismatch, a peer that failed): that run is void, never a gap. A run not
started through --run, or started above load 1.0, is labelled loaded and gets no verdicts
(bench_channel_plot.load_note).
"""

import statistics
import sys

import bench_channel_plot as bench
from bench_channel_plot import Comparison

# The baseline of the CPU rows: the wall time of the wait itself, i.e. one core (1.0 cores).
ONE_CORE = "one_core"

COMPARISONS = [
    Comparison("roundtrip", "ferry", "socketpair", "64 B round trip between processes vs Unix socketpair",
               "us_per_item", "lower", 0.2, "us"),
    Comparison("roundtrip", "ferry", "posix_mq", "64 B round trip between processes vs POSIX mq",
               "us_per_item", "lower", None, "us"),
    Comparison("roundtrip", "ferry", "boost_mq", "64 B round trip between processes vs boost message_queue",
               "us_per_item", "lower", None, "us"),
    # bench/ipc/rings.cpp: the same two processes, a raw ring in a MAP_SHARED mapping spinning.
    Comparison("spsc", "ferry", "raw", "ipc::Channel spsc blocking vs boost spsc_queue in shm, spinning",
               "items_per_second", "higher", 0.9, "M msg/s"),
    Comparison("spsc", "ferry_spin", "raw", "ipc::Channel spsc try_send/try_receive spinning vs the same",
               "items_per_second", "higher", 1.0, "M msg/s"),
    Comparison("mpmc", "ferry", "raw", "ipc::Channel mpmc blocking vs Vyukov's bounded queue in shm, spinning",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("mpmc", "ferry_spin", "raw", "ipc::Channel mpmc try_send/try_receive spinning vs the same",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("throughput", "ferry", "baseline", "64-bit items between processes vs in-process ferry::Channel",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("dataset", "ferry_copy", "raw_two_copy",
               "MessageChannel copying path between processes vs a raw two-copy pipeline in shm (4 slots)",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    # An A/A control: the raw two-copy pipeline registered twice, paired within the round like
    # every row. Its share of pairs at 0.9x or more is what this machine's pairs resolve for two
    # transports that do the same work: a row level with its baseline cannot do better.
    Comparison("dataset", "raw_two_copy_again", "raw_two_copy",
               "A/A control: the raw two-copy pipeline vs itself, same round (the pairs' noise floor)",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("dataset", "ferry_copy", "memcpy", "MessageChannel copying path between processes vs one memcpy (scale)",
               "bytes_per_second", "higher", None, "GiB/s"),
    # The loan is judged against the raw pipeline that does what it does (one write of each
    # message, read in place); against the copying path it saves the receiver's CPU, which a
    # throughput row cannot show where the two copies overlap (docs/performance/ipc.md).
    Comparison("dataset", "ferry_loan", "raw_one_copy",
               "MessageChannel zero-copy (loan) vs a raw one-copy pipeline in shm (4 slots)",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("dataset", "ferry_loan", "ferry_copy", "MessageChannel zero-copy (loan) vs copying path",
               "bytes_per_second", "higher", None, "GiB/s"),
    Comparison("dataset", "raw_one_copy", "raw_two_copy",
               "raw one-copy pipeline (the loan's ceiling) vs raw two-copy pipeline in shm (4 slots)",
               "bytes_per_second", "higher", None, "GiB/s"),
    # AFD (bench/ipc/afd.cpp): the median wake-up of each repetition, so the doorbell's p50 is
    # divided by the bare futex's p50 of the same round.
    Comparison("afd_wake", "doorbell", "futex",
               "AFD doorbell wait, ready -> return after 1 ms idle vs bare shared futex wake (p50)",
               "p50_us", "lower", 1.3, "us"),
    Comparison("afd_wake", "doorbell_park5ms", "futex",
               "the same, parks bounded by 5 ms (only the ring ends them) vs bare shared futex wake (p50)",
               "p50_us", "lower", None, "us"),
    # CPU while waiting, as a share of one core: each repetition's CPU seconds over the wall
    # seconds of the same wait (with_one_core adds that baseline). The spinning waiter's share
    # shows, for scale, how much of a core a waiter could get in that run.
    Comparison("afd_cpu", "doorbell", ONE_CORE, "AFD doorbell waiter's CPU over a 200 ms idle wait, share of one core",
               "cores", "lower", 0.02, "cores"),
    Comparison("afd_cpu", "spin", ONE_CORE, "a spinning waiter's CPU over the same wait (for scale)",
               "cores", "lower", None, "cores"),
    Comparison("afd_copy", "window", "memcpy", "FFN output copy (all-sync call) in a shared window vs memcpy",
               "bytes_per_second", "higher", 0.7, "GiB/s"),
]


def with_one_core(runs):
    """Adds, for every repetition of an afd_cpu benchmark, the one-core baseline (1.0 cores)."""
    for (measure, _), sides in runs.items():
        if measure == "afd_cpu":
            reps = set().union(*(set(r) for r in sides.values()))
            sides[ONE_CORE] = {r: {"cores": 1.0} for r in reps}
    return runs


def main(argv):
    cli = bench.parse_cli(argv)
    if cli is None:
        print(__doc__, file=sys.stderr)
        return 2
    path, out_dir = cli
    try:
        runs = with_one_core(bench.load_runs(path))
    except bench.BenchError as error:
        print(error, file=sys.stderr)
        return 1
    rows = bench.summarise(runs, COMPARISONS)
    if rows:
        note = bench.load_note(path, rows)
        print(bench.table(rows))
        print()
        print(note)
        bench.plot(rows, out_dir, "ipc.png", width=20)  # a bar per row: room for their labels
    else:
        print("No ferry rows in this run: the baselines' own figures only.")
    print()
    print(bench.figures_table(runs, COMPARISONS, skip=(ONE_CORE,)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
