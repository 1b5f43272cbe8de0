#pragma once
// ferry::afd::Window — how a writer reaches memory its owner describes with the owner's addresses.
//
// On a device, AttentionToFFN and FFNToAttention write into a peer's window: the ScheduleContext
// holds the *owner's* addresses (the FFN's descriptor table, an attention session's flag table),
// and the writer reaches them through its mapping of the window. A Window is that mapping:
//   - owner_base / size: the window's range in the owner's address space;
//   - a local pointer: where the same bytes are in this process;
//   - a doorbell (doorbell.hpp) in the window, rung after publishing.
// Writers translate an owner address into an offset in the window; a range that is not entirely
// inside is refused (invalid_param) and nothing is written.
//
// Implementations: LocalWindow (below, in-process memory, the owner's addresses are this
// process's) and ferry::ipc::SharedWindow (ferry/ipc/window.hpp, a shared segment the owner
// created and writers opened). Window itself is a small non-owning value: whatever provides it
// must outlive every copy.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/afd/doorbell.hpp>
#include <ferry/core/status.hpp>
#include <limits>
#include <span>

namespace ferry::afd {

class Window {
public:
    // An empty window: every access is refused.
    Window() = default;
    Window(std::byte* local, std::uint64_t owner_base, std::uint64_t size, Doorbell bell) noexcept
        : local_(local), owner_base_(owner_base), size_(local == nullptr ? 0 : size), bell_(bell) {}

    // The caller's own address space, unchecked, as a device trusts the addresses it is given:
    // what the simulators use when no window is named. `bell` may still be rung.
    [[nodiscard]] static Window unbounded(Doorbell bell = {}) noexcept {
        Window w;
        w.unbounded_ = true;
        w.bell_ = bell;
        return w;
    }

    [[nodiscard]] std::uint64_t owner_base() const noexcept { return owner_base_; }
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
    [[nodiscard]] bool is_unbounded() const noexcept { return unbounded_; }
    [[nodiscard]] const Doorbell& doorbell() const noexcept { return bell_; }

    // This process's address of the owner's [owner_address, owner_address + bytes), or nullptr
    // when any of it lies outside the window (or owner_address is 0).
    [[nodiscard]] std::byte* translate(std::uint64_t owner_address,
                                       std::uint64_t bytes) const noexcept {
        if (owner_address == 0) {
            return nullptr;
        }
        if (unbounded_) {
            return bytes > std::numeric_limits<std::uintptr_t>::max() - owner_address
                       ? nullptr
                       : reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(owner_address));
        }
        if (owner_address < owner_base_ || owner_address - owner_base_ > size_ ||
            bytes > size_ - (owner_address - owner_base_)) {
            return nullptr;
        }
        return local_ + (owner_address - owner_base_);
    }

    // Copies `bytes` to the owner's address; invalid_param (nothing written) when out of range.
    [[nodiscard]] Status write(std::uint64_t owner_address,
                               std::span<const std::byte> bytes) const noexcept {
        std::byte* to = translate(owner_address, bytes.size());
        if (to == nullptr) {
            return Status::invalid_param;
        }
        if (!bytes.empty()) { // an empty span's data() may be null, which memcpy must not get
            std::memcpy(to, bytes.data(), bytes.size());
        }
        return Status::ok;
    }

    // The int32 flag at the owner's address (4-byte aligned, inside the window), or nullptr.
    [[nodiscard]] std::int32_t* flag_at(std::uint64_t owner_address) const noexcept {
        std::byte* p = translate(owner_address, sizeof(std::int32_t));
        if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % alignof(std::int32_t) != 0) {
            return nullptr;
        }
        return reinterpret_cast<std::int32_t*>(p);
    }

    // Stores `value` into the flag at the owner's address with release ordering, so that every
    // earlier write() is visible to whoever loads the flag with acquire. invalid_param when the
    // flag is outside the window or misaligned (nothing written). Does not ring: a writer
    // publishing many flags rings once, after the last.
    [[nodiscard]] Status publish(std::uint64_t owner_address, std::int32_t value) const noexcept {
        std::int32_t* flag = flag_at(owner_address);
        if (flag == nullptr) {
            return Status::invalid_param;
        }
        std::atomic_ref<std::int32_t>(*flag).store(value, std::memory_order_release);
        return Status::ok;
    }

    void ring() const noexcept { bell_.ring(); }

private:
    std::byte* local_ = nullptr;
    std::uint64_t owner_base_ = 0;
    std::uint64_t size_ = 0;
    bool unbounded_ = false;
    Doorbell bell_;
};

// In-process memory: the owner's addresses are this process's, and the doorbell is a private
// futex (threads of one process). Default-constructed, it covers the whole address space (what
// the simulators did before windows existed); given a region, it is bounded to it. Not movable:
// waiters hold the doorbell's address.
class LocalWindow {
public:
    LocalWindow() noexcept : window_(Window::unbounded(bell())) {}
    explicit LocalWindow(std::span<std::byte> region) noexcept
        : window_(region.data(), reinterpret_cast<std::uintptr_t>(region.data()), region.size(),
                  bell()) {}
    LocalWindow(const LocalWindow&) = delete;
    LocalWindow& operator=(const LocalWindow&) = delete;

    [[nodiscard]] const Window& window() const noexcept { return window_; }
    [[nodiscard]] const Doorbell& doorbell() const noexcept { return window_.doorbell(); }

private:
    Doorbell bell() noexcept { return {&word_, ferry::detail::FutexScope::process}; }

    DoorbellWord word_;
    Window window_;
};

} // namespace ferry::afd
