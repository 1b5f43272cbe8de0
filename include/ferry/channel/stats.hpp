#pragma once
// ferry::ChannelStats — what a channel counted since it was made (docs/channel.md, Counters),
// and the counter words the channels keep it in.
//
//     const ferry::ChannelStats s = jobs.stats();   // ferry::Channel, ipc::Channel, net channels
//     log(s.sent, s.full, s.send_blocked_ns, s.high_water);
//
// Cheap by construction: no counter update is an RMW shared between the two sides. Each side
// (sending, receiving) owns its own words on its own cache line; one writer per word stores
// load + 1 with relaxed order, and only a side with several writers (mpmc) uses a relaxed
// fetch_add on its own line. Time blocked is read from the clock on the parking path only.
// ferry::Channel keeps no message words at all: its rings' indices are the counts
// (detail/spsc_ring.hpp, detail/mpmc_ring.hpp). The high-water mark is the capacity as soon as
// a send finds the channel full, and otherwise the queue depth sampled about every
// k_high_water_sample sends (the depth costs a load of the other side's index, which the fast
// path does not pay on every message).
//
// A policy can remove the counters altogether (what the overhead benchmarks compare):
//
//     struct uncounted : ferry::spsc { static constexpr bool counters = false; };

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstdint>

namespace ferry {

struct ChannelStats {
    std::uint64_t sent = 0;               // sends that answered ok
    std::uint64_t sent_bytes = 0;         // their payload bytes
    std::uint64_t received = 0;           // receives that answered ok
    std::uint64_t received_bytes = 0;     // their payload bytes
    std::uint64_t full = 0;               // sends that found the channel full (then waited or not)
    std::uint64_t empty = 0;              // receives that found it empty
    std::uint64_t send_blocked_ns = 0;    // time sends spent parked (after the spin phase)
    std::uint64_t receive_blocked_ns = 0; // time receives spent parked
    std::uint64_t high_water = 0;         // the deepest queue seen (see above)
    std::uint64_t dropped_by_clear = 0;   // items clear() destroyed
    std::uint64_t refused = 0; // sends answered anything but ok (full, timed_out, stopped, ...)

    // Sums two sets of counts (high_water: the larger).
    ChannelStats& operator+=(const ChannelStats& o) noexcept {
        sent += o.sent;
        sent_bytes += o.sent_bytes;
        received += o.received;
        received_bytes += o.received_bytes;
        full += o.full;
        empty += o.empty;
        send_blocked_ns += o.send_blocked_ns;
        receive_blocked_ns += o.receive_blocked_ns;
        high_water = std::max(high_water, o.high_water);
        dropped_by_clear += o.dropped_by_clear;
        refused += o.refused;
        return *this;
    }
    friend bool operator==(const ChannelStats&, const ChannelStats&) = default;
};

namespace detail {

// How often a send samples the queue depth for the high-water mark (a power of two): every
// k_high_water_sample messages (ipc, net), or ring cells (ferry::Channel).
inline constexpr std::uint64_t k_high_water_sample = 64;

template <typename Policy>
concept HasCountersFlag = requires {
    { Policy::counters } -> std::convertible_to<bool>;
};

// Whether a channel with this policy keeps counters: yes unless the policy says counters = false.
template <typename Policy>
inline constexpr bool counters_enabled = [] {
    if constexpr (HasCountersFlag<Policy>) {
        return static_cast<bool>(Policy::counters);
    } else {
        return true;
    }
}();

// One counter word. `shared_writers`: several threads may add to it at once (a relaxed
// fetch_add); otherwise its only writer stores load + by (no locked instruction). Readers load.
// Returns the new value.
inline std::uint64_t counter_add(std::uint64_t& word, std::uint64_t by,
                                 bool shared_writers) noexcept {
    std::atomic_ref<std::uint64_t> w(word);
    if (shared_writers) {
        return w.fetch_add(by, std::memory_order_relaxed) + by;
    }
    const std::uint64_t next = w.load(std::memory_order_relaxed) + by;
    w.store(next, std::memory_order_relaxed);
    return next;
}

// Raises `word` to `value` if it is lower (rarely a write: a mark only grows).
inline void counter_raise(std::uint64_t& word, std::uint64_t value, bool shared_writers) noexcept {
    std::atomic_ref<std::uint64_t> w(word);
    std::uint64_t seen = w.load(std::memory_order_relaxed);
    while (seen < value) {
        if (!shared_writers) {
            w.store(value, std::memory_order_relaxed);
            return;
        }
        if (w.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
            return;
        }
    }
}

inline std::uint64_t counter_load(const std::uint64_t& word) noexcept {
    return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(word))
        .load(std::memory_order_relaxed);
}

// The sending side's words, then the receiving side's, each on its own line(s). A plain,
// trivially copyable layout: ferry/ipc keeps the same blocks in shared memory.
struct alignas(64) SendCounterWords {
    std::uint64_t messages, bytes, full, blocked_ns, high_water, refused;
};
struct alignas(64) ReceiveCounterWords {
    std::uint64_t messages, bytes, empty, blocked_ns, dropped;
};

// The updates both sides make, on words owned by the caller's side. `shared`: the side has
// several writers (see counter_add).
class CounterUpdates {
public:
    // A send that answered ok; `depth` is called (for the high-water mark) on sampled sends.
    template <typename Depth>
    static void sent(SendCounterWords& w, std::uint64_t bytes, bool shared, Depth depth) noexcept {
        const std::uint64_t n = counter_add(w.messages, 1, shared);
        counter_add(w.bytes, bytes, shared);
        if ((n & (k_high_water_sample - 1)) == 0) {
            counter_raise(w.high_water, depth(), shared);
        }
    }
    static void found_full(SendCounterWords& w, std::uint64_t capacity, bool shared) noexcept {
        counter_add(w.full, 1, shared);
        counter_raise(w.high_water, capacity, shared);
    }
    // Returns the count of messages received, this one included.
    static std::uint64_t received(ReceiveCounterWords& w, std::uint64_t bytes,
                                  bool shared) noexcept {
        const std::uint64_t n = counter_add(w.messages, 1, shared);
        counter_add(w.bytes, bytes, shared);
        return n;
    }

    // Adds one side's words to `s` (the reader's sum; each word loaded once).
    static void add_to(ChannelStats& s, const SendCounterWords& w) noexcept {
        s.sent += counter_load(w.messages);
        s.sent_bytes += counter_load(w.bytes);
        s.full += counter_load(w.full);
        s.send_blocked_ns += counter_load(w.blocked_ns);
        s.high_water = std::max(s.high_water, counter_load(w.high_water));
        s.refused += counter_load(w.refused);
    }
    static void add_to(ChannelStats& s, const ReceiveCounterWords& w) noexcept {
        s.received += counter_load(w.messages);
        s.received_bytes += counter_load(w.bytes);
        s.empty += counter_load(w.empty);
        s.receive_blocked_ns += counter_load(w.blocked_ns);
        s.dropped_by_clear += counter_load(w.dropped);
    }
};

} // namespace detail
} // namespace ferry
