#pragma once
// The Linux futex, the one OS primitive the channel parks on.
//
// Why not the standard library: C++20's std::atomic::wait has no timeout, and
// std::counting_semaphore has had hang and early-return bugs on several toolchains
// (microsoft/STL #5574). FUTEX_WAIT_BITSET takes an *absolute* CLOCK_MONOTONIC deadline, so a
// wait that is interrupted (EINTR, spurious wake) simply retries with the same deadline: the
// remaining time is recomputed by the kernel, never by adding up slices, and a wall-clock change
// cannot shorten or stretch it (concurrentqueue #289 hung on CLOCK_REALTIME).

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ferry::detail {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "the futex word must be a plain 32-bit integer");

// libstdc++'s steady_clock reads CLOCK_MONOTONIC, the clock FUTEX_WAIT_BITSET uses by default.
using futex_clock = std::chrono::steady_clock;

inline std::uint32_t* futex_address(std::atomic<std::uint32_t>& word) noexcept {
    return reinterpret_cast<std::uint32_t*>(&word); // NOLINT: layout checked above
}

// Who may wait and wake on a word. `process`: FUTEX_*_PRIVATE, keyed by this address space (the
// cheaper kernel path; every in-process channel). `shared`: keyed by the underlying page, so
// processes that map the same shared memory at different addresses wake each other (ferry/ipc).
enum class FutexScope : int { process = FUTEX_PRIVATE_FLAG, shared = 0 };

// Sleeps while `*word == expected`, until woken or `deadline` passes (time_point::max(): no
// deadline). May return early for any reason (a wake, a changed word, a signal): callers loop
// on their own condition and on the deadline.
inline void futex_wait_until(std::uint32_t* word, std::uint32_t expected,
                             futex_clock::time_point deadline,
                             FutexScope scope = FutexScope::process) noexcept {
    const int flags = static_cast<int>(scope);
    if (deadline == futex_clock::time_point::max()) {
        ::syscall(SYS_futex, word, FUTEX_WAIT | flags, expected, nullptr, nullptr, 0);
        return;
    }
    const auto since_epoch = deadline.time_since_epoch();
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - secs);
    timespec absolute{};
    absolute.tv_sec = static_cast<time_t>(secs.count());
    absolute.tv_nsec = static_cast<long>(nanos.count());
    ::syscall(SYS_futex, word, FUTEX_WAIT_BITSET | flags, expected, &absolute, nullptr,
              FUTEX_BITSET_MATCH_ANY);
}
inline void futex_wait_until(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                             futex_clock::time_point deadline) noexcept {
    futex_wait_until(futex_address(word), expected, deadline);
}

// Wakes up to `count` threads sleeping on `*word`.
inline void futex_wake(std::uint32_t* word, int count,
                       FutexScope scope = FutexScope::process) noexcept {
    ::syscall(SYS_futex, word, FUTEX_WAKE | static_cast<int>(scope), count, nullptr, nullptr, 0);
}
inline void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
    futex_wake(futex_address(word), count);
}

inline void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
    futex_wake(word, INT_MAX);
}

} // namespace ferry::detail
