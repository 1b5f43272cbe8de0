#pragma once
// ferry::ipc::Segment — a named block of shared memory that processes of one user map together.
//
//     constexpr auto tag = ferry::ipc::layout_tag_of<Ring>("ferry.ring", 1);
//     auto made = ferry::ipc::Segment::create("jobs", sizeof(Ring), tag);   // process A
//     auto seen = ferry::ipc::Segment::open("jobs", tag);                   // process B
//     if (!seen) log(seen.error().message);      // "ipc: /ferry.jobs is in use by pid 4711", ...
//     std::span<std::byte> bytes = seen->payload();
//
// Semantics (full guide: docs/processes.md, Shared segments):
// - create: makes /dev/shm/ferry.<name> (mode 0600, O_EXCL) and reserves all of it up front, so
//   a full /dev/shm is an error here and never a SIGBUS later. The payload starts zeroed. A name
//   already taken by a stale segment (all participants dead, or another boot) is reclaimed; one
//   with a live participant answers failure "in use by pid N".
// - open: maps an existing segment after checking owner, mode, header format and layout tag;
//   waits (bounded by `wait`) for its creator to finish.
// - Both register the caller in the segment's participant table; close (or the destructor)
//   removes it. Neither unlinks: the name lives until unlink(name), or until a later create
//   reclaims it.
// - unlink: removes the name; processes that have the segment mapped keep using it.
// - Not inherited across fork: a forked child's copy of a Segment unmaps without deregistering.
// - lost_participant: a registered participant whose process died without closing (what a
//   ferry::ipc::Channel waiter watches for). close_and_remove_if_last: close, and unlink the name
//   when no live participant is left (dead registrations do not count); an open racing with it
//   either keeps the segment or fails, never attaches to a removed name. close_and_remove:
//   close, and unlink the name whoever still uses it. Every removal first checks that the name
//   still refers to this segment's file (docs/processes.md, Creation, reclaim and removal).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fcntl.h>
#include <ferry/channel/detail/futex.hpp>
#include <ferry/ipc/detail/process_identity.hpp>
#include <ferry/ipc/detail/reclaim.hpp>
#include <ferry/ipc/detail/segment_checks.hpp>
#include <ferry/ipc/detail/segment_file.hpp>
#include <ferry/ipc/detail/segment_header.hpp>
#include <ferry/ipc/detail/segment_name.hpp>
#include <ferry/ipc/error.hpp>
#include <ferry/ipc/layout_tag.hpp>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <utility>

namespace ferry::ipc {

// How long create and open wait for another process (a creator still initialising, a peer
// holding the unlink lock) before answering timed_out.
inline constexpr std::chrono::milliseconds k_default_wait{5000};

// The largest payload: the total file size must fit in off_t.
inline constexpr std::size_t k_max_payload_bytes =
    static_cast<std::size_t>(std::numeric_limits<off_t>::max()) - detail::k_payload_offset;

class Segment {
public:
    [[nodiscard]] static Expected<Segment> create(std::string_view name, std::size_t payload_bytes,
                                                  const LayoutTag& tag,
                                                  std::chrono::milliseconds wait = k_default_wait);
    [[nodiscard]] static Expected<Segment> open(std::string_view name, const LayoutTag& tag,
                                                std::chrono::milliseconds wait = k_default_wait);
    static Expected<void> unlink(std::string_view name,
                                 std::chrono::milliseconds wait = k_default_wait);
    // Opens, or creates when there is no such name; as Channel::open_or_create.
    [[nodiscard]] static Expected<Segment>
    open_or_create(std::string_view name, std::size_t payload_bytes, const LayoutTag& tag,
                   std::chrono::milliseconds wait = k_default_wait) {
        return open_or_create_with([&] { return open(name, tag, wait); },
                                   [&] { return create(name, payload_bytes, tag, wait); });
    }
    // Opens, waiting up to `wait` for the name to appear as well; as Channel::await_open.
    [[nodiscard]] static Expected<Segment> await_open(std::string_view name, const LayoutTag& tag,
                                                      std::chrono::milliseconds wait) {
        return retry_while_not_found(wait, [&](auto left) { return open(name, tag, left); });
    }

    Segment(Segment&& other) noexcept
        : name_(std::move(other.name_)), shm_(std::move(other.shm_)), map_(std::move(other.map_)),
          payload_(std::exchange(other.payload_, {})), slot_(other.slot_),
          self_(std::exchange(other.self_, {})), file_(other.file_) {}
    Segment& operator=(Segment&& other) noexcept {
        if (this != &other) {
            release();
            name_ = std::move(other.name_);
            shm_ = std::move(other.shm_);
            map_ = std::move(other.map_);
            payload_ = std::exchange(other.payload_, {});
            slot_ = other.slot_;
            self_ = std::exchange(other.self_, {});
            file_ = other.file_;
        }
        return *this;
    }
    Segment(const Segment&) = delete;
    Segment& operator=(const Segment&) = delete;
    ~Segment() { release(); }

    // Deregisters and unmaps; idempotent. The segment itself stays (see unlink). Always ok: the
    // Expected is there so that every handle closes alike (docs/core.md, One lifecycle).
    Expected<void> close() noexcept {
        release();
        return {};
    }

    // Closes; then, if no live process is registered any more, removes the name (under the
    // unlink lock, and only if the name still refers to this segment's file). ok: closed, and
    // removed or left to the live participants. An error (the lock stayed taken for `wait`)
    // still closes.
    Expected<void> close_and_remove_if_last(std::chrono::milliseconds wait = k_default_wait) {
        return close_and_remove_name(true, wait);
    }
    // Closes, then removes the name whoever else still uses the segment — but only while the
    // name refers to this segment's file, never to a newer segment of the same name. ok also
    // when the name is already gone. What an owner that ends a segment's life (SharedWindow)
    // calls.
    Expected<void> close_and_remove(std::chrono::milliseconds wait = k_default_wait) {
        return close_and_remove_name(false, wait);
    }

    // The pid of a participant registered in this segment (not this process: same pid and start
    // time) whose process is gone, or a zombie with no thread left, or a reused pid; nullopt
    // when every registered one is alive or closed. Reads /proc once per registered participant
    // (twice for a zombie leader; docs/processes.md, Liveness).
    [[nodiscard]] std::optional<std::int32_t> lost_participant() const noexcept {
        if (!is_open()) {
            return std::nullopt;
        }
        for (auto& slot : header().participants) {
            const auto p = detail::read_slot(slot);
            if (p.pid != 0 && !detail::same_process(self_, p) &&
                !detail::is_alive(p.pid, p.start_time)) {
                return p.pid;
            }
        }
        return std::nullopt;
    }

    [[nodiscard]] bool is_open() const noexcept { return map_.data() != nullptr; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    // The shm name it was made or opened under ("/ferry.<name>", or "/ferry@<domain>.<name>"
    // under FERRY_NAMESPACE); removal uses it, whatever the variable says by then.
    [[nodiscard]] const std::string& shm_name() const noexcept { return shm_; }
    // Empty after close.
    [[nodiscard]] std::span<std::byte> payload() const noexcept { return payload_; }
    [[nodiscard]] std::int32_t creator_pid() const noexcept {
        return is_open() ? header().creator_pid : 0;
    }
    // The counter area (docs/processes.md, Counters): k_counters_bytes, one block per
    // participant slot; empty after close. slot(): the slot this process registered in.
    [[nodiscard]] std::span<std::byte> counter_area() const noexcept {
        return is_open() ? std::span<std::byte>(map_.data() + detail::k_counters_offset,
                                                detail::k_counters_bytes)
                         : std::span<std::byte>{};
    }
    [[nodiscard]] std::size_t slot() const noexcept { return slot_; }

private:
    // `checked` is this process's private copy of the header, the one create wrote or open
    // checked (docs/processes.md, Reading shared memory): the payload span is fixed from it, never
    // from the shared header, which a peer may have rewritten since the check.
    Segment(std::string name, detail::Mapping map, const detail::SegmentHeader& checked,
            std::size_t slot, const detail::ProcessIdentity& self, detail::FileId file)
        : name_(std::move(name)), shm_(detail::shm_name(name_)), map_(std::move(map)),
          payload_(map_.data() + checked.payload_offset, checked.payload_bytes), slot_(slot),
          self_(self), file_(file) {}

    void release() noexcept {
        if (map_.data() != nullptr && registered_here()) {
            detail::deregister_participant(header(), slot_, self_);
        }
        map_.reset();
        payload_ = {};
        self_ = {};
    }

    [[nodiscard]] bool registered_here() const noexcept {
        return self_.pid != 0 && self_.pid == static_cast<std::int32_t>(::getpid());
    }
    [[nodiscard]] detail::SegmentHeader& header() const noexcept {
        return *reinterpret_cast<detail::SegmentHeader*>(map_.data());
    }

    Expected<void> close_and_remove_name(bool if_last, std::chrono::milliseconds wait);
    static Expected<Segment> initialise(std::string name, detail::FileDescriptor fd,
                                        const detail::SegmentHeader& first);
    static Expected<Segment> attach(std::string name, int fd, const LayoutTag& tag,
                                    detail::Clock::time_point deadline);

    std::string name_;
    std::string shm_;
    detail::Mapping map_;
    std::span<std::byte> payload_;
    std::size_t slot_ = 0;
    // The registered process (pid 0 when closed); a forked child's copy is not registered.
    detail::ProcessIdentity self_;
    detail::FileId file_; // the file mapped, to tell it from a later segment of the same name
};

} // namespace ferry::ipc

#include <ferry/ipc/detail/segment_impl.hpp>
