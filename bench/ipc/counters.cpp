// What the ipc channel counters cost (docs/channel.md, Counters): throughput of 64-bit items
// between this process and a forked peer (bench/ipc/harness.hpp), blocking send / receive,
// with the counters (ferry::spsc) and without them (a policy with counters = false).
//   counters/on|off/ipc/C
// Run with --benchmark_filter=counters --benchmark_repetitions=10 (or more)
// --benchmark_enable_random_interleaving=true and compare the medians of each on/off pair.
#include "messages.hpp"

#include <benchmark/benchmark.h>
#include <cstdint>
#include <ferry/ipc/channel.hpp>
#include <string>

namespace {
using ferry::bench::object_name;
using ferry::bench::open_channel;
using ferry::bench::record;
using ferry::bench::transfer_across;

constexpr std::uint64_t k_items = 1'000'000;

struct uncounted : ferry::spsc {
    static constexpr bool counters = false;
};

template <typename Policy, std::size_t C>
void ipc_transfer(benchmark::State& state) {
    using ItemChannel = ferry::ipc::Channel<std::uint64_t, C, Policy>;
    for (auto _ : state) {
        const std::string name = object_name("counters");
        auto ch = ItemChannel::create(name);
        if (!ch) {
            state.SkipWithError(ch.error().message.c_str());
            break;
        }
        const auto timed = transfer_across(
            k_items, [&](std::uint64_t v) { (void)ch->send(v); },
            [&] {
                return [peer = open_channel<ItemChannel>(name)] {
                    return peer->receive().value_or(0);
                };
            });
        if (!record(state, timed)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_items) * state.iterations());
}

BENCHMARK_TEMPLATE(ipc_transfer, ferry::spsc, 64)->Name("counters/on/ipc/64")->UseManualTime()->Iterations(1);
BENCHMARK_TEMPLATE(ipc_transfer, uncounted, 64)->Name("counters/off/ipc/64")->UseManualTime()->Iterations(1);
BENCHMARK_TEMPLATE(ipc_transfer, ferry::spsc, 8192)->Name("counters/on/ipc/8192")->UseManualTime()->Iterations(1);
BENCHMARK_TEMPLATE(ipc_transfer, uncounted, 8192)->Name("counters/off/ipc/8192")->UseManualTime()->Iterations(1);
} // namespace

BENCHMARK_MAIN();
