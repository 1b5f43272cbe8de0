// ferry-inspect net: reading the nodes' state files (net_report.hpp).

#include "net_report.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <ferry/core/detail/json_string.hpp>
#include <filesystem>
#include <optional>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace ferry::inspect {
namespace {

// The pid of "ferry-net-<pid>-<n>.json", or nullopt for any other name.
std::optional<std::int32_t> pid_of(std::string_view name) {
    constexpr std::string_view prefix = "ferry-net-", suffix = ".json";
    if (!name.starts_with(prefix) || !name.ends_with(suffix)) {
        return std::nullopt;
    }
    name = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    std::int32_t pid = 0;
    unsigned serial = 0;
    const auto [dash, e1] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (e1 != std::errc{} || pid <= 0 || dash == name.data() + name.size() || *dash != '-') {
        return std::nullopt;
    }
    const auto [end, e2] = std::from_chars(dash + 1, name.data() + name.size(), serial);
    if (e2 != std::errc{} || end != name.data() + name.size()) {
        return std::nullopt;
    }
    return pid;
}

bool process_exists(std::int32_t pid) {
    return ::kill(pid, 0) == 0 || errno == EPERM;
}

// The file's text, read once through a descriptor whose file passed the checks; a problem
// otherwise.
std::string read_checked(const std::string& path, std::string& text) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        return std::string("cannot open it: ") + std::strerror(errno);
    }
    struct stat st {};
    std::string problem;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        problem = "not a regular file";
    } else if (st.st_uid != ::geteuid()) {
        problem = "owned by another user";
    } else if ((st.st_mode & 0777) != 0600) {
        problem = "its mode is not 0600";
    } else if (static_cast<std::uint64_t>(st.st_size) > k_max_state_bytes) {
        problem = "larger than " + std::to_string(k_max_state_bytes) + " bytes";
    } else {
        text.resize(k_max_state_bytes + 1);
        const ssize_t n = ::read(fd, text.data(), text.size());
        text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        const bool printable = std::all_of(
            text.begin(), text.end(), [](char c) { return c == '\n' || (c >= 0x20 && c < 0x7f); });
        if (n < 0 || text.size() > k_max_state_bytes || !printable) {
            problem =
                "not printable text of at most " + std::to_string(k_max_state_bytes) + " bytes";
        }
    }
    ::close(fd);
    if (!problem.empty()) {
        text.clear();
    }
    return problem;
}

} // namespace

std::vector<NetStateReport> read_net_states(const std::string& dir) {
    std::vector<NetStateReport> out;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        const std::string file = entry.path().filename().string();
        const auto pid = pid_of(file);
        if (!pid) {
            continue;
        }
        NetStateReport r;
        r.file = file;
        r.pid = *pid;
        r.stale = !process_exists(*pid);
        r.problem = read_checked(entry.path().string(), r.text);
        out.push_back(std::move(r));
    }
    std::sort(out.begin(), out.end(),
              [](const NetStateReport& a, const NetStateReport& b) { return a.file < b.file; });
    return out;
}

std::string net_text(const std::vector<NetStateReport>& reports) {
    std::string out;
    for (const auto& r : reports) {
        out += r.file + "  pid " + std::to_string(r.pid) + (r.stale ? "  stale" : "  live");
        out += r.problem.empty() ? "\n" + r.text : "  not trusted: " + r.problem + "\n";
    }
    return out.empty() ? "no ferry-net state files\n" : out;
}

std::string net_json(const std::vector<NetStateReport>& reports) {
    using ferry::detail::json_string;
    std::string out = "[";
    for (const auto& r : reports) {
        out += std::string(out.size() > 1 ? ",\n " : "") + "{\"file\": " + json_string(r.file) +
               ", \"pid\": " + std::to_string(r.pid) +
               ", \"stale\": " + (r.stale ? "true" : "false") +
               ", \"problem\": " + (r.problem.empty() ? "null" : json_string(r.problem)) +
               ", \"state\": " + (r.problem.empty() ? json_string(r.text) : "null") + "}";
    }
    return out + "]\n";
}

} // namespace ferry::inspect
