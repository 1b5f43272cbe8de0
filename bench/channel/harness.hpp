#pragma once
// Shared pieces of the channel benchmarks: the mutex + condition-variable bounded queue baseline
// (docs/cann-contract/quality.md#baselines names it), a two-thread transfer timer, and percentiles.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/channel.hpp>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <thread>
#include <utility>
#include <vector>

namespace ferry::bench {

using clock = std::chrono::steady_clock;

// Retries `attempt` until it succeeds: a few CPU pauses, then a yield, so that a spinning side
// does not burn its whole time slice while the other side waits for a CPU (the bench machines
// have 2 shared cores). ferry and its baselines spin through this same loop.
template <typename Attempt>
void spin_until(Attempt attempt) {
    for (unsigned tries = 1; !attempt(); ++tries) {
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

// Both timed helpers pin their two threads to two CPUs, and first run an untimed warm-up of n / 4 messages (round trips) on the same two
// threads: a new thread often starts on its creator's core and is moved to an idle one only
// milliseconds later, which would otherwise be measured as part of the first few hundred
// thousand messages (it halved some figures on the 2-vCPU bench VM). ferry and every baseline
// go through these same helpers.

// Seconds to move `n` messages from this thread (send(i)) to a second thread (receive() ->
// value). The receiver's checksum is compared so the optimiser cannot drop the work and a lost
// message would show.
template <typename Send, typename Receive>
double transfer_seconds(std::uint64_t n, Send send, Receive receive, bool& checksum_ok) {
    const std::uint64_t warmup = n / 4;
    std::atomic<bool> warm{false};
    std::uint64_t warm_sum = 0;
    std::uint64_t sum = 0;
    const auto cpus = two_cpus();
    const PinnedToCpu producer_cpu(cpus.first);
    // The consumer works on its own copy of `receive` and of the counts: reading them through
    // references into this (the producer's) stack frame would share lines with the producer's
    // own variables on every message.
    std::thread consumer([&warm, &warm_sum, &sum, receive, warmup, n, cpu = cpus.second]() mutable {
        const PinnedToCpu consumer_cpu(cpu);
        // Sums in registers, stored once at the end: a store per message into this (the
        // producer's) stack frame would share a line with the producer's own variables.
        std::uint64_t local = 0;
        for (std::uint64_t i = 0; i < warmup; ++i) {
            local += receive();
        }
        warm_sum = local;
        warm.store(true, std::memory_order_release);
        local = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            local += receive();
        }
        sum = local;
    });
    for (std::uint64_t i = 0; i < warmup; ++i) {
        send(i);
    }
    while (!warm.load(std::memory_order_acquire)) {
        ferry::detail::cpu_relax();
    }
    const auto start = clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
        send(i);
    }
    consumer.join();
    const auto stop = clock::now();
    checksum_ok = checksum_ok && sum == n * (n - 1) / 2 &&
                  warm_sum == (warmup == 0 ? 0 : warmup * (warmup - 1) / 2);
    return std::chrono::duration<double>(stop - start).count();
}

// Seconds for `n` round trips: this thread sends i and waits for the echo; a second thread echoes.
template <typename Ping, typename Echo>
double round_trip_seconds(std::uint64_t n, Ping ping, Echo echo) {
    const std::uint64_t warmup = n / 4;
    const auto cpus = two_cpus();
    const PinnedToCpu pinger_cpu(cpus.first);
    std::thread echoer([echo, warmup, n, cpu = cpus.second]() mutable {
        const PinnedToCpu echoer_cpu(cpu);
        for (std::uint64_t i = 0; i < warmup + n; ++i) {
            echo();
        }
    });
    for (std::uint64_t i = 0; i < warmup; ++i) {
        ping(i);
    }
    const auto start = clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
        ping(i);
    }
    const auto stop = clock::now();
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
double channel_transfer_seconds(Channel& ch, std::uint64_t n, bool& checksum_ok) {
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
    return transfer_seconds(n, send, receive, checksum_ok);
}

} // namespace ferry::bench
