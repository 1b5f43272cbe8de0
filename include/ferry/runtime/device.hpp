#pragma once
// ferry::DeviceManager — emulated devices, their contexts, and the streams and events made on them.
//
// docs/cann-contract/runtime.md#devices-and-contexts: device ids 0..count-1
// (count ≤ RT_MAX_DEV_NUM = 64); a primary context per (device, ts ≤ 1) with a reference count —
// aclrtSetDevice retains it and makes it current, aclrtResetDevice releases one reference,
// aclrtResetDeviceForce all of them; explicit contexts; a current context per thread. Releasing a
// context releases its streams and events; when a device has no context left its memory is freed
// by the runtime (Released::device_idle). Every handle given out (Context*, Stream*, Event*) is
// validated against these tables before use, so a stale or foreign handle is an error code, not a
// crash.
//
// Streams are shut down (joined) by the caller after the lock is released: a stream task may call
// back into the runtime.

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/runtime/config.hpp>
#include <ferry/runtime/context.hpp>
#include <ferry/runtime/event.hpp>
#include <ferry/runtime/notify.hpp>
#include <ferry/runtime/stream.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace ferry {

// What a reset or destroy took out of the tables; the caller finishes the job without the lock.
struct Released {
    std::vector<std::shared_ptr<Stream>> streams;
    std::vector<std::int32_t> idle_devices; // devices left without any context: free their memory
};

class DeviceManager {
public:
    DeviceManager(std::uint32_t device_count, Stream::FailureHandler on_failure)
        : primary_(device_count), on_failure_(std::move(on_failure)) {}
    DeviceManager(const DeviceManager&) = delete;
    DeviceManager& operator=(const DeviceManager&) = delete;

    [[nodiscard]] std::uint32_t device_count() const noexcept {
        return static_cast<std::uint32_t>(primary_.size());
    }

    [[nodiscard]] Status check_device(std::int32_t device) const noexcept {
        return device < 0 || static_cast<std::size_t>(device) >= primary_.size()
                   ? Status::rt_invalid_device_id
                   : Status::ok;
    }

    // aclrtSetDevice: retains the primary context of (device, ts) and makes it current.
    [[nodiscard]] Status set_device(std::int32_t device, std::uint32_t ts = 0) {
        if (const Status s = check_device(device); failed(s)) {
            return s;
        }
        if (ts >= k_max_ts) {
            return Status::rt_param_invalid;
        }
        std::lock_guard lock(mutex_);
        PrimarySlot& slot = primary_[static_cast<std::size_t>(device)][ts];
        if (slot.context == nullptr) {
            slot.context = add_context(device, ts, true);
        }
        ++slot.refs;
        make_current(slot.context);
        return Status::ok;
    }

    // aclrtResetDevice / aclrtResetDeviceForce: releases one (or every) reference to the primary
    // context of (device, ts); at zero the context and its streams and events go. Resetting a
    // device that holds no reference is a no-op.
    [[nodiscard]] Status reset_device(std::int32_t device, bool force, Released& out,
                                      std::uint32_t ts = 0) {
        if (const Status s = check_device(device); failed(s)) {
            return s;
        }
        if (ts >= k_max_ts) {
            return Status::rt_param_invalid;
        }
        std::lock_guard lock(mutex_);
        PrimarySlot& slot = primary_[static_cast<std::size_t>(device)][ts];
        if (slot.refs == 0) {
            return Status::ok;
        }
        slot.refs = force ? 0 : slot.refs - 1;
        if (slot.refs == 0) {
            release_context(std::exchange(slot.context, nullptr), out);
        }
        return Status::ok;
    }

    // CANN's GetPriCtxByDeviceId: the active primary context of (device, ts).
    [[nodiscard]] Result<const Context*> primary_context(std::int32_t device,
                                                         std::uint32_t ts = 0) const {
        if (const Status s = check_device(device); failed(s)) {
            return s;
        }
        if (ts >= k_max_ts) {
            return Status::rt_param_invalid;
        }
        std::lock_guard lock(mutex_);
        const Context* context = primary_[static_cast<std::size_t>(device)][ts].context;
        if (context == nullptr) {
            return Status::rt_context_null;
        }
        return context;
    }

    [[nodiscard]] std::uint32_t primary_refs(std::int32_t device, std::uint32_t ts = 0) const {
        if (failed(check_device(device)) || ts >= k_max_ts) {
            return 0;
        }
        std::lock_guard lock(mutex_);
        return primary_[static_cast<std::size_t>(device)][ts].refs;
    }

    // The calling thread's current context; rt_context_null when it has none or it was released.
    [[nodiscard]] Result<const Context*> current_context() const {
        std::lock_guard lock(mutex_);
        const Context* context = live_current();
        if (context == nullptr) {
            return Status::rt_context_null;
        }
        return context;
    }
    // The same, shared: a holder (ferry-acl's handle tables keep weak ones) knows the object, not
    // just an address that a later context may get.
    [[nodiscard]] Result<std::shared_ptr<const Context>> current_context_ref() const {
        std::lock_guard lock(mutex_);
        const Context* context = live_current();
        if (context == nullptr) {
            return Status::rt_context_null;
        }
        return std::shared_ptr<const Context>(contexts_.at(context).context);
    }

    [[nodiscard]] Result<std::int32_t> current_device() const {
        const auto context = current_context();
        return context ? Result<std::int32_t>((*context)->device())
                       : Result<std::int32_t>(context.status());
    }

    // aclrtCreateContext: a new explicit context on `device`, made current.
    [[nodiscard]] Result<const Context*> create_context(std::int32_t device) {
        return raw(create_context_ref(device));
    }
    [[nodiscard]] Result<std::shared_ptr<const Context>> create_context_ref(std::int32_t device) {
        if (const Status s = check_device(device); failed(s)) {
            return s;
        }
        std::lock_guard lock(mutex_);
        const Context* context = add_context(device, 0, false);
        make_current(context);
        return std::shared_ptr<const Context>(contexts_.at(context).context);
    }

    // aclrtDestroyContext: explicit contexts only; unknown or primary → rt_param_invalid.
    [[nodiscard]] Status destroy_context(const Context* context, Released& out) {
        std::lock_guard lock(mutex_);
        const auto it = contexts_.find(context);
        if (it == contexts_.end() || context->primary()) {
            return Status::rt_param_invalid;
        }
        release_context(context, out);
        return Status::ok;
    }

    // aclrtSetCurrentContext: a live context; anything else → rt_param_invalid.
    [[nodiscard]] Status set_current_context(const Context* context) {
        std::lock_guard lock(mutex_);
        if (!contexts_.contains(context)) {
            return Status::rt_param_invalid;
        }
        make_current(context);
        return Status::ok;
    }

    // aclrtCreateStream on the current context (the _ref form: see current_context_ref).
    [[nodiscard]] Result<Stream*> create_stream() { return raw(create_stream_ref()); }
    [[nodiscard]] Result<std::shared_ptr<Stream>> create_stream_ref() {
        std::lock_guard lock(mutex_);
        const Context* context = live_current();
        if (context == nullptr) {
            return Status::rt_context_null;
        }
        return streams_.at(add_stream(context, false)).stream;
    }

    // aclrtDestroyStream: takes a created stream out of the tables (the caller drains it). The
    // default stream (nullptr) and unknown handles → rt_param_invalid.
    [[nodiscard]] Result<std::shared_ptr<Stream>> remove_stream(const Stream* handle) {
        std::lock_guard lock(mutex_);
        const auto it = streams_.find(handle);
        if (it == streams_.end() || it->second.is_default) {
            return Status::rt_param_invalid;
        }
        auto stream = std::move(it->second.stream);
        std::erase(contexts_.at(it->second.owner).streams, handle);
        streams_.erase(it);
        return stream;
    }

    // Resolves a stream handle: nullptr is the current context's default stream (made on first
    // use); an unknown handle → rt_param_invalid; no current context for nullptr → rt_context_null.
    [[nodiscard]] Result<std::shared_ptr<Stream>> stream(const Stream* handle) {
        std::lock_guard lock(mutex_);
        if (handle != nullptr) {
            const auto it = streams_.find(handle);
            if (it == streams_.end()) {
                return Status::rt_param_invalid;
            }
            return it->second.stream;
        }
        const Context* context = live_current();
        if (context == nullptr) {
            return Status::rt_context_null;
        }
        ContextEntry& entry = contexts_.at(context);
        if (entry.default_stream == nullptr) {
            entry.default_stream = add_stream(context, true);
        }
        return streams_.at(entry.default_stream).stream;
    }

    // Every stream of every context on `device` (aclrtSynchronizeDevice).
    [[nodiscard]] std::vector<std::shared_ptr<Stream>> streams_on(std::int32_t device) const {
        std::lock_guard lock(mutex_);
        std::vector<std::shared_ptr<Stream>> found;
        for (const auto& [handle, entry] : streams_) {
            if (entry.stream->device() == device) {
                found.push_back(entry.stream);
            }
        }
        return found;
    }

    [[nodiscard]] Result<Event*> create_event() { return raw(create_event_ref()); }
    [[nodiscard]] Result<std::shared_ptr<Event>> create_event_ref() {
        std::lock_guard lock(mutex_);
        const Context* context = live_current();
        if (context == nullptr) {
            return Status::rt_context_null;
        }
        auto event = std::make_shared<Event>(detail::next_object_id(), context->device());
        Event* handle = event.get();
        events_.emplace(handle, EventEntry{event, context});
        contexts_.at(context).events.push_back(handle);
        return event;
    }

    [[nodiscard]] Status destroy_event(const Event* handle) {
        std::lock_guard lock(mutex_);
        const auto it = events_.find(handle);
        if (it == events_.end()) {
            return Status::rt_param_invalid;
        }
        std::erase(contexts_.at(it->second.owner).events, handle);
        events_.erase(it); // a stream task recording it still holds its own reference
        return Status::ok;
    }

    [[nodiscard]] Result<std::shared_ptr<Event>> event(const Event* handle) const {
        std::lock_guard lock(mutex_);
        const auto it = events_.find(handle);
        if (it == events_.end()) {
            return Status::rt_param_invalid;
        }
        return it->second.event;
    }

    // aclrtCreateNotify on the current context's device.
    [[nodiscard]] Result<std::shared_ptr<Notify>> create_notify_ref() {
        std::lock_guard lock(mutex_);
        const Context* context = live_current();
        if (context == nullptr) {
            return Status::rt_context_null;
        }
        auto notify = std::make_shared<Notify>(++last_notify_id_, context->device());
        notifies_.emplace(notify.get(), NotifyEntry{notify, context});
        contexts_.at(context).notifies.push_back(notify.get());
        return notify;
    }

    // aclrtDestroyNotify: wakes its waiters (their wait fails); unknown → rt_param_invalid.
    [[nodiscard]] Status destroy_notify(const Notify* handle) {
        std::lock_guard lock(mutex_);
        const auto it = notifies_.find(handle);
        if (it == notifies_.end()) {
            return Status::rt_param_invalid;
        }
        std::erase(contexts_.at(it->second.owner).notifies, handle);
        it->second.notify->destroy();
        notifies_.erase(it); // queued record and wait tasks hold their own reference
        return Status::ok;
    }

    [[nodiscard]] Result<std::shared_ptr<Notify>> notify(const Notify* handle) const {
        std::lock_guard lock(mutex_);
        const auto it = notifies_.find(handle);
        if (it == notifies_.end()) {
            return Status::rt_param_invalid;
        }
        return it->second.notify;
    }

    // Releases every context (finalize); the caller shuts the streams down.
    void release_all(Released& out) {
        std::lock_guard lock(mutex_);
        for (auto& device : primary_) {
            for (PrimarySlot& slot : device) {
                slot = {};
            }
        }
        while (!contexts_.empty()) {
            release_context(contexts_.begin()->first, out);
        }
    }

private:
    template <typename T>
    [[nodiscard]] static Result<T*> raw(const Result<std::shared_ptr<T>>& shared) {
        if (!shared) {
            return shared.status();
        }
        return shared->get();
    }

    struct PrimarySlot {
        const Context* context = nullptr;
        std::uint32_t refs = 0;
    };
    struct ContextEntry {
        std::shared_ptr<Context> context;
        const Stream* default_stream = nullptr;
        std::vector<const Stream*> streams; // including the default stream
        std::vector<const Event*> events;
        std::vector<const Notify*> notifies;
    };
    struct StreamEntry {
        std::shared_ptr<Stream> stream;
        const Context* owner = nullptr;
        bool is_default = false;
    };
    struct EventEntry {
        std::shared_ptr<Event> event;
        const Context* owner = nullptr;
    };
    struct NotifyEntry {
        std::shared_ptr<Notify> notify;
        const Context* owner = nullptr;
    };

    const Context* add_context(std::int32_t device, std::uint32_t ts, bool primary) {
        auto context = std::make_shared<Context>(device, ts, primary);
        const Context* handle = context.get();
        contexts_.emplace(handle, ContextEntry{std::move(context), nullptr, {}, {}, {}});
        return handle;
    }

    Stream* add_stream(const Context* context, bool is_default) {
        auto stream =
            std::make_shared<Stream>(detail::next_object_id(), context->device(), on_failure_);
        Stream* handle = stream.get();
        streams_.emplace(handle, StreamEntry{std::move(stream), context, is_default});
        contexts_.at(context).streams.push_back(handle);
        return handle;
    }

    // Moves the context's streams to `out`, drops its events, and reports its device idle when
    // no context is left on it. Caller holds the lock.
    void release_context(const Context* context, Released& out) {
        const auto it = contexts_.find(context);
        const std::int32_t device = context->device();
        for (const Stream* s : it->second.streams) {
            out.streams.push_back(std::move(streams_.at(s).stream));
            streams_.erase(s);
        }
        for (const Event* e : it->second.events) {
            events_.erase(e);
        }
        for (const Notify* n : it->second.notifies) { // before the streams drain: waits end
            notifies_.at(n).notify->destroy();
            notifies_.erase(n);
        }
        if (detail::current_context.context == context) {
            detail::current_context = {};
        }
        contexts_.erase(it);
        const bool in_use = std::any_of(contexts_.begin(), contexts_.end(),
                                        [&](const auto& c) { return c.first->device() == device; });
        if (!in_use) {
            out.idle_devices.push_back(device);
        }
    }

    void make_current(const Context* context) noexcept {
        detail::current_context = {context, context->id()};
    }

    const Context* live_current() const {
        const auto [context, id] = detail::current_context;
        const auto it = contexts_.find(context);
        return it != contexts_.end() && it->first->id() == id ? context : nullptr;
    }

    mutable std::mutex mutex_;
    std::vector<std::array<PrimarySlot, k_max_ts>> primary_;
    const Stream::FailureHandler on_failure_;
    std::map<const Context*, ContextEntry> contexts_;
    std::map<const Stream*, StreamEntry> streams_;
    std::map<const Event*, EventEntry> events_;
    std::map<const Notify*, NotifyEntry> notifies_;
    std::uint32_t last_notify_id_ = 0; // guarded by mutex_
};

} // namespace ferry
