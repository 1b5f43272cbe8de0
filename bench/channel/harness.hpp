#pragma once
// Shared pieces of the channel benchmarks: the mutex + condition-variable bounded queue baseline
// (docs/cann-contract/quality.md#baselines names it), a two-thread transfer timer, and percentiles.

#include <algorithm>
#include <atomic>
#include <benchmark/benchmark.h>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/channel.hpp>
#include <limits>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <thread>
#include <utility>
#include <vector>

namespace ferry::bench {

using clock = std::chrono::steady_clock;

// The failed attempts of spin_until on this thread so far (transfer_seconds reports them).
inline thread_local std::uint64_t spin_retries = 0;

// Retries `attempt` until it succeeds: a few CPU pauses, then a yield, so that a spinning side
// does not burn its whole time slice while the other side waits for a CPU (the bench machines
// have 2 shared cores). ferry and its baselines spin through this same loop.
template <typename Attempt>
void spin_until(Attempt attempt) {
    for (unsigned tries = 1; !attempt(); ++tries) {
        ++spin_retries;
        if (tries % 64 == 0) {
            std::this_thread::yield();
        } else {
            ferry::detail::cpu_relax();
        }
    }
}

// The queue people write by hand: one mutex, two condition variables, a ring of `capacity`.
template <typename T>
class LockedQueue {
public:
    explicit LockedQueue(std::size_t capacity) : ring_(capacity) {}

    void push(T value) {
        std::unique_lock lock(mutex_);
        not_full_.wait(lock, [&] { return count_ < ring_.size(); });
        ring_[(head_ + count_) % ring_.size()] = std::move(value);
        ++count_;
        lock.unlock();
        not_empty_.notify_one();
    }

    T pop() {
        std::unique_lock lock(mutex_);
        not_empty_.wait(lock, [&] { return count_ > 0; });
        T value = std::move(ring_[head_]);
        head_ = (head_ + 1) % ring_.size();
        --count_;
        lock.unlock();
        not_full_.notify_one();
        return value;
    }

private:
    std::mutex mutex_;
    std::condition_variable not_full_;
    std::condition_variable not_empty_;
    std::vector<T> ring_;
    std::size_t head_ = 0;
    std::size_t count_ = 0;
};

// The first two CPUs the calling thread may run on, or -1 where there is no second one.
inline std::pair<int, int> two_cpus() noexcept {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    std::pair<int, int> found{-1, -1};
    if (::pthread_getaffinity_np(::pthread_self(), sizeof allowed, &allowed) != 0) {
        return found;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE && found.second < 0; ++cpu) {
        if (CPU_ISSET(cpu, &allowed)) {
            (found.first < 0 ? found.first : found.second) = cpu;
        }
    }
    return found.second < 0 ? std::pair<int, int>{-1, -1} : found;
}

// Pins the calling thread to `cpu` (nothing for -1) and restores its previous mask on exit, so
// that the two benchmark threads sit on two different CPUs from the first message on
// (rigtorp's and atomic_queue's benchmarks pin the same way). Without it the scheduler starts
// the second thread next to the first and moves it after an unpredictable delay, which swung
// figures by 5x between runs on the 2-vCPU bench VM.
class PinnedToCpu {
public:
    explicit PinnedToCpu(int cpu) noexcept {
        if (cpu < 0 || ::pthread_getaffinity_np(::pthread_self(), sizeof previous_, &previous_) != 0) {
            return;
        }
        cpu_set_t only;
        CPU_ZERO(&only);
        CPU_SET(cpu, &only);
        pinned_ = ::pthread_setaffinity_np(::pthread_self(), sizeof only, &only) == 0;
    }
    ~PinnedToCpu() {
        if (pinned_) {
            (void)::pthread_setaffinity_np(::pthread_self(), sizeof previous_, &previous_);
        }
    }
    PinnedToCpu(const PinnedToCpu&) = delete;
    PinnedToCpu& operator=(const PinnedToCpu&) = delete;

private:
    cpu_set_t previous_{};
    bool pinned_ = false;
};

// How far apart the two pinned CPUs are at this moment: the round-trip time of one cache line
// bounced between two threads or two processes (k_round_trips times; one side leads, the other
// follows, each counting in its own member, so after a fork each process keeps its own count).
// The bench VM's two vCPUs are threads of a host whose scheduler moves them several times a
// minute: the round trip took about 27, 75 or 320 ns between two processes (145 or 560 ns between
// two threads, in another run), and a pipeline that copies through shared memory between two
// processes ran up to twenty times slower in the slowest placement. The harnesses record it around
// each timed transfer, so a report pairs only runs that saw the same placement
// (tools/bench_channel_plot.py, docs/performance/ipc.md).
class LineProbe {
public:
    static constexpr std::uint64_t k_round_trips = 2000;

    LineProbe() noexcept
        : page_(
              ::mmap(nullptr, k_page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)) {}
    // The page of a memory file (an exec'd peer inherits the descriptor): the file must hold
    // k_page bytes; an fd < 0 or a failed mapping gives a probe whose every round fails.
    explicit LineProbe(int fd) noexcept
        : page_(fd < 0 ? MAP_FAILED
                       : ::mmap(nullptr, k_page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) {}
    ~LineProbe() {
        if (page_ != MAP_FAILED) {
            ::munmap(page_, k_page);
        }
    }
    LineProbe(const LineProbe&) = delete;
    LineProbe& operator=(const LineProbe&) = delete;

    // The parent's side: nanoseconds per round trip, NaN when the peer did not answer in time.
    // The first round trip, which waits for the peer to arrive, is not timed.
    double lead() noexcept {
        auto start = clock::now();
        for (std::uint64_t i = 0; i <= k_round_trips; ++i) {
            word().store(led_ + 1, std::memory_order_release);
            if (!await(led_ + 2)) {
                return std::numeric_limits<double>::quiet_NaN();
            }
            led_ += 2;
            if (i == 0) {
                start = clock::now();
            }
        }
        return std::chrono::duration<double, std::nano>(clock::now() - start).count() /
               static_cast<double>(k_round_trips);
    }

    // The peer's side of the same probe; false when the parent did not lead in time.
    bool follow() noexcept {
        for (std::uint64_t i = 0; i <= k_round_trips; ++i) {
            if (!await(followed_ + 1)) {
                return false;
            }
            word().store(followed_ + 2, std::memory_order_release);
            followed_ += 2;
        }
        return true;
    }

    static constexpr std::size_t k_page = 4096;

private:
    static constexpr auto k_patience = std::chrono::seconds(10);

    std::atomic<std::uint64_t>& word() noexcept {
        return *static_cast<std::atomic<std::uint64_t>*>(page_);
    }
    bool await(std::uint64_t value) noexcept {
        if (page_ == MAP_FAILED) {
            return false;
        }
        const auto deadline = clock::now() + k_patience;
        for (unsigned tries = 1; word().load(std::memory_order_acquire) != value; ++tries) {
            if (tries % 4096 == 0 && clock::now() > deadline) {
                return false;
            }
            ferry::detail::cpu_relax();
        }
        return true;
    }

    void* page_;
    // The word's value after the probes this side has finished, for each side.
    std::uint64_t led_ = 0;
    std::uint64_t followed_ = 0;
};

// Where a timed helper's two threads ran: the LineProbe round trip just before and just after
// its timed part (NaN: not measured). Benchmarks store it as the counters line_before_ns and
// line_after_ns, which tools/bench_channel_plot.py uses to pair only like placements.
struct Placement {
    double before_ns = std::numeric_limits<double>::quiet_NaN();
    double after_ns = std::numeric_limits<double>::quiet_NaN();
};

// Failed attempts of spin_until per message over the timed part, on each side: how often the
// producer found the queue full and the consumer found it empty (docs/performance/channel.md).
struct Retries {
    double send_per_item = 0;
    double receive_per_item = 0;
};

inline void record_retries(benchmark::State& state, const Retries& retries) {
    state.counters["send_retries_per_item"] = retries.send_per_item;
    state.counters["receive_retries_per_item"] = retries.receive_per_item;
}

// Stores each measured probe of a placement as the iteration's counter (none not measured).
inline void record_placement(benchmark::State& state, const Placement& placement) {
    if (!std::isnan(placement.before_ns)) {
        state.counters["line_before_ns"] = placement.before_ns;
    }
    if (!std::isnan(placement.after_ns)) {
        state.counters["line_after_ns"] = placement.after_ns;
    }
}

// Both timed helpers pin their two threads to two CPUs, and first run an untimed warm-up of n / 4 messages (round trips) on the same two
// threads: a new thread often starts on its creator's core and is moved to an idle one only
// milliseconds later, which would otherwise be measured as part of the first few hundred
// thousand messages (it halved some figures on the 2-vCPU bench VM). ferry and every baseline
// go through these same helpers.

// Seconds to move `n` messages from this thread (send(i)) to a second thread (receive() ->
// value). The receiver's checksum is compared so the optimiser cannot drop the work and a lost
// message would show.
// With `placement`, a LineProbe runs between the two threads before and after the timed part;
// the time ends when the consumer reports its last receive (a flag), before the after-probe.
// With `retries`, the two sides' spin_until failures over the timed part, per message.
template <typename Send, typename Receive>
double transfer_seconds(std::uint64_t n, Send send, Receive receive, bool& checksum_ok,
                        Placement* placement = nullptr, Retries* retries = nullptr) {
    const std::uint64_t warmup = n / 4;
    std::atomic<bool> warm{false};
    std::atomic<bool> done{false};
    std::uint64_t warm_sum = 0;
    std::uint64_t sum = 0;
    std::uint64_t receive_retries = 0;
    LineProbe probe;
    const auto cpus = two_cpus();
    const PinnedToCpu producer_cpu(cpus.first);
    // The consumer works on its own copy of `receive` and of the counts: reading them through
    // references into this (the producer's) stack frame would share lines with the producer's
    // own variables on every message.
    std::thread consumer([&warm, &done, &warm_sum, &sum, &receive_retries, &probe,
                          probed = placement != nullptr, receive, warmup, n,
                          cpu = cpus.second]() mutable {
        const PinnedToCpu consumer_cpu(cpu);
        // Sums in registers, stored once at the end: a store per message into this (the
        // producer's) stack frame would share a line with the producer's own variables.
        std::uint64_t local = 0;
        for (std::uint64_t i = 0; i < warmup; ++i) {
            local += receive();
        }
        warm_sum = local;
        if (probed) {
            (void)probe.follow();
        }
        warm.store(true, std::memory_order_release);
        local = 0;
        const std::uint64_t retries_before = spin_retries;
        for (std::uint64_t i = 0; i < n; ++i) {
            local += receive();
        }
        sum = local;
        receive_retries = spin_retries - retries_before;
        done.store(true, std::memory_order_release);
        if (probed) {
            (void)probe.follow();
        }
    });
    for (std::uint64_t i = 0; i < warmup; ++i) {
        send(i);
    }
    if (placement != nullptr) {
        placement->before_ns = probe.lead();
    }
    while (!warm.load(std::memory_order_acquire)) {
        ferry::detail::cpu_relax();
    }
    const std::uint64_t send_retries_before = spin_retries;
    const auto start = clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
        send(i);
    }
    const std::uint64_t send_retries = spin_retries - send_retries_before;
    while (!done.load(std::memory_order_acquire)) {
        ferry::detail::cpu_relax();
    }
    const auto stop = clock::now();
    if (placement != nullptr) {
        placement->after_ns = probe.lead();
    }
    consumer.join();
    if (retries != nullptr && n != 0) {
        retries->send_per_item = static_cast<double>(send_retries) / static_cast<double>(n);
        retries->receive_per_item = static_cast<double>(receive_retries) / static_cast<double>(n);
    }
    checksum_ok = checksum_ok && sum == n * (n - 1) / 2 &&
                  warm_sum == (warmup == 0 ? 0 : warmup * (warmup - 1) / 2);
    return std::chrono::duration<double>(stop - start).count();
}

// Seconds for `n` round trips: this thread sends i and waits for the echo; a second thread echoes.
// With `placement`, a LineProbe runs before and after the timed round trips.
template <typename Ping, typename Echo>
double round_trip_seconds(std::uint64_t n, Ping ping, Echo echo, Placement* placement = nullptr) {
    const std::uint64_t warmup = n / 4;
    LineProbe probe;
    const auto cpus = two_cpus();
    const PinnedToCpu pinger_cpu(cpus.first);
    std::thread echoer(
        [echo, &probe, probed = placement != nullptr, warmup, n, cpu = cpus.second]() mutable {
            const PinnedToCpu echoer_cpu(cpu);
            for (std::uint64_t i = 0; i < warmup; ++i) {
                echo();
            }
            if (probed) {
                (void)probe.follow();
            }
            for (std::uint64_t i = 0; i < n; ++i) {
                echo();
            }
            if (probed) {
                (void)probe.follow();
            }
        });
    for (std::uint64_t i = 0; i < warmup; ++i) {
        ping(i);
    }
    if (placement != nullptr) {
        placement->before_ns = probe.lead();
    }
    const auto start = clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
        ping(i);
    }
    const auto stop = clock::now();
    if (placement != nullptr) {
        placement->after_ns = probe.lead();
    }
    echoer.join();
    return std::chrono::duration<double>(stop - start).count();
}

// The q-quantile (0..1) of `samples` (sorted in place), nearest rank.
inline double quantile(std::vector<double>& samples, double q) {
    std::sort(samples.begin(), samples.end());
    const auto rank = static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1) + 0.5);
    return samples[std::min(rank, samples.size() - 1)];
}

// Seconds to move `n` values through a ferry channel `ch` between two threads
// (transfer_seconds): try_send / try_receive spinning, or (Blocking) send / receive.
template <bool Blocking, typename Channel>
double channel_transfer_seconds(Channel& ch, std::uint64_t n, bool& checksum_ok,
                                Placement* placement = nullptr, Retries* retries = nullptr) {
    const auto send = [&ch](std::uint64_t v) {
        if constexpr (Blocking) {
            (void)ch.send(std::move(v));
        } else {
            spin_until([&] { return ch.try_send(std::uint64_t{v}) == ferry::Status::ok; });
        }
    };
    const auto receive = [&ch] {
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
    return transfer_seconds(n, send, receive, checksum_ok, placement, retries);
}

} // namespace ferry::bench
