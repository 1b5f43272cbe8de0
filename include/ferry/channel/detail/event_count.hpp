#pragma once
// EventCount: "wait until a condition becomes true" for conditions that live in lock-free state.
//
// The shape is folly's EventCount / Baton: a waiter announces itself (prepare_wait), re-checks
// its condition, and only then sleeps on the futex word with the value it announced. A notifier
// changes the state first and then looks at the word.
//
// The word is (epoch << 2) | symmetric_bit << 1 | sleepers_bit. prepare_wait sets the sleepers
// bit; a notifier that finds it set clears it *and* bumps the epoch in one CAS, then wakes every
// sleeper. The symmetric bit never changes: it marks the RMW mode below, so that a notifier
// tests one word for both "anyone asleep?" and "must I pay for an RMW?" (one load and one test
// on every send and receive, not a second load of the mode). So:
// - no lost wake-up (poco #5213): announcing and notifying form a Dekker pair (each side stores,
//   then loads the other's word), so each side needs a full barrier between its store and its
//   load. By default the waiter, which is about to sleep anyway, pays for both with one
//   membarrier (AsymmetricBarrier, barrier.hpp) and the notifier — every send and receive — pays
//   nothing but a plain load. Where membarrier is unavailable, or the policy asks for symmetric
//   barriers, both sides use acq_rel RMWs on the word instead: they are totally ordered, so
//   either the notifier's RMW sees the bit, or it comes first and releases the state change to
//   the waiter's acquiring fetch_or, whose re-check then sees it.
//   A waiter whose announcement was consumed cannot fall asleep on it: the epoch moved, so the
//   futex's value check fails and it returns at once.
// - one syscall per wake-up, not per notification: after the bit is cleared, later notifiers
//   see no sleeper and make no syscall until someone sleeps again. (A waiter *count* keeps
//   counting a woken thread until it runs, and a busy producer would then pay a futex_wake per
//   message while the consumer waits for a CPU — measured with a count first, see
//   docs/performance/channel.md.)
// - it wakes all sleepers: a woken thread that finds nothing re-announces and sleeps again.
//   Each event has one kind of waiter (receivers or senders), at most one on an spsc channel.
//
// Why RMWs rather than seq_cst fences in the symmetric mode: the reasoning is the same, the cost
// on x86 is one locked instruction either way, and GCC rejects atomic_thread_fence under
// -fsanitize=thread (-Werror=tsan).

#include <atomic>
#include <cstdint>
#include <ferry/channel/detail/barrier.hpp>
#include <ferry/channel/detail/futex.hpp>

namespace ferry::detail {

class EventCount {
public:
    using Key = std::uint32_t;

    // asymmetric: use membarrier when the kernel allows it (see above); false forces RMWs.
    explicit EventCount(bool asymmetric = true) noexcept
        : word_(asymmetric && AsymmetricBarrier::available() ? 0 : k_symmetric),
          asymmetric_((word_.load(std::memory_order_relaxed) & k_symmetric) == 0) {}

    [[nodiscard]] bool asymmetric() const noexcept { return asymmetric_; }

    // Announces a sleeper. The caller must then re-check its condition and either give up (just
    // return: a stale announcement costs a later notifier one empty wake) or call wait_until().
    [[nodiscard]] Key prepare_wait() noexcept {
        const Key key = word_.fetch_or(k_sleepers, std::memory_order_acq_rel) | k_sleepers;
        if (asymmetric_) {
            AsymmetricBarrier::heavy(); // the bit is visible to every notifier before we re-check
        }
        return key;
    }

    // Sleeps unless a notification came after prepare_wait(). Returns on a wake, a spurious
    // wake-up or the deadline: callers loop on their own condition.
    void wait_until(Key key, futex_clock::time_point deadline) noexcept {
        futex_wait_until(word_, key, deadline);
    }

    // Call after making a condition true. Inline: a load and a test (asymmetric mode, nobody
    // asleep); everything else is out of line.
    void notify() noexcept {
        AsymmetricBarrier::light();
        if ((word_.load(std::memory_order_relaxed) & (k_sleepers | k_symmetric)) != 0) {
            [[unlikely]] notify_slow();
        }
    }

    // True while an announced sleeper has not been notified yet (tests and diagnostics).
    [[nodiscard]] bool has_sleepers() const noexcept {
        return (word_.load(std::memory_order_acquire) & k_sleepers) != 0;
    }

private:
    [[gnu::noinline]] void notify_slow() noexcept {
        // Symmetric mode: fetch_add(0), not the load above, is what orders this notifier against
        // prepare_wait(). Asymmetric mode: the load above was ordered by the waiter's membarrier;
        // this one only refreshes it.
        std::uint32_t word = (word_.load(std::memory_order_relaxed) & k_symmetric) != 0
                                 ? word_.fetch_add(0, std::memory_order_acq_rel)
                                 : word_.load(std::memory_order_relaxed);
        while ((word & k_sleepers) != 0) {
            // Clears the sleepers bit and adds one to the epoch; the symmetric bit is kept.
            if (word_.compare_exchange_weak(word, word - k_sleepers + k_epoch,
                                            std::memory_order_acq_rel)) {
                futex_wake_all(word_);
                return;
            }
        }
    }

    static constexpr std::uint32_t k_sleepers = 1;
    static constexpr std::uint32_t k_symmetric = 2;
    static constexpr std::uint32_t k_epoch = 4;
    std::atomic<std::uint32_t> word_{0};
    bool asymmetric_;
};

} // namespace ferry::detail
