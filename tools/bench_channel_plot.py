#!/usr/bin/env python3
"""Turns bench-channel's Google Benchmark JSON into the ratio table and plot of
docs/performance/channel.md.

    bench-channel --benchmark_repetitions=11 --benchmark_enable_random_interleaving=true \
        --benchmark_format=json > channel.json
    python3 tools/bench_channel_plot.py channel.json docs/performance

Benchmarks are named <measure>/<ferry|baseline>/<parameter>. With random interleaving, Google
Benchmark runs repetition i of every benchmark in the same round, so each ferry repetition is
paired with the baseline repetition of the same index and the ratio is taken per pair; the table
shows the median ratio and its spread (interquartile range, and min..max) over the pairs.
Prints the Markdown table on stdout; writes channel.png into the output folder (needs
matplotlib: the Debian package python3-matplotlib, i.e. /usr/bin/python3 on the bench machines).
"""

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# measure -> (what is compared, metric, how the ratio reads, target, unit of the absolute column)
MEASURES = {
    # No target: the cost of the operations alone, with no second thread (see channel.md).
    "fastpath": ("one thread, try_send+try_receive pairs vs raw spsc_queue push+pop", "items_per_second",
                 "higher", None, "M pairs/s"),
    "nonblocking": ("try_send/try_receive throughput vs raw boost spsc_queue", "items_per_second",
                    "higher", 1.0, "M msg/s"),
    "blocking": ("blocking send/receive throughput vs mutex+condvar queue", "items_per_second",
                 "higher", 5.0, "M msg/s"),
    "pingpong": ("round trip vs raw spsc_queue spinning", "items_per_second", "lower", 1.3, "us"),
    "overshoot": ("1 ms timed receive, overshoot p99 vs bare futex", "p99_us", "lower", 1.3, "us"),
    "wake": ("stop -> parked receiver running, p99 vs bare futex wake", "p99_us", "lower", 1.3, "us"),
}
P50 = {"overshoot", "wake"}


def load_runs(path):
    """{(measure, param): {side: {repetition: run}}} for the iteration runs (no aggregates)."""
    runs = defaultdict(lambda: defaultdict(dict))
    for run in json.loads(Path(path).read_text())["benchmarks"]:
        if run.get("run_type") == "aggregate" or run.get("error_occurred"):
            continue
        measure, side, param = run["run_name"].split("/")[:3]
        runs[(measure, param)][side][run.get("repetition_index", 0)] = run
    return runs


def absolute(measure, run, metric):
    """The figure a reader knows: M msg/s, a round trip in us, a latency in us."""
    value = run[metric]
    if measure == "pingpong":
        return 1e6 / value  # items are round trips
    if metric == "items_per_second":
        return value / 1e6
    return value


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def summarise(runs):
    rows = []
    for (measure, param), sides in sorted(runs.items(), key=lambda kv: (list(MEASURES).index(kv[0][0]), kv[0][1])):
        what, metric, better, target, unit = MEASURES[measure]
        reps = sorted(set(sides["ferry"]) & set(sides["baseline"]))
        ours = [absolute(measure, sides["ferry"][r], metric) for r in reps]
        theirs = [absolute(measure, sides["baseline"][r], metric) for r in reps]
        ratios = [o / t for o, t in zip(ours, theirs)]
        row = {
            "measure": measure, "param": param, "what": what, "better": better, "target": target,
            "unit": unit, "n": len(reps), "ours": statistics.median(ours),
            "theirs": statistics.median(theirs), "ratio": statistics.median(ratios),
            "iqr": quartiles(ratios), "range": (min(ratios), max(ratios)),
        }
        if measure in P50:
            row["ours_p50"] = statistics.median(sides["ferry"][r]["p50_us"] for r in reps)
            row["theirs_p50"] = statistics.median(sides["baseline"][r]["p50_us"] for r in reps)
        if target is None:
            row["met"] = None
        else:
            row["met"] = row["ratio"] >= target if better == "higher" else row["ratio"] <= target
        rows.append(row)
    return rows


def table(rows):
    lines = [
        "| measure | capacity / case | ferry (median) | baseline (median) | ratio median | ratio IQR | ratio min..max | target | met |",
        "|---|---|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for r in rows:
        extra = ""
        if "ours_p50" in r:
            extra = f" (p50 {r['ours_p50']:.0f} vs {r['theirs_p50']:.0f} us)"
        sign = ">=" if r["better"] == "higher" else "<="
        goal = "—" if r["target"] is None else f"{sign} {r['target']}x"
        met = "n/a" if r["met"] is None else ("yes" if r["met"] else "no")
        lines.append(
            f"| {r['what']}{extra} | {r['param']} | {r['ours']:.3g} {r['unit']} | {r['theirs']:.3g} {r['unit']} "
            f"| {r['ratio']:.2f}x | {r['iqr'][0]:.2f}..{r['iqr'][1]:.2f} | {r['range'][0]:.2f}..{r['range'][1]:.2f} "
            f"| {goal} | {met} |")
    lines.append("")
    lines.append(f"Pairs per row: {min(r['n'] for r in rows)}..{max(r['n'] for r in rows)} repetitions.")
    return "\n".join(lines)


def plot(rows, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not found: plot skipped (run with /usr/bin/python3)", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(10, 4.5))
    labels = [f"{r['measure']}\n{r['param']}" for r in rows]
    medians = [r["ratio"] for r in rows]
    low = [r["ratio"] - r["iqr"][0] for r in rows]
    high = [r["iqr"][1] - r["ratio"] for r in rows]
    colours = ["tab:grey" if r["met"] is None else "tab:green" if r["met"] else "tab:red" for r in rows]
    xs = range(len(rows))
    ax.bar(xs, medians, yerr=[low, high], color=colours, capsize=3)
    for x, r in zip(xs, rows):
        if r["target"] is not None:
            ax.plot([x - 0.4, x + 0.4], [r["target"]] * 2, color="black", linewidth=1)
    ax.axhline(1.0, color="grey", linewidth=0.5, linestyle="--")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("ferry / baseline (median, IQR bars; black tick = target)")
    ax.set_title("ferry channel vs baselines, same binary and run (green: target met; grey: no target)")
    fig.tight_layout()
    out = Path(out_dir) / "channel.png"
    fig.savefig(out, dpi=120)
    print(f"wrote {out}", file=sys.stderr)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rows = summarise(load_runs(argv[1]))
    if not rows:
        print("no ferry/baseline pairs in the input", file=sys.stderr)
        return 1
    print(table(rows))
    plot(rows, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
