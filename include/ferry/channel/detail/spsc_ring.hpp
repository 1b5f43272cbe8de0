#pragma once
// SpscRing: the storage and lock-free transport of an spsc channel.
//
// A Lamport ring of `capacity + 1` cells that holds exactly `capacity` items
// (docs/cann-contract/tdt.md#channel-capacity): the producer owns `write_`, the consumer owns
// `read_`, each publishes its index with a release store and reads the other's with an acquire
// load. Items are moved into and out of the cells
// themselves (SlotStorage), so move-only types travel and nothing is allocated per message.
//
// Each side also keeps a private copy of the other side's index and reloads the shared one only
// when its copy says "full" (producer) or "empty" (consumer) — rigtorp::SPSCQueue's cached
// indices. While the ring is neither full nor empty an operation touches no cache line the other
// thread writes, except the cell it hands over.
//
// Why not boost::lockfree::spsc_queue underneath: Boost 1.74's queue copies on push and cannot
// hold move-only items, so the channel would need its own cells anyway and the queue would carry
// cell indices — two rings per message — and it reads the other side's index on every operation.
// That layering measured clearly slower than this ring; the current figures, against Boost's
// spsc_queue as the baseline every spsc benchmark compares with, are in
// docs/performance/channel.md (quoted here they would go stale).
//
// Counting for free (docs/channel.md, Counters): each side also keeps a lap count next to its
// published index, bumped only when its index wraps to 0, so `pushed()` = laps x cells + index
// costs the fast path nothing. The lap word is a sequence lock around the wrap: the owner makes
// it odd, stores index 0, then makes it even again; a reader takes laps, index, laps and retries
// on an odd or changed value (any thread, TSan clean: every word is an atomic).
//
// Thread roles: try_push from one producer thread; try_pop and clear from one consumer thread;
// size(), pushed(), popped() and capacity() from anywhere.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/detail/slot_storage.hpp>
#include <ferry/core/cpu_relax.hpp>
#include <thread>
#include <utility>

namespace ferry::detail {

template <typename T, std::size_t Capacity>
class SpscRing {
public:
    explicit SpscRing(std::size_t capacity) : cells_count_(capacity + 1), cells_(capacity + 1) {}

    SpscRing(const SpscRing&) = delete;
    SpscRing& operator=(const SpscRing&) = delete;

    ~SpscRing() { clear(); }

    [[nodiscard]] std::size_t capacity() const noexcept { return cells() - 1; }

    // Producer only. Moves from `value` only when it returns true (a failed push hands it back).
    // Calls sample(depth) after a push that leaves the write index at a multiple of `Every` (a
    // power of two; index 0, the wrap, included); depth() answers the queue depth (it loads the
    // consumer's index: a high-water mark samples it rather than paying for it on every push).
    template <std::size_t Every, typename Sample>
    bool try_push(T& value, Sample&& sample) noexcept {
        static_assert(Every != 0 && (Every & (Every - 1)) == 0);
        const std::size_t w = producer_.write.value.load(std::memory_order_relaxed);
        const bool wraps = w + 1 == cells();
        const std::size_t next = wraps ? 0 : w + 1;
        if (next == producer_.read_copy.value) {
            producer_.read_copy.value = consumer_.read.value.load(std::memory_order_acquire);
            if (next == producer_.read_copy.value) {
                return false; // full
            }
        }
        cells_.construct(w, std::move(value));
        publish(producer_.write, next, wraps);
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
        const std::size_t r = consumer_.read.value.load(std::memory_order_relaxed);
        if (r == consumer_.write_copy.value) {
            consumer_.write_copy.value = producer_.write.value.load(std::memory_order_acquire);
            if (r == consumer_.write_copy.value) {
                return false; // empty
            }
        }
        std::forward<Consume>(consume)(cells_[r]);
        cells_.destroy(r);
        const bool wraps = r + 1 == cells();
        publish(consumer_.read, wraps ? 0 : r + 1, wraps);
        return true;
    }

    // Consumer only. Destroys every queued item; returns how many.
    std::size_t clear() noexcept {
        std::size_t dropped = 0;
        while (try_pop([](T&) noexcept {})) {
            ++dropped;
        }
        return dropped;
    }

    // Any thread. Exact when no push or pop is in flight; within [0, capacity] always.
    [[nodiscard]] std::size_t size() const noexcept {
        const std::size_t r = consumer_.read.value.load(std::memory_order_acquire);
        const std::size_t w = producer_.write.value.load(std::memory_order_acquire);
        return w >= r ? w - r : w + cells() - r;
    }

    // Any thread. Items pushed / popped (clear() included) since the ring was made: exact when
    // no push or pop of that side is in flight, otherwise the count before or after it.
    [[nodiscard]] std::uint64_t pushed() const noexcept { return count(producer_.write); }
    [[nodiscard]] std::uint64_t popped() const noexcept { return count(consumer_.read); }

private:
    [[nodiscard]] std::size_t cells() const noexcept {
        if constexpr (Capacity == dynamic_capacity) {
            return cells_count_;
        } else {
            return Capacity + 1;
        }
    }

    // Four separate lines (pairs): each published index is written by one side and read by the
    // other; each private copy is read and written by its owner only, so refreshing a copy never
    // steals the line the other side is polling. `laps` (twice the laps completed, odd while a
    // wrap is being published) shares its owner's index line: written once a lap.
    struct alignas(k_false_sharing_range) Index {
        std::atomic<std::size_t> value{0};
        std::atomic<std::uint64_t> laps{0};
    };

    // Owner only: stores the side's next index (release: it hands over the cell); `wraps`: it
    // is 0, the start of a lap.
    static void publish(Index& index, std::size_t next, bool wraps) noexcept {
        if (!wraps) [[likely]] {
            index.value.store(next, std::memory_order_release);
            return;
        }
        // The wrap. The odd value is ordered before index 0 by that store's release; a reader
        // that sees index 0 sees at least the odd value on its second look, and retries.
        const std::uint64_t laps = index.laps.load(std::memory_order_relaxed);
        index.laps.store(laps + 1, std::memory_order_relaxed);
        index.value.store(0, std::memory_order_release);
        index.laps.store(laps + 2, std::memory_order_release);
    }

    // Any thread: laps x cells + index, from a consistent pair (see publish()).
    [[nodiscard]] std::uint64_t count(const Index& index) const noexcept {
        for (unsigned tries = 1;; ++tries) {
            const std::uint64_t before = index.laps.load(std::memory_order_acquire);
            const std::size_t at = index.value.load(std::memory_order_acquire);
            if ((before & 1) == 0 && index.laps.load(std::memory_order_relaxed) == before) {
                return before / 2 * cells() + at;
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
    struct alignas(k_false_sharing_range) Copy {
        std::size_t value = 0;
    };
    struct Producer {
        Index write;    // published
        Copy read_copy; // the consumer's `read`, as last seen
    };
    struct Consumer {
        Index read;
        Copy write_copy;
    };

    std::size_t cells_count_;
    SlotStorage<T> cells_;
    Producer producer_;
    Consumer consumer_;
};

} // namespace ferry::detail
