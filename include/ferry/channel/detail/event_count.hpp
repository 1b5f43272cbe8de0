#pragma once
// EventCount: "wait until a condition becomes true" for conditions that live in lock-free state.
//
// The shape is folly's EventCount / Baton (anchors.md §0, §2.4): a waiter announces itself
// (prepare_wait), re-checks its condition, and only then sleeps on the epoch word with the epoch
// it read before the re-check. A notifier changes the state first and then bumps the epoch. The
// two sides meet on `waiters_` with acq_rel read-modify-writes (a Dekker pair): the RMWs are
// totally ordered, so either the notifier's RMW reads the waiter's increment, or it comes first
// and releases the state change to the waiter's acquiring increment, whose re-check then sees
// it. No lost wake-up (poco #5213). The futex compares the epoch atomically, so a bump between
// the re-check and the sleep makes the sleep return at once.
//
// Why RMWs rather than seq_cst fences: the reasoning is the same, the cost on x86 is one locked
// instruction either way, and ThreadSanitizer understands RMWs (GCC rejects atomic_thread_fence
// under -fsanitize=thread, -Werror=tsan), so the CI's TSan run checks the real code.
//
// Notifiers pay one uncontended RMW when nobody waits: no syscall on the fast path.

#include <atomic>
#include <cstdint>

#include <ferry/channel/detail/futex.hpp>

namespace ferry::detail {

class EventCount {
public:
    using Key = std::uint32_t;

    // Announces a waiter. The caller must re-check its condition after this and then call either
    // cancel_wait() or wait_until() with the returned key.
    [[nodiscard]] Key prepare_wait() noexcept {
        waiters_.fetch_add(1, std::memory_order_acq_rel);
        return epoch_.load(std::memory_order_acquire);
    }

    void cancel_wait() noexcept { waiters_.fetch_sub(1, std::memory_order_release); }

    // Sleeps unless a notification came after prepare_wait(). Returns on a wake, a spurious
    // wake-up or the deadline; the waiter's announcement is withdrawn either way.
    void wait_until(Key key, futex_clock::time_point deadline) noexcept {
        if (epoch_.load(std::memory_order_acquire) == key) {
            futex_wait_until(epoch_, key, deadline);
        }
        waiters_.fetch_sub(1, std::memory_order_release);
    }

    // Call after making a condition true. Wakes one sleeper: enough when one state change can
    // satisfy one waiter (one item, one free slot).
    void notify_one() noexcept { notify(1); }

    // Wakes every sleeper: stop() and clear() can satisfy them all at once.
    void notify_all() noexcept { notify(-1); }

    [[nodiscard]] std::uint32_t waiters() const noexcept {
        return waiters_.load(std::memory_order_acquire);
    }

private:
    void notify(int count) noexcept {
        // fetch_add(0), not a load: the RMW is what orders this notifier against prepare_wait().
        if (waiters_.fetch_add(0, std::memory_order_acq_rel) == 0) {
            return;
        }
        epoch_.fetch_add(1, std::memory_order_release);
        if (count < 0) {
            futex_wake_all(epoch_);
        } else {
            futex_wake(epoch_, count);
        }
    }

    std::atomic<std::uint32_t> epoch_{0};
    std::atomic<std::uint32_t> waiters_{0};
};

} // namespace ferry::detail
