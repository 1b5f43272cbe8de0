#pragma once
// MpmcRing: the storage and lock-free transport of an mpmc channel.
//
// A bounded ring of cells, each with a sequence number (Vyukov's bounded MPMC queue; the ticket /
// turn scheme of folly MPMCQueue and rigtorp/MPMCQueue). One CAS claims a position; the item is
// moved into its own cell, so move-only types need no extra indirection.
//
// Why not boost::lockfree::queue here: Boost 1.74's queue reports data races under
// ThreadSanitizer inside its node freelist (tagged_index::set_index writes a plain field that
// do_push reads atomically; reproduced with a 2x2 push/pop loop, see docs/channel.md), CI runs
// the concurrency suite under TSan with no unexplained suppressions
// (docs/cann-contract/quality.md#sanitizers), and a ring of indices on top of it would need two
// queue operations per message (free list + queue).
// (The spsc ring is not on Boost either: spsc_ring.hpp says why.)
//
// Positions are 64-bit and never wrap in practice; cell = position % capacity, so any capacity
// in [2, 8192] holds exactly that many items
// (docs/cann-contract/tdt.md#channel-capacity). They are also the channel's message counts
// (pushed(), popped(); docs/channel.md, Counters): no counter is updated per message.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/detail/slot_storage.hpp>
#include <memory>
#include <thread>
#include <utility>

namespace ferry::detail {

enum class PopResult { popped, empty, pending };

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
    // Calls sample(depth) after a push whose position + 1 is a multiple of `Every` (a power of
    // two); depth() answers the queue depth (it loads the head: a high-water mark samples it
    // rather than paying for it on every push).
    template <std::size_t Every, typename Sample>
    bool try_push(T& value, Sample&& sample) noexcept {
        static_assert(Every != 0 && (Every & (Every - 1)) == 0);
        std::uint64_t pos = tail_.position.load(std::memory_order_relaxed);
        for (;;) {
            const std::size_t cell = pos % capacity();
            const std::uint64_t turn = turns_[cell].load(std::memory_order_acquire);
            if (turn == pos) {
                if (tail_.position.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    slots_.construct(cell, std::move(value));
                    turns_[cell].store(pos + 1, std::memory_order_release);
                    if (((pos + 1) & (Every - 1)) == 0) {
                        std::forward<Sample>(sample)([this] { return size(); });
                    }
                    return true;
                }
            } else if (turn < pos) {
                return false; // the cell still holds the item from one lap ago: full
            } else {
                pos = tail_.position.load(std::memory_order_relaxed);
            }
        }
    }

    bool try_push(T& value) noexcept {
        return try_push<1>(value, [](auto) noexcept {});
    }

    // Any thread. Calls consume(T&) with the oldest item, then destroys it, and answers popped.
    // `pending`: a sender has claimed the head position and not yet published its item (it is
    // between its CAS and its store, a move and a release store away); the caller must wait and
    // try again, not report "empty" — sends behind it may already have answered ok.
    // Checking the tail is the only work this adds, and only when the head is not published.
    template <typename Consume>
    PopResult try_pop(Consume&& consume) noexcept {
        std::uint64_t pos = head_.position.load(std::memory_order_relaxed);
        for (;;) {
            const std::size_t cell = pos % capacity();
            const std::uint64_t turn = turns_[cell].load(std::memory_order_acquire);
            if (turn == pos + 1) {
                if (head_.position.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    std::forward<Consume>(consume)(slots_[cell]);
                    slots_.destroy(cell);
                    turns_[cell].store(pos + capacity(), std::memory_order_release);
                    return PopResult::popped;
                }
            } else if (turn < pos + 1) {
                // Not published. A tail beyond `pos` means `pos` is claimed (loaded after the
                // turn, so a claim made since is seen too: the retry then finds it or a newer
                // head). A send that answered ok before this call moved the tail past its own
                // position, so it is never missed here.
                return tail_.position.load(std::memory_order_relaxed) > pos ? PopResult::pending
                                                                            : PopResult::empty;
            } else {
                pos = head_.position.load(std::memory_order_relaxed);
            }
        }
    }

    // Any thread. Destroys up to capacity() queued items (bounded, so senders that keep refilling
    // cannot keep it running), waiting for a send in flight at the head; returns how many.
    // `wait` is called once per retry of a pending head (the channel counts itself as blocked).
    template <typename Wait>
    std::size_t clear(Wait&& wait) noexcept {
        std::size_t dropped = 0;
        while (dropped < capacity()) {
            const PopResult r = try_pop([](T&) noexcept {});
            if (r == PopResult::empty) {
                break;
            }
            if (r == PopResult::pending) {
                wait();
            } else {
                ++dropped;
            }
        }
        return dropped;
    }
    std::size_t clear() noexcept {
        return clear([] { std::this_thread::yield(); });
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

    // Any thread. Positions claimed by pushes / pops (clear() included) since the ring was made:
    // exact when no push or pop is in flight (a claimed position is counted before its item is
    // published or destroyed).
    [[nodiscard]] std::uint64_t pushed() const noexcept {
        return tail_.position.load(std::memory_order_acquire);
    }
    [[nodiscard]] std::uint64_t popped() const noexcept {
        return head_.position.load(std::memory_order_acquire);
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
