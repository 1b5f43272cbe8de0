#pragma once
// The acltdt* handle layer (docs/cann-contract/tdt.md#handles): what the C handles are, and the
// tables that say which tokens are live handles of which kind (../handle_table.hpp). Internal to
// ferry-acl.
//
// - acltdtDataItem: a user-created item (it owns a borrowing ferry::DataItem), or an item of a
//   dataset (owned by that dataset; the user cannot destroy it): an item a receive put there, or
//   the dataset's copy of a received item added to it (forwarding). Either is item `index` of the
//   dataset's ferry::Dataset, so the handle always describes exactly what the dataset holds.
// - acltdtDataset: a ferry::Dataset, plus the handles CANN hands back (acltdtGetDataItem returns
//   the very handle that was added; for a forwarded item, the dataset's own copy).
// - acltdtChannelHandle: one handle on a registry channel, or on a channel shared with other
//   processes (shared.hpp); process channels share one channel between handles of the same name. A
//   call in flight holds the handle (shared_ptr) and is counted in it, so a destroy can stop the
//   channel, wait until the count is 0, then free.
//
// Every entry point looks its handles up in these tables before touching them: a value that is
// not a live handle of the expected kind — NULL, destroyed, stale after a receive, of another kind
// — is INVALID_PARAM, never a dereference, and a token is never reused, so a stale handle cannot
// designate a newer object. Items and datasets are not locked (CANN's objects are not thread-safe
// either, docs/cann-contract/tdt.md#threads): the tables catch stale and double-destroyed handles,
// not a destroy racing a use of the same object.

#include "../handle_table.hpp"
#include "acl/acl_tdt.h"
#include "parked.hpp"

#include <atomic>
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
#include <vector>

namespace ferry::acl {

using MessageChannel = Channel<MessageBuffer, dynamic_capacity, mpmc>;
using MessageRegistry = MessageChannelRegistry; // shared with C++ code: message_channels()
// Spare message buffers of one channel: a send takes one, a receive hands the dataset's previous
// buffer back, so a steady send/receive loop allocates nothing
// (docs/cann-contract/tdt.md#receive-buffers).
using BufferPool = Channel<MessageBuffer, dynamic_capacity, mpmc>;

// What every handle on one channel shares besides the channel itself.
struct ChannelSpares {
    explicit ChannelSpares(std::size_t buffers) : pool(buffers) {}
    BufferPool pool;       // spare message buffers
    ParkedMessages parked; // messages a receive took but could not deliver (parked.hpp)
};

struct SharedChannel; // shared.hpp: a channel shared with other processes

} // namespace ferry::acl

struct acltdtDataItem {
    ferry::DataItem own;                  // a user-created item (borrows the caller's bytes)
    const acltdtDataset* owner = nullptr; // non-null: item `index` of this dataset
    std::size_t index = 0;

    // The item this handle designates; nullptr for an index a later receive left empty.
    [[nodiscard]] const ferry::DataItem* get() const noexcept;
};

struct acltdtDataset {
    ferry::Dataset data;                  // mirrors `added`, or what the last receive put here
    std::vector<ferry::acl::Token> added; // what acltdtGetDataItem returns, in order
    std::vector<ferry::acl::Token> owned; // this dataset's copies of forwarded items
    std::vector<ferry::acl::Token> views; // received items, reissued by every receive
    // Where a receive parses its message before anything above changes: on success it is
    // swapped with `data` (no allocation, no failure), so a receive that runs out of memory
    // leaves `data` — and the message buffer its items point into — as they were. Afterwards it
    // holds the previous message's items (their storage is reused by the next receive), whose
    // buffer has gone back to the pool: never read.
    ferry::Dataset spare;
};

inline const ferry::DataItem* acltdtDataItem::get() const noexcept {
    if (owner == nullptr) {
        return &own;
    }
    return index < owner->data.size() ? &owner->data[index] : nullptr;
}

struct acltdtChannelHandle {
    ferry::ChannelId id = 0;
    std::uint32_t device = 0;
    ferry::ChannelKind kind = ferry::ChannelKind::queue;
    bool receive_side = false; // a process channel opened through a "TF_RECEIVE_" name
    std::shared_ptr<ferry::acl::MessageChannel> channel; // in-process; null when `shared` is set
    std::shared_ptr<ferry::acl::SharedChannel> shared;   // shared between processes (shared.hpp)
    std::shared_ptr<ferry::acl::ChannelSpares> spares;
    std::atomic<std::uint32_t> calls{0}; // calls in flight; a destroy waits for 0
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

    HandleTable<acltdtDataItem> items{HandleKind::item};
    HandleTable<acltdtDataset> datasets{HandleKind::dataset};
    HandleTable<acltdtChannelHandle> channels{HandleKind::channel};

    // The spares of channel `id`, shared by every handle on it (process channels have many).
    [[nodiscard]] std::shared_ptr<ChannelSpares> spares_for(ChannelId id, std::size_t capacity) {
        const std::lock_guard lock(pools_mutex_);
        std::weak_ptr<ChannelSpares>& slot = pools_[id];
        if (auto spares = slot.lock()) {
            return spares;
        }
        const std::size_t buffers =
            capacity + 2 < k_max_channel_capacity ? capacity + 2 : k_max_channel_capacity;
        auto spares = std::make_shared<ChannelSpares>(buffers);
        slot = spares;
        return spares;
    }
    void forget_spares(ChannelId id) noexcept {
        const std::lock_guard lock(pools_mutex_);
        if (const auto found = pools_.find(id); found != pools_.end() && found->second.expired()) {
            pools_.erase(found);
        }
    }

    [[nodiscard]] MessageRegistry& registry() noexcept { return message_channels().registry; }

private:
    Shim() = default;

    std::mutex pools_mutex_;
    std::map<ChannelId, std::weak_ptr<ChannelSpares>> pools_;
};

// A call on a channel handle, counted in the handle from the lookup until it returns. The count
// is raised under the table's lock, so a destroy, which takes the handle out under that lock,
// sees every call that found the handle; the last call to leave wakes the destroy.
class ChannelCall {
public:
    explicit ChannelCall(const void* handle) noexcept {
        (void)Shim::get().channels.find_and(to_token(handle), [&](const HandlePtr& h) noexcept {
            h->calls.fetch_add(1, std::memory_order_relaxed);
            handle_ = h;
        });
    }
    ChannelCall(const ChannelCall&) = delete;
    ChannelCall& operator=(const ChannelCall&) = delete;
    ~ChannelCall() {
        if (handle_ != nullptr && handle_->calls.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            handle_->calls.notify_all();
        }
    }

    [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }
    [[nodiscard]] const acltdtChannelHandle& operator*() const noexcept { return *handle_; }
    [[nodiscard]] const acltdtChannelHandle* operator->() const noexcept { return handle_.get(); }

private:
    HandlePtr handle_;
};

// Waits until no call is in flight on `h` (a futex wait: woken by the last call leaving).
inline void wait_for_calls(const acltdtChannelHandle& h) noexcept {
    for (std::uint32_t n = h.calls.load(std::memory_order_acquire); n != 0;
         n = h.calls.load(std::memory_order_acquire)) {
        h.calls.wait(n, std::memory_order_acquire);
    }
}

} // namespace ferry::acl
