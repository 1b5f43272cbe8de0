// Latency distributions, each next to the bare futex doing the same thing in the same run
// (each within 1.3x of the same figure for a bare futex,
// docs/cann-contract/quality.md#performance-targets):
//   overshoot/*  how late a 1 ms timed receive on an empty channel returns, vs a bare
//                FUTEX_WAIT_BITSET loop on the same deadline;
//   wake/*       stop() -> a parked receiver running again, vs a bare futex store + wake.
// Each iteration takes k_samples and reports p50_us, p99_us and the sample count as counters.
// A p99 needs enough samples above it to mean anything: with 1000 there are 10 beyond it (with
// the 60 of an earlier version it was the second-largest sample, i.e. noise).
#include "harness.hpp"

#include <atomic>
#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdint>
#include <ferry/channel/detail/futex.hpp>
#include <thread>
#include <vector>

namespace {
using namespace std::chrono_literals;
using ferry::bench::clock;
using ferry::bench::quantile;

constexpr int k_samples = 1000;
static_assert(k_samples >= 1000, "a p99 needs at least 1000 samples");
constexpr auto k_wait = 1ms;

double micros(clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

void report(benchmark::State& state, std::vector<double>& samples) {
    state.counters["p50_us"] = quantile(samples, 0.50);
    state.counters["p99_us"] = quantile(samples, 0.99);
    state.counters["samples"] = static_cast<double>(samples.size()); // the script checks it
}

void overshoot_ferry(benchmark::State& state) {
    ferry::Channel<int, 2> ch;
    std::vector<double> samples;
    for (auto _ : state) {
        samples.clear();
        for (int i = 0; i < k_samples; ++i) {
            const auto deadline = clock::now() + k_wait;
            benchmark::DoNotOptimize(ch.receive_until(deadline));
            samples.push_back(micros(clock::now() - deadline));
        }
    }
    report(state, samples);
}

void overshoot_futex(benchmark::State& state) {
    std::atomic<std::uint32_t> word{0};
    std::vector<double> samples;
    for (auto _ : state) {
        samples.clear();
        for (int i = 0; i < k_samples; ++i) {
            const auto deadline = clock::now() + k_wait;
            while (clock::now() < deadline) {
                ferry::detail::futex_wait_until(word, 0, deadline);
            }
            samples.push_back(micros(clock::now() - deadline));
        }
    }
    report(state, samples);
}

// Starts `wait` on a thread, lets it park (well past the spin phase), then times `wake` until the
// thread runs again.
template <typename Wait, typename Wake>
double wake_latency_us(Wait wait, Wake wake) {
    std::atomic<clock::rep> woke_at{0};
    std::atomic<bool> started{false};
    std::thread sleeper([&] {
        started.store(true);
        wait();
        woke_at.store(clock::now().time_since_epoch().count());
    });
    while (!started.load()) {
    }
    std::this_thread::sleep_for(2ms);
    const auto start = clock::now();
    wake();
    sleeper.join();
    return micros(clock::duration(woke_at.load()) - start.time_since_epoch());
}

void wake_ferry(benchmark::State& state) {
    std::vector<double> samples;
    for (auto _ : state) {
        samples.clear();
        for (int i = 0; i < k_samples; ++i) {
            ferry::Channel<int, 2> ch;
            samples.push_back(wake_latency_us([&] { benchmark::DoNotOptimize(ch.receive()); },
                                              [&] { ch.stop(); }));
        }
    }
    report(state, samples);
}

void wake_futex(benchmark::State& state) {
    std::vector<double> samples;
    for (auto _ : state) {
        samples.clear();
        for (int i = 0; i < k_samples; ++i) {
            std::atomic<std::uint32_t> word{0};
            samples.push_back(wake_latency_us(
                [&] {
                    while (word.load() == 0) {
                        ferry::detail::futex_wait_until(word, 0, clock::time_point::max());
                    }
                },
                [&] {
                    word.store(1);
                    ferry::detail::futex_wake_all(word);
                }));
        }
    }
    report(state, samples);
}

BENCHMARK(overshoot_ferry)
    ->Name("overshoot/ferry/1ms")
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(overshoot_futex)
    ->Name("overshoot/baseline/1ms")
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(wake_ferry)->Name("wake/ferry/stop")->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(wake_futex)->Name("wake/baseline/stop")->Iterations(1)->Unit(benchmark::kMillisecond);
} // namespace

BENCHMARK_MAIN();
