#pragma once
// Messages a receive took off a channel but could not deliver, because it ran out of memory after
// dequeuing (parsing the message into the dataset, or making the dataset's item handles). They
// stay with the channel, and the next receive on it delivers them before anything still queued,
// so a send that answered ok is never lost to a receive's allocation failure
// (docs/reliability.md, Allocation failures). Internal to ferry-acl.
//
// Parking must not allocate (it happens on the failure path): a receive reserves its slot before
// it dequeues (Slot), so there is always room for every receive in flight to park what it took.

#include <atomic>
#include <cstddef>
#include <ferry/tensor/wire_format.hpp>
#include <mutex>
#include <utility>
#include <vector>

namespace ferry::acl {

class ParkedMessages {
public:
    // A receive in flight, with room reserved to park one message. Throws std::bad_alloc
    // (reserving nothing) when the room cannot be made; only the first receives on a channel
    // (and a new high of concurrent ones) allocate.
    class Slot {
    public:
        explicit Slot(ParkedMessages& parked) : parked_(parked) { parked_.enter(); }
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;
        ~Slot() { parked_.leave(); }

        // The oldest parked message into `out`; false (out untouched) when none is parked.
        [[nodiscard]] bool take(MessageBuffer& out) noexcept { return parked_.take(out); }
        // Puts a message this receive took back at the head: the next receive delivers it first.
        void park(MessageBuffer&& message) noexcept { parked_.park(std::move(message)); }

    private:
        ParkedMessages& parked_;
    };

    // Messages parked now (a channel's size counts them: they are still to be received).
    [[nodiscard]] std::size_t size() const noexcept {
        return count_.load(std::memory_order_acquire);
    }

    // Drops every parked message (acltdtCleanChannel).
    void clear() noexcept {
        const std::lock_guard lock(mutex_);
        messages_.clear(); // keeps the capacity: the room reserved by receives in flight
        count_.store(0, std::memory_order_release);
    }

private:
    // Invariant: messages_.capacity() >= messages_.size() + receiving_.
    void enter() {
        const std::lock_guard lock(mutex_);
        const std::size_t needed = messages_.size() + receiving_ + 1;
        if (messages_.capacity() < needed) {
            messages_.reserve(needed); // strong guarantee: nothing changes when it throws
        }
        ++receiving_;
    }
    void leave() noexcept {
        const std::lock_guard lock(mutex_);
        --receiving_;
    }
    bool take(MessageBuffer& out) noexcept {
        if (count_.load(std::memory_order_acquire) == 0) {
            return false; // the common case: no lock
        }
        const std::lock_guard lock(mutex_);
        if (messages_.empty()) {
            return false;
        }
        out = std::move(messages_.front());
        messages_.erase(messages_.begin()); // moves buffers (noexcept), allocates nothing
        count_.store(messages_.size(), std::memory_order_release);
        return true;
    }
    void park(MessageBuffer&& message) noexcept {
        const std::lock_guard lock(mutex_);
        // Within capacity (the caller's slot is counted in receiving_): moves only.
        messages_.insert(messages_.begin(), std::move(message));
        count_.store(messages_.size(), std::memory_order_release);
    }

    std::mutex mutex_;
    std::vector<MessageBuffer> messages_; // the head first
    std::size_t receiving_ = 0;           // receives holding a Slot
    std::atomic<std::size_t> count_{0};   // messages_.size(), readable without the lock
};

} // namespace ferry::acl
