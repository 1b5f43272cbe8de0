// Attention/FFN rows between processes, through an ipc::SharedWindow (docs/processes.md,
// Attention/FFN across processes), each against a baseline measured in the same run:
//   afd_wake/doorbell/after_1ms  ready -> return of the FFN scheduler waiting with DoorbellPark
//                                (its defaults: 64 polls, then parks up to 20 ms at a time) on the
//                                window's doorbell. The forked peer (the attention side) waits
//                                until the scheduler has started waiting, lets 1 ms pass, stamps
//                                the time, publishes the flags through its own mapping and rings.
//                                The figure is stamp -> the scheduler's return (CLOCK_MONOTONIC
//                                is one clock for both processes).
//   afd_wake/doorbell_park5ms/after_1ms  the same with max_park 5 ms: only the ring ends the
//                                park, as with the default (a 1 ms bound, the former default,
//                                ended parks about when the ring came and cost the wake-up).
//   afd_wake/futex/after_1ms     the baseline: a bare shared futex in the same window, the waiter
//                                parked at once, the peer stores the word and wakes it: the least
//                                a cross-process wake-up costs.
//     Per repetition k_wake_rounds wake-ups (after an untimed warm-up); the figure is their
//     median (p50_us), with their p99 alongside.
//   afd_cpu/doorbell/idle_200ms  CPU time of this process while the scheduler waits 200 ms with
//                                DoorbellPark for flags nobody sets (its timeout ends the wait),
//                                in cores (CPU seconds / wall seconds: 1.0 is one core busy).
//   afd_cpu/spin/idle_200ms      the baseline: the same wait with the Spin policy (a core busy).
//   afd_copy/window/A64_M3_BS256_K9  output bandwidth of one all-sync call (589,824 bytes of
//                                expert ids, as bench/afd's copy rows) whose context buffers all
//                                live in the shared window, in this process's mapping.
//   afd_copy/memcpy/A64_M3_BS256_K9  the baseline: memcpy of the same bytes between two
//                                page-aligned buffers.
#include "messages.hpp"

#include <algorithm>
#include <atomic>
#include <benchmark/benchmark.h>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <ferry/afd.hpp>
#include <ferry/channel/detail/futex.hpp>
#include <ferry/core/cpu_relax.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/ipc/window.hpp>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {
using namespace ferry::afd;
using ferry::bench::clock;
using ferry::bench::object_name;
using ferry::detail::FutexScope;

constexpr std::uint64_t k_wake_rounds = 300;
constexpr auto k_idle = std::chrono::milliseconds(1);
// How long a waiter waits for a peer that may have died before the run is declared void.
constexpr auto k_patience = std::chrono::seconds(60);
constexpr Geometry k_small{2, 2, 1, 1};
constexpr Geometry k_large{64, 3, 256, 9};
// sync_group_size = session_num: one group (all-sync mode).
constexpr std::int32_t all_sync(const Geometry& g) {
    return static_cast<std::int32_t>(g.session_num);
}
constexpr std::size_t k_large_bytes = std::size_t{64} * 256 * 9 * 4;

std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now().time_since_epoch())
        .count();
}

// The handshake words both processes share, first in the window's data area.
struct alignas(64) Control {
    std::int64_t waiting = -1; // the round whose wait has begun (the waiter stores it)
    std::int64_t stamp_ns = 0; // when the peer published (the peer stores it)
    std::uint32_t word = 0;    // the bare futex baseline's futex word
};

std::size_t round_up(std::size_t n) noexcept {
    return (n + 63) / 64 * 64;
}

// Where an FFN context's buffers lie in the window: offsets from the data area's start. Both
// processes compute the same layout from the geometry.
struct Layout {
    std::size_t info = 0, data = 0, layer = 0, session = 0, micro_batch = 0, experts = 0;
    std::size_t total = 0;
    explicit Layout(const Geometry& g) {
        std::size_t at = sizeof(Control);
        const auto take = [&](std::size_t bytes) {
            return std::exchange(at, at + round_up(bytes));
        };
        info = take(*ffn_token_info_size(g));
        data = take(512);
        layer = take(4 * g.session_num);
        session = take(4 * g.session_num);
        micro_batch = take(4 * g.session_num);
        experts = take(*expert_ids_buffer_size(g));
        total = at;
    }
};

// The FFN side: the window (owner) and a context whose buffers are all inside it, laid out as
// bench/afd's in-process Ffn.
struct FfnWindow {
    Geometry g;
    Layout layout;
    ferry::ipc::SharedWindow window;
    ContextImage ctx;

    FfnWindow(const std::string& name, Geometry geometry)
        : g(geometry), layout(g), window(create(name, layout.total)) {
        const std::uint64_t base = window.owner_base();
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
        s.ffn.token_info_buf = base + layout.info;
        s.ffn.token_info_buf_size = *ffn_token_info_size(g);
        s.ffn.token_data_buf = base + layout.data;
        s.ffn.token_data_buf_size = 512;
        s.ffn.layer_ids_buf = base + layout.layer;
        s.ffn.layer_ids_buf_size = 4 * g.session_num;
        s.ffn.session_ids_buf = base + layout.session;
        s.ffn.session_ids_buf_size = 4 * g.session_num;
        s.ffn.micro_batch_ids_buf = base + layout.micro_batch;
        s.ffn.micro_batch_ids_buf_size = 4 * g.session_num;
        s.ffn.expert_ids_buf = base + layout.experts;
        s.ffn.expert_ids_buf_size = *expert_ids_buffer_size(g);
        ctx.view().store(s);
        new (window.data().data()) Control{}; // waiting = -1: no wait has begun
        table(window.data().data(), layout, g).initialize();
    }
    static ferry::ipc::SharedWindow create(const std::string& name, std::size_t bytes) {
        auto w = ferry::ipc::SharedWindow::create(name, bytes);
        if (!w) {
            throw std::runtime_error(w.error().message);
        }
        return std::move(*w);
    }
    static FfnDescriptorTable table(std::byte* data, const Layout& layout, const Geometry& g) {
        return {data + layout.info, g};
    }
    Control& control() noexcept { return *reinterpret_cast<Control*>(window.data().data()); }
    // Sets every session's flag of micro batch `mb` in the mapping `data` (either process's).
    static void publish(std::byte* data, const Layout& layout, const Geometry& g,
                        std::uint32_t mb) noexcept {
        for (std::uint32_t s = 0; s < g.session_num; ++s) {
            table(data, layout, g).at(s, mb).set_flag(1);
        }
    }
};

std::atomic_ref<std::int64_t> waiting_of(Control& c) noexcept {
    return std::atomic_ref(c.waiting);
}
std::atomic_ref<std::int64_t> stamp_of(Control& c) noexcept {
    return std::atomic_ref(c.stamp_ns);
}
std::atomic_ref<std::uint32_t> word_of(Control& c) noexcept {
    return std::atomic_ref(c.word);
}

// DoorbellPark that tells the peer, at its first pause of each wait, that the wait has begun
// (each schedule_once copies the policy, so `announced` is per wait).
struct Announcing {
    Control* control = nullptr;
    std::int64_t round = 0;
    DoorbellPark inner;
    bool announced = false;

    void announce() noexcept {
        if (!announced) {
            announced = true;
            waiting_of(*control).store(round, std::memory_order_release);
        }
    }
    void prepare() noexcept { inner.prepare(); }
    void pause_until(Doorbell::clock::time_point deadline) noexcept {
        announce();
        inner.pause_until(deadline);
    }
    void pause() noexcept {
        announce();
        inner.pause();
    }
    void finish() noexcept { inner.finish(); }
};
static_assert(WaitPolicy<Announcing>);

// The peer of a wake-up benchmark: opens the window by name; per round waits until the waiter's
// wait has begun, idles k_idle, stamps and calls publish(round, mapping, window).
template <typename Publish>
bool publish_rounds(const std::string& name, std::uint64_t rounds, Publish publish) {
    auto opened = ferry::ipc::SharedWindow::open(name);
    if (!opened) {
        return false;
    }
    std::byte* data = opened->data().data();
    Control& control = *reinterpret_cast<Control*>(data);
    for (std::uint64_t i = 0; i < rounds; ++i) {
        const auto round = static_cast<std::int64_t>(i);
        while (waiting_of(control).load(std::memory_order_acquire) < round) {
            ferry::detail::cpu_relax();
        }
        const auto until = clock::now() + k_idle;
        while (clock::now() < until) {
        }
        stamp_of(control).store(now_ns(), std::memory_order_relaxed);
        publish(i, data, opened->window()); // release: orders the stamp before the waiter's return
    }
    return true;
}

// Runs `wait(round)` for warm-up + k_wake_rounds rounds against a peer publishing with
// `publish`; records the median and p99 of stamp -> return over the timed rounds.
template <typename Wait, typename Publish>
void wake_rounds(benchmark::State& state, FfnWindow& ffn, Wait wait, Publish publish) {
    const std::uint64_t warmup = k_wake_rounds / 10;
    const std::uint64_t total = warmup + k_wake_rounds;
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    const std::string name = ffn.window.name();
    ferry::bench::Peer peer(cpus.second, [&](auto report) {
        report('r');
        return publish_rounds(name, total, publish);
    });
    if (!peer.await('r')) {
        state.SkipWithError(peer.finish().c_str());
        return;
    }
    std::vector<double> us;
    us.reserve(k_wake_rounds);
    for (std::uint64_t i = 0; i < total; ++i) {
        wait(static_cast<std::int64_t>(i));
        const std::int64_t returned = now_ns();
        const std::int64_t stamped = stamp_of(ffn.control()).load(std::memory_order_relaxed);
        if (i >= warmup) {
            us.push_back(static_cast<double>(returned - stamped) / 1e3);
        }
    }
    if (const std::string error = peer.finish(); !error.empty()) {
        state.SkipWithError(error.c_str());
        return;
    }
    std::sort(us.begin(), us.end());
    state.counters["p50_us"] = us[us.size() / 2];
    state.counters["p99_us"] = us[us.size() * 99 / 100];
    state.counters["samples"] = static_cast<double>(us.size());
}

// `max_park`: DoorbellPark's bound on one park. With the default (20 ms) and with 5 ms only the
// ring can end the park in time; a 1 ms bound would end it about when the peer publishes.
void wake_doorbell(benchmark::State& state, std::chrono::microseconds max_park) {
    for (auto _ : state) {
        FfnWindow ffn(object_name("afd"), k_small);
        bool served = true;
        wake_rounds(
            state, ffn,
            [&](std::int64_t round) {
                GroupSyncScheduler<Announcing> scheduler(Announcing{
                    &ffn.control(), round,
                    DoorbellPark(ffn.window.doorbell(), DoorbellPark::k_default_spin, max_park)});
                const auto out = scheduler.schedule_once(ffn.ctx.bytes.data(), all_sync(k_small),
                                                         std::nullopt, k_patience);
                served = out.exit == ScheduleExit::served && served;
            },
            [layout = ffn.layout](std::uint64_t i, std::byte* data, const Window& window) {
                FfnWindow::publish(data, layout, k_small, static_cast<std::uint32_t>(i % 2));
                window.ring();
            });
        if (!served) {
            state.SkipWithError("the scheduler returned without the published micro batch");
        }
    }
}

void afd_wake_doorbell(benchmark::State& state) {
    wake_doorbell(state, DoorbellPark::k_default_max_park);
}

void afd_wake_doorbell_parked(benchmark::State& state) {
    wake_doorbell(state, std::chrono::milliseconds(5));
}

// The baseline's waiter: parks on the word at once until it holds `want` (false after
// k_patience: the peer is gone).
bool futex_wait_for(Control& control, std::uint32_t want) noexcept {
    const auto deadline = ferry::detail::futex_clock::now() + k_patience;
    for (std::uint32_t seen; (seen = word_of(control).load(std::memory_order_acquire)) != want;) {
        if (ferry::detail::futex_clock::now() >= deadline) {
            return false;
        }
        ferry::detail::futex_wait_until(&control.word, seen, deadline, FutexScope::shared);
    }
    return true;
}

void afd_wake_futex(benchmark::State& state) {
    for (auto _ : state) {
        FfnWindow ffn(object_name("afd"), k_small);
        Control& control = ffn.control();
        bool woken = true;
        wake_rounds(
            state, ffn,
            [&](std::int64_t round) {
                waiting_of(control).store(round, std::memory_order_release);
                woken = futex_wait_for(control, static_cast<std::uint32_t>(round + 1)) && woken;
            },
            [](std::uint64_t i, std::byte* data, const Window&) {
                Control& c = *reinterpret_cast<Control*>(data);
                word_of(c).store(static_cast<std::uint32_t>(i + 1), std::memory_order_release);
                ferry::detail::futex_wake(&c.word, INT_MAX, FutexScope::shared);
            });
        if (!woken) {
            state.SkipWithError("the peer did not wake the futex in time");
        }
    }
}

double process_cpu_seconds() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// CPU / wall over one 200 ms wait that times out (nobody publishes).
template <typename Scheduler>
void idle_cpu(benchmark::State& state, Scheduler& scheduler, FfnWindow& ffn) {
    const auto wall0 = clock::now();
    const double cpu0 = process_cpu_seconds();
    const auto out = scheduler.schedule_once(ffn.ctx.bytes.data(), all_sync(k_small), std::nullopt,
                                             ferry::Timeout(std::chrono::milliseconds(200)));
    const double cpu = process_cpu_seconds() - cpu0;
    const double wall = std::chrono::duration<double>(clock::now() - wall0).count();
    if (out.exit != ScheduleExit::timed_out) {
        state.SkipWithError("the idle wait did not time out");
        return;
    }
    state.counters["cores"] = cpu / wall;
}

void afd_cpu_doorbell(benchmark::State& state) {
    for (auto _ : state) {
        FfnWindow ffn(object_name("afd"), k_small);
        GroupSyncScheduler<DoorbellPark> scheduler{DoorbellPark(ffn.window.doorbell())};
        idle_cpu(state, scheduler, ffn);
    }
}

void afd_cpu_spin(benchmark::State& state) {
    for (auto _ : state) {
        FfnWindow ffn(object_name("afd"), k_small);
        GroupSyncScheduler<Spin> scheduler;
        idle_cpu(state, scheduler, ffn);
    }
}

// Calls per repetition of the copy rows: about 1.2 GB moved.
constexpr std::uint64_t k_copy_calls = 2000;

void afd_copy_window(benchmark::State& state) {
    FfnWindow ffn(object_name("afd"), k_large);
    GroupSyncScheduler<Spin> scheduler;
    std::byte* data = ffn.window.data().data();
    for (auto _ : state) {
        for (std::uint64_t i = 0; i < k_copy_calls; ++i) {
            const auto mb = static_cast<std::uint32_t>(i % k_large.micro_batch_num);
            FfnWindow::publish(data, ffn.layout, k_large, mb); // re-arm what the last call took
            if (scheduler.schedule_once(ffn.ctx.bytes.data(), all_sync(k_large)).out_num !=
                k_large.session_num) {
                state.SkipWithError("scheduler returned no rows");
                return;
            }
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(k_copy_calls * k_large_bytes) *
                            state.iterations());
}

void afd_copy_memcpy(benchmark::State& state) {
    std::vector<std::byte> from_storage;
    std::vector<std::byte> to_storage;
    std::byte* const from = ferry::bench::page_aligned(from_storage, k_large_bytes);
    std::byte* const to = ferry::bench::page_aligned(to_storage, k_large_bytes);
    for (auto _ : state) {
        for (std::uint64_t i = 0; i < k_copy_calls; ++i) {
            from[i % k_large_bytes] = static_cast<std::byte>(i);
            std::memcpy(to, from, k_large_bytes);
            benchmark::ClobberMemory();
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(k_copy_calls * k_large_bytes) *
                            state.iterations());
}

BENCHMARK(afd_wake_doorbell)->Name("afd_wake/doorbell/after_1ms")->UseRealTime()->Iterations(1);
BENCHMARK(afd_wake_doorbell_parked)
    ->Name("afd_wake/doorbell_park5ms/after_1ms")
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK(afd_wake_futex)->Name("afd_wake/futex/after_1ms")->UseRealTime()->Iterations(1);
BENCHMARK(afd_cpu_doorbell)->Name("afd_cpu/doorbell/idle_200ms")->UseRealTime()->Iterations(1);
BENCHMARK(afd_cpu_spin)->Name("afd_cpu/spin/idle_200ms")->UseRealTime()->Iterations(1);
BENCHMARK(afd_copy_window)->Name("afd_copy/window/A64_M3_BS256_K9")->UseRealTime()->Iterations(1);
BENCHMARK(afd_copy_memcpy)->Name("afd_copy/memcpy/A64_M3_BS256_K9")->UseRealTime()->Iterations(1);
} // namespace
