#!/usr/bin/env python3
"""Turns bench-net's Google Benchmark JSON into the tables of docs/performance/net.md.

    python3 tools/bench_net_report.py --run build-bench/bench/net/bench-net [bench args...]

runs the benchmark (10 interleaved repetitions into net.json; further arguments follow these,
and a later flag wins), records /proc/loadavg before and after in the JSON's context, and reports; or,
for a JSON written before,

    python3 tools/bench_net_report.py net.json

A run that started with a 1-minute load average above LOADED_ABOVE is labelled "loaded": its
table is printed, its verdicts are not (they read "loaded").

The pairing, the ratio table and the verdict rule are tools/bench_channel_plot.py's (imported,
with the comparisons below): repetition i of a measured side is divided by repetition i of its
baseline, both from round i of the run (--run runs the repetitions in rounds); met = at least
90 % of at least 10 pairs meet the target. Prints the load average recorded at the start, the ratio
table (when ferry's rows ran), then every benchmark's own median with its spread, so the raw
baselines show even before ferry's rows exist. Exits 1 when any run reports error_occurred
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
# A run that starts above this 1-minute load average gives no verdicts.
LOADED_ABOVE = 1.0
DEFAULT_RUN = ["--benchmark_repetitions=10", "--benchmark_enable_random_interleaving=true",
               "--benchmark_out=net.json", "--benchmark_out_format=json"]

COMPARISONS = [
    Comparison("rate", "ferry", "raw_am", "64 B ChannelSender rate vs raw ucp_am_send_nbx",
               "items_per_second", "higher", 0.9, "M msg/s"),
    Comparison("rate", "ferry", "raw_tag", "64 B ChannelSender rate vs raw ucp_tag_send_nbx",
               "items_per_second", "higher", 0.9, "M msg/s"),
    Comparison("rate", "ferry_batch", "raw_am", "64 B ChannelSender::send_n (batches of 64) vs raw ucp_am_send_nbx (one per call)",
               "items_per_second", "higher", 0.9, "M msg/s"),
    Comparison("rate", "ferry_sched_batch", "raw_am", "64 B ChannelSender rate, progress threads on SCHED_BATCH (NodeOptions::progress_thread_batch), vs raw ucp_am_send_nbx",
               "items_per_second", "higher", 0.9, "M msg/s"),
    Comparison("rate", "ferry_sched_batch", "ferry", "64 B ChannelSender rate: progress threads on SCHED_BATCH vs as the process (both ferry)",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("rate", "ferry_batch", "ferry", "64 B send_n batches vs one-at-a-time send (both ferry)",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("rate", "ferry", "raw_am_spin", "64 B ChannelSender rate vs raw AM, both sides spinning",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("rate", "raw_tag", "raw_am", "raw tag rate vs raw AM rate (the two baselines)",
               "items_per_second", "higher", None, "M msg/s"),
    Comparison("rate", "ipc", "raw_am", "same host: ipc::Channel rate vs raw UCX AM over tcp",
               "items_per_second", "higher", None, "M msg/s"),
    # Bandwidth is judged against raw AM over the kind of endpoint ferry's Node has (made from
    # a worker address, peer error handling): UCX 1.13 gives it the same rendezvous protocol.
    # The connection manager's endpoints get a zero-copy rendezvous lane over tcp that these do
    # not (docs/performance/net.md, Bandwidth); those rows are shown for scale. A copying send
    # (send(bytes), send(Dataset): the caller's buffer is free on return) is judged against raw
    # AM that copies the same message into its slot first (raw_am_copy), the loan against raw
    # AM that fills its slot in place (raw_am_addr); the copying rows against raw_am_addr show
    # what the copy costs.
    Comparison("bandwidth", "ferry", "raw_am_copy", "MessageSender::send(bytes) bandwidth vs raw AM that copies the message into its slot, same kind of endpoint",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("bandwidth", "ferry_dataset", "raw_am_copy", "Dataset channel bandwidth (send(Dataset), parse in place) vs raw AM that copies, same kind of endpoint",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("bandwidth", "ferry_sched_batch", "raw_am_copy", "MessageSender::send(bytes) bandwidth, progress threads on SCHED_BATCH, vs raw AM that copies, same kind of endpoint",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("bandwidth", "ferry_loan", "raw_am_addr", "MessageSender bandwidth, loaned buffers written in place, vs raw AM filling its slot in place, same kind of endpoint",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("bandwidth", "ferry_loan_sched_batch", "raw_am_addr", "MessageSender bandwidth, loaned buffers, progress threads on SCHED_BATCH, vs raw AM in place, same kind of endpoint",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    # A/A controls: the two 4 MiB baselines registered twice, paired within the round like every
    # row: the share of their pairs at 0.9x or more is what this machine's pairs resolve for
    # two transports that do the same work (docs/performance/net.md, A/A controls).
    Comparison("bandwidth", "raw_am_addr_again", "raw_am_addr", "A/A control: raw AM filling its slot in place vs itself, same round (the pairs' noise floor)",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("bandwidth", "raw_am_copy_again", "raw_am_copy", "A/A control: raw AM that copies vs itself, same round (the pairs' noise floor)",
               "bytes_per_second", "higher", 0.9, "GiB/s"),
    Comparison("bandwidth", "ferry", "raw_am_addr", "MessageSender::send(bytes) (one copy) vs raw AM filling its slot in place (no copy)",
               "bytes_per_second", "higher", None, "GiB/s"),
    Comparison("bandwidth", "ferry_dataset", "raw_am_addr", "Dataset channel (one copy) vs raw AM filling its slot in place (no copy)",
               "bytes_per_second", "higher", None, "GiB/s"),
    Comparison("bandwidth", "raw_am_copy", "raw_am_addr", "raw AM: copying the message into its slot vs filling the slot in place (what the copy costs raw UCX)",
               "bytes_per_second", "higher", None, "GiB/s"),
    Comparison("bandwidth", "ferry_loan_sched_batch", "ferry_loan", "MessageSender loaned bandwidth: progress threads on SCHED_BATCH vs as the process (both ferry)",
               "bytes_per_second", "higher", None, "GiB/s"),
    Comparison("bandwidth", "ferry_loan", "ferry", "MessageSender: loaned buffers vs send(bytes) (the copy)",
               "bytes_per_second", "higher", None, "GiB/s"),
    Comparison("bandwidth", "raw_am_addr", "raw_am", "raw AM: worker-address endpoints vs the connection manager's (the two baselines)",
               "bytes_per_second", "higher", None, "GiB/s"),
    Comparison("bandwidth", "ferry_loan", "raw_am", "MessageSender loaned bandwidth vs raw AM over the connection manager's endpoint (zero-copy rendezvous)",
               "bytes_per_second", "higher", None, "GiB/s"),
    Comparison("bandwidth", "ferry", "raw_am_spin", "MessageSender bandwidth vs raw AM (connection manager), both sides spinning",
               "bytes_per_second", "higher", None, "GiB/s"),
    Comparison("exchange", "ferry", "raw_put", "AFD exchange round trip (p50) vs raw put+fence+flag",
               "p50_us", "lower", 1.2, "us"),
    Comparison("exchange", "ferry_rma", "raw_put", "AFD exchange, one-sided RMA path (p50) vs raw put+fence+flag",
               "p50_us", "lower", 1.2, "us"),
    Comparison("exchange", "ferry_rma", "raw_put_wake", "AFD exchange, one-sided RMA path (p50) vs raw put+fence+flag+wake message (what waking a sleeping owner adds)",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "raw_put_wake", "raw_put", "raw put exchange with a wake message vs without (the two baselines)",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "ferry", "raw_am", "AFD exchange, checked put messages (p50) vs raw AM of the same size",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "ferry", "ferry_rma", "AFD exchange: checked put messages vs one-sided RMA (the owner's checks)",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "raw_am", "raw_put", "raw AM exchange vs raw put+fence+flag (the two baselines)",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "ferry", "raw_put_spin", "AFD exchange round trip (p50) vs raw put+fence+flag, spinning",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "raw_put_addr", "raw_put", "raw put exchange: worker-address endpoints vs the connection manager's (the two baselines)",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "raw_put_spin", "raw_put", "raw exchange spinning vs sleeping (the two baselines)",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "ipc", "raw_put", "same host: shared-window exchange (p50) vs raw UCX put over tcp",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "ferry", "ferry_doorbell", "AFD exchange: net::NetWait vs afd::DoorbellPark waiters (checked puts)",
               "p50_us", "lower", None, "us"),
    Comparison("exchange", "ferry_rma", "ferry_rma_doorbell", "AFD exchange, one-sided RMA: net::NetWait vs afd::DoorbellPark waiters",
               "p50_us", "lower", None, "us"),
]


def exchange_detail(measure, reps, values):
    """After an exchange's median: its p99 and the share of one layer's budget it takes."""
    if measure != "exchange":
        return ""
    p99 = statistics.median(run["p99_us"] for run in reps.values())
    share = statistics.median(values) / LAYER_BUDGET_US
    return f" (p99 {p99:.3g} us; {share:.0%} of a {LAYER_BUDGET_US} us layer)"


CONNECT = Comparison("connect", "ferry", "raw", "connect (p50): Node::connect with the handshake + first round trip vs raw UCX endpoint + flush",
                     "p50_us", "lower", None, "us")
COMPARISONS.append(CONNECT)


def run_bench(binary, args):
    """Runs bench-net with DEFAULT_RUN then `args` (a later flag wins) through
    bench_channel_plot.run_recorded (in rounds, /proc/loadavg before and after in the JSON's
    context); returns the JSON's path."""
    args = DEFAULT_RUN + args
    out = bench.flag_value(args, "benchmark_out")
    bench.run_recorded([binary] + [a for a in args if not a.startswith("--benchmark_out")], out)
    return out


def load_of(path):
    """(text, loaded): the load averages recorded for the run, and whether it started above
    LOADED_ABOVE (a run with no recorded load counts as loaded)."""
    data = json.loads(Path(path).read_text())
    context = data.get("context", {})
    # Lists from run_bench, or /proc/loadavg's text from bench_channel_plot.run_recorded.
    as_list = lambda load: [float(x) for x in load.split()[:3]] if isinstance(load, str) else load
    before = as_list(context.get("loadavg_before") or context.get("load_avg"))
    after = as_list(context.get("loadavg_after"))
    text = lambda load: "unknown" if not load else " / ".join(f"{x:.2f}" for x in load)
    loaded = not before or before[0] > LOADED_ABOVE
    label = f"before {text(before)}, after {text(after)} (1 / 5 / 15 min)"
    rows_after = [run["load_after"] for run in data.get("benchmarks", [])
                  if run.get("run_type") != "aggregate" and run.get("load_after", -1) >= 0]
    if rows_after:  # the rate rows record the 1-minute load after their repetitions
        label += f"; rows ended at {min(rows_after):.2f}..{max(rows_after):.2f}"
    return label + (f": loaded (above {LOADED_ABOVE}), no verdicts" if loaded else ": idle"), loaded


def main(argv):
    if len(argv) >= 3 and argv[1] == "--run":
        path = run_bench(argv[2], argv[3:])
    elif len(argv) == 2:
        path = argv[1]
    else:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        runs = bench.load_runs(path)
    except bench.BenchError as error:
        print(error, file=sys.stderr)
        return 1
    load, loaded = load_of(path)
    print(f"Load average: {load}")
    print()
    rows = bench.summarise(runs, COMPARISONS)
    for row in rows if loaded else []:
        row["verdict"] = "loaded" if row["target"] is not None else row["verdict"]
    if rows:
        print(bench.table(rows))
    else:
        print("No pairs in this run: the benchmarks' own figures only.")
    print()
    print(bench.figures_table(runs, COMPARISONS, extra=exchange_detail))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
