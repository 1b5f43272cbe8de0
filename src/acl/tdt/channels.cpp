// acltdt* channels (docs/cann-contract/tdt.md#the-c-api, and #channel-creation to #destroy):
// check the C arguments, map the handle to its registry channel, map ferry's statuses to CANN's
// codes.
//
//   send:    full, timed out or stopped        → ACL_ERROR_RT_QUEUE_FULL  (207014)
//   receive: empty, timed out or stopped+drained → ACL_ERROR_RT_QUEUE_EMPTY (207013)
//   shared between processes, either: the other process died → ACL_ERROR_FERRY_PEER_LOST (900003)
//
// A handle is on an in-process registry channel, or — when FERRY_TDT_SHARED names the channel —
// on a channel in shared memory (shared.hpp); each step below branches once on which.
// One payload copy per message: a send serializes the dataset into a pooled buffer (the copy),
// the buffer moves through the channel, and the receiving dataset adopts it (its items point into
// it) and hands its previous buffer back to the pool — no allocation per message once warm. A
// shared channel copies twice: the send serializes into the shared cell, the receive copies the
// cell into a pooled buffer that the dataset adopts in the same way.

#include "acl/acl_tdt.h"
#include "boundary.hpp"
#include "handles.hpp"
#include "shared.hpp"

#include <chrono>
#include <cstring>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/runtime.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <memory>
#include <utility>

using ferry::Status;
using ferry::acl::ChannelCall;
using ferry::acl::HandlePtr;
using ferry::acl::Shim;
using ferry::acl::to_handle;
using ferry::acl::to_token;
using ferry::acl::Token;

namespace {

constexpr std::size_t k_name_limit = ferry::k_max_channel_name_length + 1; // RT_MQ_MAX_NAME_LEN

// A device id the runtime knows (aclrtGetDeviceCount's range); boots the runtime if needed.
bool valid_device(std::uint32_t device) {
    const auto runtime = ferry::Runtime::instance();
    return runtime && device < (*runtime)->device_count();
}

// Shared checks of both create functions; nullptr when the name is acceptable.
const char* check_create(std::uint32_t device, const char* name) {
    if (name == nullptr) {
        return "null name";
    }
    if (::strnlen(name, k_name_limit) >= k_name_limit) {
        return "name of 128 characters or more";
    }
    if (!valid_device(device)) {
        return "not a valid device id";
    }
    return nullptr;
}

// Registers a handle on a registry entry; on failure (bad_alloc) the entry is closed again and
// the pool slot it may have created is dropped, so a failed create leaves nothing behind.
acltdtChannelHandle* publish(ferry::acl::MessageRegistry::Entry&& entry, std::size_t capacity) {
    const ferry::ChannelId id = entry.id;
    try {
        auto handle = std::make_shared<acltdtChannelHandle>();
        handle->id = entry.id;
        handle->device = entry.device;
        handle->kind = entry.kind;
        handle->receive_side = entry.receive_side;
        handle->channel = std::move(entry.channel);
        handle->spares = Shim::get().spares_for(handle->id, capacity);
        return to_handle<acltdtChannelHandle>(Shim::get().channels.add(std::move(handle)));
    } catch (...) {
        (void)Shim::get().registry().close(id);
        Shim::get().forget_spares(id); // the handle is gone: its slot is expired (or shared)
        throw;
    }
}

// The name of a channel to be created, less the TF_RECEIVE_ of a process channel's receive side.
std::string_view base_name(ferry::ChannelKind kind, std::string_view name) noexcept {
    const bool prefixed =
        kind == ferry::ChannelKind::process && name.starts_with(ferry::k_receive_prefix);
    return prefixed ? name.substr(ferry::k_receive_prefix.size()) : name;
}

// A handle on this process's share of a shared channel; on failure (bad_alloc) the share is
// given back (and closed if it was the only one).
acltdtChannelHandle* publish_shared(std::shared_ptr<ferry::acl::SharedChannel> shared,
                                    bool receive_side) {
    try {
        auto handle = std::make_shared<acltdtChannelHandle>();
        handle->device = shared->device;
        handle->kind = shared->kind;
        handle->receive_side = receive_side;
        handle->spares = shared->spares;
        handle->shared = shared;
        return to_handle<acltdtChannelHandle>(Shim::get().channels.add(std::move(handle)));
    } catch (...) {
        (void)ferry::acl::close_shared(*shared);
        throw;
    }
}

// Creates a handle on the shared channel (kind, base) — NULL with the reason logged when the
// segment cannot be created or opened, or is open with another capacity or message size.
acltdtChannelHandle* create_shared(const char* function, std::uint32_t device,
                                   ferry::ChannelKind kind, std::string_view name,
                                   std::size_t capacity) {
    const std::string_view base = base_name(kind, name);
    const bool receive_side = base.size() != name.size();
    ferry::acl::SharedOpened opened = ferry::acl::open_shared(device, kind, base, capacity);
    if (opened.channel == nullptr) {
        ferry::acl::reject(function, opened.error.c_str(), opened.status);
        return nullptr;
    }
    return publish_shared(std::move(opened.channel), receive_side);
}

// CANN's int32 ms (docs/cann-contract/tdt.md#blocking-timeouts-and-wake-up): negative waits
// forever, 0 never waits, > 0 is a bound.
ferry::Timeout timeout_of(std::int32_t ms) noexcept {
    return ms < 0 ? ferry::forever : ferry::Timeout(std::chrono::milliseconds(ms));
}

// Gives a spare buffer back to its channel's pool (dropped when the pool is full or it is empty).
void recycle(ferry::acl::BufferPool& pool, ferry::MessageBuffer&& buffer) noexcept {
    if (buffer.capacity() != 0) {
        (void)pool.try_send(std::move(buffer));
    }
}

// Gives the dataset's items new handles: the previous receive's are stale from here on (CANN
// frees them), and a handle never designates an item it was not issued for. The handle objects
// are reused (item i of the dataset), so a steady receive loop allocates nothing.
void refresh_views(acltdtDataset& d) {
    for (Token& token : d.views) {
        token = Shim::get().items.reissue(token);
    }
}

// Makes sure the dataset has a handle object for each of `n` items. What it adds designates an
// index the dataset does not show yet (acltdtGetDataItem answers NULL for it), so when this
// throws halfway the dataset looks unchanged; the handles it made stay, for the next receive.
void make_views(acltdtDataset& d, std::size_t n) {
    if (d.views.size() >= n) {
        return;
    }
    d.views.reserve(n); // so that no push_back below can fail
    while (d.views.size() < n) {
        auto view = std::make_shared<acltdtDataItem>();
        view->owner = &d;
        view->index = d.views.size();
        d.views.push_back(Shim::get().items.add(std::move(view)));
    }
}

// A send on a shared channel: serialized straight into a loaned cell (no pooled buffer).
aclError send_shared(const acltdtChannelHandle& h, const acltdtDataset& d, std::int32_t timeout) {
    std::size_t bytes = 0;
    const Status s = ferry::acl::send_shared(*h.shared, d.data, timeout_of(timeout), bytes);
    if (s == Status::ok) {
        return ACL_SUCCESS;
    }
    if (s == Status::invalid_param && bytes > h.shared->queue.max_message_bytes()) {
        const std::string why = "a message of " + std::to_string(bytes) +
                                " bytes exceeds the shared channel's " +
                                std::to_string(h.shared->queue.max_message_bytes()) + " (" +
                                ferry::acl::k_shared_bytes_variable + "); nothing was sent";
        return ferry::acl::reject("acltdtSendTensor", why.c_str());
    }
    if (s == Status::full || s == Status::timed_out || s == Status::stopped) {
        return ACL_ERROR_RT_QUEUE_FULL;
    }
    return ferry::acl::reject("acltdtSendTensor", ferry::name_of(s), s); // peer_lost included
}

aclError send(const acltdtChannelHandle& h, const acltdtDataset& d, std::int32_t timeout) {
    if (h.kind == ferry::ChannelKind::process && timeout != -1) {
        return ferry::acl::reject("acltdtSendTensor", "a TDT process channel needs timeout -1");
    }
    if (h.shared != nullptr) {
        return send_shared(h, d, timeout);
    }
    const ferry::Result<std::size_t> size = ferry::serialized_size(d.data);
    if (!size) { // a kind that cannot be sent: invalid_param; an empty dataset: rt_param_invalid
        return ferry::acl::reject("acltdtSendTensor", ferry::name_of(size.status()), size.status());
    }
    ferry::MessageBuffer buffer;
    (void)h.spares->pool.receive(buffer, ferry::no_wait); // a spare one, if any
    if (buffer.capacity() < *size) {
        buffer = ferry::MessageBuffer(); // growing: do not copy the old bytes over
    }
    buffer.resize(*size);
    if (const auto written = ferry::serialize_into(d.data, buffer); !written) {
        return ferry::acl::reject("acltdtSendTensor", "serialization", written.status());
    }
    const Status s = h.channel->send(std::move(buffer), timeout_of(timeout));
    if (s == Status::ok) {
        return ACL_SUCCESS;
    }
    recycle(h.spares->pool, std::move(buffer)); // a failed send hands the buffer back untouched
    const bool full = s == Status::full || s == Status::timed_out || s == Status::stopped;
    return full ? ACL_ERROR_RT_QUEUE_FULL : ferry::acl::code(s);
}

// Stop, size and clear of either kind of channel.
void stop(const acltdtChannelHandle& h) noexcept {
    if (h.shared != nullptr) {
        h.shared->queue.stop(); // every process's blocked calls wake
    } else {
        h.channel->stop();
    }
}

std::size_t queued(const acltdtChannelHandle& h) noexcept {
    return h.shared != nullptr ? h.shared->queue.size() : h.channel->size();
}

void clear(const acltdtChannelHandle& h) noexcept {
    if (h.shared != nullptr) {
        (void)h.shared->queue.clear();
    } else {
        h.channel->clear();
    }
}

// A message that was taken: parked at the channel's head again (the next receive delivers it)
// unless the dataset got it. Lets every failure after the dequeue — an exception included —
// put the message back.
class Taken {
public:
    explicit Taken(ferry::acl::ParkedMessages::Slot& slot) noexcept : slot_(slot) {}
    Taken(const Taken&) = delete;
    Taken& operator=(const Taken&) = delete;
    ~Taken() {
        if (!delivered_ && buffer.capacity() != 0) {
            slot_.park(std::move(buffer));
        }
    }
    void delivered() noexcept { delivered_ = true; }
    void drop() noexcept { delivered_ = true; } // malformed: no receive could deliver it

    ferry::MessageBuffer buffer;

private:
    ferry::acl::ParkedMessages::Slot& slot_;
    bool delivered_ = false;
};

// Takes the next message: a parked one first, then the channel's head.
aclError take(const acltdtChannelHandle& h, Taken& taken, ferry::acl::ParkedMessages::Slot& slot,
              std::int32_t timeout) {
    if (slot.take(taken.buffer)) {
        return ACL_SUCCESS;
    }
    const Status s = h.shared != nullptr
                         ? ferry::acl::receive_shared(*h.shared, taken.buffer, timeout_of(timeout))
                         : h.channel->receive(taken.buffer, timeout_of(timeout));
    if (s != Status::ok) {
        taken.drop();
        const bool empty = s == Status::empty || s == Status::timed_out || s == Status::stopped;
        return empty ? ACL_ERROR_RT_QUEUE_EMPTY
                     : ferry::acl::reject("acltdtReceiveTensor", ferry::name_of(s), s);
    }
    return ACL_SUCCESS;
}

// Everything that can fail for memory happens before the dataset changes: a parking slot is
// reserved before dequeuing, the message is parsed into the dataset's spare, the handle objects
// for its items are made, then the spare and the dataset's data swap (no-throw). A failure on
// the way parks the message for the next receive (docs/reliability.md, Allocation failures).
aclError receive(const acltdtChannelHandle& h, acltdtDataset& d, std::int32_t timeout) {
    if (h.kind == ferry::ChannelKind::process) {
        if (timeout != -1) {
            return ferry::acl::reject("acltdtReceiveTensor",
                                      "a TDT process channel needs timeout -1");
        }
        if (!h.receive_side) {
            return ferry::acl::reject("acltdtReceiveTensor", "not a TF_RECEIVE_ handle");
        }
    }
    // Validate the destination before dequeuing (ferry differs: CANN loses the message).
    if (!d.data.accepts_receive()) {
        return ferry::acl::reject("acltdtReceiveTensor", "the dataset holds items the user added");
    }
    ferry::acl::ParkedMessages::Slot slot(h.spares->parked);
    Taken taken(slot);
    if (const aclError e = take(h, taken, slot, timeout); e != ACL_SUCCESS) {
        return e;
    }
    if (const Status p = ferry::parse_into_adopting(d.spare, taken.buffer); ferry::failed(p)) {
        if (p == Status::bad_alloc) {
            return ferry::acl::reject("acltdtReceiveTensor", "out of memory", p);
        }
        taken.drop();
        refresh_views(d);
        return ferry::acl::reject("acltdtReceiveTensor", "malformed message", p);
    }
    try {
        make_views(d, d.spare.size());
        // CANN frees the previous items: their handles go stale. (Reissuing throws only for a
        // handle reissued 2^36 times; the handles it reissued before that stay reissued.)
        refresh_views(d);
    } catch (...) {
        // The message went into the spare: take it back to be parked.
        taken.buffer = std::move(ferry::detail::DatasetAccess::message(d.spare));
        d.spare.clear();
        throw;
    }
    std::swap(d.data, d.spare);
    taken.delivered();
    // The previous message's buffer, for the next send (the spare's items are never read again).
    recycle(h.spares->pool, std::move(ferry::detail::DatasetAccess::message(d.spare)));
    recycle(h.spares->pool, std::move(taken.buffer)); // the spare's older buffer, if any
    return ACL_SUCCESS;
}

// Destroy: no new call can reach the handle once it leaves the table. The channel is stopped when
// this was its last handle or a call is still in flight on this handle (a blocked call must wake;
// on a shared process channel that stops it for every handle, as CANN's TdtHostStop does), then
// the calls in flight are waited out (woken by the last one leaving) before the handle is freed.
// A shared channel is stopped by the last handle of this process on it: the other process drains
// what was sent, then sees it stopped (docs/c-api.md, Channels shared between processes); the
// segment goes with the last process's participation.
aclError destroy(HandlePtr handle) {
    const bool shared = handle->shared != nullptr;
    const bool last = shared ? ferry::acl::close_shared(*handle->shared)
                             : ferry::failed(Shim::get().registry().close(handle->id)) ||
                                   Shim::get().registry().find(handle->id) == nullptr;
    if (last || handle->calls.load(std::memory_order_acquire) != 0) {
        stop(*handle);
    }
    ferry::acl::wait_for_calls(*handle);
    const ferry::ChannelId id = handle->id;
    handle.reset(); // the last handle of a shared channel closes this process's participation
    if (!shared) {
        Shim::get().forget_spares(id);
    }
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

acltdtChannelHandle* acltdtCreateChannelWithCapacity(uint32_t deviceId, const char* name,
                                                     size_t capacity) {
    return ferry::acl::guarded_value<acltdtChannelHandle*>(
        __func__, nullptr, [&]() -> acltdtChannelHandle* {
            if (const char* why = check_create(deviceId, name)) {
                ferry::acl::reject("acltdtCreateChannelWithCapacity", why);
                return nullptr;
            }
            if (!ferry::is_valid_channel_capacity(capacity)) {
                ferry::acl::reject("acltdtCreateChannelWithCapacity", "capacity outside [2, 8192]");
                return nullptr;
            }
            if (ferry::acl::shared_requested(ferry::ChannelKind::queue, name)) {
                return create_shared("acltdtCreateChannelWithCapacity", deviceId,
                                     ferry::ChannelKind::queue, name, capacity);
            }
            auto entry = Shim::get().registry().create_queue(deviceId, name, capacity);
            if (!entry) {
                ferry::acl::reject("acltdtCreateChannelWithCapacity", "registry", entry.status());
                return nullptr;
            }
            return publish(std::move(entry).value(), capacity);
        });
}

acltdtChannelHandle* acltdtCreateChannel(uint32_t deviceId, const char* name) {
    return ferry::acl::guarded_value<acltdtChannelHandle*>(
        __func__, nullptr, [&]() -> acltdtChannelHandle* {
            if (const char* why = check_create(deviceId, name)) {
                ferry::acl::reject("acltdtCreateChannel", why);
                return nullptr;
            }
            if (ferry::acl::shared_requested(ferry::ChannelKind::process,
                                             base_name(ferry::ChannelKind::process, name))) {
                return create_shared("acltdtCreateChannel", deviceId, ferry::ChannelKind::process,
                                     name, ferry::k_process_channel_capacity);
            }
            auto entry = Shim::get().registry().open_process(deviceId, name);
            if (!entry) {
                ferry::acl::reject("acltdtCreateChannel", "registry", entry.status());
                return nullptr;
            }
            return publish(std::move(entry).value(), ferry::k_process_channel_capacity);
        });
}

aclError acltdtDestroyChannel(acltdtChannelHandle* handle) {
    return ferry::acl::guarded(__func__, [&]() -> aclError {
        HandlePtr h = Shim::get().channels.take(handle);
        if (h == nullptr) {
            return ferry::acl::reject("acltdtDestroyChannel", "not a live channel handle");
        }
        return destroy(std::move(h));
    });
}

aclError acltdtStopChannel(acltdtChannelHandle* handle) {
    const ChannelCall h(handle);
    if (!h) {
        return ferry::acl::reject(__func__, "not a live channel handle");
    }
    // ferry differs: CANN's queue path ignores stop (docs/cann-contract/tdt.md#stop)
    stop(*h);
    return ACL_SUCCESS;
}

aclError acltdtCleanChannel(acltdtChannelHandle* handle) {
    const ChannelCall h(handle);
    if (!h) {
        return ferry::acl::reject(__func__, "not a live channel handle");
    }
    if (h->kind == ferry::ChannelKind::process) {
        return ferry::acl::reject(__func__, "not supported on a TDT process channel",
                                  Status::feature_unsupported);
    }
    clear(*h);
    h->spares->parked.clear(); // messages a receive parked are queued ones too
    return ACL_SUCCESS;
}

aclError acltdtQueryChannelSize(const acltdtChannelHandle* handle, size_t* size) {
    const ChannelCall h(handle);
    if (!h || size == nullptr) {
        return ferry::acl::reject(__func__, "not a live channel handle, or null size");
    }
    if (h->kind == ferry::ChannelKind::process) {
        return ferry::acl::reject(__func__, "not supported on a TDT process channel",
                                  Status::feature_unsupported);
    }
    *size = queued(*h) + h->spares->parked.size(); // parked: still to be received
    return ACL_SUCCESS;
}

aclError acltdtSendTensor(const acltdtChannelHandle* handle, const acltdtDataset* dataset,
                          int32_t timeout) {
    return ferry::acl::guarded(__func__, [&]() -> aclError {
        const ChannelCall h(handle);
        const std::shared_ptr<acltdtDataset> d = Shim::get().datasets.find(dataset);
        if (!h || d == nullptr) {
            return ferry::acl::reject("acltdtSendTensor", "null or stale handle or dataset");
        }
        return send(*h, *d, timeout);
    });
}

aclError acltdtReceiveTensor(const acltdtChannelHandle* handle, acltdtDataset* dataset,
                             int32_t timeout) {
    return ferry::acl::guarded(__func__, [&]() -> aclError {
        const ChannelCall h(handle);
        const std::shared_ptr<acltdtDataset> d = Shim::get().datasets.find(dataset);
        if (!h || d == nullptr) {
            return ferry::acl::reject("acltdtReceiveTensor", "null or stale handle or dataset");
        }
        return receive(*h, *d, timeout);
    });
}

} // extern "C"
