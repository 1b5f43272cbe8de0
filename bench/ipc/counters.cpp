// What the ipc channel counters cost (docs/channel.md, Counters; docs/performance/ipc.md): the
// same ipc::Channel<uint64_t, C> with the counters (ferry::spsc) and without them (a policy with
// counters = false). Rows are <measure>/<on|off>/<param>, so tools/bench_channel_plot.py pairs
// each on row with its off row:
//   counters/on|off/ipc-C            64-bit items between this process and a forked peer
//                                    (messages.hpp, items_across_processes), blocking send /
//                                    receive, 10^6 items
//   counters/on|off/same_thread-64   try_send then try_receive on one channel in one thread,
//                                    10^6 times: no peer and no waiting, so its instructions per
//                                    item are deterministic under callgrind (the < 2 % check)
// Run with --benchmark_repetitions=10 (or more) --benchmark_enable_random_interleaving=true and
// compare each on/off pair of the same repetition.
#include "messages.hpp"

#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdint>
#include <ferry/ipc/channel.hpp>

namespace {

constexpr std::uint64_t k_items = 1'000'000;

struct uncounted : ferry::spsc {
    static constexpr bool counters = false;
};

template <typename Policy, std::size_t C>
void ipc_transfer(benchmark::State& state) {
    ferry::bench::items_across_processes<ferry::ipc::Channel<std::uint64_t, C, Policy>>(state,
                                                                                        k_items);
}

// The loop same_thread runs (its own function, so callgrind can collect exactly it:
// --toggle-collect='*same_thread_items*').
template <typename Channel>
[[gnu::noinline]] std::uint64_t same_thread_items(Channel& ch) {
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < k_items; ++i) {
        (void)ch.try_send(i);
        sum += ch.try_receive().value_or(0);
    }
    return sum;
}

template <typename Policy>
void same_thread(benchmark::State& state) {
    using Channel = ferry::ipc::Channel<std::uint64_t, 64, Policy>;
    auto ch = Channel::create(ferry::bench::object_name("counters"));
    if (!ch) {
        state.SkipWithError(ch.error().message.c_str());
        return;
    }
    std::uint64_t sum = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        sum += same_thread_items(*ch);
        state.SetIterationTime(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(static_cast<std::int64_t>(k_items) * state.iterations());
}

#define FERRY_COUNTERS_PAIR(C)                                                                     \
    BENCHMARK_TEMPLATE(ipc_transfer, ferry::spsc, C)                                               \
        ->Name("counters/on/ipc-" #C)                                                              \
        ->UseManualTime()                                                                          \
        ->Iterations(1);                                                                           \
    BENCHMARK_TEMPLATE(ipc_transfer, uncounted, C)                                                 \
        ->Name("counters/off/ipc-" #C)                                                             \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

FERRY_COUNTERS_PAIR(64);
FERRY_COUNTERS_PAIR(8192);
BENCHMARK_TEMPLATE(same_thread, ferry::spsc)
    ->Name("counters/on/same_thread-64")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(same_thread, uncounted)
    ->Name("counters/off/same_thread-64")
    ->UseManualTime()
    ->Iterations(1);
} // namespace

BENCHMARK_MAIN();
