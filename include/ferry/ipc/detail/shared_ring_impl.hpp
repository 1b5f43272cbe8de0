#pragma once
// SharedRing's out-of-line parts (declared in ferry/ipc/detail/shared_ring.hpp).

#include <cstddef>
#include <cstring>
#include <ferry/ipc/detail/shared_ring.hpp>
#include <ferry/runtime/profiler.hpp>

namespace ferry::ipc::detail {

inline SharedRing SharedRing::create(std::span<std::byte> memory, std::size_t capacity,
                                     std::size_t cell_bytes, RingPolicy policy) noexcept {
    const std::size_t need = bytes_for(capacity, cell_bytes);
    if (need == 0 || memory.size() < need || !aligned(memory.data())) {
        return {};
    }
    auto* control = ::new (memory.data()) RingControl{};
    write_ring_geometry(control, k_ring_magic, k_ring_format, policy, capacity, cell_bytes,
                        stride_for(cell_bytes));
    const SharedRing ring(control, capacity, cell_bytes, policy);
    for (std::size_t i = 0; i < capacity; ++i) {
        ring.turn(i).store(i, std::memory_order_relaxed);
    }
    ref(control->ready).store(1, std::memory_order_release);
    return ring;
}

inline SharedRing SharedRing::attach(std::span<std::byte> memory, std::size_t capacity,
                                     std::size_t cell_bytes, RingPolicy policy, std::string* why) {
    auto fail = [why](const char* text) -> SharedRing {
        if (why != nullptr) {
            *why = text;
        }
        return {};
    };
    const std::size_t need = bytes_for(capacity, cell_bytes);
    if (need == 0 || memory.size() < need || !aligned(memory.data())) {
        return fail("the segment is too small for a ring of this geometry");
    }
    auto* control = std::launder(reinterpret_cast<RingControl*>(memory.data()));
    if (ref(control->ready).load(std::memory_order_acquire) != 1) {
        return {}; // not constructed yet
    }
    // One copy of the geometry line, compared with what this process asked for; only the
    // caller's values are kept.
    if (const char* differs =
            ring_geometry_mismatch(control, k_ring_magic, k_ring_format, policy, capacity,
                                   cell_bytes, stride_for(cell_bytes))) {
        return fail(differs);
    }
    return SharedRing(control, capacity, cell_bytes, policy);
}

// A turn no ferry process writes (a position that did not move although its turn says another
// process moved it): the ring is corrupt, and is lost for everyone.
inline SharedRing::Outcome SharedRing::corrupt() noexcept {
    mark_lost();
    return {Status::peer_lost};
}

inline SharedRing::Outcome SharedRing::attempt_claim(Claim& c) noexcept {
    if (lost()) {
        return {Status::peer_lost};
    }
    if (stopped()) {
        return {Status::stopped};
    }
    auto tail = ref(control_->tail);
    std::uint64_t pos = tail.load(std::memory_order_relaxed);
    for (;;) {
        const std::uint64_t t = turn(pos).load(std::memory_order_acquire);
        if (t == pos) {
            if (tail.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                c = Claim{pos, cell_at(pos) + header_};
                return {Status::ok};
            }
        } else if (t < pos) {
            return {Status::full}; // the cell is still queued (or loaned) from one lap ago
        } else {
            // Another sender took `pos`: its claim happens-before the turn seen, so the tail
            // has moved on. One that did not is a turn written by no sender.
            const std::uint64_t seen = pos;
            pos = tail.load(std::memory_order_relaxed);
            if (pos == seen) {
                return corrupt();
            }
        }
    }
}

// Vyukov's pop, split: the cell is handed out, and release() gives it back. `pending`: the head
// position is claimed but not published (a tail beyond it, loaded after its turn, says so);
// looked for only when TellPending, as the tail is the senders' line: a receiver that loads it
// while it waits takes that line from the sender at every message.
template <bool TellPending>
inline bool SharedRing::try_acquire(Claim& c, bool& pending) noexcept {
    auto head = ref(control_->head);
    std::uint64_t pos = head.load(std::memory_order_relaxed);
    for (;;) {
        const std::uint64_t t = turn(pos).load(std::memory_order_acquire);
        if (t == pos + 1) {
            if (head.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                c = Claim{pos, cell_at(pos) + header_};
                return true;
            }
        } else if (t < pos + 1) {
            if constexpr (TellPending) {
                pending = ref(control_->tail).load(std::memory_order_relaxed) > pos;
            }
            return false;
        } else {
            // As in attempt_claim: a head that did not move under a later turn is corrupt.
            const std::uint64_t seen = pos;
            pos = head.load(std::memory_order_relaxed);
            if (pos == seen) {
                corrupt();
                return false;
            }
        }
    }
}

template <bool TellPending>
inline SharedRing::Outcome SharedRing::attempt_acquire(Claim& c) noexcept {
    if (lost()) {
        return {Status::peer_lost};
    }
    bool pending = false;
    if (try_acquire<TellPending>(c, pending)) {
        return {Status::ok};
    }
    if (lost()) { // found corrupt
        return {Status::peer_lost};
    }
    if (pending) {
        return {Status::empty, true};
    }
    if (!stopped()) {
        return {Status::empty};
    }
    // Stopped: drain. Once more, so a cell published before stop() but after the first try is
    // still delivered; a claimed head is waited for, never reported stopped, so here the tail is
    // always read.
    if (try_acquire<true>(c, pending)) {
        return {Status::ok};
    }
    return pending ? Outcome{Status::empty, true} : Outcome{Status::stopped};
}

// A no-wait call that found the ring full / empty: the one place a non-blocking caller learns
// of a dead peer. Rate-limited across processes by a shared timestamp, so a polling loop pays
// for the /proc reads once per k_watch_slice, not per call.
inline Status SharedRing::after_fast_failure(Status status, const Segment* peers) noexcept {
    if ((status != Status::full && status != Status::empty) || peers == nullptr) {
        return status;
    }
    if (ring_watch_due(control_->next_watch_ns)) {
        return watch(peers) ? Status::peer_lost : status;
    }
    return status;
}

// Spin, then park in slices on `event` until attempt() settles (see settled), the deadline
// passes (`pending_until` while the head is pending), or a peer is found dead. attempt() runs after
// every wake-up before the deadline is looked at, so a wake is never dropped by a waiter timing
// out.
template <typename Attempt>
Status SharedRing::wait(std::uint32_t& event, clock::time_point deadline,
                        clock::time_point pending_until, bool may_wait, Status busy,
                        const Segment* peers, Attempt attempt) noexcept {
    const unsigned spins = ring_spin_limit(policy_);
    for (unsigned i = 0; i < spins; ++i) {
        ferry::detail::cpu_relax();
        if (const Outcome o = attempt(); settled(o, busy, may_wait)) {
            return o.status;
        }
    }
    const ParkedCount counted(control_->blocked);
    const TraceSpan parked("ipc.park", "channel");
    auto next_watch = clock::now() + k_watch_slice;
    for (;;) {
        const std::uint32_t key = prepare_wait(event);
        const Outcome o = attempt();
        if (settled(o, busy, may_wait)) {
            return o.status;
        }
        const auto now = clock::now();
        if (now >= (o.pending ? pending_until : deadline)) { // max(): never
            // A head claimed by a process that died is the common reason to get here.
            return o.pending && watch(peers) ? Status::peer_lost : Status::timed_out;
        }
        if (now >= next_watch) {
            if (watch(peers)) {
                return Status::peer_lost;
            }
            next_watch = now + k_watch_slice;
        }
        // Sliced only while there are peers to watch; a pending head has its own limit.
        const auto until = o.pending ? pending_until : deadline;
        const auto wake_at = peers == nullptr ? until : std::min(until, next_watch);
        ferry::detail::futex_wait_until(&event, key, wake_at, ferry::detail::FutexScope::shared);
    }
}

} // namespace ferry::ipc::detail
