// Throughput and round trip, each next to its baseline in the same binary
// (docs/cann-contract/quality.md#measuring):
//   nonblocking/*  ferry spsc try_send/try_receive spinning   vs raw boost::lockfree::spsc_queue
//   blocking/*     ferry spsc send/receive (forever)          vs mutex + condvar bounded queue
//   pingpong/*     ferry spsc send/receive round trip          vs raw spsc_queue spinning
// Spinning sides (ferry's try_ loops and the raw queues) all go through spin_until. Every queue
// that two threads share, ferry's and the baselines', is on the heap: one on the producer's stack
// would sit next to the producer's busiest lines, a placement the baseline does not get.
// at capacities 2, 64 and 8192. tools/bench_channel_plot.py pairs each repetition with its
// baseline (run with --benchmark_enable_random_interleaving) and reports median ratios.
#include "harness.hpp"

#include <benchmark/benchmark.h>
#include <boost/lockfree/spsc_queue.hpp>
#include <cstdint>
#include <memory>

namespace {
using ferry::Status;
using ferry::bench::channel_transfer_seconds;
using ferry::bench::LockedQueue;
using ferry::bench::Placement;
using ferry::bench::record_placement;
using ferry::bench::record_retries;
using ferry::bench::Retries;
using ferry::bench::round_trip_seconds;
using ferry::bench::spin_until;
using ferry::bench::transfer_seconds;

constexpr std::uint64_t k_nonblocking_messages = 1'000'000;
// The mutex queue moves about 80 000 messages/s at capacity 2: fewer there, so a run stays short.
template <std::size_t C>
constexpr std::uint64_t k_blocking_messages = C == 2 ? 100'000 : 1'000'000;
// Ping-pong: long enough that one repetition spans many scheduler ticks. At 20 000 a repetition
// lasted about one tick, so a single interruption of either thread (a timer tick, a kernel
// worker, one park) decided it, for ferry and the baseline alike: per-pair ratios swung several
// times both ways. Both sides run the same count.
constexpr std::uint64_t k_round_trips = 200'000;

template <std::size_t C>
using raw_spsc = boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<C>>;

void finish(benchmark::State& state, std::uint64_t items, bool checksum_ok) {
    state.SetItemsProcessed(static_cast<std::int64_t>(items) * state.iterations());
    if (!checksum_ok) {
        state.SkipWithError("checksum mismatch: a message was lost or duplicated");
    }
}

template <std::size_t C>
void nonblocking_ferry(benchmark::State& state) {
    bool ok = true;
    for (auto _ : state) {
        const auto ch = std::make_unique<ferry::Channel<std::uint64_t, C>>();
        Placement placement;
        Retries retries;
        state.SetIterationTime(
            channel_transfer_seconds<false>(*ch, k_nonblocking_messages, ok, &placement, &retries));
        record_placement(state, placement);
        record_retries(state, retries);
    }
    finish(state, k_nonblocking_messages, ok);
}

template <std::size_t C>
void nonblocking_boost(benchmark::State& state) {
    bool ok = true;
    for (auto _ : state) {
        auto q = std::make_unique<raw_spsc<C>>();
        Placement placement;
        Retries retries;
        state.SetIterationTime(transfer_seconds(
            k_nonblocking_messages,
            [&](std::uint64_t v) { spin_until([&] { return q->push(v); }); },
            [&] {
                std::uint64_t v = 0;
                spin_until([&] { return q->pop(v); });
                return v;
            },
            ok, &placement, &retries));
        record_placement(state, placement);
        record_retries(state, retries);
    }
    finish(state, k_nonblocking_messages, ok);
}

template <std::size_t C>
void blocking_ferry(benchmark::State& state) {
    bool ok = true;
    for (auto _ : state) {
        const auto ch = std::make_unique<ferry::Channel<std::uint64_t, C>>();
        Placement placement;
        state.SetIterationTime(
            channel_transfer_seconds<true>(*ch, k_blocking_messages<C>, ok, &placement));
        record_placement(state, placement);
    }
    finish(state, k_blocking_messages<C>, ok);
}

template <std::size_t C>
void blocking_mutex(benchmark::State& state) {
    bool ok = true;
    for (auto _ : state) {
        LockedQueue<std::uint64_t> q(C);
        Placement placement;
        state.SetIterationTime(transfer_seconds(
            k_blocking_messages<C>, [&](std::uint64_t v) { q.push(v); }, [&] { return q.pop(); },
            ok, &placement));
        record_placement(state, placement);
    }
    finish(state, k_blocking_messages<C>, ok);
}

// Time the two channels' receivers spent parked (stats()): a round trip whose spin phase is too
// short to catch the other side's reply parks, and each park costs far more than a hand-off.
template <typename Channel>
double parked_us(const Channel& a, const Channel& b) {
    const auto ns = a.stats().receive_blocked_ns + b.stats().receive_blocked_ns;
    return static_cast<double>(ns) / 1000.0;
}

template <std::size_t C>
void pingpong_ferry(benchmark::State& state) {
    double parked = 0;
    for (auto _ : state) {
        const auto there = std::make_unique<ferry::Channel<std::uint64_t, C>>();
        const auto back = std::make_unique<ferry::Channel<std::uint64_t, C>>();
        Placement placement;
        state.SetIterationTime(round_trip_seconds(
            k_round_trips,
            [&](std::uint64_t v) {
                (void)there->send(std::move(v));
                benchmark::DoNotOptimize(back->receive());
            },
            [&] { (void)back->send(there->receive().value_or(0)); }, &placement));
        record_placement(state, placement);
        parked += parked_us(*there, *back);
    }
    state.counters["parked_us"] = parked; // warm-up included
    state.SetItemsProcessed(static_cast<std::int64_t>(k_round_trips) * state.iterations());
}

template <std::size_t C>
void pingpong_boost(benchmark::State& state) {
    for (auto _ : state) {
        auto there = std::make_unique<raw_spsc<C>>();
        auto back = std::make_unique<raw_spsc<C>>();
        Placement placement;
        state.SetIterationTime(round_trip_seconds(
            k_round_trips,
            [&](std::uint64_t v) {
                spin_until([&] { return there->push(v); });
                std::uint64_t echo = 0;
                spin_until([&] { return back->pop(echo); });
                benchmark::DoNotOptimize(echo);
            },
            [&] {
                std::uint64_t v = 0;
                spin_until([&] { return there->pop(v); });
                spin_until([&] { return back->push(v); });
            },
            &placement));
        record_placement(state, placement);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_round_trips) * state.iterations());
}

// One thread, try_send then try_receive: the cost of the operations themselves, with no
// hand-off between cores and no scheduler in the way.
constexpr std::uint64_t k_fastpath_pairs = 2'000'000;

template <std::size_t C>
void fastpath_ferry(benchmark::State& state) {
    ferry::Channel<std::uint64_t, C> ch; // one thread: where it lives changes no hand-off
    std::uint64_t sum = 0;
    for (auto _ : state) {
        for (std::uint64_t i = 0; i < k_fastpath_pairs; ++i) {
            (void)ch.try_send(std::uint64_t{i});
            sum += ch.try_receive().value_or(0);
        }
    }
    finish(state, k_fastpath_pairs,
           sum == state.iterations() * k_fastpath_pairs * (k_fastpath_pairs - 1) / 2);
}

template <std::size_t C>
void fastpath_boost(benchmark::State& state) {
    auto q = std::make_unique<raw_spsc<C>>();
    std::uint64_t sum = 0;
    for (auto _ : state) {
        for (std::uint64_t i = 0; i < k_fastpath_pairs; ++i) {
            std::uint64_t v = 0;
            (void)q->push(i);
            (void)q->pop(v);
            sum += v;
        }
    }
    finish(state, k_fastpath_pairs,
           sum == state.iterations() * k_fastpath_pairs * (k_fastpath_pairs - 1) / 2);
}

BENCHMARK_TEMPLATE(fastpath_ferry, 64)->Name("fastpath/ferry/64")->Iterations(1)->UseRealTime();
BENCHMARK_TEMPLATE(fastpath_boost, 64)->Name("fastpath/baseline/64")->Iterations(1)->UseRealTime();
// 8192: the index ring (spsc_index_ring.hpp) against the same raw queue.
BENCHMARK_TEMPLATE(fastpath_ferry, 8192)->Name("fastpath/ferry/8192")->Iterations(1)->UseRealTime();
BENCHMARK_TEMPLATE(fastpath_boost, 8192)
    ->Name("fastpath/baseline/8192")
    ->Iterations(1)
    ->UseRealTime();

#define FERRY_CHANNEL_PAIR(kind, ours, theirs, capacity)                                           \
    BENCHMARK_TEMPLATE(ours, capacity)                                                             \
        ->Name(kind "/ferry/" #capacity)                                                           \
        ->UseManualTime()                                                                          \
        ->Iterations(1);                                                                           \
    BENCHMARK_TEMPLATE(theirs, capacity)                                                           \
        ->Name(kind "/baseline/" #capacity)                                                        \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

FERRY_CHANNEL_PAIR("nonblocking", nonblocking_ferry, nonblocking_boost, 2);
FERRY_CHANNEL_PAIR("nonblocking", nonblocking_ferry, nonblocking_boost, 64);
FERRY_CHANNEL_PAIR("nonblocking", nonblocking_ferry, nonblocking_boost, 8192);
FERRY_CHANNEL_PAIR("blocking", blocking_ferry, blocking_mutex, 2);
FERRY_CHANNEL_PAIR("blocking", blocking_ferry, blocking_mutex, 64);
FERRY_CHANNEL_PAIR("blocking", blocking_ferry, blocking_mutex, 8192);
FERRY_CHANNEL_PAIR("pingpong", pingpong_ferry, pingpong_boost, 2);
FERRY_CHANNEL_PAIR("pingpong", pingpong_ferry, pingpong_boost, 64);
FERRY_CHANNEL_PAIR("pingpong", pingpong_ferry, pingpong_boost, 8192);
} // namespace
