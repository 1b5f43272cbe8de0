// bench/afd: the FFN scheduler against baselines measured in the same run of this binary.
//
//  latency/*  ready -> return: a producer thread publishes the flags of the micro batch the
//             scheduler waits on; the figure is the time from just before the publishing stores to
//             the scheduler's return, per wait policy, against a bare loop polling the same flags
//             (median and p99 of each repetition's wake-ups; both threads pinned, a placement
//             probe around each repetition). The producer publishes only once the waiter has
//             announced that it is waiting (its first poll found nothing), so each figure is a
//             wake-up, never a publish that beat the wait. Two regimes: the flags arrive at once
//             ("hot": the waiter is still spinning) or after 1 ms (the waiter has reached its
//             slowest stage).
//  copy/<side>/A64_M3_BS256_K9  output bandwidth of one all-sync call on A=64, M=3, BS=256,
//             K=9 (589,824 bytes of expert ids per call, plus the descriptor reset) against
//             memcpy of the same bytes; also shown: memcpy followed by the memset the reset needs
//             (the contract's least work) and a fused copy+fill loop (AVX2 machines).
//             Pairs for the report: --benchmark_filter='^copy/' --benchmark_repetitions=10
//             --benchmark_enable_random_interleaving=true.
//  cpu/*      CPU time of a thread waiting 100 ms for flags that never come, per policy, against
//             a bare polling loop (CLOCK_THREAD_CPUTIME_ID / wall time: 1.0 = one core).
// The summary at the end prints each median with its 10th-90th percentile spread and the ratio to
// its baseline. Two threads at most (the machines have 2 cores).

#include "../channel/harness.hpp"

#include <algorithm>
#include <atomic>
#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <ferry/afd.hpp>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

using namespace ferry::afd;
using Clock = std::chrono::steady_clock;

namespace {

// sync_group_size = session_num: one group (all-sync mode), for 2 and for 64 sessions.
constexpr std::int32_t k_all_sync_2 = 2;
constexpr std::int32_t k_all_sync_64 = 64;

std::map<std::string, std::vector<double>>& samples() {
    static std::map<std::string, std::vector<double>> s;
    return s;
}

std::uintptr_t addr(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p);
}

// An FFN context with every buffer, all descriptors initially not ready.
struct Ffn {
    Geometry g;
    ContextImage ctx;
    std::vector<std::int32_t> info;
    std::vector<std::byte> data = std::vector<std::byte>(512);
    std::vector<std::int32_t> layer, session, micro_batch, experts;

    explicit Ffn(Geometry geometry)
        : g(geometry), info(*ffn_token_info_size(g) / 4), layer(g.session_num),
          session(g.session_num), micro_batch(g.session_num),
          experts(*expert_ids_buffer_size(g) / 4) {
        ScheduleContext s{};
        s.common = {g.session_num,
                    g.micro_batch_num,
                    g.micro_batch_size,
                    g.selected_expert_num,
                    8,
                    512,
                    512,
                    0,
                    {}};
        s.control.run_flag = 1;
        s.ffn.token_info_buf = addr(info.data());
        s.ffn.token_info_buf_size = 4 * info.size();
        s.ffn.token_data_buf = addr(data.data());
        s.ffn.token_data_buf_size = data.size();
        s.ffn.layer_ids_buf = addr(layer.data());
        s.ffn.layer_ids_buf_size = 4 * layer.size();
        s.ffn.session_ids_buf = addr(session.data());
        s.ffn.session_ids_buf_size = 4 * session.size();
        s.ffn.micro_batch_ids_buf = addr(micro_batch.data());
        s.ffn.micro_batch_ids_buf_size = 4 * micro_batch.size();
        s.ffn.expert_ids_buf = addr(experts.data());
        s.ffn.expert_ids_buf_size = 4 * experts.size();
        ctx.view().store(s);
        table().initialize();
    }
    FfnDescriptorTable table() { return {reinterpret_cast<std::byte*>(info.data()), g}; }
    void publish(std::uint32_t mb) {
        for (std::uint32_t s = 0; s < g.session_num; ++s) {
            table().at(s, mb).set_flag(1);
        }
    }
};

double since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The producer side of one latency benchmark: waits until the consumer is waiting for round i
// (`waiting`), lets `delay` pass, stamps the time and publishes.
struct Producer {
    std::atomic<std::int64_t> round{-1};   // the round the consumer is about to wait for
    std::atomic<std::int64_t> waiting{-1}; // the round whose wait has polled once and found nothing
    std::atomic<std::int64_t> stamp_ns{0};
    std::atomic<bool> done{false};

    // Called by the waiter after an unsuccessful poll: from here on it is provably waiting.
    void announce_waiting() noexcept {
        waiting.store(round.load(std::memory_order_relaxed), std::memory_order_release);
    }

    template <typename Publish>
    void run(std::chrono::microseconds delay, Publish&& publish) {
        for (std::int64_t next = 0;; ++next) {
            while (waiting.load(std::memory_order_acquire) < next) {
                if (done.load(std::memory_order_acquire)) {
                    return;
                }
            }
            const auto until = Clock::now() + delay;
            while (Clock::now() < until) {
            }
            stamp_ns.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
            publish(next);
        }
    }
    double latency_us() const {
        const Clock::time_point t0{Clock::duration(stamp_ns.load(std::memory_order_relaxed))};
        return since(t0);
    }
};

// `attach(producer)` connects the waiter's announcement to the producer; `wait_once(i)` blocks
// until round `i`'s data is there and consumes it. Besides the mean (the manual time), each
// repetition reports the median and 99th percentile of its wake-ups (counters p50_us, p99_us):
// one preemption of either thread, milliseconds on a 2-vCPU machine, moves the mean of a
// repetition's sub-microsecond wake-ups several-fold and the median not at all.
template <typename Attach, typename WaitOnce, typename Publish>
void measure_latency(benchmark::State& state, const std::string& name, Attach&& attach,
                     WaitOnce&& wait_once, Publish&& publish) {
    const std::chrono::microseconds delay(state.range(0));
    Producer producer;
    attach(producer);
    // Both threads pinned, a LineProbe between them before and after (counters line_before_ns,
    // line_after_ns): a wake-up's latency is mostly one cache line's trip between the two vCPUs,
    // which the host places near or far, so the report pairs only like placements.
    const auto [waiter_cpu, producer_cpu] = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(waiter_cpu);
    ferry::bench::LineProbe probe;
    std::thread t([&, cpu = producer_cpu] {
        const ferry::bench::PinnedToCpu producer_pinned(cpu);
        (void)probe.follow();
        producer.run(delay, publish);
        (void)probe.follow();
    });
    ferry::bench::Placement placement;
    placement.before_ns = probe.lead();
    auto& out = samples()["latency/" + name + (delay.count() == 0 ? "/hot" : "/after_1ms")];
    std::vector<double> repetition;
    repetition.reserve(static_cast<std::size_t>(state.max_iterations));
    std::int64_t i = 0;
    for (auto _ : state) {
        producer.round.store(i, std::memory_order_release);
        wait_once(i);
        const double us = producer.latency_us(); // the flags' acquire orders the stamp before us
        state.SetIterationTime(us / 1e6);
        out.push_back(us);
        repetition.push_back(us);
        ++i;
    }
    producer.done.store(true, std::memory_order_release);
    placement.after_ns = probe.lead();
    t.join();
    ferry::bench::record_placement(state, placement);
    state.counters["p50_us"] = ferry::bench::quantile(repetition, 0.5);
    state.counters["p99_us"] = ferry::bench::quantile(repetition, 0.99);
}

// A wait policy that tells the producer, at its first pause of each wait, that the scheduler is
// waiting; then behaves exactly as `Wait`. (Each wait copies the policy, so `announced` is per
// wait.)
template <WaitPolicy Wait>
struct Announcing {
    Producer* producer = nullptr;
    bool announced = false;
    Wait inner{};
    void pause() noexcept {
        if (!announced) {
            announced = true;
            producer->announce_waiting();
        }
        inner.pause();
    }
};

template <WaitPolicy Wait>
void BM_latency_scheduler(benchmark::State& state, const char* name) {
    Ffn ffn(Geometry{2, 2, 1, 1});
    std::optional<GroupSyncScheduler<Announcing<Wait>>> scheduler;
    measure_latency(
        state, name, [&](Producer& producer) { scheduler.emplace(Announcing<Wait>{&producer}); },
        [&](std::int64_t) {
            if (scheduler->schedule_once(ffn.ctx.bytes.data(), k_all_sync_2).out_num != 2) {
                state.SkipWithError("scheduler returned no rows");
            }
        },
        [&](std::int64_t i) { ffn.publish(static_cast<std::uint32_t>(i % 2)); });
}

// The quality bar's baseline: a bare loop polling the same flags — both sessions' descriptors of
// the micro batch, in the same table, published by the same stores — and clearing them.
void BM_latency_bare(benchmark::State& state) {
    Ffn ffn(Geometry{2, 2, 1, 1});
    const FfnDescriptorTable table = ffn.table();
    Producer* announce_to = nullptr;
    measure_latency(
        state, "bare_poll", [&](Producer& producer) { announce_to = &producer; },
        [&](std::int64_t i) {
            const auto mb = static_cast<std::uint32_t>(i % 2);
            const auto ready = [&] { return table.at(0, mb).ready() && table.at(1, mb).ready(); };
            if (!ready()) {
                announce_to->announce_waiting(); // as the schedulers' first pause does
                while (!ready()) {
                }
            }
            table.at(0, mb).set_flag(0);
            table.at(1, mb).set_flag(0);
        },
        [&](std::int64_t i) { ffn.publish(static_cast<std::uint32_t>(i % 2)); });
}

constexpr Geometry k_large{64, 3, 256, 9};
constexpr std::size_t k_large_bytes = std::size_t{64} * 256 * 9 * 4;
// The parameter part of every copy row's name (<measure>/<side>/<param>).
constexpr const char* k_large_param = "A64_M3_BS256_K9";

std::string copy_row(const char* side) {
    return std::string("copy/") + side + "/" + k_large_param;
}

// Bandwidth in GB/s over the whole loop (its 64 flag stores per call included).
double gigabytes_per_second(std::size_t bytes, Clock::time_point t0) {
    return static_cast<double>(bytes) / 1e3 / since(t0);
}

void record_copy(benchmark::State& state, const char* side, Clock::time_point t0) {
    const std::size_t bytes = state.iterations() * k_large_bytes;
    samples()[copy_row(side)].push_back(gigabytes_per_second(bytes, t0));
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

// One call per iteration. The loop re-arms the 64 flags the previous call consumed (the
// producer's work, about 1 % of the samples in a profile: the lines it touches are the ones the
// scheduler reads next) and rotates over the M = 3 micro batches, as polling_index does.
template <Executor Exec>
void BM_copy_scheduler(benchmark::State& state, const char* side, Exec executor) {
    Ffn ffn(k_large);
    GroupSyncScheduler<Spin, LowestReady, Exec> scheduler(Spin{}, LowestReady{},
                                                          std::move(executor));
    std::uint32_t mb = 0;
    const auto t0 = Clock::now();
    for (auto _ : state) {
        ffn.publish(mb); // re-arm what the previous call consumed
        if (scheduler.schedule_once(ffn.ctx.bytes.data(), k_all_sync_64).out_num != 64) {
            state.SkipWithError("scheduler returned no rows");
            break;
        }
        mb = (mb + 1) % 3;
    }
    record_copy(state, side, t0);
}

// memcpy of exactly the runs the scheduler copies: the ids of the same 64 descriptors (the micro
// batches rotating as above) to the same output rows, without the reset and without the
// scheduler. It separates what the descriptor layout costs (64 runs 27 KB apart, each a new
// stream for the prefetcher; memcpy pays it too) from what the scheduler adds to it.
void BM_copy_memcpy_rows(benchmark::State& state, const char* side) {
    Ffn ffn(k_large);
    std::byte* const out = reinterpret_cast<std::byte*>(ffn.experts.data());
    const FfnDescriptorTable table = ffn.table();
    std::uint32_t mb = 0;
    const auto t0 = Clock::now();
    for (auto _ : state) {
        for (std::uint32_t s = 0; s < k_large.session_num; ++s) {
            const std::span<std::byte> ids = table.at(s, mb).expert_id_bytes();
            std::memcpy(out + s * ids.size(), ids.data(), ids.size());
        }
        benchmark::DoNotOptimize(out);
        benchmark::ClobberMemory();
        mb = (mb + 1) % 3;
    }
    record_copy(state, side, t0);
}

// The raw loops the scheduler is held against, on contiguous buffers of the same size.
enum class RawCopy { memcpy_only, memcpy_then_memset, fused_loop };

#if defined(__x86_64__)
// A fused copy and reset written plainly: per 32 bytes, load, store to the output, store the
// fill over the source. AVX2 only (registered where the CPU has it).
[[gnu::target("avx2")]] void fused_copy_reset(std::byte* dst, std::byte* src, std::size_t n) {
    const __m256i fill = _mm256_set1_epi8(0x7F);
    for (std::size_t i = 0; i + 32 <= n; i += 32) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), v);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(src + i), fill);
    }
}
#endif

// memcpy of the same bytes; memcpy then memset of the source to 0x7F, the least work the contract
// asks of one call (docs/cann-contract/afd.md#output-and-reset); and both in one loop. One
// source buffer, as warm as the scheduler's (a profile with three rotating sources, as the
// scheduler's micro batches rotate, measured the same).
void copy_baseline(benchmark::State& state, const char* side, RawCopy kind) {
    // 64-byte aligned (a large vector's data starts 16 bytes into a page), so that no raw loop
    // loses to vectors straddling cache lines.
    const auto aligned = [] {
        return std::unique_ptr<std::byte, decltype(&std::free)>(
            static_cast<std::byte*>(std::aligned_alloc(64, k_large_bytes)), &std::free);
    };
    const auto src_storage = aligned(), dst_storage = aligned();
    const std::span<std::byte> src(src_storage.get(), k_large_bytes);
    const std::span<std::byte> dst(dst_storage.get(), k_large_bytes);
    if (src.data() == nullptr || dst.data() == nullptr) {
        state.SkipWithError("out of memory");
        return;
    }
    std::fill(src.begin(), src.end(), std::byte{1});
    std::fill(dst.begin(), dst.end(), std::byte{0});
    const auto t0 = Clock::now();
    for (auto _ : state) {
        if (kind == RawCopy::fused_loop) {
#if defined(__x86_64__)
            fused_copy_reset(dst.data(), src.data(), k_large_bytes);
#endif
        } else {
            std::memcpy(dst.data(), src.data(), k_large_bytes);
            if (kind == RawCopy::memcpy_then_memset) {
                std::memset(src.data(), 0x7F, k_large_bytes);
            }
        }
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
    }
    record_copy(state, side, t0);
}

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// One waiter thread waits 100 ms for flags that never come; reports CPU seconds per wall second.
template <typename Wait>
void measure_cpu(benchmark::State& state, const std::string& name, Wait&& wait,
                 std::atomic<bool>& stop) {
    auto& out = samples()["cpu/" + name];
    for (auto _ : state) {
        stop.store(false);
        double share = 0;
        std::thread waiter([&] {
            const double cpu0 = thread_cpu_seconds();
            const auto t0 = Clock::now();
            wait();
            share = (thread_cpu_seconds() - cpu0) / (since(t0) / 1e6);
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        stop.store(true);
        waiter.join();
        out.push_back(share);
        state.counters["core_share"] = share;
    }
}

template <WaitPolicy W>
void BM_cpu_scheduler(benchmark::State& state, const char* name) {
    Ffn ffn(Geometry{2, 2, 1, 1});
    std::atomic<bool> stop{false};
    measure_cpu(
        state, name,
        [&] {
            ffn.ctx.view().set_run_flag(1);
            std::thread watch([&] {
                while (!stop.load()) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                ffn.ctx.view().set_run_flag(0); // the only way out of the wait, as in CANN
            });
            benchmark::DoNotOptimize(
                GroupSyncScheduler<W>{}.schedule_once(ffn.ctx.bytes.data(), k_all_sync_2));
            watch.join();
        },
        stop);
}

void BM_cpu_bare(benchmark::State& state) {
    std::atomic<bool> stop{false};
    measure_cpu(
        state, "bare_poll",
        [&] {
            while (!stop.load(std::memory_order_acquire)) {
            }
        },
        stop);
}

struct Stats {
    double median, p10, p90;
};
Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) {
        return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
    };
    return {at(0.5), at(0.1), at(0.9)};
}

void print_summary() {
    const auto& all = samples();
    std::printf("\n%-34s %12s %12s %12s %9s  %s\n", "figure", "median", "p10", "p90", "ratio",
                "baseline");
    for (const auto& [name, values] : all) {
        if (values.empty()) {
            continue;
        }
        const std::string group = name.substr(0, name.find('/'));
        std::string base;
        if (group == "latency") {
            base = "latency/bare_poll" + name.substr(name.rfind('/'));
        } else if (group == "copy") {
            base = "copy/memcpy" + name.substr(name.rfind('/'));
        } else {
            base = "cpu/bare_poll";
        }
        const Stats s = stats(values);
        const auto b = all.find(base);
        const double ratio =
            b == all.end() || b->second.empty() ? 0 : s.median / stats(b->second).median;
        std::printf("%-34s %12.3f %12.3f %12.3f %9.3f  %s\n", name.c_str(), s.median, s.p10, s.p90,
                    ratio, base.c_str());
    }
    std::printf("(latency in microseconds, copy in GB/s, cpu in cores; ratio = median / baseline "
                "median)\n");
}

} // namespace

// Registered here rather than with BENCHMARK_CAPTURE, which cannot name template instances.
void register_all() {
    // One registration per regime: many short waits, fewer 1 ms ones. Repetitions, for every
    // row, come from the command line (--benchmark_repetitions=10 with random interleaving:
    // tools/bench_report.py pairs repetition i of a row with repetition i of its baseline).
    for (const auto& [delay_us, iterations] : {std::pair{0, 2000}, std::pair{1000, 300}}) {
        const auto latency = [&](benchmark::internal::Benchmark* b) {
            b->Arg(delay_us)->Iterations(iterations)->UseManualTime();
        };
        latency(benchmark::RegisterBenchmark("latency/bare_poll", BM_latency_bare));
        latency(benchmark::RegisterBenchmark("latency/spin", BM_latency_scheduler<Spin>, "spin"));
        latency(benchmark::RegisterBenchmark(
            "latency/spin_then_yield", BM_latency_scheduler<SpinThenYield<>>, "spin_then_yield"));
        latency(benchmark::RegisterBenchmark(
            "latency/spin_then_park", BM_latency_scheduler<SpinThenPark<>>, "spin_then_park"));
    }
    // Repetitions come from the command line (--benchmark_repetitions), so that interleaved
    // repetitions pair up with their baseline's; real time, because the pool's helper thread
    // works outside the calling thread's CPU time.
    const auto copy = [](const char* side, auto&& fn, auto... args) {
        benchmark::RegisterBenchmark(copy_row(side).c_str(), fn, side, args...)
            ->MinTime(0.2)
            ->UseRealTime();
    };
    copy("memcpy", copy_baseline, RawCopy::memcpy_only);
    copy("memcpy_then_memset", copy_baseline, RawCopy::memcpy_then_memset);
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) {
        copy("fused_loop", copy_baseline, RawCopy::fused_loop);
    }
#endif
    copy("memcpy_rows", BM_copy_memcpy_rows);
    copy("scheduler_serial", BM_copy_scheduler<SerialExecutor>, SerialExecutor{});
    copy("scheduler_pool_1_helper", [](benchmark::State& state, const char* side) {
        BM_copy_scheduler<PoolExecutor>(state, side, PoolExecutor(1));
    });
    const auto cpu = [](benchmark::internal::Benchmark* b) { b->Iterations(1); };
    cpu(benchmark::RegisterBenchmark("cpu/bare_poll", BM_cpu_bare));
    cpu(benchmark::RegisterBenchmark("cpu/spin", BM_cpu_scheduler<Spin>, "spin"));
    cpu(benchmark::RegisterBenchmark("cpu/spin_then_yield", BM_cpu_scheduler<SpinThenYield<>>,
                                     "spin_then_yield"));
    cpu(benchmark::RegisterBenchmark("cpu/spin_then_park", BM_cpu_scheduler<SpinThenPark<>>,
                                     "spin_then_park"));
}

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    print_summary();
    return 0;
}
