#pragma once
// ferry::afd::Window — how a writer reaches memory its owner describes with the owner's addresses.
//
// On a device, AttentionToFFN and FFNToAttention write into a peer's window: the ScheduleContext
// holds the *owner's* addresses (the FFN's descriptor table, an attention session's flag table),
// and the writer reaches them through its mapping of the window. A Window is that mapping:
//   - owner_base / size: the window's range in the owner's address space;
//   - a local pointer: where the same bytes are in this process — or, for memory this process
//     does not map (another node's), a RemoteAccess (remote_access.hpp) that writes there;
//   - a doorbell (doorbell.hpp) in the window, rung after publishing.
// Writers translate an owner address into an offset in the window; a range that is not entirely
// inside is refused (invalid_param) and nothing is written. A remote window has no local bytes:
// translate() answers nullptr, and writers use contains()/reaches() with write(), publish() and
// ring(), which the Window checks and then hands to the access.
//
// Implementations: LocalWindow (below, in-process memory, the owner's addresses are this
// process's) and ferry::ipc::SharedWindow (ferry/ipc/window.hpp, a shared segment the owner
// created and writers opened), and ferry::net::RemoteWindow (ferry/net/window.hpp, another
// node's exposed memory, written with one-sided puts). Window itself is a small non-owning value:
// whatever provides it must outlive every copy.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/afd/doorbell.hpp>
#include <ferry/afd/remote_access.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/profiler.hpp>
#include <limits>
#include <span>

namespace ferry::afd {

class Window {
public:
    // An empty window: every access is refused.
    Window() = default;
    Window(std::byte* local, std::uint64_t owner_base, std::uint64_t size, Doorbell bell) noexcept
        : local_(local), owner_base_(owner_base), size_(local == nullptr ? 0 : size), bell_(bell) {}
    // Memory another node owns, reached through `remote` (which must outlive every copy); the
    // owner's doorbell is rung through it too.
    Window(RemoteAccess& remote, std::uint64_t owner_base, std::uint64_t size) noexcept
        : owner_base_(owner_base), size_(size), remote_(&remote) {}

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
    [[nodiscard]] bool is_remote() const noexcept { return remote_ != nullptr; }

    // Whether the owner's [owner_address, owner_address + bytes) lies entirely inside the window
    // (owner_address 0 never does).
    [[nodiscard]] bool contains(std::uint64_t owner_address, std::uint64_t bytes) const noexcept {
        if (owner_address == 0) {
            return false;
        }
        if (unbounded_) {
            return bytes <= std::numeric_limits<std::uintptr_t>::max() - owner_address;
        }
        return owner_address >= owner_base_ && owner_address - owner_base_ <= size_ &&
               bytes <= size_ - (owner_address - owner_base_);
    }

    // contains(), and the range starts `alignment`-aligned where it is written: this process's
    // mapping for a local window, the owner's address for a remote one (the owner's own pointer).
    [[nodiscard]] bool reaches(std::uint64_t owner_address, std::uint64_t bytes,
                               std::uintptr_t alignment = 1) const noexcept {
        if (remote_ != nullptr) {
            return contains(owner_address, bytes) && owner_address % alignment == 0;
        }
        const std::byte* p = translate(owner_address, bytes);
        return p != nullptr && reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
    }

    // This process's address of the owner's [owner_address, owner_address + bytes), or nullptr
    // when any of it lies outside the window (or owner_address is 0), or the window is remote.
    [[nodiscard]] std::byte* translate(std::uint64_t owner_address,
                                       std::uint64_t bytes) const noexcept {
        if (remote_ != nullptr || !contains(owner_address, bytes)) {
            return nullptr;
        }
        if (unbounded_) {
            return reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(owner_address));
        }
        return local_ + (owner_address - owner_base_);
    }

    // Copies `bytes` to the owner's address; invalid_param (nothing written) when out of range.
    // A remote window answers what its access answers (peer_lost when the owner is gone).
    [[nodiscard]] Status write(std::uint64_t owner_address,
                               std::span<const std::byte> bytes) const noexcept {
        if (remote_ != nullptr) {
            return contains(owner_address, bytes.size()) ? remote_->write(owner_address, bytes)
                                                         : Status::invalid_param;
        }
        std::byte* to = translate(owner_address, bytes.size());
        if (to == nullptr) {
            return Status::invalid_param;
        }
        if (!bytes.empty()) { // an empty span's data() may be null, which memcpy must not get
            std::memcpy(to, bytes.data(), bytes.size());
        }
        return Status::ok;
    }

    // The int32 flag at the owner's address (4-byte aligned, inside the window), or nullptr (always
    // for a remote window).
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
    // publishing many flags rings once, after the last. A remote window's access fences the
    // earlier writes before the flag (remote_access.hpp).
    [[nodiscard]] Status publish(std::uint64_t owner_address, std::int32_t value) const noexcept {
        const TraceSpan trace("window.publish", "window");
        if (remote_ != nullptr) {
            return reaches(owner_address, sizeof(std::int32_t), alignof(std::int32_t))
                       ? remote_->publish(owner_address, value)
                       : Status::invalid_param;
        }
        std::int32_t* flag = flag_at(owner_address);
        if (flag == nullptr) {
            return Status::invalid_param;
        }
        std::atomic_ref<std::int32_t>(*flag).store(value, std::memory_order_release);
        return Status::ok;
    }

    // Waits until every earlier write and flag has landed in the owner's memory: at once for a
    // local window (its stores are done); a remote one asks its access (timed_out, peer_lost).
    [[nodiscard]] Status flush(const Timeout& timeout) const noexcept {
        return remote_ != nullptr ? remote_->flush(timeout) : Status::ok;
    }

    // Rings the owner's doorbell; a remote window asks its access to (peer_lost when the owner
    // is gone). A local ring cannot fail.
    Status ring() const noexcept {
        const TraceSpan trace("window.ring", "window");
        if (remote_ != nullptr) {
            return remote_->ring();
        }
        bell_.ring();
        return Status::ok;
    }

private:
    std::byte* local_ = nullptr;
    std::uint64_t owner_base_ = 0;
    std::uint64_t size_ = 0;
    bool unbounded_ = false;
    Doorbell bell_;
    RemoteAccess* remote_ = nullptr;
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
