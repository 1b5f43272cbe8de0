#pragma once
// Shared pieces of the channel benchmarks: the mutex + condition-variable bounded queue baseline
// (spec/quality.md names it), a two-thread transfer timer, and percentiles.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/channel.hpp>
#include <mutex>
#include <thread>
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

// Seconds to move `n` messages from this thread (send(i)) to a second thread (receive() ->
// value). The receiver's checksum is compared so the optimiser cannot drop the work and a lost
// message would show.
template <typename Send, typename Receive>
double transfer_seconds(std::uint64_t n, Send send, Receive receive, bool& checksum_ok) {
    std::atomic<bool> go{false};
    std::uint64_t sum = 0;
    std::thread consumer([&] {
        while (!go.load(std::memory_order_acquire)) {
        }
        for (std::uint64_t i = 0; i < n; ++i) {
            sum += receive();
        }
    });
    const auto start = clock::now();
    go.store(true, std::memory_order_release);
    for (std::uint64_t i = 0; i < n; ++i) {
        send(i);
    }
    consumer.join();
    const auto stop = clock::now();
    checksum_ok = checksum_ok && sum == n * (n - 1) / 2;
    return std::chrono::duration<double>(stop - start).count();
}

// Seconds for `n` round trips: this thread sends i and waits for the echo; a second thread echoes.
template <typename Ping, typename Echo>
double round_trip_seconds(std::uint64_t n, Ping ping, Echo echo) {
    std::thread echoer([&] {
        for (std::uint64_t i = 0; i < n; ++i) {
            echo();
        }
    });
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

} // namespace ferry::bench
