#pragma once
// ferry::ipc::detail::SpscSharedRing — the ring of an spsc ferry::ipc::Channel: one sender and
// one receiver at a time, each in any process (docs/processes.md, Channels; the measurements
// behind its shape are in docs/performance/ipc.md).
//
// The in-place API and every answer are SharedRing's (shared_ring.hpp) — claim / publish,
// acquire / release, stop, lost, size, clear, blocked, watch — except that a claim is invisible
// to the receiver until it is published (there is no "pending head": a sender that dies before
// its publish has stored the cell's turn leaves the receiver nothing to see, and the receiver
// learns of the death from the peers it watches, within about one k_watch_slice).
//
// Algorithm: a Lamport ring on two shared counters, with a turn per cell. `tail` (positions
// published) is written by the sender only, `head` (positions released) by the receiver only,
// each with a plain store; a position names cell `position % capacity` of this process's PRIVATE
// capacity (a mask when that is a power of two). The sender publishes position p by storing the
// tail, then the cell's turn, p + 1; the receiver takes cell p when its turn says p + 1, so it
// learns of an item from the item's own line and never reads the tail on its way: a hand-off
// moves the cell's line and nothing else (the tail's line stays with the sender, the head's with
// the receiver). The sender keeps the head as last loaded and loads it again only when its copy
// says full (or, while it samples the depth for the counters, 64 positions after its last
// load). No CAS, no RMW on the fast path, which is inline and answers only ok; every other
// answer comes from the out-of-line *_slow path, which decides again from fresh loads.
//
// Sleeping: per event (items for receivers, slots for senders) a `parked` flag and a futex word
// on one line. A waiter reads the word (its key), sets the flag, re-checks its condition and
// sleeps on the key; a notifier stores the word its waiter re-checks (a sender the cell's turn, a
// receiver the head) and then loads the flag, and only when it finds the flag set clears it,
// bumps the word and wakes (FutexScope::shared). The waiter's flag store and re-check against
// the notifier's store and flag load are the pair that
// rules out a lost wake; where membarrier is available the waiter pays for it alone (a
// membarrier between its two) and the notifier's store is a plain release store
// (shared_ring_fence.hpp has the argument and the fallback, seq_cst on both sides). A waiter does
// not clear its flag when it leaves (a second waiter could be relying on it): a stale flag costs
// the next notifier one empty wake.
//
// Trust (the rule at the top of segment_header.hpp): each counter and turn is loaded once per
// decision into a local; a pair of counters whose distance is above the private capacity (a
// peer rewrote one, or broke the one-sender rule) makes the ring lost — the sender checks the
// pair whenever it loads the head, the receiver each time it is about to park (never while it
// polls, which would take the tail's line from the sender); a turn is only ever compared for
// equality with the position the receiver expects. Cell addresses come from the private
// capacity and stride only. Waits are sliced by k_watch_slice and bounded by the caller's
// deadline, so a peer that stops moving a counter or a turn can delay nobody beyond it.
//
// Layout: SpscControl, then capacity cells, each its turn (8 bytes) and then the item's bytes:
// a cell of at most 56 bytes is packed in 16, 32 or 64 bytes, so none straddles a line (four
// 8-byte items share a line); a larger one takes its bytes rounded up to 8.

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/detail/futex.hpp>
#include <ferry/channel/stats.hpp>
#include <ferry/core/cpu_relax.hpp>
#include <ferry/core/status.hpp>
#include <ferry/ipc/detail/shared_ring.hpp>
#include <ferry/ipc/detail/shared_ring_common.hpp>
#include <ferry/ipc/detail/shared_ring_fence.hpp>
#include <ferry/ipc/segment.hpp>
#include <ferry/runtime/profiler.hpp>
#include <new>
#include <span>
#include <string>
#include <type_traits>

namespace ferry::ipc::detail {

inline constexpr std::uint64_t k_spsc_ring_magic = 0x4353505359525245ULL; // "ERRYSPSC"
// Bump on layout or protocol changes; 2: the asymmetric wake (shared_ring_fence.hpp), which a
// waiter of format 1 (no membarrier) would not see; 3: a turn per cell (the receiver reads
// turns, not the tail).
inline constexpr std::uint32_t k_spsc_ring_format = 3;

// The ring's words in shared memory (layout only; see SharedRing's RingControl). Each word one
// side writes in steady state has its own line.
struct SpscControl {
    alignas(k_ring_line) RingGeometry geometry;
    alignas(k_ring_line) std::uint64_t tail;            // positions published (the sender's)
    alignas(k_ring_line) std::uint64_t head;            // positions released (the receiver's)
    alignas(k_ring_line) std::uint32_t state;           // k_stopped | k_lost, sticky bits
    alignas(k_ring_line) std::uint32_t receiver_parked; // flag: a receiver sleeps on items_word
    std::uint32_t items_word;
    alignas(k_ring_line) std::uint32_t sender_parked; // flag: a sender sleeps on slots_word
    std::uint32_t slots_word;
    alignas(k_ring_line) std::uint32_t blocked;
    std::int64_t next_watch_ns; // coarse monotonic time of the next no-wait peer check
};
static_assert(std::is_standard_layout_v<SpscControl> && std::is_trivial_v<SpscControl>);
static_assert(offsetof(SpscControl, geometry) == 0 && sizeof(SpscControl) % k_ring_line == 0);

class SpscSharedRing {
public:
    using clock = ring_clock;
    using Claim = SharedRing::Claim;

    SpscSharedRing() noexcept = default;

    [[nodiscard]] static std::size_t bytes_for(std::size_t capacity,
                                               std::size_t cell_bytes) noexcept {
        return ring_geometry_valid(capacity, cell_bytes)
                   ? sizeof(SpscControl) + capacity * stride_for(cell_bytes)
                   : 0;
    }
    // As SharedRing's; `policy` must be spsc.
    [[nodiscard]] static SpscSharedRing create(std::span<std::byte> memory, std::size_t capacity,
                                               std::size_t cell_bytes, RingPolicy policy) noexcept;
    [[nodiscard]] static SpscSharedRing attach(std::span<std::byte> memory, std::size_t capacity,
                                               std::size_t cell_bytes, RingPolicy policy,
                                               std::string* why);

    [[nodiscard]] bool attached() const noexcept { return control_ != nullptr; }

    // ---- in place (one sender and one receiver at a time) ------------------------------------
    // The fast paths are inline and decide only "ok"; anything else (full, empty, stopped,
    // lost, a counter out of range) goes to the out-of-line path, which decides again from
    // fresh loads.
    Status claim(Claim& c, clock::time_point deadline, bool may_wait,
                 const Segment* peers) noexcept {
        const std::uint64_t tail = ring_ref(control_->tail).load(std::memory_order_acquire);
        if (load_state() == 0 && tail - sender_.other < sender_.room) [[likely]] {
            c = Claim{tail, cell_at(tail)}; // room by the copy: the head only moves on
            return Status::ok;
        }
        return claim_slow(c, deadline, may_wait, peers);
    }
    // The tail first, so the tail is never behind a turn the receiver can see; the turn is the
    // notifier's store (a waiter re-checks turns).
    void publish(const Claim& c) noexcept {
        ring_ref(control_->tail).store(c.position + 1, std::memory_order_release);
        store_and_notify(turn_of(c.cell), c.position + 1, control_->receiver_parked,
                         control_->items_word);
    }

    Status acquire(Claim& c, clock::time_point deadline, bool may_wait,
                   const Segment* peers) noexcept {
        const std::uint64_t head = ring_ref(control_->head).load(std::memory_order_acquire);
        std::byte* const cell = cell_at(head);
        if ((load_state() & k_lost) == 0 && holds(cell, head)) [[likely]] {
            c = Claim{head, cell};
            return Status::ok;
        }
        return acquire_slow(c, deadline, may_wait, peers);
    }
    // One attempt that never waits (as SharedRing::poll; this ring has no claimed head to tell).
    Status poll(Claim& c) noexcept { return acquire(c, clock::time_point::max(), false, nullptr); }
    void release(const Claim& c) noexcept {
        store_and_notify(control_->head, c.position + 1, control_->sender_parked,
                         control_->slots_word);
    }

    // The counters as they stand (one load each; another process may have written anything):
    // positions published and released since the ring was made. Statistics only.
    [[nodiscard]] std::uint64_t published() const noexcept {
        return ring_ref(control_->tail).load(std::memory_order_acquire);
    }
    [[nodiscard]] std::uint64_t released() const noexcept {
        return ring_ref(control_->head).load(std::memory_order_acquire);
    }

    // ---- state (as SharedRing) ---------------------------------------------------------------
    void stop() noexcept { raise(k_stopped); }
    [[nodiscard]] bool stopped() const noexcept { return (load_state() & k_stopped) != 0; }
    void mark_lost() noexcept { raise(k_lost); }
    [[nodiscard]] bool lost() const noexcept { return (load_state() & k_lost) != 0; }

    [[nodiscard]] std::size_t size() const noexcept {
        return ring_size(control_->head, control_->tail, capacity_);
    }
    // Receiving side: drops up to capacity() queued cells; returns how many.
    std::size_t clear(const Segment* peers) noexcept { return drop_queued(*this, peers); }
    [[nodiscard]] std::size_t blocked() const noexcept {
        return ring_ref(control_->blocked).load(std::memory_order_acquire);
    }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] std::size_t cell_bytes() const noexcept { return cell_bytes_; }
    [[nodiscard]] static constexpr RingPolicy policy() noexcept { return RingPolicy::spsc; }

    bool watch(const Segment* peers) noexcept { return watch_peers(*this, peers); }

    // The sender samples the queue's depth itself (ProcessCounters::published need not): each
    // time it reloads the head, at least every k_high_water_sample sends, it raises `*word`
    // (this process's high-water counter; nullptr: no sampling) to the depth it finds.
    static constexpr bool k_samples_depth = true;
    void sample_depth_into(std::uint64_t* word) noexcept {
        high_water_ = word;
        sender_.room = word == nullptr ? capacity_ : 0; // 0: the first send samples
    }

private:
    static constexpr std::uint32_t k_stopped = 1;
    static constexpr std::uint32_t k_lost = 2;

    // The sender's private state: the head as last loaded, and how far past it the fast path
    // may go before it reloads it: the capacity, or less while it samples the depth.
    struct Side {
        std::uint64_t other = 0;
        std::uint64_t room = 0;
    };

    SpscSharedRing(SpscControl* control, std::size_t capacity, std::size_t cell_bytes) noexcept
        : control_(control), cells_(reinterpret_cast<std::byte*>(control) + sizeof(SpscControl)),
          capacity_(static_cast<std::uint32_t>(capacity)),
          cell_bytes_(static_cast<std::uint32_t>(cell_bytes)), stride_(stride_for(cell_bytes)),
          index_mask_((capacity & (capacity - 1)) == 0 ? capacity - 1 : 0), fence_(ring_fence()) {
        sender_.room = capacity_;
    }

    static constexpr std::size_t k_turn_bytes = sizeof(std::uint64_t);
    static std::size_t stride_for(std::size_t cell_bytes) noexcept {
        const std::size_t bytes = k_turn_bytes + cell_bytes;
        return bytes <= k_ring_line ? std::bit_ceil(bytes) : (bytes + 7) / 8 * 8;
    }
    std::uint32_t load_state() const noexcept {
        return ring_ref(control_->state).load(std::memory_order_acquire);
    }

    // The item bytes of `position`'s cell, from the private capacity and stride only (a mask
    // when the capacity is a power of two, else a division); its turn is the word before them.
    std::byte* cell_at(std::uint64_t position) const noexcept {
        const std::uint64_t index =
            index_mask_ != 0 ? position & index_mask_ : position % capacity_;
        return cells_ + static_cast<std::size_t>(index) * stride_ + k_turn_bytes;
    }
    static std::uint64_t& turn_of(std::byte* cell) noexcept {
        return *std::launder(reinterpret_cast<std::uint64_t*>(cell - k_turn_bytes));
    }
    // Whether `cell` (position's) holds that position's item: its turn, loaded once. A waiter's
    // re-check loads it seq_cst: its half of the pair with the sender's store.
    static bool holds(std::byte* cell, std::uint64_t position,
                      std::memory_order order = std::memory_order_acquire) noexcept {
        return ring_ref(turn_of(cell)).load(order) == position + 1;
    }

    Status claim_slow(Claim& c, clock::time_point deadline, bool may_wait,
                      const Segment* peers) noexcept;
    Status acquire_slow(Claim& c, clock::time_point deadline, bool may_wait,
                        const Segment* peers) noexcept;
    Status try_claim(Claim& c) noexcept;
    Status try_acquire(Claim& c, bool parking) noexcept;
    Status attempt_acquire(Claim& c, bool parking) noexcept;
    Status corrupt() noexcept {
        mark_lost();
        return Status::peer_lost;
    }
    Status after_fast_failure(Status status, const Segment* peers) noexcept {
        if ((status != Status::full && status != Status::empty) || peers == nullptr) {
            return status;
        }
        return ring_watch_due(control_->next_watch_ns) && watch(peers) ? Status::peer_lost : status;
    }
    template <typename Attempt>
    Status settle(std::uint32_t& parked, std::uint32_t& event, clock::time_point deadline,
                  bool may_wait, Status busy, const Segment* peers, Attempt attempt) noexcept;
    template <typename Attempt>
    Status wait(std::uint32_t& parked, std::uint32_t& event, clock::time_point deadline,
                Status busy, const Segment* peers, Attempt attempt) noexcept;

    // The notifier's half of the pair (shared_ring_fence.hpp): the store of the word the waiter
    // re-checks (a turn or the head), then the flag load; a flag found set is cleared by one
    // notifier, which bumps the word and wakes.
    [[gnu::always_inline]] void store_and_notify(std::uint64_t& word, std::uint64_t value,
                                                 std::uint32_t& parked,
                                                 std::uint32_t& event) const noexcept {
        if (store_then_load_flag(fence_, word, value, parked) != 0) [[unlikely]] {
            wake_parked(parked, event);
        }
    }
    [[gnu::noinline]] static void wake_parked(std::uint32_t& parked,
                                              std::uint32_t& event) noexcept {
        if (ring_ref(parked).exchange(0, std::memory_order_acq_rel) != 0) {
            bump_and_wake(event);
        }
    }
    static void bump_and_wake(std::uint32_t& event) noexcept {
        ring_ref(event).fetch_add(1, std::memory_order_acq_rel);
        ferry::detail::futex_wake(&event, INT_MAX, ferry::detail::FutexScope::shared);
    }
    void raise(std::uint32_t bit) noexcept {
        ring_ref(control_->state).fetch_or(bit, std::memory_order_seq_cst);
        bump_and_wake(control_->items_word);
        bump_and_wake(control_->slots_word);
    }

    SpscControl* control_ = nullptr; // in shared memory
    std::byte* cells_ = nullptr;     // in shared memory, capacity_ * stride_ bytes (checked)
    std::uint32_t capacity_ = 0;     // private geometry, compared with the ring's at attach
    std::uint32_t cell_bytes_ = 0;
    std::size_t stride_ = 0;
    std::uint64_t index_mask_ = 0;        // capacity_ - 1 when that is a power of two (above 1)
    std::uint64_t* high_water_ = nullptr; // see sample_depth_into
    RingFence fence_ = RingFence::unavailable; // this process's, when the handle was made
    Side sender_;
};

inline SpscSharedRing SpscSharedRing::create(std::span<std::byte> memory, std::size_t capacity,
                                             std::size_t cell_bytes, RingPolicy policy) noexcept {
    const std::size_t need = bytes_for(capacity, cell_bytes);
    if (policy != RingPolicy::spsc || need == 0 || memory.size() < need ||
        !ring_aligned(memory.data())) {
        return {};
    }
    auto* control = ::new (memory.data()) SpscControl{};
    write_ring_geometry(&control->geometry, k_spsc_ring_magic, k_spsc_ring_format, policy, capacity,
                        cell_bytes, stride_for(cell_bytes));
    ring_ref(control->geometry.ready).store(1, std::memory_order_release);
    return SpscSharedRing(control, capacity, cell_bytes);
}

inline SpscSharedRing SpscSharedRing::attach(std::span<std::byte> memory, std::size_t capacity,
                                             std::size_t cell_bytes, RingPolicy policy,
                                             std::string* why) {
    const char* problem = nullptr;
    const std::size_t need = bytes_for(capacity, cell_bytes);
    if (need == 0 || memory.size() < need || !ring_aligned(memory.data())) {
        problem = "the segment is too small for a ring of this geometry";
    } else {
        auto* control = std::launder(reinterpret_cast<SpscControl*>(memory.data()));
        if (ring_ref(control->geometry.ready).load(std::memory_order_acquire) != 1) {
            return {}; // not constructed yet: `why` stays empty
        }
        problem = ring_geometry_mismatch(control, k_spsc_ring_magic, k_spsc_ring_format, policy,
                                         capacity, cell_bytes, stride_for(cell_bytes));
        if (problem == nullptr) {
            return SpscSharedRing(control, capacity, cell_bytes);
        }
    }
    if (why != nullptr) {
        *why = problem;
    }
    return {};
}

[[gnu::noinline]] inline Status SpscSharedRing::claim_slow(Claim& c, clock::time_point deadline,
                                                           bool may_wait,
                                                           const Segment* peers) noexcept {
    return settle(control_->sender_parked, control_->slots_word, deadline, may_wait, Status::full,
                  peers, [this, &c](bool) { return try_claim(c); });
}

[[gnu::noinline]] inline Status SpscSharedRing::acquire_slow(Claim& c, clock::time_point deadline,
                                                             bool may_wait,
                                                             const Segment* peers) noexcept {
    return settle(control_->receiver_parked, control_->items_word, deadline, may_wait,
                  Status::empty, peers,
                  [this, &c](bool parking) { return attempt_acquire(c, parking); });
}

// A first attempt; only when it finds the ring `busy` (full / empty) and the caller may wait
// and the deadline has not passed, the wait. attempt(parking): `parking` is true for the
// attempts of the park phase (the last look before each sleep).
template <typename Attempt>
Status SpscSharedRing::settle(std::uint32_t& parked, std::uint32_t& event,
                              clock::time_point deadline, bool may_wait, Status busy,
                              const Segment* peers, Attempt attempt) noexcept {
    const Status first = attempt(false);
    if (first != busy || !may_wait) {
        return after_fast_failure(first, peers);
    }
    if (ring_past(deadline)) {
        return after_fast_failure(Status::timed_out, peers);
    }
    return wait(parked, event, deadline, busy, peers, attempt);
}

inline Status SpscSharedRing::try_claim(Claim& c) noexcept {
    if (const std::uint32_t state = load_state(); state != 0) {
        return (state & k_lost) != 0 ? Status::peer_lost : Status::stopped;
    }
    const std::uint64_t tail = ring_ref(control_->tail).load(std::memory_order_acquire);
    if (tail - sender_.other >= sender_.room) { // no room by the copy (or a copy from another lap)
        const std::uint64_t head = ring_ref(control_->head).load(std::memory_order_seq_cst);
        const std::uint64_t depth = tail - head;
        if (depth > capacity_) {
            return corrupt(); // more published than released plus capacity, or tail < head
        }
        sender_.other = head;
        if (depth == capacity_) {
            return Status::full;
        }
        if (high_water_ != nullptr) {
            ferry::detail::counter_raise(*high_water_, depth, false);
            sender_.room =
                std::min<std::uint64_t>(capacity_, depth + ferry::detail::k_high_water_sample);
        }
    }
    c = Claim{tail, cell_at(tail)};
    return Status::ok;
}

// The receiver's attempt: the head, then its cell's turn. It does not read the tail, whose line
// the sender writes at every publish — except when `parking` (the last look before a sleep):
// then it first checks the counters as a pair, with the same load of the head. More published
// than released plus capacity, or more released than published, is no state of this ring's
// protocol (the tail is stored before the turn, so the head never passes it).
inline Status SpscSharedRing::try_acquire(Claim& c, bool parking) noexcept {
    const std::uint64_t head = ring_ref(control_->head).load(std::memory_order_acquire);
    if (parking && ring_ref(control_->tail).load(std::memory_order_acquire) - head > capacity_) {
        return corrupt();
    }
    std::byte* const cell = cell_at(head);
    if (!holds(cell, head, std::memory_order_seq_cst)) {
        return Status::empty;
    }
    c = Claim{head, cell};
    return Status::ok;
}

inline Status SpscSharedRing::attempt_acquire(Claim& c, bool parking) noexcept {
    if (lost()) {
        return Status::peer_lost;
    }
    if (const Status s = try_acquire(c, parking); s != Status::empty || !stopped()) {
        return s;
    }
    // Stopped: once more, so a cell published before stop() but after the first try is still
    // delivered; then stopped.
    const Status again = try_acquire(c, false);
    return again == Status::empty ? Status::stopped : again;
}

// Spin, then park in slices on `event` until attempt() answers other than `busy`, the deadline
// passes or a peer is found dead. attempt() runs after every wake before the deadline is looked
// at, so a wake is never dropped by a waiter timing out.
template <typename Attempt>
Status SpscSharedRing::wait(std::uint32_t& parked, std::uint32_t& event, clock::time_point deadline,
                            Status busy, const Segment* peers, Attempt attempt) noexcept {
    for (unsigned i = 0; i < ring_spin_limit(RingPolicy::spsc); ++i) {
        ferry::detail::cpu_relax();
        if (const Status s = attempt(false); s != busy) {
            return s;
        }
    }
    const ParkedCount counted(control_->blocked);
    const TraceSpan trace("ipc.park", "channel");
    auto next_watch = clock::now() + k_watch_slice;
    for (;;) {
        const std::uint32_t key = ring_ref(event).load(std::memory_order_acquire);
        const bool fenced = raise_flag_then_fence(fence_, parked, 1); // the waiter's half
        if (const Status s = attempt(true); s != busy) {
            return s;
        }
        const auto now = clock::now();
        if (now >= deadline) { // max(): never
            return Status::timed_out;
        }
        if (now >= next_watch) {
            if (watch(peers)) {
                return Status::peer_lost;
            }
            next_watch = now + k_watch_slice;
        }
        auto wake_at = peers == nullptr ? deadline : std::min(deadline, next_watch);
        if (!fenced) { // a peer's notify may not see the flag: look again soon
            wake_at = std::min(wake_at, now + k_unfenced_slice);
        }
        ferry::detail::futex_wait_until(&event, key, wake_at, ferry::detail::FutexScope::shared);
    }
}

// The ring of an ipc::Channel of this policy.
template <bool MultiProducer>
using ring_for = std::conditional_t<MultiProducer, SharedRing, SpscSharedRing>;

} // namespace ferry::ipc::detail
