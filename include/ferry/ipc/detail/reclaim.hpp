#pragma once
// Stale segments (docs/processes.md, Stale segments): when create finds its name taken, the
// existing segment is removed if nobody can be using it, and the name is reported in use if
// somebody is.

#include <cerrno>
#include <ferry/ipc/detail/process_identity.hpp>
#include <ferry/ipc/detail/segment_checks.hpp>
#include <ferry/ipc/detail/segment_file.hpp>
#include <ferry/ipc/detail/segment_header.hpp>
#include <ferry/ipc/error.hpp>
#include <optional>
#include <string>
#include <sys/mman.h>

namespace ferry::ipc::detail {

// nullopt: the file open as `fd` is stale (no live participant, or made in another boot, or
// its creator never wrote a header). Otherwise why it must stay.
inline std::optional<Error> judge(int fd, const std::string& shm_name, const BootId& boot,
                                  Clock::time_point deadline) {
    bool empty = false;
    auto header = map_header(fd, shm_name, deadline, &empty);
    if (empty) {
        return std::nullopt;
    }
    if (!header) {
        return header.error();
    }
    auto& h = *reinterpret_cast<SegmentHeader*>(header->data());
    if (auto e = check_format(h, shm_name)) {
        return Error{e->status, e->message + "; not reclaiming it (remove it with Segment::unlink)",
                     0};
    }
    if (const auto pid = live_participant(h, boot)) {
        return Error{Status::failure, "ipc: " + shm_name + " is in use by " + pid_text(*pid), 0};
    }
    return std::nullopt;
}

// Removes the segment now named `shm_name` if it is stale. nullopt: the name is free to create
// again (removed here, or by someone else meanwhile); otherwise the Error create reports.
inline std::optional<Error> reclaim_if_stale(const std::string& shm_name, const BootId& boot,
                                             Clock::time_point deadline) {
    auto fd = open_existing(shm_name);
    if (!fd) {
        return fd.error().error_number == ENOENT ? std::nullopt : std::optional(fd.error());
    }
    if (auto e = check_owner(fd->get(), shm_name)) {
        return Error{e->status, e->message + "; not reclaiming it", 0};
    }
    // Held until return: no other reclaimer (or Segment::unlink) can remove this file and let a
    // new segment take the name between still_named and shm_unlink below.
    if (auto e = lock_for_unlink(fd->get(), shm_name, deadline)) {
        return e;
    }
    if (auto e = judge(fd->get(), shm_name, boot, deadline)) {
        return e;
    }
    if (still_named(fd->get(), shm_name) && ::shm_unlink(shm_name.c_str()) != 0 &&
        errno != ENOENT) {
        return system_error(Status::failure, "shm_unlink " + shm_name, errno);
    }
    return std::nullopt;
}

} // namespace ferry::ipc::detail
