// What the channel counters cost (docs/channel.md, Counters): the same spsc transfer with the
// counters (ferry::spsc) and without them (a policy with counters = false), in one binary.
//   counters/on|off/nonblocking-C   try_send / try_receive spinning, 10^6 messages
//   counters/on|off/blocking-C      send / receive (forever), 10^6 messages
//   counters/on|off/same_thread-64  try_send then try_receive on one thread, 10^6 each
// Names are <measure>/<side>/<case> (three parts, as tools/bench_channel_plot.py's loader reads
// them). Run with --benchmark_repetitions=10 (or more) --benchmark_enable_random_interleaving=true
// and compare each on/off pair of the same repetition.
#include "harness.hpp"

#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdint>
#include <memory>

namespace {

constexpr std::uint64_t k_messages = 1'000'000;

struct uncounted : ferry::spsc {
    static constexpr bool counters = false;
};

template <typename Policy, std::size_t C, bool Blocking>
void transfer(benchmark::State& state) {
    bool ok = true;
    for (auto _ : state) {
        // On the heap, as in bench-channel (throughput.cpp says why).
        const auto ch = std::make_unique<ferry::Channel<std::uint64_t, C, Policy>>();
        state.SetIterationTime(
            ferry::bench::channel_transfer_seconds<Blocking>(*ch, k_messages, ok));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_messages) * state.iterations());
    if (!ok) {
        state.SkipWithError("checksum mismatch: a message was lost or duplicated");
    }
}

// One thread: try_send then try_receive, k_messages times. No other thread, so what it times is
// the calls' own instructions (the counters' share included), little disturbed by a loaded
// machine's scheduling.
template <typename Policy>
void same_thread(benchmark::State& state) {
    ferry::Channel<std::uint64_t, 64, Policy> ch;
    std::uint64_t sum = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        for (std::uint64_t i = 0; i < k_messages; ++i) {
            (void)ch.try_send(std::uint64_t{i});
            sum += ch.try_receive().value_or(0);
        }
        state.SetIterationTime(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(static_cast<std::int64_t>(k_messages) * state.iterations());
}
BENCHMARK_TEMPLATE(same_thread, ferry::spsc)->Name("counters/on/same_thread-64")->UseManualTime();
BENCHMARK_TEMPLATE(same_thread, uncounted)->Name("counters/off/same_thread-64")->UseManualTime();

#define FERRY_COUNTERS_PAIR(C, BLOCKING, KIND)                                                     \
    BENCHMARK_TEMPLATE(transfer, ferry::spsc, C, BLOCKING)                                         \
        ->Name("counters/on/" KIND "-" #C)                                                         \
        ->UseManualTime();                                                                         \
    BENCHMARK_TEMPLATE(transfer, uncounted, C, BLOCKING)                                           \
        ->Name("counters/off/" KIND "-" #C)                                                        \
        ->UseManualTime()

FERRY_COUNTERS_PAIR(64, false, "nonblocking");
FERRY_COUNTERS_PAIR(64, true, "blocking");
FERRY_COUNTERS_PAIR(8192, true, "blocking");
} // namespace

BENCHMARK_MAIN();
