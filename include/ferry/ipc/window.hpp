#pragma once
// ferry::ipc::SharedWindow — an Attention/FFN window (ferry/afd/window.hpp) in shared memory.
//
//     auto own = ferry::ipc::SharedWindow::create("ffn0", bytes);     // the FFN process
//     lay out the ScheduleContext and its buffers in own->data(), with own->owner_base() addresses
//     auto peer = ferry::ipc::SharedWindow::open("ffn0");             // each attention process
//     AttentionToFfn::attach(context view in peer->data(), peer->window());
//
// The owner creates a Segment (docs/processes.md, Shared segments) whose payload is a 64-byte
// header — the owner's address of the data area, its size, the doorbell — followed by the data
// area. The header is published (a word stored with release, a shared futex woken) only after the
// owner wrote it, and open waits for that, bounded. Writers translate the owner's addresses with
// the header's owner_base, fixed when they open, so a peer that later scribbles on the header
// cannot move the window. The doorbell uses FutexScope::shared: the processes map the page at
// different addresses.
//
// The owner's destructor unlinks the name (processes that have it open keep their mapping). The
// owner may also record the data area in an AllocationRegistry (register_in), so that a
// RegistryResolver accepts the ScheduleContext's buffers in it; the record is erased when the
// window closes.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ferry/afd/doorbell.hpp>
#include <ferry/afd/window.hpp>
#include <ferry/channel/detail/futex.hpp>
#include <ferry/ipc/error.hpp>
#include <ferry/ipc/layout_tag.hpp>
#include <ferry/ipc/segment.hpp>
#include <ferry/runtime/allocation_registry.hpp>
#include <string>
#include <string_view>
#include <utility>

namespace ferry::ipc {

struct alignas(64) WindowHeader {
    std::uint64_t owner_base = 0; // the owner's address of the data area
    std::uint64_t data_bytes = 0;
    afd::DoorbellWord doorbell;
    std::uint32_t published = 0; // 1 once the fields above are final (release)
};
static_assert(sizeof(WindowHeader) == 64);

inline constexpr LayoutTag k_window_tag = layout_tag_of<WindowHeader>("ferry.afd.window", 1);

class SharedWindow {
public:
    [[nodiscard]] static Expected<SharedWindow>
    create(std::string_view name, std::size_t data_bytes,
           std::chrono::milliseconds wait = k_default_wait);
    [[nodiscard]] static Expected<SharedWindow>
    open(std::string_view name, std::chrono::milliseconds wait = k_default_wait);

    SharedWindow(SharedWindow&& other) noexcept
        : segment_(std::move(other.segment_)), window_(std::exchange(other.window_, {})),
          owner_(std::exchange(other.owner_, false)),
          registry_(std::exchange(other.registry_, nullptr)) {}
    SharedWindow& operator=(SharedWindow&&) = delete;
    SharedWindow(const SharedWindow&) = delete;
    SharedWindow& operator=(const SharedWindow&) = delete;
    ~SharedWindow() { close(); }

    // The window for writers: the owner's addresses, this process's mapping, the shared doorbell.
    [[nodiscard]] const afd::Window& window() const noexcept { return window_; }
    [[nodiscard]] const afd::Doorbell& doorbell() const noexcept { return window_.doorbell(); }
    [[nodiscard]] std::uint64_t owner_base() const noexcept { return window_.owner_base(); }
    // This process's mapping of the data area (where the owner lays out its buffers).
    [[nodiscard]] std::span<std::byte> data() const noexcept {
        return {window_.translate(window_.owner_base(), window_.size()), window_.size()};
    }
    [[nodiscard]] bool is_owner() const noexcept { return owner_; }
    [[nodiscard]] const std::string& name() const noexcept { return segment_.name(); }

    // Owner only: records the data area as one live allocation of `device`, so a RegistryResolver
    // over `registry` accepts buffers inside it. invalid_param for a peer or a second
    // registration; the registry's own status when the range overlaps a recorded allocation.
    // `registry` must outlive the registration (close() erases the record from it).
    [[nodiscard]] Status register_in(AllocationRegistry& registry, std::int32_t device = 0) {
        if (!owner_ || registry_ != nullptr || window_.size() == 0) {
            return Status::invalid_param;
        }
        const auto base = static_cast<std::uintptr_t>(window_.owner_base());
        const auto bytes = static_cast<std::size_t>(window_.size());
        const Status s = registry.insert({base, bytes, bytes, device, AllocationKind::device});
        registry_ = s == Status::ok ? &registry : nullptr;
        return s;
    }

    // Erases the registration, unlinks the name (owner) and unmaps; idempotent.
    void close() noexcept {
        if (registry_ != nullptr) {
            (void)registry_->erase(
                reinterpret_cast<const void*>(static_cast<std::uintptr_t>(window_.owner_base())));
            registry_ = nullptr;
        }
        if (owner_ && segment_.is_open()) {
            (void)Segment::unlink(segment_.name());
        }
        owner_ = false;
        window_ = {};
        segment_.close();
    }

private:
    SharedWindow(Segment segment, bool owner) noexcept
        : segment_(std::move(segment)), owner_(owner) {}

    [[nodiscard]] WindowHeader& header() const noexcept {
        return *reinterpret_cast<WindowHeader*>(segment_.payload().data());
    }
    [[nodiscard]] std::byte* data_start() const noexcept {
        return segment_.payload().data() + sizeof(WindowHeader);
    }
    void bind(std::uint64_t owner_base, std::uint64_t bytes) noexcept {
        window_ = afd::Window(data_start(), owner_base, bytes,
                              afd::Doorbell(&header().doorbell, ferry::detail::FutexScope::shared));
    }

    Segment segment_;
    afd::Window window_;
    bool owner_ = false;
    AllocationRegistry* registry_ = nullptr;
};

inline Expected<SharedWindow> SharedWindow::create(std::string_view name, std::size_t data_bytes,
                                                   std::chrono::milliseconds wait) {
    if (data_bytes == 0 || data_bytes > k_max_payload_bytes - sizeof(WindowHeader)) {
        return Error{Status::invalid_param,
                     "ipc: a window needs 1 to " +
                         std::to_string(k_max_payload_bytes - sizeof(WindowHeader)) + " data bytes",
                     0};
    }
    Expected<Segment> made =
        Segment::create(name, sizeof(WindowHeader) + data_bytes, k_window_tag, wait);
    if (!made) {
        return made.error();
    }
    SharedWindow w(std::move(made.value()), true);
    WindowHeader& h = w.header();
    h.owner_base = reinterpret_cast<std::uintptr_t>(w.data_start());
    h.data_bytes = data_bytes;
    std::atomic_ref<std::uint32_t>(h.published).store(1, std::memory_order_release);
    ferry::detail::futex_wake(&h.published, INT_MAX, ferry::detail::FutexScope::shared);
    w.bind(h.owner_base, data_bytes);
    return w;
}

inline Expected<SharedWindow> SharedWindow::open(std::string_view name,
                                                 std::chrono::milliseconds wait) {
    const auto deadline = ferry::detail::futex_clock::now() + wait;
    Expected<Segment> seen = Segment::open(name, k_window_tag, wait);
    if (!seen) {
        return seen.error();
    }
    SharedWindow w(std::move(seen.value()), false);
    WindowHeader& h = w.header();
    std::atomic_ref<std::uint32_t> published(h.published);
    while (published.load(std::memory_order_acquire) == 0) {
        if (ferry::detail::futex_clock::now() >= deadline) {
            return Error{Status::timed_out,
                         "ipc: window " + w.name() + " was not published by its owner in time", 0};
        }
        ferry::detail::futex_wait_until(&h.published, 0, deadline,
                                        ferry::detail::FutexScope::shared);
    }
    const std::size_t mapped = w.segment_.payload().size() - sizeof(WindowHeader);
    if (h.data_bytes != mapped || h.owner_base == 0) {
        return Error{Status::invalid_file,
                     "ipc: window " + w.name() + " claims " + std::to_string(h.data_bytes) +
                         " data bytes, holds " + std::to_string(mapped),
                     0};
    }
    w.bind(h.owner_base, mapped);
    return w;
}

} // namespace ferry::ipc
