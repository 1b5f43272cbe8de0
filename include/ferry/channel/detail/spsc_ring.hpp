#pragma once
// SpscRing: the storage and lock-free transport of an spsc channel.
//
// Items live in SlotStorage; boost::lockfree::spsc_queue carries their slot indices (Boost 1.74
// cannot move an item through the queue itself: anchors.md §5.2). The queue holds `capacity`
// indices, so the ring holds exactly `capacity` items (spec/tdt.md §3). There is one slot more
// than that: the consumer pops an index *before* it moves the item out, so one slot may be being
// read while the queue is otherwise full. Slots are used in order; the producer only writes when
// the queue has room (write_available() > 0), i.e. at most capacity - 1 items are queued and at
// most one is being read, so its next slot is free; the acquire in write_available() pairs with
// the release in the pop that follows the consumer's move-out, so the reuse never races.
// No counters besides Boost's two indices: size() is the queue's read_available().
// Thread roles: try_push from one producer thread, try_pop and clear from one consumer thread;
// size() and capacity() from anywhere.

#include <boost/lockfree/spsc_queue.hpp>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/detail/slot_storage.hpp>
#include <utility>

namespace ferry::detail {

// The index queue: Boost's compile-time sized ring (storage inline) or its run-time sized one.
template <std::size_t Capacity>
struct SpscIndexQueue
    : boost::lockfree::spsc_queue<std::uint32_t, boost::lockfree::capacity<Capacity>> {
    explicit SpscIndexQueue(std::size_t /*capacity*/) {}
};

template <>
struct SpscIndexQueue<dynamic_capacity> : boost::lockfree::spsc_queue<std::uint32_t> {
    explicit SpscIndexQueue(std::size_t capacity)
        : boost::lockfree::spsc_queue<std::uint32_t>(capacity) {}
};

template <typename T, std::size_t Capacity>
class SpscRing {
public:
    explicit SpscRing(std::size_t capacity)
        : capacity_(capacity), slots_(capacity + 1), indices_(capacity) {}

    SpscRing(const SpscRing&) = delete;
    SpscRing& operator=(const SpscRing&) = delete;

    ~SpscRing() { clear(); }

    [[nodiscard]] std::size_t capacity() const noexcept {
        if constexpr (Capacity == dynamic_capacity) {
            return capacity_;
        } else {
            return Capacity;
        }
    }

    // Producer only. Moves from `value` only when it returns true (a failed push hands it back).
    bool try_push(T& value) noexcept {
        if (indices_.write_available() == 0) {
            return false;
        }
        const std::uint32_t slot = next_slot_;
        slots_.construct(slot, std::move(value));
        indices_.push(slot); // cannot fail: there was room, and only this thread pushes
        next_slot_ = slot == capacity() ? 0 : slot + 1;
        return true;
    }

    // Consumer only. Calls consume(T&) with the oldest item, then destroys it.
    template <typename Consume>
    bool try_pop(Consume&& consume) noexcept {
        std::uint32_t slot = 0;
        if (!indices_.pop(slot)) {
            return false;
        }
        std::forward<Consume>(consume)(slots_[slot]);
        slots_.destroy(slot);
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
    [[nodiscard]] std::size_t size() const noexcept { return indices_.read_available(); }

private:
    std::size_t capacity_;
    SlotStorage<T> slots_;
    SpscIndexQueue<Capacity> indices_;
    alignas(k_false_sharing_range) std::uint32_t next_slot_ = 0; // producer's
};

} // namespace ferry::detail
