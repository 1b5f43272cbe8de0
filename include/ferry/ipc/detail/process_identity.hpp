#pragma once
// Who a process is, across pid reuse and reboots: pid + start time + boot id.
//
// A pid alone is reused; the start time (field 22 of /proc/<pid>/stat, clock ticks since boot)
// tells a reused pid from the process that registered. Start times restart at every boot, so
// the boot id (/proc/sys/kernel/random/boot_id) says whether the pair belongs to this boot at
// all. Pids are those of the caller's pid namespace: processes sharing a segment must share one.

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <string_view>
#include <sys/types.h>
#include <unistd.h>

namespace ferry::ipc::detail {

inline constexpr std::size_t k_boot_id_size = 36; // "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
using BootId = std::array<char, k_boot_id_size>;

struct ProcessStat {
    char state = '?';             // field 3: R, S, D, Z (zombie), X (dead), ...
    std::uint64_t start_time = 0; // field 22
};

// Reads a small /proc file whole; nullopt when it cannot be opened (the process is gone).
inline std::optional<std::string_view> read_proc_file(const char* path, char* buf,
                                                      std::size_t size) noexcept {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    const ssize_t n = ::read(fd, buf, size);
    ::close(fd);
    if (n <= 0) {
        return std::nullopt;
    }
    return std::string_view(buf, static_cast<std::size_t>(n));
}

// Field 2 (the command name, in parentheses) may itself hold spaces and ')': the fields that
// follow are counted from the last ')'.
inline std::optional<ProcessStat> parse_stat(std::string_view text) noexcept {
    const auto close = text.rfind(')');
    if (close == std::string_view::npos) {
        return std::nullopt;
    }
    ProcessStat stat;
    int field = 2;
    std::size_t i = close + 1;
    while (i < text.size() && field < 22) {
        while (i < text.size() && text[i] == ' ') {
            ++i;
        }
        ++field;
        const std::size_t begin = i;
        while (i < text.size() && text[i] != ' ') {
            ++i;
        }
        if (field == 3 && i > begin) {
            stat.state = text[begin];
        } else if (field == 22) {
            for (std::size_t k = begin; k < i; ++k) {
                if (text[k] < '0' || text[k] > '9') {
                    return std::nullopt;
                }
                stat.start_time = stat.start_time * 10 + static_cast<std::uint64_t>(text[k] - '0');
            }
            return i > begin ? std::optional<ProcessStat>(stat) : std::nullopt;
        }
    }
    return std::nullopt;
}

inline std::optional<ProcessStat> read_process_stat(std::int32_t pid) noexcept {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    char buf[1024];
    const auto text = read_proc_file(path, buf, sizeof buf);
    return text ? parse_stat(*text) : std::nullopt;
}

inline std::optional<BootId> read_boot_id() noexcept {
    char buf[64];
    const auto text = read_proc_file("/proc/sys/kernel/random/boot_id", buf, sizeof buf);
    if (!text || text->size() < k_boot_id_size) {
        return std::nullopt;
    }
    BootId id{};
    std::memcpy(id.data(), text->data(), k_boot_id_size);
    return id;
}

struct ProcessIdentity {
    std::int32_t pid = 0;
    std::uint64_t start_time = 0;
};

inline std::optional<ProcessIdentity> self_identity() noexcept {
    const auto pid = static_cast<std::int32_t>(::getpid());
    const auto stat = read_process_stat(pid);
    if (!stat) {
        return std::nullopt;
    }
    return ProcessIdentity{pid, stat->start_time};
}

// The number of threads /proc/<pid>/status counts for the process ("Threads:"); nullopt when
// it cannot be read. A leader that left with pthread_exit is still counted until the process
// is reaped, so a process is all gone when this says 1 or less.
inline std::optional<long> read_thread_count(std::int32_t pid) noexcept {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
    char buf[4096];
    const auto text = read_proc_file(path, buf, sizeof buf);
    if (!text) {
        return std::nullopt;
    }
    constexpr std::string_view key = "\nThreads:";
    const auto at = text->find(key);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    long n = 0;
    bool digits = false;
    for (std::size_t i = at + key.size(); i < text->size() && (*text)[i] != '\n'; ++i) {
        const char c = (*text)[i];
        if (c >= '0' && c <= '9' && n < 1000000000) {
            n = n * 10 + (c - '0');
            digits = true;
        } else if (c != ' ' && c != '\t') {
            return std::nullopt;
        }
    }
    return digits ? std::optional<long>(n) : std::nullopt;
}

// Start times as a participant slot keeps them: the low 32 bits (clock ticks since boot; at
// 100 Hz they repeat after 497 days of uptime).
inline std::uint32_t start_fingerprint(std::uint64_t start_time) noexcept {
    return static_cast<std::uint32_t>(start_time);
}

// Alive (docs/processes.md, Liveness): /proc/<pid>/stat exists with the recorded start time
// (compared as start_fingerprint), and the process can still run code. State Z or X of the
// stat file is the thread-group leader's: a leader that called pthread_exit is a zombie while
// the process's other threads run on, so a zombie leader counts as dead only when no other
// thread is left.
inline bool is_alive(std::int32_t pid, std::uint64_t start_time) noexcept {
    if (pid <= 0) {
        return false;
    }
    const auto stat = read_process_stat(pid);
    if (!stat || start_fingerprint(stat->start_time) != start_fingerprint(start_time)) {
        return false;
    }
    if (stat->state != 'Z' && stat->state != 'X') {
        return true;
    }
    const auto threads = read_thread_count(pid);
    return threads && *threads > 1;
}

// Whether `other` is this very process: the same pid and the same start time.
inline bool same_process(const ProcessIdentity& self, const ProcessIdentity& other) noexcept {
    return self.pid == other.pid &&
           start_fingerprint(self.start_time) == start_fingerprint(other.start_time);
}

} // namespace ferry::ipc::detail
