#pragma once
// Futex waits on words in memory shared between processes.
//
// ferry/channel's futex uses FUTEX_*_PRIVATE, which keys a wait by the waiter's own address
// space: a wake from another process would never reach it. Here the flag is left off, so the
// kernel keys the wait by the underlying page (file + offset) and a waiter in one process is
// woken by a store + wake in another, whatever address each mapped the segment at.

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ferry::ipc::detail {

static_assert(std::atomic_ref<std::uint32_t>::required_alignment == alignof(std::uint32_t) &&
                  std::atomic_ref<std::uint32_t>::is_always_lock_free,
              "a futex word must be a plain, lock-free 32-bit integer");

// Sleeps while `*word == expected`, until woken or `deadline` (steady clock = CLOCK_MONOTONIC,
// the clock FUTEX_WAIT_BITSET measures absolute deadlines on). May return early for any reason;
// callers loop on their own condition and deadline.
inline void shared_futex_wait_until(std::uint32_t* word, std::uint32_t expected,
                                    std::chrono::steady_clock::time_point deadline) noexcept {
    const auto since_epoch = deadline.time_since_epoch();
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - secs);
    timespec absolute{};
    absolute.tv_sec = static_cast<time_t>(secs.count());
    absolute.tv_nsec = static_cast<long>(nanos.count());
    ::syscall(SYS_futex, word, FUTEX_WAIT_BITSET, expected, &absolute, nullptr,
              FUTEX_BITSET_MATCH_ANY);
}

inline void shared_futex_wake_all(std::uint32_t* word) noexcept {
    ::syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

} // namespace ferry::ipc::detail
