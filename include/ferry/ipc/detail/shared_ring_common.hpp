#pragma once
// What the two shared-memory rings of ferry/ipc have in common (docs/processes.md, Channels):
// the policy and limits, the geometry line at the start of each ring (written once by the
// creator, compared by attach with the caller's own geometry and never read again: the rule at
// the top of segment_header.hpp), the rate limit of a no-wait call's peer check, and the count of
// parked calls. SharedRing (shared_ring.hpp) is the Vyukov ring of both policies;
// SpscSharedRing (shared_ring_spsc.hpp) is the single-producer ring of ferry::ipc::Channel.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <ferry/channel/policy.hpp>
#include <ferry/core/status.hpp>
#include <type_traits>

namespace ferry::ipc::detail {

enum class RingPolicy : std::uint32_t { spsc = 1, mpmc = 2 };

inline constexpr std::uint32_t k_ring_min_capacity = 2;
inline constexpr std::uint32_t k_ring_max_capacity = 8192;
inline constexpr std::size_t k_ring_max_cell_bytes = std::size_t{1} << 30;
inline constexpr std::size_t k_ring_line = 64;
// How long a parked call sleeps before it looks at the peers again; a death is seen within
// about one slice plus the /proc reads.
inline constexpr std::chrono::milliseconds k_watch_slice{20};

using ring_clock = std::chrono::steady_clock;

// How many times a blocked call retries (a CPU pause before each) before it parks: the budgets
// of the in-process channel's policies (ferry::spsc and ferry::mpmc spin_limit: 2048 and 256),
// for the same reasons. A park costs the waiter a futex wait (and, in the spsc ring, a membarrier,
// which interrupts every CPU running a process registered for it) and the notifier a futex wake.
// 256 retries, a few microseconds, did not outlast a peer's brief stalls on a VM nor, for a
// MessageChannel, the copy of one 64 KiB message, so a busy pipeline parked often
// (docs/performance/ipc.md). An mpmc ring keeps 256: with many processes on few cores, a long
// spin takes the CPU from the process it waits for.
inline constexpr unsigned ring_spin_limit(RingPolicy policy) noexcept {
    return policy == RingPolicy::spsc ? ferry::spsc::spin_limit : ferry::mpmc::spin_limit;
}

template <typename W>
std::atomic_ref<W> ring_ref(W& word) noexcept {
    return std::atomic_ref<W>(word);
}

// The first line of every ring: what the creator wrote once, for attach to compare.
struct RingGeometry {
    std::uint64_t magic;
    std::uint32_t format;
    RingPolicy policy;
    std::uint32_t capacity;
    std::uint32_t cell_bytes;
    std::uint64_t stride;
    std::uint32_t ready; // 1 once the creator has constructed the ring (release)
};
static_assert(std::is_trivial_v<RingGeometry> && std::is_standard_layout_v<RingGeometry>);

inline bool ring_geometry_valid(std::size_t capacity, std::size_t cell_bytes) noexcept {
    return capacity >= k_ring_min_capacity && capacity <= k_ring_max_capacity && cell_bytes >= 1 &&
           cell_bytes <= k_ring_max_cell_bytes;
}
inline bool ring_aligned(const void* p) noexcept {
    return reinterpret_cast<std::uintptr_t>(p) % k_ring_line == 0;
}
inline bool ring_past(ring_clock::time_point deadline) noexcept {
    return deadline != ring_clock::time_point::max() && deadline <= ring_clock::now();
}

// Writes the geometry (not `ready`) at `line`, the start of a ring under construction.
inline void write_ring_geometry(void* line, std::uint64_t magic, std::uint32_t format,
                                RingPolicy policy, std::size_t capacity, std::size_t cell_bytes,
                                std::size_t stride) noexcept {
    RingGeometry g{};
    g.magic = magic;
    g.format = format;
    g.policy = policy;
    g.capacity = static_cast<std::uint32_t>(capacity);
    g.cell_bytes = static_cast<std::uint32_t>(cell_bytes);
    g.stride = stride;
    std::memcpy(line, &g, offsetof(RingGeometry, ready));
}

// Compares one private copy of a ready ring's geometry line with the caller's. nullptr when it
// matches, otherwise what differs.
// `line` is the start of the ring in shared memory (its first bytes are laid out as RingGeometry).
inline const char* ring_geometry_mismatch(const void* line, std::uint64_t magic,
                                          std::uint32_t format, RingPolicy policy,
                                          std::size_t capacity, std::size_t cell_bytes,
                                          std::size_t stride) noexcept {
    RingGeometry seen;
    std::memcpy(&seen, line, sizeof seen);
    if (seen.magic != magic || seen.format != format) {
        return "the segment does not hold a ring of this format";
    }
    if (seen.policy != policy) {
        return "the ring has another policy (spsc / mpmc)";
    }
    if (seen.capacity != capacity || seen.cell_bytes != cell_bytes || seen.stride != stride) {
        return "the ring has another capacity or cell size";
    }
    return nullptr;
}

// The rate limit of the peer check of a no-wait call that failed: true for at most one caller
// per k_watch_slice across all processes (a shared timestamp, moved by CAS). The time is the
// kernel's coarse monotonic clock (the monotonic clock as of the last tick, one load through the
// vDSO): a caller spinning on try_send / try_receive pays this on every failed try, and a tick
// (1 to 10 ms) is fine grained enough for a 20 ms slice. Only this rate limit uses it; every
// deadline is on the steady clock.
inline std::int64_t ring_coarse_now_ns() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
// The timestamp is written by other processes: a due time more than one slice ahead is no time
// this code wrote, and is taken as due now, so a peer cannot switch the check off.
inline bool ring_watch_due(std::int64_t& next_watch_ns) noexcept {
    constexpr std::int64_t slice = std::chrono::nanoseconds(k_watch_slice).count();
    const std::int64_t now = ring_coarse_now_ns();
    auto next = ring_ref(next_watch_ns);
    std::int64_t due = next.load(std::memory_order_relaxed);
    const bool due_now = now >= due || due - now > slice; // now >= 0: no overflow
    return due_now && next.compare_exchange_strong(due, now + slice, std::memory_order_relaxed);
}

// Queued cells by a private copy of each counter: within [0, capacity] whatever they say.
inline std::size_t ring_size(std::uint64_t& head_word, std::uint64_t& tail_word,
                             std::size_t capacity) noexcept {
    const std::uint64_t head = ring_ref(head_word).load(std::memory_order_acquire);
    const std::uint64_t tail = ring_ref(tail_word).load(std::memory_order_acquire);
    return tail <= head ? 0
                        : static_cast<std::size_t>(std::min<std::uint64_t>(tail - head, capacity));
}

// Either ring's clear: acquires and releases up to capacity() cells without waiting (bounded, so
// refilling senders cannot keep it running); returns how many.
template <typename Ring, typename Peers>
std::size_t drop_queued(Ring& ring, const Peers* peers) noexcept {
    std::size_t dropped = 0;
    typename Ring::Claim c;
    while (dropped < ring.capacity() &&
           ring.acquire(c, ring_clock::time_point::max(), false, peers) == Status::ok) {
        ring.release(c);
        ++dropped;
    }
    return dropped;
}

// Either ring's watch: asks `peers` whether a registered participant died; one marks the ring
// lost. True when the ring is lost (now or before).
template <typename Ring, typename Peers>
bool watch_peers(Ring& ring, const Peers* peers) noexcept {
    if (!ring.lost() && peers != nullptr && peers->lost_participant()) {
        ring.mark_lost();
    }
    return ring.lost();
}

// Counts a parked call in the ring's `blocked` word for its lifetime; the decrement is the
// call's last access to the ring.
class ParkedCount {
public:
    explicit ParkedCount(std::uint32_t& count) noexcept : count_(count) {
        ring_ref(count_).fetch_add(1, std::memory_order_acq_rel);
    }
    ~ParkedCount() { ring_ref(count_).fetch_sub(1, std::memory_order_acq_rel); }
    ParkedCount(const ParkedCount&) = delete;
    ParkedCount& operator=(const ParkedCount&) = delete;

private:
    std::uint32_t& count_;
};

} // namespace ferry::ipc::detail
