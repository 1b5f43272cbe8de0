#pragma once
// SpscRing: the storage and lock-free transport of an spsc channel.
//
// A ring of exactly `capacity` cells (docs/cann-contract/tdt.md#channel-capacity). Each cell
// holds an item and its own "full" flag, on the same cache line: the producer puts an item in
// the cell at its index when that cell's flag is clear, then sets the flag (release); the
// consumer takes the item at its index when the flag is set, then clears it (release). Neither
// side reads the other side's index to move an item, so a hand-off moves one cache line (the
// cell's), where an index ring (boost::lockfree::spsc_queue; a ring with cached indices, as
// this one was) moves the cell's line and an index line, and at small capacities bounces both
// index lines as well (docs/performance/channel.md, "Why it is faster"). Items are moved into
// and out of the cells themselves, so move-only types travel and nothing is allocated per
// message.
//
// Each side still publishes its index (release, on its own line, read by nobody on the fast
// path): size(), stats() and the high-water sample read them. The producer publishes before it
// sets the flag and the consumer before it clears it, so a reader that sees an item popped also
// sees it pushed (received <= sent), and pushed - popped never counts more than `capacity`
// items for a reader that loads popped first.
//
// Why not boost::lockfree::spsc_queue underneath: Boost 1.74's queue copies on push and cannot
// hold move-only items, so the channel would need its own cells anyway and the queue would carry
// cell indices — two rings per message — and it reads the other side's index on every operation.
//
// Counting for free (docs/channel.md, Counters): each side publishes its index as a LapIndex
// (lap_index.hpp), so `pushed()` = laps x cells + index costs the fast path nothing.
//
// Channels of a fixed capacity of at least k_index_ring_min_capacity use SpscIndexRing
// (spsc_index_ring.hpp) instead: with many free cells the two sides rarely meet, and this ring's
// flag store per pop, which takes every cell line back from the producer, costs more than the
// index line it saves (docs/performance/channel.md).
//
// Thread roles: try_push from one producer thread; try_pop and clear from one consumer thread;
// size(), pushed(), popped() and capacity() from anywhere.

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/detail/lap_index.hpp>
#include <ferry/channel/detail/slot_storage.hpp>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace ferry::detail {

template <typename T, std::size_t Capacity>
class SpscRing {
    static_assert(alignof(T) <= k_false_sharing_range, "over-aligned items are not supported");

public:
    // Throws std::bad_alloc when the cells cannot be allocated.
    explicit SpscRing(std::size_t capacity) : cells_(capacity) {}

    SpscRing(const SpscRing&) = delete;
    SpscRing& operator=(const SpscRing&) = delete;

    ~SpscRing() { clear(); }

    [[nodiscard]] std::size_t capacity() const noexcept { return cells(); }

    // Producer only. Moves from `value` only when it returns true (a failed push hands it back).
    // Calls sample(depth) after a push that leaves the write index at a multiple of `Every` (a
    // power of two), where index 0 (the wrap) counts on one lap in Every / cells, rounded down
    // to a power of two (so a ring of fewer than `Every` cells is sampled at least every `Every`
    // pushes, not every lap); depth() answers the queue depth (it loads the consumer's index: a
    // high-water mark samples it rather than paying for it on every push).
    template <std::size_t Every, typename Sample>
    bool try_push(T& value, Sample&& sample) noexcept {
        static_assert(Every != 0 && (Every & (Every - 1)) == 0);
        const std::size_t w = producer_.value.load(std::memory_order_relaxed);
        Cell& cell = cells_[w];
        // Acquire: the consumer's move out of this cell and its destruction happened before.
        if (cell.full.load(std::memory_order_acquire) != 0) {
            return false; // full: the oldest item is still here
        }
        ::new (static_cast<void*>(cell.item)) T(std::move(value));
        const bool wraps = w + 1 == cells();
        const std::size_t next = wraps ? 0 : w + 1;
        producer_.publish(next, wraps);                // counted before it can be received
        cell.full.store(1, std::memory_order_release); // hands the item over
        if ((next & (Every - 1)) == 0 && (!wraps || sampled_lap<Every>())) {
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
        const std::size_t r = consumer_.value.load(std::memory_order_relaxed);
        Cell& cell = cells_[r];
        if (cell.full.load(std::memory_order_acquire) == 0) {
            return false; // empty
        }
        T& item = *std::launder(reinterpret_cast<T*>(cell.item));
        std::forward<Consume>(consume)(item);
        std::destroy_at(&item);
        const bool wraps = r + 1 == cells();
        consumer_.publish(wraps ? 0 : r + 1, wraps);   // counted before the cell is reused
        cell.full.store(0, std::memory_order_release); // hands the cell back
        return true;
    }

    // Consumer only. Destroys every queued item; returns how many.
    std::size_t clear() noexcept { return drain(*this); }

    // Any thread. Exact when no push or pop is in flight; within [0, capacity] always. Popped
    // first: a pop seen is of an item whose push is seen too (see the header comment).
    [[nodiscard]] std::size_t size() const noexcept { return spsc_depth(*this, cells()); }

    // Any thread. Items pushed / popped (clear() included) since the ring was made: exact when
    // no push or pop of that side is in flight, otherwise the count before or after it.
    [[nodiscard]] std::uint64_t pushed() const noexcept { return producer_.count(cells()); }
    [[nodiscard]] std::uint64_t popped() const noexcept { return consumer_.count(cells()); }

private:
    [[nodiscard]] std::size_t cells() const noexcept {
        if constexpr (Capacity == dynamic_capacity) {
            return cells_.count();
        } else {
            return Capacity;
        }
    }

    // Producer only, just after a wrap: whether this lap's wrap is sampled (see try_push).
    template <std::size_t Every>
    [[nodiscard]] bool sampled_lap() const noexcept {
        const std::size_t per_sample = std::bit_floor(std::max<std::size_t>(1, Every / cells()));
        const std::uint64_t lap = producer_.laps_done();
        return (lap & (per_sample - 1)) == 0;
    }

    // An item and the flag that says whether it is there, on one line for a small T.
    struct Cell {
        std::atomic<std::uint32_t> full{0};
        alignas(T) std::byte item[sizeof(T)];
    };

    // The cells, starting on a false-sharing boundary with one false-sharing range of padding on
    // each side (rigtorp::SPSCQueue pads its slots the same way): otherwise the first and last
    // cells would share lines with whatever the allocator put next to them.
    class Cells {
    public:
        explicit Cells(std::size_t count)
            : raw_(static_cast<std::byte*>(::operator new(bytes_for(count), k_alignment))),
              cells_(reinterpret_cast<Cell*>(raw_ + k_false_sharing_range)), count_(count) {
            static_assert(std::is_trivially_destructible_v<Cell>);
            for (std::size_t i = 0; i < count; ++i) {
                ::new (static_cast<void*>(cells_ + i)) Cell;
            }
        }
        Cells(const Cells&) = delete;
        Cells& operator=(const Cells&) = delete;
        ~Cells() { ::operator delete(raw_, k_alignment); }

        [[nodiscard]] Cell& operator[](std::size_t index) noexcept { return cells_[index]; }
        [[nodiscard]] std::size_t count() const noexcept { return count_; }

    private:
        static constexpr std::align_val_t k_alignment{k_false_sharing_range};
        static std::size_t bytes_for(std::size_t count) {
            return padded_cells_bytes(count, sizeof(Cell));
        }

        std::byte* raw_;
        Cell* cells_;
        std::size_t count_;
    };

    Cells cells_;
    LapIndex producer_; // the write index
    LapIndex consumer_; // the read index
};

} // namespace ferry::detail
