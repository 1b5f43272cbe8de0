#pragma once
// ferry::ipc::detail::SharedRing — a bounded ring of raw byte cells that lives INSIDE shared
// memory, the transport of ferry::ipc::Channel (docs/processes.md, Channels).
//
// Two parts: RingControl, the words in shared memory (standard layout, no pointers), which the
// creator constructs at the start of a segment's payload, followed by the cells; and SharedRing,
// each process's handle, which create and attach return. attach compares the ring's geometry and
// policy with the caller's and keeps the caller's: the geometry is never read from shared memory
// again (the rule at the top of segment_header.hpp), so a peer rewriting it, or the counters,
// cannot move a cell outside the segment. A ring found inconsistent (a turn no ferry process
// writes) is marked lost.
//
// In-place API (any process that attached; `peers` is the Segment whose participants a waiting
// call watches, nullptr for none; `deadline` is on the steady clock, time_point::max() = none):
//
//   struct Claim { std::uint64_t position; std::byte* cell; };   // cell: cell_bytes() bytes
//
//   Status claim(Claim& c, time_point deadline, bool may_wait, const Segment* peers);
//       Reserves the next cell for writing, waiting while the ring is full. ok: fill c.cell, then
//       publish(c) — a claim is never abandoned. full (!may_wait), timed_out (also when the
//       deadline passed before the first attempt), stopped, peer_lost.
//   void publish(const Claim& c);      // the cell becomes visible to receivers; wakes them
//   Status acquire(Claim& c, time_point deadline, bool may_wait, const Segment* peers);
//       Takes the oldest published cell to read in place, waiting while the ring is empty. ok:
//       read c.cell, then release(c). empty (!may_wait), timed_out (also a deadline already past),
//       stopped (only once drained), peer_lost. A head cell claimed but not yet published is
//       waited for (parked, watching the peers), never reported empty: by a blocking call
//       without deadline for as long as it takes, by any other call until its deadline but at
//       least k_pending_grace, then timed_out.
//   void release(const Claim& c);      // frees the cell for senders; wakes them
//   Status poll(Claim& c);             // one attempt, never waits: ok, empty (a claimed head
//                                      // too), stopped (drained), peer_lost
//   void prefetch_next(std::uint64_t position);  // a cache hint for the cell after `position`
//
//   stop() / stopped()       sticky; wakes every waiter in every process; then claim answers
//                            stopped, acquire drains and then answers stopped.
//   mark_lost() / lost()     sticky; every waiting and later call answers peer_lost.
//   size()                   published-or-claimed cells not yet acquired; exact when quiet.
//   clear(peers)             acquires and releases up to capacity() cells; returns how many.
//   blocked()                calls (of all processes) parked in claim / acquire.
//
// Algorithm: Vyukov's bounded queue with a sequence number ("turn") per cell, as
// channel/detail/mpmc_ring.hpp, for both policies (spsc is the same code; the policy is recorded
// so that an spsc Channel cannot attach to an mpmc ring or the reverse). A cell acquired and not
// yet released still occupies the ring: capacity() cells are never exceeded.
//
// Cells: a cell of at most 56 bytes shares its line with its turn, packed in cells of 16, 32 or
// 64 bytes (a power of two, so none straddles a line): a hand-off of an 8-byte item moves a
// quarter of a line each way, where a turn on a line of its own and the item on the next moved
// two whole lines (docs/performance/ipc.md, mpmc). The bytes of such a cell are 8-byte aligned;
// ipc::Channel copies items in and out with memcpy. A larger cell keeps its turn on a line of
// its own and its bytes on whole 64-byte lines, 64-byte aligned: MessageChannel's cells (never
// under 64 bytes, their header included) lend those bytes out.
//
// Waiting: a blocked call spins briefly, then parks on a futex word in the ring with
// FutexScope::shared (a private futex is keyed by the address space and would never see a wake
// from another process). Announcing and notifying use the symmetric protocol of
// channel/detail/event_count.hpp — RMWs on the word, never membarrier, which orders the threads
// of one process only. Parks are sliced (k_watch_slice): after each slice the waiter asks
// `peers` for a registered participant that died; one makes the ring lost. The non-blocking
// path makes no system call: stopped and lost are one load each; a no-wait call that fails
// (full / empty) watches the peers at most once per k_watch_slice across all processes.

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/detail/futex.hpp>
#include <ferry/core/cpu_relax.hpp>
#include <ferry/core/status.hpp>
#include <ferry/ipc/detail/shared_ring_common.hpp>
#include <ferry/ipc/segment.hpp>
#include <new>
#include <span>
#include <string>
#include <type_traits>

namespace ferry::ipc::detail {

inline constexpr std::uint64_t k_ring_magic = 0x474e495259525245ULL; // "ERRYRING"
// Bump on layout changes. 2: cells of at most 56 bytes share a line with their turn.
inline constexpr std::uint32_t k_ring_format = 2;
// How long a no-wait or timed receive waits, past its own deadline, for a claimed head to be
// published (see SharedRing::pending_limit).
inline constexpr std::chrono::milliseconds k_pending_grace{20};

// The ring's words in shared memory. Layout only: processes reach them through a SharedRing
// handle, never by reading the geometry back (see the rule in segment_header.hpp). Line 0 is the
// geometry the creator writes once, for attach to compare; each word other processes change
// lives on its own line and is accessed through std::atomic_ref only.
struct RingControl {
    alignas(k_ring_line) std::uint64_t magic;
    std::uint32_t format;
    RingPolicy policy;
    std::uint32_t capacity;
    std::uint32_t cell_bytes;
    std::uint64_t stride;
    std::uint32_t ready;
    alignas(k_ring_line) std::uint64_t tail; // next position to claim
    alignas(k_ring_line) std::uint64_t head; // next position to acquire
    alignas(k_ring_line) std::uint32_t stopped;
    std::uint32_t lost;
    alignas(k_ring_line) std::uint32_t items_word; // receivers park here
    alignas(k_ring_line) std::uint32_t slots_word; // senders park here
    alignas(k_ring_line) std::uint32_t blocked;
    std::int64_t next_watch_ns; // coarse monotonic time of the next no-wait peer check
};
static_assert(std::is_standard_layout_v<RingControl> && std::is_trivial_v<RingControl>);
static_assert(sizeof(RingControl) % k_ring_line == 0);
static_assert(offsetof(RingControl, capacity) == offsetof(RingGeometry, capacity) &&
              offsetof(RingControl, ready) == offsetof(RingGeometry, ready) &&
              offsetof(RingControl, tail) >= sizeof(RingGeometry)); // line 0 is a RingGeometry
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);

// One process's handle on a ring: a pointer to the shared words and cells, and the geometry this
// process asked for (checked against the ring at attach), kept here. Positions come from shared
// counters; each is reduced by the private capacity before it names a cell, so no value a peer
// writes can make a cell address fall outside the memory attach checked. Copyable; an empty
// handle (the default) is not attached to anything.
class SharedRing {
public:
    using clock = std::chrono::steady_clock;
    struct Claim {
        std::uint64_t position = 0;
        std::byte* cell = nullptr;
    };

    SharedRing() noexcept = default;

    // Bytes the ring needs for this geometry (the words and the cells); 0 when invalid.
    [[nodiscard]] static std::size_t bytes_for(std::size_t capacity,
                                               std::size_t cell_bytes) noexcept {
        if (!valid(capacity, cell_bytes)) {
            return 0;
        }
        return sizeof(RingControl) + capacity * stride_for(cell_bytes);
    }

    // Constructs a ring at the start of `memory` (zeroed or not); an empty handle when the
    // geometry is invalid or `memory` is too small or misaligned. Ready for attach once this
    // returns.
    [[nodiscard]] static SharedRing create(std::span<std::byte> memory, std::size_t capacity,
                                           std::size_t cell_bytes, RingPolicy policy) noexcept;

    // The ring at the start of `memory` if it is ready and has exactly this geometry and
    // policy. Otherwise an empty handle, and `why` says what differs — or is left empty when the
    // ring is not initialised yet (its creator is still constructing it: poll again).
    [[nodiscard]] static SharedRing attach(std::span<std::byte> memory, std::size_t capacity,
                                           std::size_t cell_bytes, RingPolicy policy,
                                           std::string* why);

    [[nodiscard]] bool attached() const noexcept { return control_ != nullptr; }

    // ---- in place ----------------------------------------------------------------------------
    Status claim(Claim& c, clock::time_point deadline, bool may_wait,
                 const Segment* peers) noexcept {
        Outcome first = attempt_claim(c);
        if (settled(first, Status::full, may_wait)) {
            return after_fast_failure(first.status, peers);
        }
        if (past(deadline)) { // a wait whose time ran out before it began
            return after_fast_failure(Status::timed_out, peers);
        }
        return wait(control_->slots_word, deadline, deadline, may_wait, Status::full, peers,
                    [this, &c] { return attempt_claim(c); });
    }

    void publish(const Claim& c) noexcept {
        turn(c.position).store(c.position + 1, std::memory_order_release);
        notify(control_->items_word);
    }

    // A hint for a sender that has just published `position` and will most likely claim the
    // next one (MessageChannel's loans): asks the cache for that cell's turn and the first lines
    // of its bytes, so that they move from the receiver that read them a lap ago while this
    // sender returns, not when it next writes there. It changes no memory. Cells that share a
    // line with their turn are left alone.
    void prefetch_next(std::uint64_t position) const noexcept {
        if (packed(cell_bytes_)) {
            return;
        }
        std::byte* const next = cell_at(position + 1);
        __builtin_prefetch(next, 0, 3);
        for (std::size_t line = 0; line < k_prefetched_lines; ++line) {
            __builtin_prefetch(next + k_cell_header + line * k_ring_line, 1, 3);
        }
    }

    Status acquire(Claim& c, clock::time_point deadline, bool may_wait,
                   const Segment* peers) noexcept {
        // Only a call that can stop waiting needs to tell a claimed head from an empty ring; a
        // blocking call without deadline waits for both alike and never reads the tail.
        if (may_wait && deadline == clock::time_point::max()) {
            return acquire_forever(c, peers);
        }
        return acquire_as<true>(c, deadline, may_wait, peers);
    }

    // One attempt that never waits: ok, or empty — also when the head is claimed and not yet
    // published — or stopped (once drained; a claimed head is not drained) or peer_lost. What a
    // counted receive tries first (ProcessCounters::acquire).
    Status poll(Claim& c) noexcept { return attempt_acquire<false>(c).status; }

    void release(const Claim& c) noexcept {
        turn(c.position).store(c.position + capacity_, std::memory_order_release);
        notify(control_->slots_word);
    }

    // ---- state -------------------------------------------------------------------------------
    void stop() noexcept { raise(control_->stopped); }
    [[nodiscard]] bool stopped() const noexcept { return load_flag(control_->stopped); }
    void mark_lost() noexcept { raise(control_->lost); }
    [[nodiscard]] bool lost() const noexcept { return load_flag(control_->lost); }

    [[nodiscard]] std::size_t size() const noexcept {
        return ring_size(control_->head, control_->tail, capacity_);
    }

    // Its depth is sampled by ProcessCounters::published (see SpscSharedRing's).
    static constexpr bool k_samples_depth = false;

    // The counters as they stand (one load each; another process may have written anything):
    // positions claimed (a claim is never abandoned, so a send in flight counts already) and
    // acquired since the ring was made. Statistics only.
    [[nodiscard]] std::uint64_t published() const noexcept {
        return ref(control_->tail).load(std::memory_order_acquire);
    }
    [[nodiscard]] std::uint64_t released() const noexcept {
        return ref(control_->head).load(std::memory_order_acquire);
    }

    // Drops up to capacity() queued cells (bounded, so refilling senders cannot keep it
    // running); waits for a claimed head to be published. Returns how many were dropped.
    std::size_t clear(const Segment* peers) noexcept { return drop_queued(*this, peers); }

    // A count peers change: at most what a process can park, never used as an index.
    [[nodiscard]] std::size_t blocked() const noexcept {
        return ref(control_->blocked).load(std::memory_order_acquire);
    }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] std::size_t cell_bytes() const noexcept { return cell_bytes_; }
    [[nodiscard]] RingPolicy policy() const noexcept { return policy_; }

    // Asks `peers` whether a registered participant died; one marks the ring lost. True when
    // the ring is lost (now or before).
    bool watch(const Segment* peers) noexcept { return watch_peers(*this, peers); }

private:
    // A cell's turn, then its bytes: next to it in a packed cell, on the next line otherwise
    // (see Cells in the header comment).
    static constexpr std::size_t k_turn_bytes = sizeof(std::uint64_t);
    static constexpr std::size_t k_cell_header = k_ring_line;
    // Lines of the next cell's bytes prefetch_next asks for: a MessageChannel's cell header and a
    // data set's framing and first payload line.
    static constexpr std::size_t k_prefetched_lines = 4;

    struct Outcome {
        Status status;
        bool pending = false; // the head is claimed but unpublished: wait for it
    };

    SharedRing(RingControl* control, std::size_t capacity, std::size_t cell_bytes,
               RingPolicy policy) noexcept
        : control_(control), cells_(reinterpret_cast<std::byte*>(control) + sizeof(RingControl)),
          capacity_(static_cast<std::uint32_t>(capacity)),
          cell_bytes_(static_cast<std::uint32_t>(cell_bytes)), stride_(stride_for(cell_bytes)),
          header_(header_for(cell_bytes)), policy_(policy) {}

    static bool valid(std::size_t capacity, std::size_t cell_bytes) noexcept {
        return ring_geometry_valid(capacity, cell_bytes);
    }
    // Whether the turn and the bytes share a line (see Cells in the header comment).
    static bool packed(std::size_t cell_bytes) noexcept {
        return cell_bytes <= k_ring_line - k_turn_bytes;
    }
    static std::size_t header_for(std::size_t cell_bytes) noexcept {
        return packed(cell_bytes) ? k_turn_bytes : k_cell_header;
    }
    static std::size_t stride_for(std::size_t cell_bytes) noexcept {
        if (packed(cell_bytes)) {
            return std::bit_ceil(k_turn_bytes + cell_bytes);
        }
        return k_cell_header + (cell_bytes + k_ring_line - 1) / k_ring_line * k_ring_line;
    }
    static bool aligned(const void* p) noexcept { return ring_aligned(p); }
    static bool past(clock::time_point deadline) noexcept { return ring_past(deadline); }
    // How long a receive waits for a claimed head: a blocking call without a deadline for as
    // long as it takes; any other call until its deadline, and at least k_pending_grace (a
    // no-wait call too), so a send in flight is not reported missing — but never for ever, as a
    // peer that claimed and never publishes would otherwise hold it (docs/processes.md,
    // Reading shared memory).
    static clock::time_point pending_limit(clock::time_point deadline, bool may_wait) noexcept {
        if (may_wait && deadline == clock::time_point::max()) {
            return deadline;
        }
        const auto grace = clock::now() + k_pending_grace;
        return may_wait ? std::max(deadline, grace) : grace;
    }
    // Done waiting: an answer that is not "busy", or busy without leave to wait. A pending head
    // is never done.
    static bool settled(const Outcome& o, Status busy, bool may_wait) noexcept {
        return !o.pending && (o.status != busy || !may_wait);
    }

    template <typename W>
    static std::atomic_ref<W> ref(W& word) noexcept {
        return ring_ref(word);
    }
    static bool load_flag(std::uint32_t& flag) noexcept {
        return ref(flag).load(std::memory_order_acquire) != 0;
    }

    // The cell of `position`: reduced by the private capacity, so always one of this process's
    // checked cells whatever the shared counters say.
    std::byte* cell_at(std::uint64_t position) const noexcept {
        return cells_ + static_cast<std::size_t>(position % capacity_) * stride_;
    }
    std::atomic_ref<std::uint64_t> turn(std::uint64_t position) const noexcept {
        return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(cell_at(position)));
    }

    // acquire(), for a call that tells a claimed head from an empty ring (TellPending) or not.
    template <bool TellPending>
    Status acquire_as(Claim& c, clock::time_point deadline, bool may_wait,
                      const Segment* peers) noexcept {
        Outcome first = attempt_acquire<TellPending>(c);
        if (settled(first, Status::empty, may_wait)) {
            return after_fast_failure(first.status, peers);
        }
        if (!first.pending && past(deadline)) {
            return after_fast_failure(Status::timed_out, peers);
        }
        return wait(control_->items_word, deadline, pending_limit(deadline, may_wait), may_wait,
                    Status::empty, peers, [this, &c] { return attempt_acquire<TellPending>(c); });
    }

    [[gnu::noinline]] Status acquire_forever(Claim& c, const Segment* peers) noexcept {
        return acquire_as<false>(c, clock::time_point::max(), true, peers);
    }

    Outcome attempt_claim(Claim& c) noexcept;
    template <bool TellPending>
    Outcome attempt_acquire(Claim& c) noexcept;
    template <bool TellPending>
    [[gnu::always_inline]] bool try_acquire(Claim& c, bool& pending) noexcept;
    Outcome corrupt() noexcept;
    Status after_fast_failure(Status status, const Segment* peers) noexcept;
    template <typename Attempt>
    Status wait(std::uint32_t& event, clock::time_point deadline, clock::time_point pending_until,
                bool may_wait, Status busy, const Segment* peers, Attempt attempt) noexcept;

    // Event words: the protocol of channel/detail/event_count.hpp in its symmetric mode, in a
    // layout of their own (the mode is fixed here): (epoch << 1) | sleepers.
    static std::uint32_t prepare_wait(std::uint32_t& event) noexcept {
        return ref(event).fetch_or(1, std::memory_order_acq_rel) | 1;
    }
    static void notify(std::uint32_t& event) noexcept {
        auto word = ref(event);
        // fetch_add(0), not a load: the RMW is what orders this notifier against prepare_wait.
        std::uint32_t seen = word.fetch_add(0, std::memory_order_acq_rel);
        while ((seen & 1) != 0) {
            if (word.compare_exchange_weak(seen, seen + 1, std::memory_order_acq_rel)) {
                ferry::detail::futex_wake(&event, INT_MAX, ferry::detail::FutexScope::shared);
                return;
            }
        }
    }
    void raise(std::uint32_t& flag) noexcept {
        ref(flag).store(1, std::memory_order_seq_cst);
        notify(control_->items_word);
        notify(control_->slots_word);
    }

    RingControl* control_ = nullptr; // in shared memory
    std::byte* cells_ = nullptr;     // in shared memory, capacity_ * stride_ bytes (checked)
    // Private geometry: this process's own, compared with the ring's at attach.
    std::uint32_t capacity_ = 0;
    std::uint32_t cell_bytes_ = 0;
    std::size_t stride_ = 0;
    std::size_t header_ = 0; // from a cell's start to its bytes
    RingPolicy policy_ = RingPolicy::spsc;
};

} // namespace ferry::ipc::detail

#include <ferry/ipc/detail/shared_ring_impl.hpp>
