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
// Thread roles: try_push from one producer thread; try_pop and clear from one consumer thread;
// size() and capacity() from anywhere.

#include <atomic>
#include <cstddef>
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/detail/slot_storage.hpp>
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
    bool try_push(T& value) noexcept {
        const std::size_t w = producer_.write.value.load(std::memory_order_relaxed);
        const std::size_t next = advance(w);
        if (next == producer_.read_copy.value) {
            producer_.read_copy.value = consumer_.read.value.load(std::memory_order_acquire);
            if (next == producer_.read_copy.value) {
                return false; // full
            }
        }
        cells_.construct(w, std::move(value));
        producer_.write.value.store(next, std::memory_order_release);
        return true;
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
        consumer_.read.value.store(advance(r), std::memory_order_release);
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

private:
    [[nodiscard]] std::size_t cells() const noexcept {
        if constexpr (Capacity == dynamic_capacity) {
            return cells_count_;
        } else {
            return Capacity + 1;
        }
    }

    [[nodiscard]] std::size_t advance(std::size_t index) const noexcept {
        return index + 1 == cells() ? 0 : index + 1;
    }

    // Four separate lines (pairs): each published index is written by one side and read by the
    // other; each private copy is read and written by its owner only, so refreshing a copy never
    // steals the line the other side is polling.
    struct alignas(k_false_sharing_range) Index {
        std::atomic<std::size_t> value{0};
    };
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
