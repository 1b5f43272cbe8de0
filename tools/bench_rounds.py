#!/usr/bin/env python3
"""Runs one benchmark binary the way the performance pages' figures are taken, and writes its
Google Benchmark JSON:

    python3 tools/bench_rounds.py OUT.json BINARY [ARGS...]

With --benchmark_enable_random_interleaving=true and --benchmark_repetitions=N (N > 1) among
ARGS, the run is N rounds, one process each running every selected benchmark once in random
order, and repetition i of every benchmark is the one of round i (bench_channel_plot.run_recorded;
docs/performance/channel.md, Rounds). /proc/loadavg from before and after the run is stored in
the JSON's context. Read the JSON with tools/bench_report.py or the area's script.
"""

import sys

import bench_channel_plot as bench


def main(argv):
    if len(argv) < 3 or argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    bench.run_recorded(argv[2:], argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
