#pragma once
// ferry::afd::RemoteAccess — how a Window (window.hpp) reaches memory that is not mapped in this
// process: another node's, written with one-sided puts (ferry/net/window.hpp).
//
// A Window that carries a RemoteAccess keeps the bounds check (owner_base / size) itself and
// hands only in-window ranges to the access, so an implementation never sees an address outside
// the window. It has no local pointer: translate() answers nullptr, and the simulators write
// through write() / publish() / ring() alone.
//
// Ordering: publish() must make every earlier write() of this access visible to the owner before
// the flag — over a network, a fence and then the flag's put. A reader that loads the flag with
// acquire and sees the value then sees every byte written before it. ring() comes after the
// flags it announces; flush() waits until everything written so far has landed.

#include <cstdint>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <span>

namespace ferry::afd {

class RemoteAccess {
public:
    RemoteAccess() = default;
    RemoteAccess(const RemoteAccess&) = delete;
    RemoteAccess& operator=(const RemoteAccess&) = delete;
    virtual ~RemoteAccess() = default;

    // Writes `bytes` at the owner's address (inside the window: the Window checked it). Returns
    // when `bytes` may be reused; peer_lost when the owner is gone.
    [[nodiscard]] virtual Status write(std::uint64_t owner_address,
                                       std::span<const std::byte> bytes) noexcept = 0;
    // Orders every earlier write() before the flag, then stores `value` into the int32 flag at
    // the owner's address (inside the window, 4-byte aligned).
    [[nodiscard]] virtual Status publish(std::uint64_t owner_address,
                                         std::int32_t value) noexcept = 0;
    // Wakes the owner's waiter (its doorbell), after the flags it announces.
    [[nodiscard]] virtual Status ring() noexcept = 0;
    // Waits until every earlier write and flag has landed in the owner's memory.
    [[nodiscard]] virtual Status flush(const Timeout& timeout) noexcept = 0;
};

} // namespace ferry::afd
