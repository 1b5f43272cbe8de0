#pragma once
// The counters of ferry/ipc channels, kept in the segment so that another process (and
// ferry-inspect) can read them (docs/processes.md, Counters). The rule at the top of
// segment_header.hpp applies: the counter area is read through this process's private geometry
// only (k_counters_offset, k_max_participants), each word once per read, never used as a size
// or an index.
//
// The area holds one ParticipantCounters block per participant slot of the segment header. A
// process writes only the block of the slot it registered in (a relaxed load + store per word;
// a side with several threads of that process — mpmc — uses a relaxed fetch_add on its own
// block), so no update is an RMW shared between processes. A block outlives its process: a
// process that later takes the slot goes on counting in it, so the sum over all blocks counts
// the channel's whole life. A reader sums every block.
//
// ProcessCounters<true> counts; ProcessCounters<false> (a policy with counters = false) has the
// same interface and nothing behind it. Time blocked is measured only for a call whose first,
// non-waiting attempt found the ring full or empty: the waiting call runs after it.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/stats.hpp>
#include <ferry/core/status.hpp>
#include <ferry/ipc/detail/segment_header.hpp>
#include <ferry/ipc/detail/shared_ring.hpp>
#include <span>

namespace ferry::ipc::detail {

struct ParticipantCounters {
    ferry::detail::SendCounterWords send;
    ferry::detail::ReceiveCounterWords receive;
};
static_assert(sizeof(ParticipantCounters) == k_counter_block_bytes);
static_assert(k_counters_offset + k_counters_bytes <= k_payload_offset);

// The sum over every block of a counter area of k_counters_bytes (a mapped segment's, or a
// reader's private copy).
inline ChannelStats sum_counters(std::span<const std::byte> area) noexcept {
    ChannelStats s;
    if (area.size() < k_counters_bytes) {
        return s;
    }
    const auto* blocks = reinterpret_cast<const ParticipantCounters*>(area.data());
    for (std::size_t i = 0; i < k_max_participants; ++i) {
        ferry::detail::CounterUpdates::add_to(s, blocks[i].send);
        ferry::detail::CounterUpdates::add_to(s, blocks[i].receive);
    }
    return s;
}

// A typed channel's totals, derived from its ring's own counters instead of counted per message
// (docs/processes.md, Counters): sent = positions published, received = positions released
// minus what clear() dropped (it releases too), bytes = items * item_bytes. `published` and
// `released` were each loaded once from the segment: a scribbled value gives a wrong figure
// (unsigned arithmetic, clamped at zero), never anything else.
inline ChannelStats with_ring_totals(ChannelStats s, std::uint64_t published,
                                     std::uint64_t released, std::uint64_t item_bytes) noexcept {
    s.sent = published;
    s.sent_bytes = published * item_bytes;
    s.received = released - std::min(released, s.dropped_by_clear);
    s.received_bytes = s.received * item_bytes;
    return s;
}

inline ChannelStats block_stats(const ParticipantCounters& block) noexcept {
    ChannelStats s;
    ferry::detail::CounterUpdates::add_to(s, block.send);
    ferry::detail::CounterUpdates::add_to(s, block.receive);
    return s;
}

// This process's block in an open segment (the slot it registered in).
inline ParticipantCounters* own_block(const Segment& segment) noexcept {
    return reinterpret_cast<ParticipantCounters*>(segment.counter_area().data()) + segment.slot();
}

template <bool Enabled>
class ProcessCounters {
public:
    using clock = SharedRing::clock;
    using Updates = ferry::detail::CounterUpdates;

    ProcessCounters() noexcept = default;
    // `block`: this process's block in the segment; `shared`: several threads of this process
    // may count on one side (mpmc).
    ProcessCounters(ParticipantCounters* block, bool shared) noexcept
        : block_(block), shared_(shared) {}

    // ring.claim, counted: a first attempt without waiting; only when it finds the ring full
    // (and the caller may wait) the waiting call, timed. The first attempt's ok is inline; the
    // rest is out of line (the fast path stays small enough to inline).
    template <typename Ring>
    Status claim(Ring& ring, typename Ring::Claim& c, clock::time_point deadline, bool may_wait,
                 const Segment* peers) noexcept {
        const Status first = ring.claim(c, deadline, false, peers);
        if (first == Status::ok) [[likely]] {
            return first;
        }
        return claim_after(first, ring, c, deadline, may_wait, peers);
    }

    // ring.acquire, counted. A call that may wait first polls (ring.poll never waits, not even
    // for a head that a send has claimed and not yet published: that counts as empty), then
    // makes the waiting call with its own deadline, timed. A no_wait call is the ring's no-wait
    // acquire (which waits out such a send), counted empty when it answers empty.
    template <typename Ring>
    Status acquire(Ring& ring, typename Ring::Claim& c, clock::time_point deadline, bool may_wait,
                   const Segment* peers) noexcept {
        const Status first = may_wait ? ring.poll(c) : ring.acquire(c, deadline, false, peers);
        if (first == Status::ok) [[likely]] {
            return first;
        }
        return acquire_after(first, ring, c, deadline, may_wait, peers);
    }

    // A typed channel's item published at `position` (its totals come from the ring, see
    // with_ring_totals): only the high-water mark, the depth sampled every k_high_water_sample
    // positions of the ring — unless the ring samples it itself into high_water_word().
    template <typename Ring>
    void published(const Ring& ring, std::uint64_t position) noexcept {
        if constexpr (!Ring::k_samples_depth) {
            if (((position + 1) & (ferry::detail::k_high_water_sample - 1)) == 0) {
                ferry::detail::counter_raise(block_->send.high_water, ring.size(), shared_);
            }
        }
    }
    [[nodiscard]] std::uint64_t* high_water_word() const noexcept {
        return &block_->send.high_water;
    }
    // A message of `bytes` published on `ring`.
    template <typename Ring>
    void sent(const Ring& ring, std::uint64_t bytes) noexcept {
        Updates::sent(block_->send, bytes, shared_, [&ring] { return ring.size(); });
    }
    void received(std::uint64_t bytes) noexcept {
        Updates::received(block_->receive, bytes, shared_);
    }
    void dropped(std::size_t items) noexcept {
        if (items != 0) {
            ferry::detail::counter_add(block_->receive.dropped, items, shared_);
        }
    }

private:
    template <typename Ring>
    [[gnu::noinline]] Status claim_after(Status s, Ring& ring, typename Ring::Claim& c,
                                         clock::time_point deadline, bool may_wait,
                                         const Segment* peers) noexcept {
        if (s == Status::full) {
            Updates::found_full(block_->send, ring.capacity(), shared_);
            if (may_wait) {
                s = timed(block_->send.blocked_ns,
                          [&] { return ring.claim(c, deadline, true, peers); });
            }
        }
        if (s != Status::ok) {
            ferry::detail::counter_add(block_->send.refused, 1, shared_);
        }
        return s;
    }
    template <typename Ring>
    [[gnu::noinline]] Status acquire_after(Status first, Ring& ring, typename Ring::Claim& c,
                                           clock::time_point deadline, bool may_wait,
                                           const Segment* peers) noexcept {
        if (first != Status::empty) {
            return first;
        }
        ferry::detail::counter_add(block_->receive.empty, 1, shared_);
        if (!may_wait) {
            return first;
        }
        return timed(block_->receive.blocked_ns,
                     [&] { return ring.acquire(c, deadline, true, peers); });
    }

    template <typename Call>
    Status timed(std::uint64_t& word, Call call) noexcept {
        const auto start = clock::now();
        const Status s = call();
        const auto spent =
            std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start);
        ferry::detail::counter_add(word, static_cast<std::uint64_t>(spent.count()), shared_);
        return s;
    }

    ParticipantCounters* block_ = nullptr;
    bool shared_ = false;
};

template <>
class ProcessCounters<false> {
public:
    using clock = SharedRing::clock;
    ProcessCounters() noexcept = default;
    ProcessCounters(ParticipantCounters*, bool) noexcept {}
    template <typename Ring>
    static Status claim(Ring& ring, typename Ring::Claim& c, clock::time_point deadline,
                        bool may_wait, const Segment* peers) noexcept {
        return ring.claim(c, deadline, may_wait, peers);
    }
    template <typename Ring>
    static Status acquire(Ring& ring, typename Ring::Claim& c, clock::time_point deadline,
                          bool may_wait, const Segment* peers) noexcept {
        return ring.acquire(c, deadline, may_wait, peers);
    }
    template <typename Ring>
    static void sent(const Ring&, std::uint64_t) noexcept {}
    template <typename Ring>
    static void published(const Ring&, std::uint64_t) noexcept {}
    [[nodiscard]] static std::uint64_t* high_water_word() noexcept { return nullptr; }
    static void received(std::uint64_t) noexcept {}
    static void dropped(std::size_t) noexcept {}
};

} // namespace ferry::ipc::detail
