#pragma once
// What open (and the stale check of create) verifies before trusting a segment's header.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ferry/channel/detail/futex.hpp>
#include <ferry/ipc/detail/process_identity.hpp>
#include <ferry/ipc/detail/segment_file.hpp>
#include <ferry/ipc/detail/segment_header.hpp>
#include <ferry/ipc/error.hpp>
#include <ferry/ipc/layout_tag.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::ipc::detail {

inline std::string pid_text(std::int32_t pid) {
    return "pid " + std::to_string(pid);
}

// Waits until the creator's first write (the whole header) is in the file, then maps the header.
// A file that stays shorter than a header is one whose creator died (or stalled) between
// shm_open and that write: then the answer is timed_out and `*empty` is set.
inline Expected<Mapping> map_header(int fd, const std::string& shm_name, Clock::time_point deadline,
                                    bool* empty) {
    *empty = !poll_until(deadline, [&] {
        const auto size = file_size(fd);
        return size && *size >= sizeof(SegmentHeader);
    });
    if (*empty) {
        return Error{Status::timed_out, "ipc: " + shm_name + " got no header in time", 0};
    }
    return map_shared(fd, sizeof(SegmentHeader));
}

inline std::optional<Error> check_format(const SegmentHeader& h, const std::string& shm_name) {
    if (h.magic != k_segment_magic) {
        return Error{Status::invalid_file, "ipc: " + shm_name + " is not a ferry segment", 0};
    }
    if (h.header_format != k_header_format || h.header_bytes != sizeof(SegmentHeader)) {
        return Error{Status::invalid_file,
                     "ipc: " + shm_name + " has header format " + std::to_string(h.header_format) +
                         " (" + std::to_string(h.header_bytes) +
                         " bytes); this build uses format " + std::to_string(k_header_format) +
                         " (" + std::to_string(sizeof(SegmentHeader)) + " bytes)",
                     0};
    }
    return std::nullopt;
}

inline std::string describe(std::string_view name, std::uint32_t version, std::uint64_t hash) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return "'" + std::string(name) + "' v" + std::to_string(version) + " (hash " + hex + ")";
}

inline std::optional<Error> check_tag(const SegmentHeader& h, const LayoutTag& tag,
                                      const std::string& shm_name) {
    const std::string_view stored(h.layout_name, ::strnlen(h.layout_name, sizeof h.layout_name));
    if (stored == tag.name && h.layout_version == tag.version && h.layout_hash == tag.hash) {
        return std::nullopt;
    }
    return Error{Status::mismatch,
                 "ipc: " + shm_name + " holds layout " +
                     describe(stored, h.layout_version, h.layout_hash) + ", this build expects " +
                     describe(tag.name, tag.version, tag.hash),
                 0};
}

// Waits for the creator to publish the segment (ready, stored last with release). Fails early
// when the creator gave up or died; otherwise at `deadline`.
// `ready_word` is the live header's; `creator` comes from the opener's private copy of it.
inline std::optional<Error> wait_ready(std::uint32_t& ready_word, const ProcessIdentity& creator_id,
                                       const std::string& shm_name, Clock::time_point deadline) {
    std::atomic_ref<std::uint32_t> ready(ready_word);
    const std::string creator = pid_text(creator_id.pid);
    for (;;) {
        const std::uint32_t state = ready.load(std::memory_order_acquire);
        if (state == k_ready) {
            return std::nullopt;
        }
        if (state == k_abandoned) {
            return Error{Status::invalid_file, "ipc: " + shm_name + ": its creation failed", 0};
        }
        if (!is_alive(creator_id.pid, creator_id.start_time)) {
            return Error{
                Status::invalid_file,
                "ipc: " + shm_name + ": its creator (" + creator + ") died initialising it", 0};
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            return Error{Status::timed_out,
                         "ipc: " + shm_name + ": its creator (" + creator +
                             ") did not finish initialising it in time",
                         0};
        }
        // Sliced, so that a creator's death is noticed without waiting for the whole deadline.
        ferry::detail::futex_wait_until(&ready_word, state,
                                        std::min(deadline, now + std::chrono::milliseconds(50)),
                                        ferry::detail::FutexScope::shared);
    }
}

} // namespace ferry::ipc::detail
