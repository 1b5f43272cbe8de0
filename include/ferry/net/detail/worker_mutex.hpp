#pragma once
// The Node's one lock (every UCX call is made with it held): a recursive mutex that tells its
// holder when another thread is waiting for it, and lets a thread that is about to take it
// again wait until the waiting thread has had it (docs/multi-node.md, A worker that never runs
// dry). The progress thread drains the worker with the lock held; a worker that never runs dry
// (a peer sending faster than the handlers take it) would otherwise keep it there, and a mutex
// promises no turn: on a loaded machine a caller woken by the unlock is scheduled only after the
// thread has taken the lock back, every time, and its send waits until the flood ends.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ferry/channel/detail/futex.hpp>
#include <mutex>

namespace ferry::net::detail {

class WorkerMutex {
public:
    void lock() {
        if (mu_.try_lock()) {
            return;
        }
        waiting_.fetch_add(1, std::memory_order_seq_cst);
        mu_.lock();
        waiting_.fetch_sub(1, std::memory_order_seq_cst);
        handoffs_.fetch_add(1, std::memory_order_seq_cst);
        if (watched_.load(std::memory_order_seq_cst)) {
            ferry::detail::futex_wake_all(handoffs_);
        }
    }
    [[nodiscard]] bool try_lock() { return mu_.try_lock(); }
    void unlock() { mu_.unlock(); }

    // Some thread is blocked in lock() (a hint: it may get the mutex any moment).
    [[nodiscard]] bool contended() const noexcept {
        return waiting_.load(std::memory_order_relaxed) != 0;
    }

    // Called without the mutex: returns once a thread that was blocked in lock() has got it (at
    // once when none was), or at `deadline`.
    void let_waiters_in(std::chrono::steady_clock::time_point deadline) {
        const auto seen = handoffs_.load(std::memory_order_seq_cst);
        if (waiting_.load(std::memory_order_seq_cst) == 0) {
            return; // a waiter counted after `seen` has its increment still to come
        }
        // Either lock() sees `watched_` and wakes us, or we see its increment: both seq_cst.
        watched_.store(true, std::memory_order_seq_cst);
        while (handoffs_.load(std::memory_order_seq_cst) == seen &&
               std::chrono::steady_clock::now() < deadline) {
            ferry::detail::futex_wait_until(handoffs_, seen, deadline);
        }
        watched_.store(false, std::memory_order_relaxed);
    }

private:
    std::recursive_mutex mu_;
    std::atomic<unsigned> waiting_{0};
    std::atomic<std::uint32_t> handoffs_{0}; // bumped by each lock() that had to wait
    std::atomic<bool> watched_{false};       // let_waiters_in() may be asleep on handoffs_
};

} // namespace ferry::net::detail
