// Channel throughput of 64-bit items across two processes, against ferry's in-process channel
// in the same run (no target: the ratio says what crossing a process boundary costs):
//   throughput/baseline/C  ferry::Channel<uint64_t, C>, blocking send / receive between two
//                          threads pinned to two CPUs (bench/channel/harness.hpp)
//   throughput/ferry/C     ferry::ipc::Channel<uint64_t, C>, blocking send / receive between
//                          this process and a forked peer (harness.hpp), each pinned to a CPU
// Both sides move k_items after a warm-up of a quarter of that, with a checksum.
#include "messages.hpp"

#include <benchmark/benchmark.h>
#include <cstdint>
#include <ferry/channel/channel.hpp>
#include <ferry/ipc/channel.hpp>
#include <string>

namespace {
using ferry::bench::transfer_seconds;

constexpr std::uint64_t k_items = 1'000'000;

void finish(benchmark::State& state) {
    state.SetItemsProcessed(static_cast<std::int64_t>(k_items) * state.iterations());
}

template <std::size_t C>
void throughput_in_process(benchmark::State& state) {
    bool ok = true;
    for (auto _ : state) {
        ferry::Channel<std::uint64_t, C> ch;
        state.SetIterationTime(transfer_seconds(
            k_items, [&](std::uint64_t v) { (void)ch.send(std::move(v)); },
            [&] { return ch.receive().value_or(0); }, ok));
    }
    if (!ok) {
        state.SkipWithError("checksum mismatch: a message was lost or duplicated");
    }
    finish(state);
}

template <std::size_t C>
void throughput_across_processes(benchmark::State& state) {
    ferry::bench::items_across_processes<ferry::ipc::Channel<std::uint64_t, C>>(state, k_items);
}

BENCHMARK_TEMPLATE(throughput_across_processes, 64)
    ->Name("throughput/ferry/64")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(throughput_across_processes, 8192)
    ->Name("throughput/ferry/8192")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(throughput_in_process, 64)
    ->Name("throughput/baseline/64")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(throughput_in_process, 8192)
    ->Name("throughput/baseline/8192")
    ->UseManualTime()
    ->Iterations(1);
} // namespace
