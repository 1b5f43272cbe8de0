// What the ipc channel counters cost (docs/channel.md, Counters): throughput of 64-bit items
// between this process and a forked peer (messages.hpp, items_across_processes), blocking send /
// receive, with the counters (ferry::spsc) and without them (a policy with counters = false).
//   counters/on|off/ipc/C
// Run with --benchmark_repetitions=10 (or more) --benchmark_enable_random_interleaving=true and
// compare each on/off pair of the same repetition.
#include "messages.hpp"

#include <benchmark/benchmark.h>
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

#define FERRY_COUNTERS_PAIR(C)                                                                     \
    BENCHMARK_TEMPLATE(ipc_transfer, ferry::spsc, C)                                               \
        ->Name("counters/on/ipc/" #C)                                                              \
        ->UseManualTime()                                                                          \
        ->Iterations(1);                                                                           \
    BENCHMARK_TEMPLATE(ipc_transfer, uncounted, C)                                                 \
        ->Name("counters/off/ipc/" #C)                                                             \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

FERRY_COUNTERS_PAIR(64);
FERRY_COUNTERS_PAIR(8192);
} // namespace

BENCHMARK_MAIN();
