#pragma once
// ferry::Context — the execution environment streams and events belong to.
//
// docs/cann-contract/runtime.md#devices-and-contexts: a primary context per
// (device, ts) — RT_MAX_TS_NUM = 2 — is retained by aclrtSetDevice and released by
// aclrtResetDevice; explicit contexts are created and destroyed by the user. Each thread has a
// current context; every stream, event and allocation is made on the current context's device.
// The bookkeeping (reference counts, ownership of streams and events) is in DeviceManager
// (device.hpp); a Context is its identity.

#include <cstdint>
#include <ferry/runtime/detail/keeper.hpp>

namespace ferry {

class Context {
public:
    Context(std::int32_t device, std::uint32_t ts, bool primary) noexcept
        : id_(detail::next_object_id()), device_(device), ts_(ts), primary_(primary) {}
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    // Unique for the life of the process (a stale Context* is told apart from a new one).
    [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
    [[nodiscard]] std::int32_t device() const noexcept { return device_; }
    [[nodiscard]] std::uint32_t ts() const noexcept { return ts_; }
    [[nodiscard]] bool primary() const noexcept { return primary_; }

private:
    const std::uint64_t id_;
    const std::int32_t device_;
    const std::uint32_t ts_;
    const bool primary_;
};

namespace detail {
// The calling thread's current context, with its id so that a context destroyed by another
// thread (device reset) is detected instead of dereferenced.
struct CurrentContext {
    const Context* context = nullptr;
    std::uint64_t id = 0;
};
inline thread_local CurrentContext current_context{};
} // namespace detail

} // namespace ferry
