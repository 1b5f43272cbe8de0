#pragma once
// The acltdt* handle layer (spec/tdt.md §4): what the C handles are, and the tables that say which
// pointers are live handles of which kind. Internal to ferry-acl.
//
// - acltdtDataItem: a user-created item (it owns a borrowing ferry::DataItem), or a view of an
//   item inside a dataset filled by a receive (owned by that dataset; the user cannot destroy it).
// - acltdtDataset: a ferry::Dataset, plus the C pointers CANN hands back (acltdtGetDataItem
//   returns the very pointer that was added; tdt_facts.md §4, GetDataItem_IndexOutOfRange).
// - acltdtChannelHandle: one handle on a registry channel; process channels share one channel
//   between handles of the same name. Channel handles are shared_ptrs: a call in flight keeps the
//   handle alive, so a destroy can stop the channel, wait for callers to leave, then free.
//
// Every entry point checks its pointers against these tables before touching them: a pointer that
// is not a live handle of the expected kind is INVALID_PARAM, never a dereference. Items and
// datasets are not locked (CANN's objects are not thread-safe either, tdt_facts.md §2.10): the
// tables catch stale and double-destroyed handles, not a destroy racing a use of the same object.

#include "acl/acl_tdt.h"

#include <cstddef>
#include <cstdint>
#include <ferry/channel/channel.hpp>
#include <ferry/channel/message_channels.hpp>
#include <ferry/channel/registry.hpp>
#include <ferry/tensor/data_item.hpp>
#include <ferry/tensor/dataset.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace ferry::acl {

using MessageChannel = Channel<MessageBuffer, dynamic_capacity, mpmc>;
using MessageRegistry = MessageChannelRegistry; // shared with C++ code: message_channels()
// Spare message buffers of one channel: a send takes one, a receive hands the dataset's previous
// buffer back, so a steady send/receive loop allocates nothing (spec/tdt.md §4).
using BufferPool = Channel<MessageBuffer, dynamic_capacity, mpmc>;

enum class HandleKind : std::uint8_t { item, dataset };

} // namespace ferry::acl

struct acltdtDataItem {
    ferry::DataItem own;                   // a user-created item (borrows the caller's bytes)
    const acltdtDataset* owner = nullptr;  // non-null: a view owned by this received dataset
    const ferry::DataItem* view = nullptr; // the viewed item; null once a receive dropped it

    // The item this handle designates; nullptr for a view whose item is gone (a stale view).
    [[nodiscard]] const ferry::DataItem* get() const noexcept {
        return owner != nullptr ? view : &own;
    }
};

struct acltdtDataset {
    ferry::Dataset data;                // mirrors `added`, or what the last receive put here
    std::vector<acltdtDataItem*> added; // the user's items, in order
    std::vector<std::unique_ptr<acltdtDataItem>> views; // received items; reused across receives
};

struct acltdtChannelHandle {
    ferry::ChannelId id = 0;
    std::uint32_t device = 0;
    ferry::ChannelKind kind = ferry::ChannelKind::queue;
    bool receive_side = false; // a process channel opened through a "TF_RECEIVE_" name
    std::shared_ptr<ferry::acl::MessageChannel> channel;
    std::shared_ptr<ferry::acl::BufferPool> pool;
};

namespace ferry::acl {

using HandlePtr = std::shared_ptr<acltdtChannelHandle>;

// Process-wide state of the TDT part of the shim. Leaked on purpose (like the runtime's keeper):
// a handle destroyed during process exit must not meet a destroyed table.
class Shim {
public:
    static Shim& get() {
        static Shim* const shim = new Shim;
        return *shim;
    }

    // ---- items and datasets ----
    void add(const void* p, HandleKind kind) { // throws std::bad_alloc
        const std::unique_lock lock(mutex_);
        objects_.insert_or_assign(p, kind);
    }
    void remove(const void* p) noexcept {
        const std::unique_lock lock(mutex_);
        objects_.erase(p);
    }
    [[nodiscard]] bool live(const void* p, HandleKind kind) const noexcept {
        if (p == nullptr) {
            return false;
        }
        const std::shared_lock lock(mutex_);
        const auto found = objects_.find(p);
        return found != objects_.end() && found->second == kind;
    }

    // ---- channels ----
    [[nodiscard]] HandlePtr find(const acltdtChannelHandle* h) const noexcept {
        if (h == nullptr) {
            return nullptr;
        }
        const std::shared_lock lock(mutex_);
        const auto found = channels_.find(h);
        return found == channels_.end() ? nullptr : found->second;
    }
    void add(HandlePtr handle) { // throws std::bad_alloc
        const std::unique_lock lock(mutex_);
        const acltdtChannelHandle* key = handle.get();
        channels_.emplace(key, std::move(handle));
    }
    // Takes the handle out of the table: from here on no new call can reach it.
    [[nodiscard]] HandlePtr take(const acltdtChannelHandle* h) noexcept {
        if (h == nullptr) {
            return nullptr;
        }
        const std::unique_lock lock(mutex_);
        const auto found = channels_.find(h);
        if (found == channels_.end()) {
            return nullptr;
        }
        HandlePtr handle = std::move(found->second);
        channels_.erase(found);
        return handle;
    }

    // The buffer pool of channel `id`, shared by every handle on it (process channels have many).
    [[nodiscard]] std::shared_ptr<BufferPool> pool_for(ChannelId id, std::size_t capacity) {
        const std::unique_lock lock(mutex_);
        std::weak_ptr<BufferPool>& slot = pools_[id];
        if (auto pool = slot.lock()) {
            return pool;
        }
        const std::size_t spares =
            capacity + 2 < k_max_channel_capacity ? capacity + 2 : k_max_channel_capacity;
        auto pool = std::make_shared<BufferPool>(spares);
        slot = pool;
        return pool;
    }
    void forget_pool(ChannelId id) noexcept {
        const std::unique_lock lock(mutex_);
        if (const auto found = pools_.find(id); found != pools_.end() && found->second.expired()) {
            pools_.erase(found);
        }
    }

    [[nodiscard]] MessageRegistry& registry() noexcept { return message_channels().registry; }

private:
    Shim() = default;

    mutable std::shared_mutex mutex_;
    std::unordered_map<const void*, HandleKind> objects_;
    std::unordered_map<const acltdtChannelHandle*, HandlePtr> channels_;
    std::map<ChannelId, std::weak_ptr<BufferPool>> pools_;
};

} // namespace ferry::acl
