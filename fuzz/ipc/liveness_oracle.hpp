#pragma once
// The liveness oracle of hostile_peer.cpp: registrations the attacker writes into the
// participants table, and what the library must conclude from the table.
//
// The rule (docs/processes.md, Liveness): a registration is alive when its pid's process runs
// with the start time the slot keeps (low 32 bits); this process's own registrations (same pid
// and start time) are skipped; anything else in a slot — this pid with another start time, a
// pid without a start time, a pid that cannot exist — is a lost participant. The oracle judges
// only pids whose answer it knows without asking the library: this process, its parent, and
// pids outside the kernel's range. Its own /proc reading is deliberately separate from the
// library's.

#include "attacker.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <optional>
#include <string_view>
#include <unistd.h>

namespace ipc_fuzz {

// The kernel's pid limit (PID_MAX_LIMIT, 2^22): no process has a pid above it.
inline constexpr std::int32_t k_pid_limit = 1 << 22;

// Field 22 of /proc/<pid>/stat, low 32 bits; nullopt when the process cannot be read.
inline std::optional<std::uint32_t> start_of(std::int32_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    char buf[1024];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    const std::string_view text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    std::size_t at = text.rfind(')'); // the command name may hold spaces and ')'
    for (int field = 2; at != std::string_view::npos && field < 22; ++field) {
        at = text.find(' ', at + 1);
    }
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    std::uint64_t start = 0;
    for (std::size_t i = at + 1; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
        start = start * 10 + static_cast<std::uint64_t>(text[i] - '0');
    }
    return static_cast<std::uint32_t>(start);
}

struct Known {
    std::int32_t self = 0;
    std::uint32_t self_start = 0;
    std::int32_t parent = 0;
    std::uint32_t parent_start = 0;
};
inline const Known& known() {
    static const Known k = [] {
        Known out;
        out.self = static_cast<std::int32_t>(::getpid());
        out.self_start = start_of(out.self).value_or(0);
        out.parent = static_cast<std::int32_t>(::getppid());
        out.parent_start = start_of(out.parent).value_or(0);
        return out;
    }();
    return k;
}

// Writes a registration into a slot the script names: pid and start time each chosen among
// those the oracle can judge, or raw.
inline void write_registration(Script& in, Attacker& peer) {
    const Known& k = known();
    const std::size_t slot = in.byte() % k_participants;
    std::int32_t pid = 0;
    switch (in.byte() % 5) {
    case 0:
        pid = k.self;
        break;
    case 1:
        pid = k.parent;
        break;
    case 2:
        pid = k_pid_limit + 1;
        break;
    case 3:
        pid = -1;
        break;
    default:
        pid = static_cast<std::int32_t>(in.bytes(4));
        break;
    }
    std::uint32_t start = 0;
    switch (in.byte() % 5) {
    case 0:
        start = k.self_start;
        break;
    case 1:
        start = k.parent_start;
        break;
    case 2:
        start = 0;
        break;
    case 3:
        start = k.self_start + 1;
        break;
    default:
        start = static_cast<std::uint32_t>(in.bytes(4));
        break;
    }
    store_registration(peer.at(k_participants_at + slot * k_slot_bytes), pid, start);
}

enum class Verdict { unknown, alive, lost };

inline Verdict judge(const Registration& r) {
    const Known& k = known();
    if (r.pid == 0) {
        return Verdict::alive; // a free slot
    }
    if (r.pid < 0 || r.pid > k_pid_limit) {
        return Verdict::lost;
    }
    if (r.pid == k.self) { // ours when the start time is ours; a dead namesake otherwise
        return r.start == k.self_start ? Verdict::alive : Verdict::lost;
    }
    if (r.pid == k.parent && k.parent_start != 0) {
        return r.start == k.parent_start ? Verdict::alive : Verdict::lost;
    }
    return Verdict::unknown;
}

// What lost_participant() must answer for the table as it is now: lost when any slot is,
// alive when every slot is known alive or free, unknown otherwise.
inline Verdict expected_liveness(const Attacker& peer) {
    Verdict table = Verdict::alive;
    for (std::size_t i = 0; i < k_participants; ++i) {
        const Verdict v = judge(decode_slot(peer.at(k_participants_at + i * k_slot_bytes)));
        if (v == Verdict::lost) {
            return Verdict::lost;
        }
        if (v == Verdict::unknown) {
            table = Verdict::unknown;
        }
    }
    return table;
}

} // namespace ipc_fuzz
