// What the channel counters cost (docs/channel.md, Counters): the same spsc transfer with the
// counters (ferry::spsc) and without them (a policy with counters = false), in one binary.
//   counters/on|off/nonblocking/C   try_send / try_receive spinning, 10^6 messages
//   counters/on|off/blocking/C      send / receive (forever), 10^6 messages
// Run with --benchmark_repetitions=10 (or more) --benchmark_enable_random_interleaving=true and
// compare the medians of each on/off pair.
#include "harness.hpp"

#include <benchmark/benchmark.h>
#include <cstdint>

namespace {
using ferry::Status;
using ferry::bench::spin_until;
using ferry::bench::transfer_seconds;

constexpr std::uint64_t k_messages = 1'000'000;

struct uncounted : ferry::spsc {
    static constexpr bool counters = false;
};

template <typename Policy, std::size_t C, bool Blocking>
void transfer(benchmark::State& state) {
    bool ok = true;
    for (auto _ : state) {
        ferry::Channel<std::uint64_t, C, Policy> ch;
        const auto send = [&](std::uint64_t v) {
            if constexpr (Blocking) {
                (void)ch.send(std::move(v));
            } else {
                spin_until([&] { return ch.try_send(std::uint64_t{v}) == Status::ok; });
            }
        };
        const auto receive = [&] {
            if constexpr (Blocking) {
                return ch.receive().value_or(0);
            } else {
                std::uint64_t v = 0;
                spin_until([&] {
                    auto r = ch.try_receive();
                    v = r.value_or(0);
                    return r.has_value();
                });
                return v;
            }
        };
        state.SetIterationTime(transfer_seconds(k_messages, send, receive, ok));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_messages) * state.iterations());
    if (!ok) {
        state.SkipWithError("checksum mismatch: a message was lost or duplicated");
    }
}

BENCHMARK_TEMPLATE(transfer, ferry::spsc, 64, false)->Name("counters/on/nonblocking/64")->UseManualTime();
BENCHMARK_TEMPLATE(transfer, uncounted, 64, false)->Name("counters/off/nonblocking/64")->UseManualTime();
BENCHMARK_TEMPLATE(transfer, ferry::spsc, 64, true)->Name("counters/on/blocking/64")->UseManualTime();
BENCHMARK_TEMPLATE(transfer, uncounted, 64, true)->Name("counters/off/blocking/64")->UseManualTime();
BENCHMARK_TEMPLATE(transfer, ferry::spsc, 8192, true)->Name("counters/on/blocking/8192")->UseManualTime();
BENCHMARK_TEMPLATE(transfer, uncounted, 8192, true)->Name("counters/off/blocking/8192")->UseManualTime();
} // namespace

BENCHMARK_MAIN();
