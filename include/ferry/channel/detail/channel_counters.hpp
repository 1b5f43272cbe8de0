#pragma once
// The counters of an in-process ferry::Channel (ferry/channel/stats.hpp; docs/channel.md,
// Counters): the sending side's words and the receiving side's words, each on its own
// false-sharing range, so that neither side's updates touch a line the other side writes.
// ferry::Channel counts no message here: its ring already does (snapshot_with(ring)); only the
// rarer events (full, empty, parked time, samples of the depth, clear, refusals) are words here.
// The remote channels count their messages with sent() / received().
// ChannelCounters<false, ...> is the same interface with nothing behind it (a policy with
// counters = false).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/stats.hpp>

namespace ferry::detail {

enum class ChannelSide { send, receive };

template <bool Enabled, bool SharedWriters>
class ChannelCounters {
public:
    template <typename Depth>
    void sent(std::uint64_t bytes, Depth depth) noexcept {
        CounterUpdates::sent(send_.words, bytes, SharedWriters, depth);
    }
    void found_full(std::size_t capacity) noexcept {
        CounterUpdates::found_full(send_.words, capacity, SharedWriters);
    }
    void refused() noexcept { counter_add(send_.words.refused, 1, SharedWriters); }
    // Returns the count of messages received, this one included.
    std::uint64_t received(std::uint64_t bytes) noexcept {
        return CounterUpdates::received(receive_.words, bytes, SharedWriters);
    }
    void found_empty() noexcept { counter_add(receive_.words.empty, 1, SharedWriters); }
    // A queue depth seen by some other path than sent(): a ring's sample, a remote receiver.
    void observed_depth(std::size_t depth) noexcept {
        counter_raise(send_.words.high_water, depth, SharedWriters);
    }
    // clear() is a receive of everything: the receiving side's words (mpmc: any thread).
    void dropped(std::size_t items) noexcept {
        if (items != 0) {
            counter_add(receive_.words.dropped, items, SharedWriters);
        }
    }

    [[nodiscard]] ChannelStats snapshot() const noexcept {
        ChannelStats s;
        CounterUpdates::add_to(s, send_.words);
        CounterUpdates::add_to(s, receive_.words);
        return s;
    }

    // The counts of a channel whose ring counts its messages (pushed() / popped(), clear()'s
    // pops included) and whose messages are all `message_bytes` long: sent = pushed, received =
    // popped less what clear() dropped. The drops are read before the pops (they are counted
    // after them), so received never goes below zero while a clear() is in flight.
    template <typename Ring>
    [[nodiscard]] ChannelStats snapshot_with(const Ring& ring,
                                             std::uint64_t message_bytes) const noexcept {
        ChannelStats s = snapshot();
        const std::uint64_t popped = ring.popped();
        s.sent = ring.pushed();
        s.received = popped > s.dropped_by_clear ? popped - s.dropped_by_clear : 0;
        s.sent_bytes = s.sent * message_bytes;
        s.received_bytes = s.received * message_bytes;
        return s;
    }

    // Times a parked wait of one side: from construction (the end of the spin phase) to
    // destruction.
    class ParkedTime {
    public:
        ParkedTime(ChannelCounters& counters, ChannelSide side) noexcept
            : word_(side == ChannelSide::send ? counters.send_.words.blocked_ns
                                              : counters.receive_.words.blocked_ns),
              start_(std::chrono::steady_clock::now()) {}
        ~ParkedTime() {
            const auto spent = std::chrono::steady_clock::now() - start_;
            counter_add(word_,
                        static_cast<std::uint64_t>(
                            std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count()),
                        SharedWriters);
        }
        ParkedTime(const ParkedTime&) = delete;
        ParkedTime& operator=(const ParkedTime&) = delete;

    private:
        std::uint64_t& word_;
        std::chrono::steady_clock::time_point start_;
    };

private:
    struct alignas(k_false_sharing_range) SendSide {
        SendCounterWords words{};
    };
    struct alignas(k_false_sharing_range) ReceiveSide {
        ReceiveCounterWords words{};
    };
    SendSide send_;
    ReceiveSide receive_;
};

template <bool SharedWriters>
class ChannelCounters<false, SharedWriters> {
public:
    template <typename Depth>
    void sent(std::uint64_t, Depth) noexcept {}
    void found_full(std::size_t) noexcept {}
    void refused() noexcept {}
    std::uint64_t received(std::uint64_t) noexcept { return 0; }
    void found_empty() noexcept {}
    void observed_depth(std::size_t) noexcept {}
    void dropped(std::size_t) noexcept {}
    struct ParkedTime {
        ParkedTime(ChannelCounters&, ChannelSide) noexcept {}
    };
};

} // namespace ferry::detail
