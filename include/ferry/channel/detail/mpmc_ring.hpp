#pragma once
// MpmcRing: the storage and lock-free transport of an mpmc channel.
//
// A bounded ring of cells, each with a sequence number (Vyukov's bounded MPMC queue; the ticket /
// turn scheme of folly MPMCQueue and rigtorp/MPMCQueue, anchors.md §1.4). One CAS claims a
// position; the item is moved into its own cell, so move-only types need no extra indirection.
//
// Why not boost::lockfree::queue here: Boost 1.74's queue reports data races under
// ThreadSanitizer inside its node freelist (tagged_index::set_index writes a plain field that
// do_push reads atomically; reproduced with a 2x2 push/pop loop, see docs/channel.md), CI runs
// the concurrency suite under TSan with no unexplained suppressions (spec/quality.md), and a ring
// of indices on top of it would need two queue operations per message (free list + queue).
// (The spsc ring is not on Boost either: spsc_ring.hpp says why.)
//
// Positions are 64-bit and never wrap in practice; cell = position % capacity, so any capacity
// in [2, 8192] holds exactly that many items (spec/tdt.md §3).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/detail/slot_storage.hpp>
#include <memory>
#include <utility>

namespace ferry::detail {

template <typename T, std::size_t Capacity>
class MpmcRing {
public:
    explicit MpmcRing(std::size_t capacity)
        : capacity_(capacity), turns_(std::make_unique<std::atomic<std::uint64_t>[]>(capacity)),
          slots_(capacity) {
        for (std::size_t i = 0; i < capacity; ++i) {
            turns_[i].store(i, std::memory_order_relaxed);
        }
    }

    MpmcRing(const MpmcRing&) = delete;
    MpmcRing& operator=(const MpmcRing&) = delete;

    ~MpmcRing() { clear(); }

    [[nodiscard]] std::size_t capacity() const noexcept {
        if constexpr (Capacity == dynamic_capacity) {
            return capacity_;
        } else {
            return Capacity;
        }
    }

    // Any thread. Moves from `value` only when it returns true (a failed push hands it back).
    bool try_push(T& value) noexcept {
        std::uint64_t pos = tail_.position.load(std::memory_order_relaxed);
        for (;;) {
            const std::size_t cell = pos % capacity();
            const std::uint64_t turn = turns_[cell].load(std::memory_order_acquire);
            if (turn == pos) {
                if (tail_.position.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    slots_.construct(cell, std::move(value));
                    turns_[cell].store(pos + 1, std::memory_order_release);
                    return true;
                }
            } else if (turn < pos) {
                return false; // the cell still holds the item from one lap ago: full
            } else {
                pos = tail_.position.load(std::memory_order_relaxed);
            }
        }
    }

    // Any thread. Calls consume(T&) with the oldest item, then destroys it.
    template <typename Consume>
    bool try_pop(Consume&& consume) noexcept {
        std::uint64_t pos = head_.position.load(std::memory_order_relaxed);
        for (;;) {
            const std::size_t cell = pos % capacity();
            const std::uint64_t turn = turns_[cell].load(std::memory_order_acquire);
            if (turn == pos + 1) {
                if (head_.position.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    std::forward<Consume>(consume)(slots_[cell]);
                    slots_.destroy(cell);
                    turns_[cell].store(pos + capacity(), std::memory_order_release);
                    return true;
                }
            } else if (turn < pos + 1) {
                return false; // nothing published at this position yet: empty
            } else {
                pos = head_.position.load(std::memory_order_relaxed);
            }
        }
    }

    // Any thread. Destroys up to capacity() queued items (bounded, so senders that keep refilling
    // cannot keep it running); returns how many.
    std::size_t clear() noexcept {
        std::size_t dropped = 0;
        while (dropped < capacity() && try_pop([](T&) noexcept {})) {
            ++dropped;
        }
        return dropped;
    }

    // Any thread. Exact when no push or pop is in flight; within [0, capacity] always.
    [[nodiscard]] std::size_t size() const noexcept {
        const std::uint64_t head = head_.position.load(std::memory_order_acquire);
        const std::uint64_t tail = tail_.position.load(std::memory_order_acquire);
        if (tail <= head) {
            return 0;
        }
        const std::uint64_t n = tail - head;
        return n < capacity() ? static_cast<std::size_t>(n) : capacity();
    }

private:
    struct alignas(k_false_sharing_range) Position {
        std::atomic<std::uint64_t> position{0};
    };

    std::size_t capacity_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> turns_;
    SlotStorage<T> slots_;
    Position head_;
    Position tail_;
};

} // namespace ferry::detail
