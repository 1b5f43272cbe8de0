#pragma once
// Shared by tests/net/node.cpp and its helper process: the byte pattern messages carry, the
// service ids, and the helper started with fork + exec, driven by lines on its stdin and
// reporting by lines on its stdout (the parent asserts).

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <span>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace net_test {

inline constexpr std::uint32_t k_service = 7;       // served by both sides of the tests
inline constexpr std::uint32_t k_unserved = 99;     // served by nobody
inline constexpr std::size_t k_region_bytes = 4096; // what the helper exposes

[[nodiscard]] inline std::byte pattern(std::size_t i, unsigned seed) {
    return static_cast<std::byte>((i * 131 + seed) & 0xff);
}
[[nodiscard]] inline std::vector<std::byte> patterned(std::size_t n, unsigned seed) {
    std::vector<std::byte> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = pattern(i, seed);
    }
    return out;
}
[[nodiscard]] inline bool is_patterned(std::span<const std::byte> bytes, unsigned seed) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] != pattern(i, seed)) {
            return false;
        }
    }
    return true;
}

// The helper binary: FERRY_NET_HELPER (set by meson), else test-net-node-helper next to us.
inline std::string helper_path() {
    if (const char* path = std::getenv("FERRY_NET_HELPER")) {
        return path;
    }
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    std::string dir(self, n > 0 ? static_cast<std::size_t>(n) : 0);
    return dir.substr(0, dir.rfind('/') + 1) + "test-net-node-helper";
}

class Helper {
public:
    explicit Helper(std::vector<std::string> args) {
        int in[2];
        int out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
            std::abort();
        }
        const std::string path = helper_path();
        args.insert(args.begin(), path);
        std::vector<char*> argv;
        for (auto& s : args) {
            argv.push_back(s.data());
        }
        argv.push_back(nullptr);
        pid_ = ::fork();
        if (pid_ < 0) {
            std::abort();
        }
        if (pid_ == 0) { // only async-signal-safe calls until exec
            ::dup2(in[0], STDIN_FILENO);
            ::dup2(out[1], STDOUT_FILENO);
            ::execv(path.c_str(), argv.data());
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        to_ = in[1];
        from_ = out[0];
    }
    Helper(const Helper&) = delete;
    Helper& operator=(const Helper&) = delete;
    ~Helper() {
        kill();
        ::close(to_);
        ::close(from_);
    }

    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

    void write_line(const std::string& line) {
        const std::string text = line + "\n";
        [[maybe_unused]] const auto n = ::write(to_, text.data(), text.size());
    }
    // The next line (without '\n'); "" on EOF or after `limit`.
    std::string read_line(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
        std::string line;
        const auto deadline = std::chrono::steady_clock::now() + limit;
        char c = 0;
        while (readable(deadline) && ::read(from_, &c, 1) == 1 && c != '\n') {
            line.push_back(c);
        }
        return line;
    }
    // Sends a command and returns the helper's answer.
    std::string ask(const std::string& command) {
        write_line(command);
        return read_line();
    }
    void signal(int sig) const {
        if (pid_ > 0) {
            ::kill(pid_, sig);
        }
    }
    void kill() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::kill(pid_, SIGCONT);
            int status = 0;
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
            pid_ = -1;
        }
    }

private:
    bool readable(std::chrono::steady_clock::time_point deadline) const {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{from_, POLLIN, 0};
        return left.count() > 0 && ::poll(&p, 1, static_cast<int>(left.count())) == 1;
    }

    pid_t pid_ = -1;
    int to_ = -1;
    int from_ = -1;
};

} // namespace net_test
