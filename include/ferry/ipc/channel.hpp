#pragma once
// ferry::ipc::Channel<T, Capacity, Policy> — a bounded, typed channel between processes, over a
// named shared segment (docs/processes.md, Channels).
//
//     auto jobs = ferry::ipc::Channel<Job, 64>::create("jobs");      // process A (spsc)
//     auto peer = ferry::ipc::Channel<Job, 64>::open("jobs");        // process B
//     jobs->send(job);                                                // blocks while full
//     auto next = peer->receive_for(5ms);                             // Result<Job>
//     if (next.status() == ferry::Status::peer_lost) { /* A died: make a new channel */ }
//
// Semantics: those of ferry::Channel (docs/channel.md) across processes — capacity holds exactly
// Capacity items; timeouts on the steady clock, never early; stop() from any process is sticky
// and wakes every blocked caller in every process; receives drain after stop; clear; exact size
// when quiet. T is trivially copyable and is copied byte for byte into the shared cell.
// Added: Status::peer_lost — a participant of the channel died without closing it. That is
// sticky and for everyone: every blocked call (within about 20-100 ms of the death) and every
// later call that has to wait answers peer_lost; survivors close and create a new channel.
// Removal: the last live participant to close (or destroy) its Channel removes the name; dead
// participants do not count, and a name left by processes that all died is reclaimed by the
// next create.
// Counters: stats() sums what every process counted on this channel, kept in the segment
// (ferry/channel/stats.hpp; docs/processes.md, Counters); the message and byte totals come from
// the ring's own counters, so a send or receive that does not wait updates no counter. A policy
// with counters = false has none.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/policy.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/ipc/detail/channel_counters.hpp>
#include <ferry/ipc/detail/shared_ring_spsc.hpp>
#include <ferry/ipc/error.hpp>
#include <ferry/ipc/layout_tag.hpp>
#include <ferry/ipc/segment.hpp>
#include <ferry/runtime/profiler.hpp>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace ferry::ipc {

// What crosses a process boundary: bytes only, so no pointers into one process's heap. (A T
// holding a pointer compiles but the pointer means nothing to the receiver.)
template <typename T>
concept ProcessSendable =
    std::is_trivially_copyable_v<T> && std::is_object_v<T> && !std::is_const_v<T> &&
    alignof(T) <= detail::k_ring_line;

template <ProcessSendable T, std::size_t Capacity, ChannelPolicy Policy = ferry::spsc>
requires(is_valid_channel_capacity(Capacity)) class Channel {
public:
    using value_type = T;
    using policy_type = Policy;
    using clock = Timeout::clock;

    // The layout the segment holds: T's size and alignment, Capacity and the policy. Two Ts of
    // equal size and alignment are not told apart: name channels by what they carry.
    static constexpr LayoutTag layout_tag() noexcept {
        LayoutTag tag = layout_tag_of<T>("ferry.ipc.channel", k_ring_format);
        tag.hash = detail::fnv1a(detail::fnv1a(tag.hash, Capacity), Policy::multi_producer);
        return tag;
    }

    // Creates the segment (reclaiming a stale one) and the ring in it. Errors as
    // Segment::create (docs/processes.md, Errors).
    [[nodiscard]] static Expected<Channel> create(std::string_view name,
                                                  std::chrono::milliseconds wait = k_default_wait);
    // Opens a channel another process created with the same T, Capacity and Policy
    // (invalid_file otherwise); waits up to `wait` for a creator still setting it up.
    [[nodiscard]] static Expected<Channel> open(std::string_view name,
                                                std::chrono::milliseconds wait = k_default_wait);
    // Opens, or creates when there is no such name (whichever of two racing processes creates,
    // the other opens). Errors as open and create.
    [[nodiscard]] static Expected<Channel>
    open_or_create(std::string_view name, std::chrono::milliseconds wait = k_default_wait) {
        return open_or_create_with([&] { return open(name, wait); },
                                   [&] { return create(name, wait); });
    }
    // Opens, waiting up to `wait` for the name to appear as well (open answers not_found at
    // once); not_found when it never did.
    [[nodiscard]] static Expected<Channel> await_open(std::string_view name,
                                                      std::chrono::milliseconds wait) {
        return retry_while_not_found(wait, [&](auto left) { return open(name, left); });
    }

    Channel(Channel&& other) noexcept
        : segment_(std::move(other.segment_)), ring_(std::exchange(other.ring_, {})),
          counters_(std::exchange(other.counters_, {})) {}
    Channel& operator=(Channel&& other) noexcept {
        if (this != &other) {
            static_cast<void>(close());
            segment_ = std::move(other.segment_);
            ring_ = std::exchange(other.ring_, {});
            counters_ = std::exchange(other.counters_, {});
        }
        return *this;
    }
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;
    ~Channel() { static_cast<void>(close()); }

    // Leaves the channel (not a stop: the other side is not told); the last live participant
    // removes the name. Idempotent. Calls on a closed channel answer uninitialized.
    Expected<void> close() noexcept {
        ring_ = {};
        counters_ = {};
        try {
            return segment_.is_open() ? segment_.close_and_remove_if_last() : Expected<void>{};
        } catch (const std::bad_alloc&) { // only an error's message; the segment is closed
            return Error{Status::bad_alloc, {}, 0};
        }
    }
    [[nodiscard]] bool is_open() const noexcept { return ring_.attached(); }
    [[nodiscard]] const std::string& name() const noexcept { return segment_.name(); }

    // ---- send -------------------------------------------------------------------------------
    Status send(const T& value, Timeout timeout = forever) noexcept {
        return send_at(value, !timeout.is_no_wait(), deadline_of(timeout));
    }
    Status try_send(const T& value) noexcept { return send(value, no_wait); }
    template <typename Rep, typename Period>
    Status send_for(const T& value, std::chrono::duration<Rep, Period> timeout) noexcept {
        return send(value, Timeout(timeout));
    }
    template <typename Duration>
    Status send_until(const T& value, std::chrono::time_point<clock, Duration> deadline) noexcept {
        const auto d = std::chrono::ceil<clock::duration>(deadline);
        return send_at(value, d > clock::now(), d); // already past when given: no_wait
    }

    // ---- receive ----------------------------------------------------------------------------
    Result<T> receive(Timeout timeout = forever) noexcept {
        return receive_result(!timeout.is_no_wait(), deadline_of(timeout));
    }
    Result<T> try_receive() noexcept { return receive(no_wait); }
    template <typename Rep, typename Period>
    Result<T> receive_for(std::chrono::duration<Rep, Period> timeout) noexcept {
        return receive(Timeout(timeout));
    }
    template <typename Duration>
    Result<T> receive_until(std::chrono::time_point<clock, Duration> deadline) noexcept {
        const auto d = std::chrono::ceil<clock::duration>(deadline);
        return receive_result(d > clock::now(), d); // already past when given: no_wait
    }
    // Into an existing object; `out` is untouched on failure.
    Status receive(T& out, Timeout timeout = forever) noexcept {
        return receive_at(out, !timeout.is_no_wait(), deadline_of(timeout));
    }

    // ---- stop / clear / size ----------------------------------------------------------------
    // Sticky; wakes every blocked sender and receiver in every process.
    void stop() noexcept {
        if (ring_.attached()) {
            ring_.stop();
        }
    }
    [[nodiscard]] bool stopped() const noexcept { return !ring_.attached() || ring_.stopped(); }
    // True once a participant was found dead (sticky): the channel answers peer_lost.
    [[nodiscard]] bool lost() const noexcept { return ring_.attached() && ring_.lost(); }
    // Drops the queued items and wakes blocked senders; returns how many were dropped.
    // spsc: call it from the receiving side.
    std::size_t clear() noexcept {
        if (!ring_.attached()) {
            return 0;
        }
        const std::size_t dropped = ring_.clear(&segment_);
        counters_.dropped(dropped);
        return dropped;
    }
    [[nodiscard]] std::size_t size() const noexcept { return ring_.attached() ? ring_.size() : 0; }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    [[nodiscard]] static constexpr std::size_t capacity() noexcept { return Capacity; }
    // Calls, of every process, parked in a blocking send or receive (after their spin phase).
    // A process that dies while parked stays counted; the channel is lost by then.
    [[nodiscard]] std::size_t blocked() const noexcept {
        return ring_.attached() ? ring_.blocked() : 0;
    }

    // What every process counted on this channel since it was created (all zero once closed).
    [[nodiscard]] ChannelStats
    stats() const noexcept requires ferry::detail::counters_enabled<Policy> {
        if (!ring_.attached()) {
            return {};
        }
        return detail::with_ring_totals(detail::sum_counters(segment_.counter_area()),
                                        ring_.published(), ring_.released(), sizeof(T));
    }

private:
    static constexpr detail::RingPolicy k_policy =
        Policy::multi_producer ? detail::RingPolicy::mpmc : detail::RingPolicy::spsc;
    // spsc: the single-producer ring (no CAS on the fast path); mpmc: Vyukov's ring.
    using Ring = detail::ring_for<Policy::multi_producer>;
    // The layout tag's version: an spsc channel's is its ring's format + 1 (version 1 was
    // Vyukov's ring for both policies; 2 SpscSharedRing with the seq_cst wake; 3 the asymmetric
    // wake; 4 a turn per cell), so a peer of an older build, whose waits would miss a wake or
    // whose cells are laid out otherwise, is refused. An mpmc channel's is Vyukov's ring's
    // format (2: small items packed next to their turns); the policy is in the hash as well.
    static constexpr std::uint32_t k_ring_format =
        Policy::multi_producer ? detail::k_ring_format : detail::k_spsc_ring_format + 1;

    using Counters = detail::ProcessCounters<ferry::detail::counters_enabled<Policy>>;

    Channel(Segment segment, Ring ring) noexcept
        : segment_(std::move(segment)), ring_(ring),
          counters_(detail::own_block(segment_), Policy::multi_producer) {
        if constexpr (Ring::k_samples_depth) {
            ring_.sample_depth_into(counters_.high_water_word());
        }
    }

    static clock::time_point deadline_of(Timeout timeout) noexcept {
        return timeout.is_forever() || timeout.is_no_wait() ? clock::time_point::max()
                                                            : timeout.deadline_from(clock::now());
    }

    // The trace span only while a profiler records (out of line): the fast path pays one load
    // for it, and inlines the rest.
    Status send_at(const T& value, bool may_wait, clock::time_point deadline) noexcept {
        if (!ring_.attached()) {
            return Status::uninitialized;
        }
        if (tracing()) [[unlikely]] {
            return send_traced(value, may_wait, deadline);
        }
        return send_untraced(value, may_wait, deadline);
    }
    [[gnu::noinline]] Status send_traced(const T& value, bool may_wait,
                                         clock::time_point deadline) noexcept {
        const TraceSpan trace("ipc.send", "channel");
        return send_untraced(value, may_wait, deadline);
    }
    [[gnu::always_inline]] Status send_untraced(const T& value, bool may_wait,
                                                clock::time_point deadline) noexcept {
        typename Ring::Claim c;
        const Status s = counters_.claim(ring_, c, deadline, may_wait, &segment_);
        if (s == Status::ok) [[likely]] {
            std::memcpy(c.cell, &value, sizeof(T));
            ring_.publish(c);
            counters_.published(ring_, c.position);
        }
        return s;
    }

    // Copies the oldest item's bytes to `out` (sizeof(T) bytes, suitably aligned).
    Status receive_bytes(void* out, bool may_wait, clock::time_point deadline) noexcept {
        if (!ring_.attached()) {
            return Status::uninitialized;
        }
        if (tracing()) [[unlikely]] {
            return receive_traced(out, may_wait, deadline);
        }
        return receive_untraced(out, may_wait, deadline);
    }
    [[gnu::noinline]] Status receive_traced(void* out, bool may_wait,
                                            clock::time_point deadline) noexcept {
        const TraceSpan trace("ipc.receive", "channel");
        return receive_untraced(out, may_wait, deadline);
    }
    [[gnu::always_inline]] Status receive_untraced(void* out, bool may_wait,
                                                   clock::time_point deadline) noexcept {
        typename Ring::Claim c;
        const Status s = counters_.acquire(ring_, c, deadline, may_wait, &segment_);
        if (s == Status::ok) [[likely]] {
            std::memcpy(out, c.cell, sizeof(T));
            ring_.release(c);
        }
        return s;
    }
    Status receive_at(T& out, bool may_wait, clock::time_point deadline) noexcept {
        return receive_bytes(&out, may_wait, deadline);
    }
    // T need not be default-constructible: the bytes land in raw storage, and a trivially
    // copyable T is an implicit-lifetime type, so the copy creates the object.
    Result<T> receive_result(bool may_wait, clock::time_point deadline) noexcept {
        alignas(T) std::byte storage[sizeof(T)];
        const Status s = receive_bytes(storage, may_wait, deadline);
        return s == Status::ok ? Result<T>(*std::launder(reinterpret_cast<T*>(storage)))
                               : Result<T>(s);
    }

    Segment segment_;
    Ring ring_;         // on segment_'s payload; not attached when closed
    Counters counters_; // this process's block in segment_'s counter area
};

template <ProcessSendable T, std::size_t Capacity, ChannelPolicy Policy>
requires(is_valid_channel_capacity(Capacity))
    Expected<Channel<T, Capacity, Policy>> Channel<T, Capacity, Policy>::create(
        std::string_view name, std::chrono::milliseconds wait) {
    constexpr auto tag = layout_tag();
    auto segment = Segment::create(name, Ring::bytes_for(Capacity, sizeof(T)), tag, wait);
    if (!segment) {
        return segment.error();
    }
    auto ring = Ring::create(segment->payload(), Capacity, sizeof(T), k_policy);
    if (!ring.attached()) { // cannot happen for a valid Capacity: the payload was sized for it
        return Error{Status::internal_error, "ipc: cannot place a ring in " + segment->name(), 0};
    }
    return Channel(std::move(*segment), ring);
}

template <ProcessSendable T, std::size_t Capacity, ChannelPolicy Policy>
requires(is_valid_channel_capacity(Capacity))
    Expected<Channel<T, Capacity, Policy>> Channel<T, Capacity, Policy>::open(
        std::string_view name, std::chrono::milliseconds wait) {
    const auto deadline = detail::Clock::now() + wait;
    constexpr auto tag = layout_tag();
    auto segment = Segment::open(name, tag, wait);
    if (!segment) {
        return segment.error();
    }
    // The segment is ready before its creator has constructed the ring in it: wait for that.
    std::string why;
    Ring ring;
    const bool done = detail::poll_until(deadline, [&] {
        ring = Ring::attach(segment->payload(), Capacity, sizeof(T), k_policy, &why);
        return ring.attached() || !why.empty() || segment->lost_participant().has_value();
    });
    if (ring.attached()) {
        return Channel(std::move(*segment), ring);
    }
    if (why.empty()) {
        why = done ? "its creator died before setting it up" : "its creator did not set it up";
    }
    return Error{done ? Status::invalid_file : Status::timed_out,
                 "ipc: channel " + std::string(name) + ": " + why, 0};
}

} // namespace ferry::ipc
