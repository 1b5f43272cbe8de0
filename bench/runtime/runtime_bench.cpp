// ferry/runtime benchmarks. Every figure has its baseline in the same binary and run:
// - launch overhead of an empty kernel (queued, then one synchronize) and a stream round trip
//   (launch + synchronize) vs a bare std::thread handoff through a mutex + condition variable
//   queue doing the same: queue a std::function and, for the round trip, wait for it;
// - allocation registry lookups at 10^5 live allocations vs an unsynchronized std::map
//   upper_bound over the same bases (the registry's own data structure without its lock).
//
//   bench-runtime --benchmark_repetitions=9 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <ferry/runtime.hpp>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace {

// The baseline: one worker thread fed through a mutex + condition variable queue.
class ThreadHandoff {
public:
    ThreadHandoff() : worker_([this] { work(); }) {}
    ~ThreadHandoff() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_one();
        worker_.join();
    }
    void submit(std::function<void()> task) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(std::move(task));
            ++submitted_;
        }
        wake_.notify_one();
    }
    void wait() {
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [&] { return completed_ == submitted_; });
    }

private:
    void work() {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) {
                return;
            }
            auto task = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            task();
            lock.lock();
            ++completed_;
            idle_.notify_all();
        }
    }
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable idle_;
    std::deque<std::function<void()>> queue_;
    std::uint64_t submitted_ = 0;
    std::uint64_t completed_ = 0;
    bool stop_ = false;
    std::thread worker_;
};

ferry::Runtime& runtime() {
    static ferry::Runtime& rt = []() -> ferry::Runtime& {
        ferry::Runtime& r = *ferry::Runtime::instance().value();
        (void)r.set_device(0);
        return r;
    }();
    return rt;
}

void empty_kernel(const ferry::KernelContext&) {}

constexpr int k_batch = 256;

void BM_baseline_handoff_batch(benchmark::State& state) {
    ThreadHandoff handoff;
    for (auto _ : state) {
        for (int i = 0; i < k_batch; ++i) {
            handoff.submit([] {});
        }
        handoff.wait();
    }
    state.SetItemsProcessed(state.iterations() * k_batch);
}

void BM_launch_empty_kernel_batch(benchmark::State& state) {
    ferry::Runtime& rt = runtime();
    ferry::Stream* stream = rt.create_stream().value();
    const std::vector<std::uint64_t> no_args;
    for (auto _ : state) {
        for (int i = 0; i < k_batch; ++i) {
            (void)rt.launch(&empty_kernel, 1, no_args, stream);
        }
        (void)rt.synchronize_stream(stream);
    }
    state.SetItemsProcessed(state.iterations() * k_batch);
    (void)rt.destroy_stream(stream);
}

void BM_baseline_handoff_round_trip(benchmark::State& state) {
    ThreadHandoff handoff;
    for (auto _ : state) {
        handoff.submit([] {});
        handoff.wait();
    }
}

void BM_stream_round_trip(benchmark::State& state) {
    ferry::Runtime& rt = runtime();
    ferry::Stream* stream = rt.create_stream().value();
    const std::vector<std::uint64_t> no_args;
    for (auto _ : state) {
        (void)rt.launch(&empty_kernel, 1, no_args, stream);
        (void)rt.synchronize_stream(stream);
    }
    (void)rt.destroy_stream(stream);
}

constexpr std::size_t k_live = 100'000;

// 10^5 disjoint 64-byte allocations at random-looking (but fixed) addresses, and probe addresses
// that hit their interiors.
struct LookupFixture {
    std::vector<std::uintptr_t> bases;
    std::vector<const void*> probes;
    LookupFixture() {
        std::mt19937_64 rng(42);
        for (std::size_t i = 0; i < k_live; ++i) {
            bases.push_back((std::uintptr_t{1} << 32) + i * 4096);
        }
        for (std::size_t i = 0; i < 4096; ++i) {
            probes.push_back(reinterpret_cast<const void*>(bases[rng() % k_live] + rng() % 64));
        }
    }
};

const LookupFixture& fixture() {
    static const LookupFixture f;
    return f;
}

void BM_baseline_map_upper_bound(benchmark::State& state) {
    std::map<std::uintptr_t, ferry::Allocation> map;
    for (const auto base : fixture().bases) {
        map.emplace(base, ferry::Allocation{base, 64, 64, 0, ferry::AllocationKind::device});
    }
    std::size_t i = 0;
    for (auto _ : state) {
        const auto a = reinterpret_cast<std::uintptr_t>(fixture().probes[i++ & 4095]);
        auto it = map.upper_bound(a);
        --it;
        benchmark::DoNotOptimize(it->second.contains(reinterpret_cast<const void*>(a)));
    }
}

void BM_registry_find(benchmark::State& state) {
    ferry::AllocationRegistry registry;
    for (const auto base : fixture().bases) {
        (void)registry.insert({base, 64, 64, 0, ferry::AllocationKind::device});
    }
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(registry.find(fixture().probes[i++ & 4095]));
    }
    state.counters["live"] = static_cast<double>(registry.size());
}

} // namespace

// Names are <measure>/<side>/<case> (tools/bench_report.py pairs repetition i of ferry with
// repetition i of its baseline; run with --benchmark_repetitions=10
// --benchmark_enable_random_interleaving=true).
BENCHMARK(BM_baseline_handoff_batch)->Name("launch/baseline/batch256")->UseRealTime();
BENCHMARK(BM_launch_empty_kernel_batch)->Name("launch/ferry/batch256")->UseRealTime();
BENCHMARK(BM_baseline_handoff_round_trip)->Name("roundtrip/baseline/one")->UseRealTime();
BENCHMARK(BM_stream_round_trip)->Name("roundtrip/ferry/one")->UseRealTime();
BENCHMARK(BM_baseline_map_upper_bound)->Name("lookup/baseline/live100k");
BENCHMARK(BM_registry_find)->Name("lookup/ferry/live100k");

BENCHMARK_MAIN();
