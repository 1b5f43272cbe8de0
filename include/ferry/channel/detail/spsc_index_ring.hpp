#pragma once
// SpscIndexRing: the spsc transport of a channel with a large fixed capacity.
//
// A Lamport ring of `capacity + 1` cells that holds exactly `capacity` items
// (docs/cann-contract/tdt.md#channel-capacity): the producer owns the write index, the consumer
// the read index; each publishes its own with a release store (a LapIndex, so the counts come
// free) and keeps a private copy of the other's, reloaded only when the copy says "full"
// (producer) or "empty" (consumer), as rigtorp::SPSCQueue does — and, unlike it, a private
// copy of its own, so that it never loads the line the other side reloads from (below, at
// Producer). The cells hold bare items, packed.
//
// Why a second ring next to SpscRing (spsc_ring.hpp): in a large ring the two sides rarely meet,
// so a copy goes stale only once per batch of items; the consumer never writes a cell, so a cell
// line moves once, from the producer to the consumer, where the flag ring moves it back for the
// flag store of each pop, and it holds twice as many uint64_t items. In a small ring the two
// sides meet on every hand-off and the copies are always stale: there the flag ring moves fewer
// lines (docs/performance/channel.md has both profiles).
//
// Thread roles: try_push from one producer thread; try_pop and clear from one consumer thread;
// size(), pushed(), popped() and capacity() from anywhere.

#include <cstddef>
#include <cstdint>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/detail/lap_index.hpp>
#include <ferry/channel/detail/slot_storage.hpp>
#include <utility>

namespace ferry::detail {

// The smallest fixed capacity that a channel serves with SpscIndexRing (docs/channel.md).
inline constexpr std::size_t k_index_ring_min_capacity = 1024;

template <typename T, std::size_t Capacity>
class SpscIndexRing {
    static_assert(Capacity >= 2 && Capacity < SIZE_MAX, "a fixed capacity");

public:
    explicit SpscIndexRing(std::size_t /*capacity: Capacity*/) : cells_(k_cells) {}

    SpscIndexRing(const SpscIndexRing&) = delete;
    SpscIndexRing& operator=(const SpscIndexRing&) = delete;

    ~SpscIndexRing() { clear(); }

    [[nodiscard]] static constexpr std::size_t capacity() noexcept { return Capacity; }

    // Producer only. Moves from `value` only when it returns true. Calls sample(depth) after a
    // push that leaves the write index at a multiple of `Every` (a power of two, below the
    // capacity here; index 0 included); depth() answers the queue depth.
    template <std::size_t Every, typename Sample>
    bool try_push(T& value, Sample&& sample) noexcept {
        static_assert(Every != 0 && (Every & (Every - 1)) == 0);
        const std::size_t w = producer_.local.write;
        const bool wraps = w + 1 == k_cells;
        const std::size_t next = wraps ? 0 : w + 1;
        if (next == producer_.local.read_copy) {
            // Acquire: the consumer's move out of that cell and its destruction happened before.
            producer_.local.read_copy = consumer_.read.value.load(std::memory_order_acquire);
            if (next == producer_.local.read_copy) {
                return false; // full
            }
        }
        cells_.construct(w, std::move(value));
        producer_.local.write = next;
        producer_.write.publish(next, wraps); // hands the item over
        if ((next & (Every - 1)) == 0) {
            std::forward<Sample>(sample)([this] { return size(); });
        }
        return true;
    }
    bool try_push(T& value) noexcept {
        return try_push<1>(value, [](auto) noexcept {});
    }

    // Consumer only. Calls consume(T&) with the oldest item, then destroys it.
    template <typename Consume>
    bool try_pop(Consume&& consume) noexcept {
        const std::size_t r = consumer_.local.read;
        if (r == consumer_.local.write_copy) {
            consumer_.local.write_copy = producer_.write.value.load(std::memory_order_acquire);
            if (r == consumer_.local.write_copy) {
                return false; // empty
            }
        }
        std::forward<Consume>(consume)(cells_[r]);
        cells_.destroy(r);
        const bool wraps = r + 1 == k_cells;
        const std::size_t next = wraps ? 0 : r + 1;
        consumer_.local.read = next;
        consumer_.read.publish(next, wraps); // hands the cell back
        return true;
    }

    // Consumer only. Destroys every queued item; returns how many.
    std::size_t clear() noexcept { return drain(*this); }

    // Any thread. Exact when no push or pop is in flight; within [0, capacity] always (popped
    // first: a pop seen is of an item whose push is seen too).
    [[nodiscard]] std::size_t size() const noexcept { return spsc_depth(*this, Capacity); }

    // Any thread. Items pushed / popped (clear() included) since the ring was made.
    [[nodiscard]] std::uint64_t pushed() const noexcept { return producer_.write.count(k_cells); }
    [[nodiscard]] std::uint64_t popped() const noexcept { return consumer_.read.count(k_cells); }

private:
    static constexpr std::size_t k_cells = Capacity + 1; // one always free: full != empty

    // Each side's published index, then, on a line of its own, its private copy of that index
    // and of the other side's. The fast path reads only the private line: the published one is
    // written there but never read back, because the other side pulls it away whenever its
    // copy runs out, and a load from it would then wait for the line's trip back (a store
    // does not wait: the store buffer hides it); refreshing a copy never takes the line the
    // other side polls.
    struct Producer {
        LapIndex write;
        struct alignas(k_false_sharing_range) {
            std::size_t write = 0;
            std::size_t read_copy = 0;
        } local;
    };
    struct Consumer {
        LapIndex read;
        struct alignas(k_false_sharing_range) {
            std::size_t read = 0;
            std::size_t write_copy = 0;
        } local;
    };

    SlotStorage<T> cells_;
    Producer producer_;
    Consumer consumer_;
};

} // namespace ferry::detail
