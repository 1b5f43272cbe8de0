#pragma once
// SpscRing: the storage and lock-free transport of an spsc channel.
//
// Items live in SlotStorage; boost::lockfree::spsc_queue carries their slot indices (Boost 1.74
// cannot move an item through the queue itself: anchors.md §5.2). Occupancy is counted by two
// single-writer counters, `sent_` (producer) and `received_` (consumer, bumped only after the
// item left its slot), so:
//   - the ring holds exactly `capacity` items (spec/tdt.md §3), slot = sent % capacity;
//   - the producer keeps a cached copy of `received_` and reads the consumer's line only when the
//     cache says "full" (rigtorp/SPSCQueue's cached index, anchors.md §1.4);
//   - size() = sent - received is exact when no operation is in flight.
// Thread roles: try_push from one producer thread, try_pop and clear from one consumer thread;
// size() and capacity() from anywhere.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <boost/lockfree/spsc_queue.hpp>

#include <ferry/channel/capacity.hpp>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/detail/slot_storage.hpp>

namespace ferry::detail {

// The index queue: Boost's compile-time sized ring (storage inline) or its run-time sized one.
template <std::size_t Capacity>
struct SpscIndexQueue : boost::lockfree::spsc_queue<std::uint32_t, boost::lockfree::capacity<Capacity>> {
    explicit SpscIndexQueue(std::size_t /*capacity*/) {}
};

template <>
struct SpscIndexQueue<dynamic_capacity> : boost::lockfree::spsc_queue<std::uint32_t> {
    explicit SpscIndexQueue(std::size_t capacity) : boost::lockfree::spsc_queue<std::uint32_t>(capacity) {}
};

template <typename T, std::size_t Capacity>
class SpscRing {
public:
    explicit SpscRing(std::size_t capacity)
        : capacity_(capacity), slots_(capacity), indices_(capacity) {}

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
        const std::uint64_t sent = producer_.sent.load(std::memory_order_relaxed);
        if (sent - producer_.received_cache >= capacity()) {
            // Acquire: the consumer's destruction of the slot happens before our reuse of it.
            producer_.received_cache = consumer_.received.load(std::memory_order_acquire);
            if (sent - producer_.received_cache >= capacity()) {
                return false;
            }
        }
        const std::uint32_t slot = producer_.next_slot;
        slots_.construct(slot, std::move(value));
        indices_.push(slot); // never fails: at most capacity() indices are queued
        producer_.next_slot = slot + 1 == capacity() ? 0 : slot + 1;
        producer_.sent.store(sent + 1, std::memory_order_release);
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
        consumer_.received.store(consumer_.received.load(std::memory_order_relaxed) + 1,
                                 std::memory_order_release);
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
        const std::uint64_t received = consumer_.received.load(std::memory_order_acquire);
        const std::uint64_t sent = producer_.sent.load(std::memory_order_acquire);
        return sent > received ? static_cast<std::size_t>(sent - received) : 0;
    }

    // Consumer side: true when an item can be popped now.
    [[nodiscard]] bool has_item() const noexcept { return indices_.read_available() > 0; }

private:
    struct alignas(k_false_sharing_range) ProducerLine {
        std::atomic<std::uint64_t> sent{0};
        std::uint64_t received_cache = 0;
        std::uint32_t next_slot = 0;
    };
    struct alignas(k_false_sharing_range) ConsumerLine {
        std::atomic<std::uint64_t> received{0};
    };

    std::size_t capacity_;
    SlotStorage<T> slots_;
    SpscIndexQueue<Capacity> indices_;
    ProducerLine producer_;
    ConsumerLine consumer_;
};

} // namespace ferry::detail
