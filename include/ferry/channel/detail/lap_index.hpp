#pragma once
// LapIndex: one side's published ring index and its lap count, readable as one running count.
//
// Counting for free (docs/channel.md, Counters): the owner of an spsc ring index keeps a lap count
// next to it, bumped only when the index wraps to 0, so the number of items that side moved is
// laps x cells + index and the fast path updates no counter word. The lap word is a sequence
// lock around the wrap: the owner makes it odd, stores index 0, then makes it even again; a
// reader takes laps, index, laps and retries on an odd or changed value (any thread, TSan clean:
// every word is an atomic).
//
// Both spsc rings (spsc_ring.hpp, spsc_index_ring.hpp) publish their indices through it.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/core/cpu_relax.hpp>
#include <thread>

namespace ferry::detail {

// On its own line pair: written by its owner on every operation. `laps` (twice the laps
// completed, odd while a wrap is being published) shares the line: written once a lap.
struct alignas(k_false_sharing_range) LapIndex {
    std::atomic<std::size_t> value{0};
    std::atomic<std::uint64_t> laps{0};

    // Owner only: stores the side's next index (release: it hands over the cell); `wraps`: it
    // is 0, the start of a lap.
    void publish(std::size_t next, bool wraps) noexcept {
        if (!wraps) [[likely]] {
            value.store(next, std::memory_order_release);
            return;
        }
        // The wrap. The odd value is ordered before index 0 by that store's release; a reader
        // that sees index 0 sees at least the odd value on its second look, and retries.
        const std::uint64_t before = laps.load(std::memory_order_relaxed);
        laps.store(before + 1, std::memory_order_relaxed);
        value.store(0, std::memory_order_release);
        laps.store(before + 2, std::memory_order_release);
    }

    // Any thread: laps x cells + index, from a consistent pair (see publish()).
    [[nodiscard]] std::uint64_t count(std::size_t cells) const noexcept {
        for (unsigned tries = 1;; ++tries) {
            const std::uint64_t before = laps.load(std::memory_order_acquire);
            const std::size_t at = value.load(std::memory_order_acquire);
            if ((before & 1) == 0 && laps.load(std::memory_order_relaxed) == before) {
                return before / 2 * cells + at;
            }
            // The owner is between the two stores of a wrap: a few instructions, unless it was
            // preempted there.
            if (tries % 64 == 0) {
                std::this_thread::yield();
            } else {
                cpu_relax();
            }
        }
    }

    // Owner only: laps completed.
    [[nodiscard]] std::uint64_t laps_done() const noexcept {
        return laps.load(std::memory_order_relaxed) / 2;
    }
};

// Any thread: the items in an spsc ring from its two counts, within [0, capacity]. Popped first:
// a pop seen is of an item whose push is seen too, so pushed - popped never exceeds the capacity.
template <typename Ring>
[[nodiscard]] std::size_t spsc_depth(const Ring& ring, std::size_t capacity) noexcept {
    const std::uint64_t out = ring.popped();
    const std::uint64_t in = ring.pushed();
    return in <= out ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(in - out, capacity));
}

// Consumer only: pops and destroys the items of `ring` queued when it starts; returns how many.
// An item pushed while it runs stays queued, so a sender that keeps refilling cannot keep it
// running (the consumer's own count is exact here: nobody else pops).
template <typename Ring>
std::size_t drain(Ring& ring) noexcept {
    const std::size_t queued = ring.size();
    std::size_t dropped = 0;
    while (dropped < queued && ring.try_pop([](auto&) noexcept {})) {
        ++dropped;
    }
    return dropped;
}

} // namespace ferry::detail
