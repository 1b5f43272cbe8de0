#pragma once
// The file a node publishes its state to, when the environment asks for it
// (docs/multi-node.md, Publishing a node's state). Off unless FERRY_NET_STATE_DIR names a
// directory; then each Node writes <dir>/ferry-net-<pid>-<n>.json (n: the node's number in its
// process), mode 0600, replaced atomically (a temporary file in the same directory, then
// rename) every k_state_interval from the node's progress thread, and removes it when it is
// destroyed. Local only: a file, never a socket. The directory must be this user's own and
// writable by no one else — another directory is refused with a logged reason and nothing is
// written. ferry-inspect reads the files (`ferry-inspect net [DIR]`).

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <ferry/core/status.hpp>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace ferry::net::detail {

inline constexpr const char* k_state_dir_variable = "FERRY_NET_STATE_DIR";
inline constexpr std::chrono::milliseconds k_state_interval{500};

// Why `dir` may not hold state files (empty when it may): an absolute path to a directory
// owned by this user that no one else may write to.
inline std::string state_dir_problem(const std::string& dir) {
    if (dir.empty() || dir.front() != '/') {
        return "not an absolute path";
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        return std::string("cannot stat it: ") + std::strerror(errno);
    }
    if (!S_ISDIR(st.st_mode)) {
        return "not a directory";
    }
    if (st.st_uid != ::geteuid()) {
        return "owned by another user";
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return "writable by others";
    }
    return {};
}

class StateFile {
public:
    StateFile() = default;
    StateFile(const StateFile&) = delete;
    StateFile& operator=(const StateFile&) = delete;
    ~StateFile() { remove(); }

    // Reads FERRY_NET_STATE_DIR: enabled when it names a usable directory. `why` is set when the
    // variable is set but the directory is refused (the caller logs it).
    void configure_from_environment(std::string& why) {
        const char* dir = std::getenv(k_state_dir_variable);
        if (dir == nullptr) {
            return;
        }
        why = state_dir_problem(dir);
        if (!why.empty()) {
            why = std::string(k_state_dir_variable) + "=" + dir + ": " + why +
                  "; this node publishes no state";
            return;
        }
        static std::atomic<unsigned> nodes{0};
        const std::string stem = "ferry-net-" + std::to_string(::getpid()) + "-" +
                                 std::to_string(nodes.fetch_add(1) + 1);
        path_ = std::string(dir) + "/" + stem + ".json";
        temporary_ = std::string(dir) + "/." + stem + ".tmp";
    }
    [[nodiscard]] bool enabled() const noexcept { return !path_.empty(); }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }

    // Replaces the file with `text`: ok, or failure (`why` says what failed; the old file, if
    // any, stays).
    Status write(std::string_view text, std::string& why) const {
        ::unlink(temporary_.c_str()); // a leftover of a write this process did not finish
        const int fd =
            ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            why = "cannot create " + temporary_ + ": " + std::strerror(errno);
            return Status::failure;
        }
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
            if (n <= 0 && errno != EINTR) {
                break;
            }
            done += n > 0 ? static_cast<std::size_t>(n) : 0;
        }
        const bool complete = done == text.size() && ::close(fd) == 0;
        if (!complete || ::rename(temporary_.c_str(), path_.c_str()) != 0) {
            why = "cannot write " + path_ + ": " + std::strerror(errno);
            ::unlink(temporary_.c_str());
            return Status::failure;
        }
        return Status::ok;
    }

    void remove() noexcept {
        if (enabled()) {
            ::unlink(path_.c_str());
            ::unlink(temporary_.c_str());
        }
    }

private:
    std::string path_;
    std::string temporary_;
};

} // namespace ferry::net::detail
