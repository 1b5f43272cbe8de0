#!/usr/bin/env python3
"""Turns bench-channel's Google Benchmark JSON into the ratio table and plot of
docs/performance/channel.md.

    python3 tools/bench_channel_plot.py --run build/bench/channel/bench-channel \
        --benchmark_repetitions=15 --benchmark_enable_random_interleaving=true -- channel.json docs/performance
    python3 tools/bench_channel_plot.py channel.json docs/performance   # a JSON written before
    python3 tools/bench_channel_plot.py --self-test   # the placement, verdict and round rules

Benchmarks are named <measure>/<ferry|baseline>/<parameter>. Each ferry repetition is paired
with the baseline repetition of the same index and the ratio is taken per pair; the table shows
the median ratio and its spread (interquartile range, and min..max) over the pairs. The index
must name a round: --run (run_recorded) runs an interleaved run of N repetitions as N rounds,
one process each with one repetition of every benchmark in random order, and numbers the
repetitions by round. Google Benchmark's own interleaving (1.7) shuffles all the repetitions of
all the benchmarks together, so its repetition i of two benchmarks can lie far apart in a run.
Prints the Markdown table on stdout; writes channel.png into the output folder (needs
matplotlib: the Debian package python3-matplotlib, i.e. /usr/bin/python3 on the bench machines).

Per target the table shows the median ratio, its spread and the fraction of paired repetitions
at or above the target (at or below for "lower is better"). The verdict (docs/performance/
channel.md, "Reading the table"):
  met       at least MET_FRACTION of the pairs meet the target, over at least MIN_PAIRS pairs;
  not met   the median pair misses it (fewer than half the pairs meet it), or the row's median
            misses its median target (a Comparison's median_target: the in-process channel's
            throughput must meet 1.0x in the pairs and 1.2x at the median);
  mixed     in between: the median meets it, too many pairs do not;
  too few   fewer than MIN_PAIRS pairs: no verdict.
A latency row needs at least MIN_P99_SAMPLES samples per repetition for its p99; with fewer it
gets no verdict ("p99 unsupported").
Exits with status 1, printing the failed benchmarks, when any run reports error_occurred (a
checksum mismatch: a message lost or duplicated): such a run is a failure, never a gap.

Load: a verdict needs a quiet machine. Run the benchmark through this script,
    python3 tools/bench_channel_plot.py --run build/bench/channel/bench-channel \
        --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true -- channel.json docs/performance
and it stores /proc/loadavg before and after the run in the JSON context (loadavg_before,
loadavg_after). A run whose 1-minute load was above LOADED_ABOVE when it started, or whose load
was not recorded, is labelled "loaded": its ratios are printed, its verdicts are not given.

Placement: the two-thread and two-process benchmarks (bench/channel, bench/ipc, bench/net)
record line_before_ns / line_after_ns, the round trip of one cache line between their two CPUs
just before and after the timed part (bench-net: after only). On a VM whose host moves the vCPUs, that round trip takes
~27, ~75 or ~320 ns, and a transfer runs at very different speeds in each placement. Where both
sides of a pair carry the probe, the pair is compared only when all its probes (four; two for
bench-net, which probes after the timed part only) lie within a factor PLACEMENT_FACTOR of each
other: the other pairs compare two placements of the host, not two
transports, and are counted as left out (the row says how many); the verdict and the ratios are
taken over the matched pairs, and need MIN_PAIRS of them like any other.

Other areas import this module with their own comparisons (tools/bench_ipc_plot.py): a
Comparison names the measure, the side measured ("ours") and the side it is divided by
("theirs"), so one measure can be compared with several baselines, or one baseline with another.
"""

import json
import statistics
import subprocess
import sys
from collections import defaultdict, namedtuple
from pathlib import Path

# One row kind of the table: runs <measure>/<ours>/<param> divided by <measure>/<theirs>/<param>.
# metric is a Google Benchmark field, or "us_per_item" (1e6 / items_per_second: a round trip);
# params, when given, limits the rows to those parameters (a target that holds at one size only).
# median_target, when given, is a second target the median ratio must meet (the verdict rule).
Comparison = namedtuple("Comparison",
                        "measure ours theirs what metric better target unit params median_target",
                        defaults=(None, None))

# measure -> (what is compared, metric, how the ratio reads, target, unit of the absolute column
#             [, params, median target])
MEASURES = {
    # No target: the cost of the operations alone, with no second thread (see channel.md).
    "fastpath": ("one thread, try_send+try_receive pairs vs raw spsc_queue push+pop", "items_per_second",
                 "higher", None, "M pairs/s"),
    # At every capacity: no pair below 1.0x (here: 90 % of pairs, the rule of every row) and a
    # median of at least 1.2x.
    "nonblocking": ("try_send/try_receive throughput vs raw boost spsc_queue", "items_per_second",
                    "higher", 1.0, "M msg/s", None, 1.2),
    "blocking": ("blocking send/receive throughput vs mutex+condvar queue", "items_per_second",
                 "higher", 5.0, "M msg/s"),
    "pingpong": ("round trip vs raw spsc_queue spinning", "us_per_item", "lower", 1.3, "us"),
    "overshoot": ("1 ms timed receive, overshoot p99 vs bare futex", "p99_us", "lower", 1.3, "us"),
    "wake": ("stop -> parked receiver running, p99 vs bare futex wake", "p99_us", "lower", 1.3, "us"),
}
P50 = {"overshoot", "wake"}
MET_FRACTION = 0.9
# A run that started above this 1-minute load average gets no verdicts (2-core bench machines:
# one busy core of someone else's already distorts a two-process or two-thread figure).
LOADED_ABOVE = 1.0
MIN_PAIRS = 10
PLACEMENT_FACTOR = 2.0
PLACEMENT_PROBES = ("line_before_ns", "line_after_ns")
MIN_P99_SAMPLES = 1000
COMPARISONS = [Comparison(measure, "ferry", "baseline", *spec) for measure, spec in MEASURES.items()]


class BenchError(Exception):
    """The input holds a failed benchmark run."""


def load_runs(path):
    """{(measure, param): {side: {repetition: run}}} for the iteration runs (no aggregates)."""
    runs = defaultdict(lambda: defaultdict(dict))
    errors = []
    for run in json.loads(Path(path).read_text())["benchmarks"]:
        if run.get("error_occurred"):
            errors.append(f"{run.get('name', run.get('run_name'))}: {run.get('error_message', 'error')}")
            continue
        if run.get("run_type") == "aggregate":
            continue
        measure, side, param = run["run_name"].split("/")[:3]
        runs[(measure, param)][side][run.get("repetition_index", 0)] = run
    if errors:
        raise BenchError("failed benchmark runs (the whole run is void):\n  " + "\n  ".join(errors))
    return runs


def flag_value(command, flag):
    """The value of the last `--flag=value` in `command`, or None."""
    values = [a.split("=", 1)[1] for a in command if a.startswith(f"--{flag}=")]
    return values[-1] if values else None


def rounds_of(command):
    """How many rounds an interleaved run of `command` takes: its --benchmark_repetitions when
    --benchmark_enable_random_interleaving is on and more than one repetition is asked for;
    None when the command is run as it is."""
    interleaved = flag_value(command, "benchmark_enable_random_interleaving") in ("true", "1", "yes")
    repetitions = int(flag_value(command, "benchmark_repetitions") or 1)
    return repetitions if interleaved and repetitions > 1 else None


def merge_rounds(rounds):
    """One Google Benchmark JSON from the JSONs of rounds run one after another, each holding one
    repetition of every benchmark in the order it ran: a run's repetition_index becomes its
    round, round_position its place in that round (both sides of a pair ran in the same round)."""
    merged = {"context": dict(rounds[0].get("context", {})), "benchmarks": []}
    merged["context"]["rounds"] = len(rounds)
    for index, data in enumerate(rounds):
        for position, run in enumerate(r for r in data["benchmarks"] if r.get("run_type") != "aggregate"):
            merged["benchmarks"].append(dict(run, repetition_index=index, round_position=position,
                                             repetitions=len(rounds)))
    return merged


def run_rounds(command, rounds, out_json):
    """Runs `command` `rounds` times, each a round of one repetition of every benchmark in random
    order (its own process), and writes the merged JSON (merge_rounds) to out_json."""
    keep = [a for a in command if not a.startswith(("--benchmark_repetitions=", "--benchmark_out",
                                                    "--benchmark_enable_random_interleaving="))]
    round_json = Path(str(out_json) + ".round")
    results = []
    try:
        for _ in range(rounds):
            subprocess.run(keep + ["--benchmark_repetitions=1", "--benchmark_enable_random_interleaving=true",
                                   f"--benchmark_out={round_json}", "--benchmark_out_format=json"],
                           check=True)
            results.append(json.loads(round_json.read_text()))
    finally:
        round_json.unlink(missing_ok=True)
    Path(out_json).write_text(json.dumps(merge_rounds(results)))


def run_recorded(command, out_json):
    """Runs a benchmark binary (a list: the program and its arguments), writing its JSON to
    out_json, and stores /proc/loadavg from before and after the run in the JSON's context. An
    interleaved run of several repetitions is run in rounds (run_rounds), so that repetition i
    of every benchmark ran in round i."""
    before = Path("/proc/loadavg").read_text().strip()
    rounds = rounds_of(command)
    if rounds:
        run_rounds(command, rounds, out_json)
    else:
        subprocess.run(command + [f"--benchmark_out={out_json}", "--benchmark_out_format=json"], check=True)
    after = Path("/proc/loadavg").read_text().strip()
    data = json.loads(Path(out_json).read_text())
    data.setdefault("context", {}).update({"loadavg_before": before, "loadavg_after": after})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if commit.returncode == 0:  # the source the binary was built from, when run from a checkout
        data["context"]["git_commit"] = commit.stdout.strip()
    Path(out_json).write_text(json.dumps(data, indent=1))


def load_note(path, rows):
    """Labels `rows` "loaded" (no verdicts) unless the run in `path` started on a quiet machine;
    returns the line that says which."""
    context = json.loads(Path(path).read_text()).get("context", {})
    before, after = context.get("loadavg_before"), context.get("loadavg_after")
    if before is None:
        loaded, note = True, "Load not recorded (run through --run): loaded, no verdicts."
    else:
        start = float(before.split()[0])
        loaded = start > LOADED_ABOVE
        state = "loaded, no verdicts" if loaded else "quiet"
        note = f"/proc/loadavg before: {before}; after: {after} ({state}: limit {LOADED_ABOVE} at the start)."
    if loaded:
        for r in rows:
            if r["verdict"] != "n/a":
                r["verdict"] = "loaded"
    return note


def parse_cli(argv):
    """[--run BINARY [ARGS...] --] JSON OUT_DIR -> (json path, output folder), running the
    benchmark first when --run is given; None on a usage error."""
    args = argv[1:]
    if args and args[0] == "--run":
        if "--" not in args:
            return None
        split = args.index("--")
        command, args = args[1:split], args[split + 1:]
        if not command or len(args) != 2:
            return None
        run_recorded(command, args[0])
    return tuple(args) if len(args) == 2 else None


def absolute(run, metric):
    """The figure a reader knows: M msg/s, a round trip in us, GiB/s, a latency in us."""
    if metric == "us_per_item":
        return 1e6 / run["items_per_second"]  # items are round trips
    if metric == "real_time":  # in the run's own unit: microseconds here
        return run["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[run.get("time_unit", "ns")]
    value = run[metric]
    if metric == "items_per_second":
        return value / 1e6
    if metric == "bytes_per_second":
        return value / 2**30
    return value


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def figures_table(runs, comparisons, skip=(), extra=lambda measure, reps, values: ""):
    """Every benchmark's own figure: median, IQR and min..max over its repetitions, in the unit
    of the first comparison of its measure. Sides in `skip` (added baselines) are left out;
    extra(measure, reps, values) is written after the median (an area's own detail)."""
    lines = ["| benchmark | repetitions | median | IQR | min..max |", "|---|---:|---:|---:|---:|"]
    for (measure, param), sides in sorted(runs.items()):
        c = next((c for c in comparisons if c.measure == measure), None)
        if c is None:
            continue
        for side, reps in sorted(sides.items()):
            if side in skip:
                continue
            values = [absolute(run, c.metric) for run in reps.values()]
            low, high = quartiles(values)
            lines.append(f"| {measure}/{side}/{param} | {len(values)} | {statistics.median(values):.3g} "
                         f"{c.unit}{extra(measure, reps, values)} | {low:.3g}..{high:.3g} "
                         f"| {min(values):.3g}..{max(values):.3g} |")
    return "\n".join(lines)


def summarise(runs, comparisons=COMPARISONS):
    """A row per comparison and parameter for which both sides ran, in the order of
    `comparisons`, then of the parameter's name."""
    rows = []
    for c in comparisons:
        for (measure, param), sides in sorted(runs.items(), key=lambda kv: kv[0][1]):
            if measure == c.measure and (c.params is None or param in c.params):
                reps = sorted(set(sides.get(c.ours, {})) & set(sides.get(c.theirs, {})))
                if reps:
                    rows.append(compare(c, param, sides, reps))
    return rows


def same_placement(*runs):
    """Whether the runs' placement probes (those each recorded: bench-net's runs probe only
    after the timed part) all lie within PLACEMENT_FACTOR of each other; True where a run has
    no probe at all (nothing to compare)."""
    per_run = [[run[key] for key in PLACEMENT_PROBES if key in run] for run in runs]
    if any(not probes for probes in per_run):
        return True
    probes = [p for run in per_run for p in run]
    return min(probes) > 0 and max(probes) <= PLACEMENT_FACTOR * min(probes)


def compare(c, param, sides, reps):
    """The row of comparison `c` at `param` over the paired repetitions `reps` that ran in the
    same placement (all of them where the runs carry no probe)."""
    measure, metric, better, target = c.measure, c.metric, c.better, c.target
    matched = [r for r in reps if same_placement(sides[c.ours][r], sides[c.theirs][r])]
    row = {
        "measure": measure, "ours_side": c.ours, "theirs_side": c.theirs, "param": param,
        "what": c.what, "better": better, "target": target, "unit": c.unit, "n": len(matched),
        "left_out": len(reps) - len(matched), "median_target": c.median_target,
    }
    reps = matched
    if not reps:
        nan = float("nan")
        row.update(ours=nan, theirs=nan, ratio=nan, iqr=(nan, nan), range=(nan, nan), samples=None,
                   verdict="no pair in one placement", fraction=None)
        return row
    ours = [absolute(sides[c.ours][r], metric) for r in reps]
    theirs = [absolute(sides[c.theirs][r], metric) for r in reps]
    ratios = [o / t for o, t in zip(ours, theirs)]
    row.update(ours=statistics.median(ours), theirs=statistics.median(theirs),
               ratio=statistics.median(ratios), iqr=quartiles(ratios), range=(min(ratios), max(ratios)))
    if measure in P50:
        row["ours_p50"] = statistics.median(sides[c.ours][r]["p50_us"] for r in reps)
        row["theirs_p50"] = statistics.median(sides[c.theirs][r]["p50_us"] for r in reps)
    samples = [sides[s][r].get("samples") for s in (c.ours, c.theirs) for r in reps]
    # A run from before the sample count was recorded counts as 0 samples: no verdict.
    row["samples"] = None if metric != "p99_us" else min((x or 0) for x in samples)
    row["verdict"], row["fraction"] = verdict(ratios, better, target, row["samples"],
                                              c.median_target)
    return row


def meets(ratio, better, target):
    return ratio >= target if better == "higher" else ratio <= target


def verdict(ratios, better, target, samples, median_target=None):
    """(verdict, fraction of pairs meeting the target): the rule in the module docstring."""
    if target is None:
        return "n/a", None
    if samples is not None and samples < MIN_P99_SAMPLES:
        return f"p99 unsupported ({samples:.0f} samples)", None
    fraction = sum(meets(r, better, target) for r in ratios) / len(ratios)
    if len(ratios) < MIN_PAIRS:
        return f"too few pairs ({len(ratios)})", fraction
    if median_target is not None and not meets(statistics.median(ratios), better, median_target):
        return "not met", fraction
    if fraction >= MET_FRACTION:
        return "met", fraction
    if fraction < 0.5:
        return "not met", fraction
    return "mixed", fraction


def goal_text(row):
    """The "target" cell: the pairs' target, and the median's where the row has one."""
    if row["target"] is None:
        return "—"
    sign = ">=" if row["better"] == "higher" else "<="
    goal = f"{sign} {row['target']}x"
    if row.get("median_target") is not None:
        goal += f", median {sign} {row['median_target']}x"
    return goal


def share_text(row):
    """The "pairs meeting it" cell: the share of matched pairs, and how many were left out."""
    share = "—" if row["fraction"] is None else f"{row['fraction']:.0%} of {row['n']}"
    if row.get("left_out"):
        share += f" ({row['left_out']} left out: placement)"
    return share


def ratio_text(ratio):
    """Two decimals, three below 0.1 (a round trip at 0.02x the baseline needs the third)."""
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.3f}"


def table(rows):
    lines = [
        "| measure | capacity / case | ferry (median) | baseline (median) | ratio median | ratio IQR | ratio min..max | target | pairs meeting it | verdict |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for r in rows:
        extra = ""
        if "ours_p50" in r:
            extra = f" (p50 {r['ours_p50']:.0f} vs {r['theirs_p50']:.0f} us)"
        goal = goal_text(r)
        share = share_text(r)
        lines.append(
            f"| {r['what']}{extra} | {r['param']} | {r['ours']:.3g} {r['unit']} | {r['theirs']:.3g} {r['unit']} "
            f"| {ratio_text(r['ratio'])}x | {ratio_text(r['iqr'][0])}..{ratio_text(r['iqr'][1])} "
            f"| {ratio_text(r['range'][0])}..{ratio_text(r['range'][1])} "
            f"| {goal} | {share} | {r['verdict']} |")
    lines.append("")
    lines.append(f"Pairs per row: {min(r['n'] for r in rows)}..{max(r['n'] for r in rows)} repetitions. "
                 f"Verdict: met = at least {MET_FRACTION:.0%} of at least {MIN_PAIRS} pairs meet the target; "
                 f"not met = fewer than half do; mixed = in between.")
    return "\n".join(lines)


def plot(rows, out_dir, file_name="channel.png", width=10):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not found: plot skipped (run with /usr/bin/python3)", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(width, 4.5))
    labels = [f"{r['measure']}\n{r['param']}" if r["theirs_side"] == "baseline"
              else f"{r['measure']}/{r['ours_side']}\nvs {r['theirs_side']} {r['param']}" for r in rows]
    medians = [r["ratio"] for r in rows]
    low = [r["ratio"] - r["iqr"][0] for r in rows]
    high = [r["iqr"][1] - r["ratio"] for r in rows]
    palette = {"met": "tab:green", "not met": "tab:red", "mixed": "tab:orange"}  # loaded: grey
    colours = [palette.get(r["verdict"], "tab:grey") for r in rows]
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
    ax.set_title("ferry vs baselines, same run (green: met, orange: mixed, red: not met, grey: no verdict)")
    fig.tight_layout()
    out = Path(out_dir) / file_name
    fig.savefig(out, dpi=120)
    print(f"wrote {out}", file=sys.stderr)


def self_test():
    """Checks the placement, verdict and round rules on made-up runs: exits 0 when every case holds."""
    def run(rate, *probes):
        r = {"items_per_second": rate}
        r.update(zip(PLACEMENT_PROBES, probes))
        return r

    failures = []
    cases = []

    def check(what, got, want):
        cases.append(what)
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    check("same placement", same_placement(run(1, 70, 80), run(1, 75, 90)), True)
    check("near vs far", same_placement(run(1, 70, 80), run(1, 320, 330)), False)
    check("moved during a run", same_placement(run(1, 27, 75), run(1, 27, 27)), False)
    check("one probe each, agreeing", same_placement({"line_after_ns": 70}, {"line_after_ns": 90}), True)
    check("one probe each, apart", same_placement({"line_after_ns": 70}, {"line_after_ns": 300}), False)
    check("no probe: nothing to compare", same_placement({}, run(1, 70, 80)), True)
    check("a zero probe is no placement", same_placement(run(1, 0, 0), run(1, 0, 0)), False)
    # Ten pairs in one placement, all at ratio 1.0; five more whose ours ran near and theirs far
    # (ratio 4.0): the five are left out, so the row is met at 1.0x over ten pairs.
    c = Comparison("m", "ours", "theirs", "w", "items_per_second", "higher", 0.9, "M/s")
    ours = {i: run(10e6, 70, 75) for i in range(15)}
    theirs = {i: run(10e6, 72, 74) if i < 10 else run(2.5e6, 330, 340) for i in range(15)}
    row = compare(c, "p", {"ours": ours, "theirs": theirs}, list(range(15)))
    check("matched pairs", (row["n"], row["left_out"], row["ratio"], row["verdict"]), (10, 5, 1.0, "met"))
    row = compare(c, "p", {"ours": ours, "theirs": theirs}, list(range(10, 15)))
    check("no matched pair", (row["n"], row["verdict"]), (0, "no pair in one placement"))
    # The median target: every pair at 1.1x meets a 1.0x target, but not a 1.2x median.
    strict = c._replace(target=1.0, median_target=1.2)
    ours = {i: run(11e6, 70, 75) for i in range(10)}
    theirs = {i: run(10e6, 72, 74) for i in range(10)}
    row = compare(strict, "p", {"ours": ours, "theirs": theirs}, list(range(10)))
    check("median under its target", (row["fraction"], row["verdict"]), (1.0, "not met"))
    ours = {i: run(13e6, 70, 75) for i in range(10)}
    row = compare(strict, "p", {"ours": ours, "theirs": theirs}, list(range(10)))
    check("median over its target", row["verdict"], "met")
    check("target cell", goal_text(row), ">= 1.0x, median >= 1.2x")
    # Rounds: repetition i of every benchmark is the one that ran in round i.
    check("rounds asked for", rounds_of(["b", "--benchmark_repetitions=5",
                                         "--benchmark_enable_random_interleaving=true"]), 5)
    check("not interleaved: run as is", rounds_of(["b", "--benchmark_repetitions=5"]), None)
    check("one repetition: run as is", rounds_of(["b", "--benchmark_enable_random_interleaving=true"]), None)
    one_round = lambda *names: {"context": {"date": "d"}, "benchmarks": [
        {"run_name": n, "run_type": "iteration", "repetition_index": 0} for n in names]}
    merged = merge_rounds([one_round("a", "b"), one_round("b", "a")])
    check("merged rounds", [(r["run_name"], r["repetition_index"], r["round_position"])
                            for r in merged["benchmarks"]], [("a", 0, 0), ("b", 0, 1), ("b", 1, 0), ("a", 1, 1)])
    check("rounds in the context", merged["context"], {"date": "d", "rounds": 2})
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"placement, verdict and round rules: {len(cases) - len(failures)} of {len(cases)} cases hold")
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    cli = parse_cli(argv)
    if cli is None:
        print(__doc__, file=sys.stderr)
        return 2
    path, out_dir = cli
    try:
        rows = summarise(load_runs(path))
    except BenchError as error:
        print(error, file=sys.stderr)
        return 1
    if not rows:
        print("no ferry/baseline pairs in the input", file=sys.stderr)
        return 1
    note = load_note(path, rows)
    print(table(rows))
    print()
    print(note)
    plot(rows, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
