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
// its creator died before writing a header). Otherwise why it must stay. Called with the file's
// lock held: a creator holds that lock from its shm_open until the segment is ready, so a file
// still shorter than a header now has no creator left to write one (docs/processes.md,
// Creation, reclaim and removal).
inline std::optional<Error> judge(int fd, const std::string& shm_name, const BootId& boot) {
    bool empty = false;
    auto header = map_header(fd, shm_name, Clock::now(), &empty);
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
    // Held until return: a creator still initialising the file holds it (then this waits, up to
    // `deadline`, and never judges a half-made segment), and no other reclaimer (or
    // Segment::unlink) can remove this file and let a new segment take the name meanwhile.
    if (auto e = lock_for_unlink(fd->get(), shm_name, deadline)) {
        return e;
    }
    if (auto e = judge(fd->get(), shm_name, boot)) {
        return e;
    }
    return unlink_if_named(fd->get(), shm_name);
}

} // namespace ferry::ipc::detail
