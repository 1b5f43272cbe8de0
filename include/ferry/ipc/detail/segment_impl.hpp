#pragma once
// Segment's create / open / unlink (declared in ferry/ipc/segment.hpp).

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>
#include <fcntl.h>
#include <ferry/ipc/segment.hpp>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace ferry::ipc::detail {

// A test seam: when set, create calls it between its shm_open and its header write, so that a
// test can hold a creator at the point where its file exists and is still empty.
inline void (*test_pause_after_shm_open)() = nullptr;

struct Caller {
    ProcessIdentity self;
    BootId boot;
};

inline Expected<Caller> read_caller() {
    const auto self = self_identity();
    const auto boot = read_boot_id();
    if (!self || !boot) {
        return Error{Status::failure, "ipc: cannot read this process's identity from /proc", 0};
    }
    return Caller{*self, *boot};
}

inline std::optional<Error> check_tag_valid(const LayoutTag& tag) {
    if (tag.name.empty() || tag.name.size() > k_max_layout_name ||
        tag.name.find('\0') != std::string_view::npos) {
        return Error{Status::invalid_param,
                     "ipc: a layout name has 1.." + std::to_string(k_max_layout_name) +
                         " characters and no NUL",
                     0};
    }
    return std::nullopt;
}

// A fast, advisory check before posix_fallocate: tmpfs allocates page by page and only then
// gives up, so asking for more than is free would first take all of /dev/shm from everyone.
inline std::optional<Error> check_space(std::uint64_t total_bytes) {
    struct statvfs fs {};
    if (::statvfs(std::string(k_shm_directory).c_str(), &fs) != 0) {
        return std::nullopt; // no estimate: posix_fallocate still decides
    }
    const std::uint64_t free_bytes = std::uint64_t{fs.f_bavail} * fs.f_frsize;
    if (free_bytes >= total_bytes) {
        return std::nullopt;
    }
    return Error{Status::bad_alloc,
                 "ipc: /dev/shm has " + std::to_string(free_bytes) +
                     " bytes free; the segment needs " + std::to_string(total_bytes),
                 ENOSPC};
}

inline bool write_all(int fd, const void* data, std::size_t bytes) noexcept {
    const auto* p = static_cast<const char*>(data);
    std::size_t done = 0;
    while (done < bytes) {
        const ssize_t n = ::pwrite(fd, p + done, bytes - done, static_cast<off_t>(done));
        if (n < 0 && errno != EINTR) {
            return false;
        }
        done += n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    return true;
}

inline SegmentHeader& header_of(const Mapping& map) noexcept {
    return *reinterpret_cast<SegmentHeader*>(map.data());
}

// This process's copy of a mapped header, to check and then use without reading it again.
inline SegmentHeader copy_header(const Mapping& map) noexcept {
    SegmentHeader copy;
    std::memcpy(&copy, map.data(), sizeof copy);
    return copy;
}

// Undoes a create that failed after its shm_open: openers already waiting see "creation
// failed" instead of timing out, and the name is removed if it is still this file's (the
// creation lock is held: see reclaim.hpp).
inline Error abandon(int fd, const std::string& shm_name, Error error) {
    const std::uint32_t abandoned = k_abandoned;
    [[maybe_unused]] const auto written =
        ::pwrite(fd, &abandoned, sizeof abandoned, offsetof(SegmentHeader, ready));
    (void)unlink_if_named(fd, shm_name);
    return error;
}

// The creation lock (docs/processes.md, Creation, reclaim and removal): the creator of `fd`,
// just made with O_EXCL, locks it exclusively and keeps the lock until the segment is ready or
// abandoned, so no reclaimer judges the file meanwhile. A reclaimer that locked first may have
// found the fresh file empty and removed it: then `fd` is no longer named and false tells the
// creator to start over.
inline Expected<bool> lock_new_file(int fd, const std::string& shm_name,
                                    Clock::time_point deadline) {
    if (auto e = lock_for_unlink(fd, shm_name, deadline)) {
        return *e;
    }
    return still_named(fd, shm_name);
}

// Writes the header, reserves the file, maps it, and returns the mapping (not yet ready).
inline Expected<Mapping> build(int fd, const std::string& shm_name, const SegmentHeader& first) {
    if (::fchmod(fd, 0600) != 0) { // O_CREAT's mode went through the umask
        return system_error(Status::failure, "fchmod " + shm_name, errno);
    }
    if (auto e = check_space(first.total_bytes)) {
        return *e;
    }
    if (!write_all(fd, &first, sizeof first)) {
        return system_error(Status::failure, "writing the header of " + shm_name, errno);
    }
    if (const int r = ::posix_fallocate(fd, 0, static_cast<off_t>(first.total_bytes)); r != 0) {
        return system_error(r == ENOSPC ? Status::bad_alloc : Status::failure,
                            "reserving " + std::to_string(first.total_bytes) + " bytes for " +
                                shm_name + " in /dev/shm",
                            r);
    }
    return map_shared(fd, first.total_bytes);
}

} // namespace ferry::ipc::detail

namespace ferry::ipc {

inline Expected<Segment> Segment::initialise(std::string name, detail::FileDescriptor fd,
                                             const detail::SegmentHeader& first) {
    const std::string shm = detail::shm_name(name);
    auto map = detail::build(fd.get(), shm, first);
    if (!map) {
        return detail::abandon(fd.get(), shm, map.error());
    }
    std::uint32_t& ready = detail::header_of(*map).ready;
    std::atomic_ref<std::uint32_t>(ready).store(detail::k_ready, std::memory_order_release);
    ferry::detail::futex_wake(&ready, INT_MAX, ferry::detail::FutexScope::shared);
    // The creation lock ends here. Explicitly: the mapping keeps the open file (and with it
    // the flock) alive after fd closes.
    ::flock(fd.get(), LOCK_UN);
    return Segment(std::move(name), std::move(*map), first, 0,
                   {first.creator_pid, first.creator_start_time}, detail::file_id(fd.get()));
}

inline Expected<Segment> Segment::create(std::string_view name, std::size_t payload_bytes,
                                         const LayoutTag& tag, std::chrono::milliseconds wait) {
    if (auto e = detail::check_name(name)) {
        return *e;
    }
    if (auto e = detail::check_tag_valid(tag)) {
        return *e;
    }
    if (payload_bytes > k_max_payload_bytes) {
        return Error{Status::invalid_param,
                     "ipc: payload of " + std::to_string(payload_bytes) +
                         " bytes is larger than a file can be",
                     0};
    }
    auto caller = detail::read_caller();
    if (!caller) {
        return caller.error();
    }
    const std::string shm = detail::shm_name(name);
    const auto first = detail::make_header(tag, payload_bytes, caller->self, caller->boot);
    const auto deadline = detail::Clock::now() + wait;
    // Bounded: each round either creates, fails, or removed a stale segment that someone else
    // then re-created under the name before us.
    for (int round = 0; round < 4; ++round) {
        detail::FileDescriptor fd(
            ::shm_open(shm.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (fd.get() < 0 && errno != EEXIST) {
            return detail::system_error(Status::failure, "shm_open " + shm, errno);
        }
        if (fd.get() >= 0) {
            auto locked = detail::lock_new_file(fd.get(), shm, deadline);
            if (!locked) {
                return locked.error();
            }
            if (!*locked) {
                continue; // removed as an empty leftover before we locked it: make it again
            }
            if (detail::test_pause_after_shm_open != nullptr) {
                detail::test_pause_after_shm_open();
            }
            return initialise(std::string(name), std::move(fd), first);
        }
        if (auto e = detail::reclaim_if_stale(shm, caller->boot, deadline)) {
            return *e;
        }
    }
    return Error{Status::failure, "ipc: " + shm + " keeps being re-created by other processes", 0};
}

inline Expected<Segment> Segment::attach(std::string name, int fd, const LayoutTag& tag,
                                         detail::Clock::time_point deadline) {
    auto caller = detail::read_caller();
    if (!caller) {
        return caller.error();
    }
    const std::string shm = detail::shm_name(name);
    bool empty = false;
    auto first_map = detail::map_header(fd, shm, deadline, &empty);
    if (!first_map) {
        return first_map.error();
    }
    // Every decision below is taken on a private copy of the header (docs/processes.md, Reading
    // shared memory); only the ready word is read live, and the copy is taken again once the
    // creator has published the header (ready, acquire).
    const detail::SegmentHeader first = detail::copy_header(*first_map);
    if (auto e = detail::check_format(first, shm)) {
        return *e;
    }
    if (!detail::same_boot(first, caller->boot)) {
        return Error{Status::invalid_file,
                     "ipc: " + shm + " was left by an earlier boot; create reclaims it", 0};
    }
    if (auto e = detail::wait_ready(detail::header_of(*first_map).ready,
                                    {first.creator_pid, first.creator_start_time}, shm, deadline)) {
        return *e;
    }
    const detail::SegmentHeader checked = detail::copy_header(*first_map);
    if (auto e = detail::check_format(checked, shm)) {
        return *e;
    }
    if (auto e = detail::check_tag(checked, tag, shm)) {
        return *e;
    }
    const auto size = detail::file_size(fd);
    if (checked.payload_offset != detail::k_payload_offset ||
        checked.total_bytes != checked.payload_offset + checked.payload_bytes ||
        checked.payload_bytes > k_max_payload_bytes) {
        return Error{Status::invalid_file, "ipc: " + shm + " has inconsistent sizes in its header",
                     0};
    }
    if (!size || *size < checked.total_bytes) {
        return Error{Status::invalid_file, "ipc: " + shm + " is shorter than its header says", 0};
    }
    auto map = detail::map_shared(fd, checked.total_bytes);
    if (!map) {
        return map.error();
    }
    first_map->reset();
    const auto slot = detail::register_participant(detail::header_of(*map), caller->self);
    if (!slot) {
        return Error{Status::failure,
                     "ipc: " + shm + " already has " + std::to_string(detail::k_max_participants) +
                         " live participants",
                     0};
    }
    // A process removing the name (close_and_remove_if_last) judges "no live participant" and
    // unlinks under an exclusive lock: registered first and then locked, this open is either
    // seen live by that judgement, or sees the name gone here and gives up.
    const bool locked = detail::lock_shared(fd, deadline);
    if (!locked || !detail::still_named(fd, shm)) {
        detail::deregister_participant(detail::header_of(*map), *slot, caller->self);
        return locked ? Error{Status::not_found, "ipc: " + shm + " was removed while opening", 0}
                      : Error{Status::timed_out,
                              "ipc: " + shm + " stayed locked by another process", 0};
    }
    ::flock(fd, LOCK_UN);
    return Segment(std::move(name), std::move(*map), checked, *slot, caller->self,
                   detail::file_id(fd));
}

inline Expected<void> Segment::close_and_remove_name(bool if_last, std::chrono::milliseconds wait) {
    if (!is_open() || !registered_here()) {
        release();
        return {};
    }
    const std::string& shm = shm_;
    auto fd = detail::open_existing(shm);
    if (!fd || detail::file_id(fd->get()) != file_) {
        release(); // the name is gone, or names a newer segment: not ours to remove
        return {};
    }
    if (auto e = detail::lock_for_unlink(fd->get(), shm, detail::Clock::now() + wait)) {
        release();
        return *e;
    }
    detail::deregister_participant(header(), slot_, self_);
    self_ = {}; // deregistered: release() must not do it again
    const auto boot = detail::read_boot_id();
    const bool remove = !if_last || (boot && !detail::live_participant(header(), *boot));
    release();
    if (remove) {
        if (auto e = detail::unlink_if_named(fd->get(), shm)) {
            return *e;
        }
    }
    return {};
}

inline Expected<Segment> Segment::open(std::string_view name, const LayoutTag& tag,
                                       std::chrono::milliseconds wait) {
    if (auto e = detail::check_name(name)) {
        return *e;
    }
    const std::string shm = detail::shm_name(name);
    auto fd = detail::open_existing(shm);
    if (!fd) {
        return fd.error();
    }
    if (auto e = detail::check_owner(fd->get(), shm)) {
        return *e;
    }
    return attach(std::string(name), fd->get(), tag, detail::Clock::now() + wait);
}

inline Expected<void> Segment::unlink(std::string_view name, std::chrono::milliseconds wait) {
    if (auto e = detail::check_name(name)) {
        return *e;
    }
    const std::string shm = detail::shm_name(name);
    auto fd = detail::open_existing(shm);
    if (!fd) {
        return fd.error();
    }
    if (auto e = detail::check_owner(fd->get(), shm)) {
        return *e;
    }
    if (auto e = detail::lock_for_unlink(fd->get(), shm, detail::Clock::now() + wait)) {
        return *e;
    }
    if (auto e = detail::unlink_if_named(fd->get(), shm)) {
        return *e;
    }
    return {};
}

} // namespace ferry::ipc
