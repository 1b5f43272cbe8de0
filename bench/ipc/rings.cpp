// ipc::Channel against a raw ring in shared memory, the same two processes (harness.hpp):
//   spsc/ferry/1024       ipc::Channel<uint64_t, 1024>, blocking send / receive
//   spsc/ferry_spin/1024  the same channel, try_send / try_receive spinning (spin_until)
//   spsc/raw/1024         boost::lockfree::spsc_queue<uint64_t, capacity<1024>> placed in a
//                         MAP_SHARED mapping made before the fork, push / pop spinning
//   mpmc/ferry/1024       ipc::Channel<uint64_t, 1024, mpmc>, blocking send / receive
//   mpmc/ferry_spin/1024  the same, try_send / try_receive spinning
//   mpmc/raw/1024         Vyukov's bounded MPMC queue (a sequence per 16-byte cell, a CAS per
//                         operation; no waiting, no checks) in a MAP_SHARED mapping, spinning
// One producer (this process) and one consumer (the forked peer) in every row: the mpmc rows
// price the multi-producer protocol, not contention. Each moves k_items after a warm-up, with
// the harness's checksum.
// For profiles, not compared (tools/bench_ipc_plot.py knows no `ring_local` measure):
//   ring_local/ferry|ferry_try/1024  ipc::Channel<uint64_t, 1024> with both ends in this
//                         process: 512 items sent, then received, 2000 times, blocking send /
//                         receive or try_send / try_receive. No call ever waits, so callgrind's
//                         instructions per item (--toggle-collect='*local_rounds*') are the fast
//                         path's alone, and deterministic (docs/performance/ipc.md).
//   ring_local/ferry_empty/1024  10^6 try_receive on an empty Channel<uint64_t, 1024>: the
//                         cost of one failed try of a spinning receiver, timed (its clock read
//                         is in the vDSO, which callgrind does not count).
#include "messages.hpp"

#include <atomic>
#include <benchmark/benchmark.h>
#include <boost/lockfree/spsc_queue.hpp>
#include <cstddef>
#include <cstdint>
#include <ferry/ipc/channel.hpp>
#include <new>
#include <string>
#include <sys/mman.h>

namespace {
using ferry::bench::object_name;
using ferry::bench::open_channel;
using ferry::bench::record;
using ferry::bench::spin_until;
using ferry::bench::transfer_across;

constexpr std::uint64_t k_items = 1'000'000;
constexpr std::size_t k_capacity = 1024;

// Vyukov's bounded MPMC queue, as people write it: the raw mpmc baseline.
template <std::size_t C>
class RawMpmc {
public:
    RawMpmc() noexcept {
        for (std::size_t i = 0; i < C; ++i) {
            cells_[i].sequence.store(i, std::memory_order_relaxed);
        }
    }
    bool push(std::uint64_t value) noexcept {
        std::uint64_t pos = tail_.load(std::memory_order_relaxed);
        for (;;) {
            Cell& cell = cells_[pos % C];
            const std::uint64_t seq = cell.sequence.load(std::memory_order_acquire);
            const auto diff = static_cast<std::int64_t>(seq - pos);
            if (diff == 0) {
                if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    cell.value = value;
                    cell.sequence.store(pos + 1, std::memory_order_release);
                    return true;
                }
            } else if (diff < 0) {
                return false;
            } else {
                pos = tail_.load(std::memory_order_relaxed);
            }
        }
    }
    bool pop(std::uint64_t& value) noexcept {
        std::uint64_t pos = head_.load(std::memory_order_relaxed);
        for (;;) {
            Cell& cell = cells_[pos % C];
            const std::uint64_t seq = cell.sequence.load(std::memory_order_acquire);
            const auto diff = static_cast<std::int64_t>(seq - (pos + 1));
            if (diff == 0) {
                if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    value = cell.value;
                    cell.sequence.store(pos + C, std::memory_order_release);
                    return true;
                }
            } else if (diff < 0) {
                return false;
            } else {
                pos = head_.load(std::memory_order_relaxed);
            }
        }
    }

private:
    struct Cell {
        std::atomic<std::uint64_t> sequence;
        std::uint64_t value;
    };
    alignas(64) std::atomic<std::uint64_t> tail_{0};
    alignas(64) std::atomic<std::uint64_t> head_{0};
    alignas(64) Cell cells_[C];
};

// One Queue constructed in an anonymous MAP_SHARED mapping: the forked peer inherits it at the
// same address.
template <typename Queue>
class SharedMapping {
public:
    SharedMapping()
        : memory_(::mmap(nullptr, sizeof(Queue), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                         -1, 0)) {
        if (memory_ != MAP_FAILED) {
            queue_ = ::new (memory_) Queue();
        }
    }
    ~SharedMapping() {
        if (queue_ != nullptr) {
            queue_->~Queue();
            ::munmap(memory_, sizeof(Queue));
        }
    }
    SharedMapping(const SharedMapping&) = delete;
    SharedMapping& operator=(const SharedMapping&) = delete;
    Queue* get() const noexcept { return queue_; }

private:
    void* memory_;
    Queue* queue_ = nullptr;
};

void finish(benchmark::State& state) {
    state.SetItemsProcessed(static_cast<std::int64_t>(k_items) * state.iterations());
}

template <typename Queue>
void raw_ring(benchmark::State& state) {
    for (auto _ : state) {
        SharedMapping<Queue> mapping;
        Queue* queue = mapping.get();
        if (queue == nullptr) {
            state.SkipWithError("mmap failed");
            break;
        }
        const auto timed = transfer_across(
            k_items, [queue](std::uint64_t v) { spin_until([&] { return queue->push(v); }); },
            [queue] {
                return [queue] {
                    std::uint64_t v = 0;
                    spin_until([&] { return queue->pop(v); });
                    return v;
                };
            });
        if (!record(state, timed)) {
            break;
        }
    }
    finish(state);
}

template <typename Channel, bool Spin>
void ferry_channel(benchmark::State& state) {
    for (auto _ : state) {
        const std::string name = object_name("ring");
        auto ch = Channel::create(name);
        if (!ch) {
            state.SkipWithError(ch.error().message.c_str());
            break;
        }
        const auto timed = transfer_across(
            k_items,
            [&](std::uint64_t v) {
                if constexpr (Spin) {
                    spin_until([&] { return ch->try_send(v) == ferry::Status::ok; });
                } else {
                    (void)ch->send(v);
                }
            },
            [&] {
                return [peer = open_channel<Channel>(name)] {
                    if constexpr (Spin) {
                        std::uint64_t v = 0;
                        spin_until(
                            [&] { return peer->receive(v, ferry::no_wait) == ferry::Status::ok; });
                        return v;
                    } else {
                        return peer->receive().value_or(0);
                    }
                };
            });
        if (!record(state, timed)) {
            break;
        }
    }
    finish(state);
}

// The loop ring_local runs, its own function so that callgrind can collect exactly it.
template <bool Blocking, typename Channel>
[[gnu::noinline]] std::uint64_t local_rounds(Channel& ch, std::uint64_t rounds) {
    constexpr std::uint64_t k_batch = k_capacity / 2;
    std::uint64_t sum = 0;
    for (std::uint64_t r = 0; r < rounds; ++r) {
        for (std::uint64_t i = 0; i < k_batch; ++i) {
            (void)(Blocking ? ch.send(i) : ch.try_send(i));
        }
        for (std::uint64_t i = 0; i < k_batch; ++i) {
            std::uint64_t v = 0;
            (void)(Blocking ? ch.receive(v) : ch.receive(v, ferry::no_wait));
            sum += v;
        }
    }
    return sum;
}

template <typename Channel, bool Blocking>
void ferry_local(benchmark::State& state) {
    constexpr std::uint64_t k_rounds = 2000;
    auto ch = Channel::create(object_name("local"));
    if (!ch) {
        state.SkipWithError(ch.error().message.c_str());
        return;
    }
    std::uint64_t sum = 0;
    for (auto _ : state) {
        sum += local_rounds<Blocking>(*ch, k_rounds);
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(static_cast<std::int64_t>(k_rounds * k_capacity / 2) *
                            state.iterations());
}

// The loop ring_local/ferry_empty runs: `tries` no-wait receives on an empty channel, each a
// failed try that goes through the peer check's rate limit (what a spinning receiver pays while
// it waits); returns how many answered empty.
template <typename Channel>
[[gnu::noinline]] std::uint64_t failed_tries(Channel& ch, std::uint64_t tries) {
    std::uint64_t empty = 0;
    for (std::uint64_t i = 0; i < tries; ++i) {
        std::uint64_t v = 0;
        empty += ch.receive(v, ferry::no_wait) == ferry::Status::empty ? 1 : 0;
    }
    return empty;
}

template <typename Channel>
void ferry_local_empty(benchmark::State& state) {
    constexpr std::uint64_t k_tries = 1'000'000;
    auto ch = Channel::create(object_name("empty"));
    if (!ch) {
        state.SkipWithError(ch.error().message.c_str());
        return;
    }
    for (auto _ : state) {
        if (failed_tries(*ch, k_tries) != k_tries) {
            state.SkipWithError("a receive on an empty channel did not answer empty");
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_tries) * state.iterations());
}

using SpscChannel = ferry::ipc::Channel<std::uint64_t, k_capacity>;
using MpmcChannel = ferry::ipc::Channel<std::uint64_t, k_capacity, ferry::mpmc>;
using BoostSpsc = boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<k_capacity>>;

BENCHMARK_TEMPLATE(ferry_channel, SpscChannel, false)
    ->Name("spsc/ferry/1024")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(ferry_channel, SpscChannel, true)
    ->Name("spsc/ferry_spin/1024")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(raw_ring, BoostSpsc)->Name("spsc/raw/1024")->UseManualTime()->Iterations(1);
BENCHMARK_TEMPLATE(ferry_channel, MpmcChannel, false)
    ->Name("mpmc/ferry/1024")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(ferry_channel, MpmcChannel, true)
    ->Name("mpmc/ferry_spin/1024")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(raw_ring, RawMpmc<k_capacity>)
    ->Name("mpmc/raw/1024")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(ferry_local, SpscChannel, true)->Name("ring_local/ferry/1024")->Iterations(1);
BENCHMARK_TEMPLATE(ferry_local, SpscChannel, false)
    ->Name("ring_local/ferry_try/1024")
    ->Iterations(1);
BENCHMARK_TEMPLATE(ferry_local_empty, SpscChannel)->Name("ring_local/ferry_empty/1024");
} // namespace
