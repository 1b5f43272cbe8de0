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
// The owner's destructor unlinks the name (processes that have it open keep their mapping); a
// peer's close unlinks it when the owner died without closing and no other process is left. The
// owner may also record the data area as external memory (register_in) — in the process
// runtime's registry, what the C API's aclnnInplaceFfnWorkerScheduler resolves against, or in an
// AllocationRegistry of the caller's — so that a RegistryResolver accepts the ScheduleContext's
// buffers in it; the record is erased when the window closes, and the runtime never frees it.
//
// While open, a window enters its data area in afd::WaitDirectory: the owner's mapping with the
// doorbell (ferry's writers ring the owner's window), a peer's without (the FFN frees descriptors
// without ringing), both with a probe of the segment's participants. So afd::AutoWait, the
// default policy, parks on the doorbell where a writer rings and ends with peer_lost when a
// process that opened the window dies (docs/processes.md, Attention/FFN across processes).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ferry/afd/doorbell.hpp>
#include <ferry/afd/wait_directory.hpp>
#include <ferry/afd/window.hpp>
#include <ferry/channel/detail/futex.hpp>
#include <ferry/ipc/error.hpp>
#include <ferry/ipc/layout_tag.hpp>
#include <ferry/ipc/segment.hpp>
#include <ferry/runtime/allocation_registry.hpp>
#include <ferry/runtime/runtime.hpp>
#include <memory>
#include <optional>
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
    // Opens, waiting up to `wait` for the owner to create the window as well (not_found when it
    // never did). There is no open_or_create: the owner and its peers have different roles.
    [[nodiscard]] static Expected<SharedWindow> await_open(std::string_view name,
                                                           std::chrono::milliseconds wait) {
        return retry_while_not_found(wait, [&](auto left) { return open(name, left); });
    }

    SharedWindow(SharedWindow&& other) noexcept
        : segment_(std::move(other.segment_)), window_(std::exchange(other.window_, {})),
          owner_(std::exchange(other.owner_, false)), record_(std::move(other.record_)),
          watch_(std::exchange(other.watch_, 0)) {}
    SharedWindow& operator=(SharedWindow&&) = delete;
    SharedWindow(const SharedWindow&) = delete;
    SharedWindow& operator=(const SharedWindow&) = delete;
    ~SharedWindow() { static_cast<void>(close()); }

    // The window for writers: the owner's addresses, this process's mapping, the shared doorbell.
    [[nodiscard]] const afd::Window& window() const noexcept { return window_; }
    [[nodiscard]] const afd::Doorbell& doorbell() const noexcept { return window_.doorbell(); }
    [[nodiscard]] std::uint64_t owner_base() const noexcept { return window_.owner_base(); }
    // This process's mapping of the data area (where the owner lays out its buffers).
    [[nodiscard]] std::span<std::byte> data() const noexcept {
        return {window_.translate(window_.owner_base(), window_.size()), window_.size()};
    }
    [[nodiscard]] bool is_owner() const noexcept { return owner_; }
    // A process that opened (or created) this window and died without closing it; what the
    // window's peer probe watches (Segment::lost_participant). nullopt when closed.
    [[nodiscard]] std::optional<std::int32_t> lost_participant() const noexcept {
        return segment_ ? segment_->lost_participant() : std::nullopt;
    }
    [[nodiscard]] const std::string& name() const noexcept {
        static const std::string closed;
        return segment_ ? segment_->name() : closed;
    }

    // Owner only: records the data area as external memory of `device` (docs/runtime.md,
    // External memory), so a RegistryResolver over the runtime's registry — the C API's — or over
    // `registry` accepts buffers inside it. invalid_param for a peer, a closed window or a second
    // registration; otherwise the status of Runtime::register_external / insert_external.
    // The runtime or `registry` must outlive the registration (close() erases the record).
    [[nodiscard]] Status register_in(Runtime& runtime, std::int32_t device = 0) {
        if (!can_register()) {
            return Status::invalid_param;
        }
        return keep(runtime.register_external(data().data(), data().size(), device));
    }
    [[nodiscard]] Status register_in(AllocationRegistry& registry, std::int32_t device = 0) {
        if (!can_register()) {
            return Status::invalid_param;
        }
        const auto base = reinterpret_cast<std::uintptr_t>(data().data());
        return keep(registry.insert_external(
            {base, data().size(), data().size(), device, AllocationKind::device}));
    }
    [[nodiscard]] bool is_registered() const noexcept { return record_.active(); }

    // Erases the registration and unmaps; idempotent. The owner removes the name; a peer
    // removes it when no live process is left (the owner was killed). Either only while the
    // name still refers to this window's segment (docs/processes.md, Creation, reclaim and
    // removal). An error says the name could not be removed (the window is closed anyway).
    Expected<void> close() noexcept {
        record_.reset();
        if (watch_ != 0) {
            afd::WaitDirectory::instance().remove(watch_);
            watch_ = 0;
        }
        window_ = {};
        const bool owner = std::exchange(owner_, false);
        if (segment_ && segment_->is_open()) {
            return owner ? segment_->close_and_remove() : segment_->close_and_remove_if_last();
        }
        return {};
    }

private:
    // The Segment lives on the heap: the wait directory's probe points at it across moves.
    SharedWindow(Segment segment, bool owner)
        : segment_(std::make_unique<Segment>(std::move(segment))), owner_(owner) {}

    [[nodiscard]] WindowHeader& header() const noexcept {
        return *reinterpret_cast<WindowHeader*>(segment_->payload().data());
    }
    [[nodiscard]] std::byte* data_start() const noexcept {
        return segment_->payload().data() + sizeof(WindowHeader);
    }
    void bind(std::uint64_t owner_base, std::uint64_t bytes) {
        window_ = afd::Window(data_start(), owner_base, bytes,
                              afd::Doorbell(&header().doorbell, ferry::detail::FutexScope::shared));
        const afd::PeerProbe probe{
            [](const void* segment) noexcept {
                return static_cast<const Segment*>(segment)->lost_participant().has_value();
            },
            segment_.get()};
        watch_ = afd::WaitDirectory::instance().add(
            data(), {owner_ ? window_.doorbell() : afd::Doorbell{}, probe});
    }

    [[nodiscard]] bool can_register() const noexcept {
        return owner_ && !record_.active() && window_.size() != 0;
    }
    [[nodiscard]] Status keep(Result<ExternalRecord> made) noexcept {
        if (!made) {
            return made.status();
        }
        record_ = std::move(made).value();
        return Status::ok;
    }

    std::unique_ptr<Segment> segment_;
    afd::Window window_;
    bool owner_ = false;
    ExternalRecord record_;
    std::uint64_t watch_ = 0; // the afd::WaitDirectory entry; 0 when none
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
    // Read once, checked, and only the checked copies used (docs/processes.md, Reading shared
    // memory): the size is the mapping's, and the owner's base is fixed here.
    const std::size_t mapped = w.segment_->payload().size() - sizeof(WindowHeader);
    const std::uint64_t data_bytes = std::atomic_ref<std::uint64_t>(h.data_bytes).load();
    const std::uint64_t owner_base = std::atomic_ref<std::uint64_t>(h.owner_base).load();
    if (data_bytes != mapped || owner_base == 0) {
        return Error{Status::invalid_file,
                     "ipc: window " + w.name() + " claims " + std::to_string(data_bytes) +
                         " data bytes, holds " + std::to_string(mapped),
                     0};
    }
    w.bind(owner_base, mapped);
    return w;
}

} // namespace ferry::ipc
