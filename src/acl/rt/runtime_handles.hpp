#pragma once
// aclrtStream, aclrtEvent, aclrtNotify and aclrtContext: tokens (../handle_table.hpp) for runtime objects.
//
// The runtime validates every Stream*, Event* and Context* against its tables, but by address: an
// object destroyed — by the caller, or behind its back by a device reset or aclFinalize — may
// leave its address to the next object created, and the old handle would then pass. So each
// handle is a token whose entry holds a weak reference to the object it was issued for. A call
// locks that reference for its duration: the object, hence its address, cannot go away while the
// runtime looks the address up, so the runtime's own check answers for exactly this object (gone
// from its tables: rt_param_invalid), and a token whose object is freed is rejected without asking.
// A destroy goes through the same pinned call and drops the token only when the runtime destroyed
// the object: two racing destroys cannot both succeed, and a refused destroy (a primary context)
// leaves the handle valid. The NULL stream stays the current context's default stream.

#include "../handle_table.hpp"

#include <cstdint>
#include <ferry/core/status.hpp>
#include <ferry/runtime/runtime.hpp>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace ferry::acl {

template <typename T>
struct RuntimeRef {
    std::weak_ptr<T> object;
    T* raw = nullptr; // its address: what the runtime's calls take
};

template <typename T>
class RuntimeHandles {
public:
    explicit RuntimeHandles(HandleKind kind) noexcept : table_(kind) {}

    // A token for `object`; throws std::bad_alloc (the caller then destroys the object).
    [[nodiscard]] Token add(const std::shared_ptr<T>& object) {
        return table_.add(std::make_shared<RuntimeRef<T>>(RuntimeRef<T>{object, object.get()}));
    }

    // Runs `use(T*)` (returning a Status) with the handle's object pinned; rt_param_invalid when
    // the handle is not a live token or its object is gone.
    template <typename Use>
    [[nodiscard]] Status with(const void* handle, Use&& use) {
        const std::shared_ptr<RuntimeRef<T>> ref = table_.find(handle);
        const std::shared_ptr<T> pinned = ref != nullptr ? ref->object.lock() : nullptr;
        if (pinned == nullptr) {
            if (ref != nullptr) {
                (void)table_.take(handle); // freed behind the handle's back: stale for good
            }
            return Status::rt_param_invalid;
        }
        return use(ref->raw);
    }

    // `destroy(T*)` with the object pinned; the token goes when it succeeds.
    template <typename Destroy>
    [[nodiscard]] Status destroy(const void* handle, Destroy&& destroy) {
        const Status s = with(handle, destroy);
        if (succeeded(s)) {
            (void)table_.take(handle);
        }
        return s;
    }

private:
    HandleTable<RuntimeRef<T>> table_;
};

// The tables, leaked on purpose: a handle may be used during process exit.
inline RuntimeHandles<Stream>& streams() {
    static auto* const table = new RuntimeHandles<Stream>(HandleKind::stream);
    return *table;
}
inline RuntimeHandles<Event>& events() {
    static auto* const table = new RuntimeHandles<Event>(HandleKind::event);
    return *table;
}

inline RuntimeHandles<Notify>& notifies() {
    static auto* const table = new RuntimeHandles<Notify>(HandleKind::notify);
    return *table;
}

// Contexts also come from aclrtGetCurrentContext (a primary context, made by aclrtSetDevice),
// which must return one handle per context: the token is found again by the context's id, which
// the runtime never reuses.
class ContextHandles {
public:
    [[nodiscard]] Token token_for(const std::shared_ptr<const Context>& context) {
        const std::lock_guard lock(mutex_);
        if (const auto found = by_id_.find(context->id()); found != by_id_.end()) {
            return found->second;
        }
        by_id_.reserve(by_id_.size() + 1); // so that the emplace below cannot throw
        const Token token = handles_.add(context);
        by_id_.emplace(context->id(), token);
        return token;
    }

    template <typename Use>
    [[nodiscard]] Status with(const void* handle, Use&& use) {
        return handles_.with(handle, use);
    }

    template <typename Destroy>
    [[nodiscard]] Status destroy(const void* handle, Destroy&& destroy) {
        std::uint64_t id = 0;
        const Status s = handles_.destroy(handle, [&](const Context* context) {
            id = context->id(); // pinned: safe to read
            return destroy(context);
        });
        if (succeeded(s)) {
            const std::lock_guard lock(mutex_);
            by_id_.erase(id);
        }
        return s;
    }

private:
    RuntimeHandles<const Context> handles_{HandleKind::context};
    std::mutex mutex_;
    std::unordered_map<std::uint64_t, Token> by_id_;
};

inline ContextHandles& contexts() {
    static auto* const table = new ContextHandles;
    return *table;
}

// A NULL stream is the current context's default stream: `use(nullptr)`.
template <typename Use>
[[nodiscard]] Status with_stream(const void* handle, Use&& use) {
    if (handle == nullptr) {
        return use(static_cast<Stream*>(nullptr));
    }
    return streams().with(handle, use);
}

} // namespace ferry::acl
