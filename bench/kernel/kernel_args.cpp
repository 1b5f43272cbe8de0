// Benchmarks for ferry/kernel: appending to KernelArgs against a plain std::vector push baseline,
// measured in the same binary and run (docs/performance/kernel.md has the figures and command).
//
//   slots:  8192 value slots (the per-launch maximum)  vs  8192 std::vector<uint64_t>::push_back
//   blocks: 1000 CustomDataBlocks of N bytes (deep copy) vs  1000 inserts of N bytes into one
//           std::vector<std::byte> plus an offset push (the same bytes copied, no checks)
//   load:   load() of a plan with 1000 blocks of N bytes (stage, one upload, resolve slots)
//           vs  one std::memcpy of the same total bytes into a preallocated buffer
#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ferry/kernel.hpp>
#include <ferry/runtime.hpp>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t k_slots = ferry::k_max_launch_slots;
constexpr std::size_t k_blocks = 1000;

void slots_kernel_args(benchmark::State& state) {
    for (auto _ : state) {
        ferry::KernelArgs args;
        for (std::uint64_t i = 0; i < k_slots; ++i) {
            if (failed(args.append(i))) {
                state.SkipWithError("append failed");
                return;
            }
        }
        benchmark::DoNotOptimize(args.slots().data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * k_slots));
}

void slots_vector_baseline(benchmark::State& state) {
    for (auto _ : state) {
        std::vector<std::uint64_t> slots;
        for (std::uint64_t i = 0; i < k_slots; ++i) {
            slots.push_back(i);
        }
        benchmark::DoNotOptimize(slots.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * k_slots));
}

void blocks_kernel_args(benchmark::State& state) {
    const std::vector<std::byte> bytes(static_cast<std::size_t>(state.range(0)), std::byte{7});
    for (auto _ : state) {
        ferry::KernelArgs args;
        for (std::size_t i = 0; i < k_blocks; ++i) {
            if (failed(args.append(ferry::CustomDataBlock{bytes.data(), bytes.size()}))) {
                state.SkipWithError("append failed");
                return;
            }
        }
        benchmark::DoNotOptimize(args.slots().data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * k_blocks));
    state.SetBytesProcessed(
        static_cast<std::int64_t>(state.iterations() * k_blocks * bytes.size()));
}

void blocks_vector_baseline(benchmark::State& state) {
    const std::vector<std::byte> bytes(static_cast<std::size_t>(state.range(0)), std::byte{7});
    for (auto _ : state) {
        std::vector<std::byte> store;
        std::vector<std::size_t> offsets;
        for (std::size_t i = 0; i < k_blocks; ++i) {
            offsets.push_back(store.size());
            store.insert(store.end(), bytes.begin(), bytes.end());
        }
        benchmark::DoNotOptimize(store.data());
        benchmark::DoNotOptimize(offsets.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * k_blocks));
    state.SetBytesProcessed(
        static_cast<std::int64_t>(state.iterations() * k_blocks * bytes.size()));
}

ferry::Runtime& runtime() {
    static ferry::Runtime& rt = []() -> ferry::Runtime& {
        ferry::Runtime& r = *ferry::Runtime::instance().value();
        if (failed(r.set_device(0))) {
            std::abort();
        }
        return r;
    }();
    return rt;
}

void load_plan(benchmark::State& state) {
    const std::vector<std::byte> bytes(static_cast<std::size_t>(state.range(0)), std::byte{7});
    ferry::LaunchPlan plan;
    for (std::size_t i = 0; i < k_blocks; i += 100) { // 10 launches of 100 blocks
        ferry::KernelArgs args;
        for (std::size_t b = 0; b < 100; ++b) {
            static_cast<void>(args.append(ferry::CustomDataBlock{bytes.data(), bytes.size()}));
        }
        const std::byte bin[1]{};
        if (plan.add_launch({"k", bin, 1, 1, 0}, std::move(args)) != ferry::ArgsError::none) {
            state.SkipWithError("add_launch failed");
            return;
        }
    }
    for (auto _ : state) {
        auto loaded = ferry::load(runtime(), plan);
        if (!loaded) {
            state.SkipWithError("load failed");
            return;
        }
        benchmark::DoNotOptimize(loaded->device_image());
    }
    state.SetBytesProcessed(
        static_cast<std::int64_t>(state.iterations() * k_blocks * bytes.size()));
}

void load_memcpy_baseline(benchmark::State& state) {
    const std::size_t total = k_blocks * static_cast<std::size_t>(state.range(0));
    const std::vector<std::byte> source(total, std::byte{7});
    std::vector<std::byte> target(total);
    for (auto _ : state) {
        std::memcpy(target.data(), source.data(), total);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * total));
}

} // namespace

// Names are <measure>/<side>/<case> (tools/bench_report.py pairs repetition i of ferry with
// repetition i of its baseline; run with --benchmark_repetitions=10
// --benchmark_enable_random_interleaving=true).
BENCHMARK(slots_kernel_args)->Name("slots/ferry/8192");
BENCHMARK(slots_vector_baseline)->Name("slots/baseline/8192");
BENCHMARK(blocks_kernel_args)->Name("blocks/ferry")->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK(blocks_vector_baseline)->Name("blocks/baseline")->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK(load_plan)->Name("load/ferry")->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK(load_memcpy_baseline)->Name("load/baseline")->Arg(16)->Arg(256)->Arg(4096);

BENCHMARK_MAIN();
