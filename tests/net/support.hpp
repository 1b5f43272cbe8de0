#pragma once
// Shared by tests/net/node.cpp and its helper process: the byte pattern messages carry, the
// service ids, and the helper started with fork + exec, driven by lines on its stdin and
// reporting by lines on its stdout (the parent asserts). The process handling is tests/ipc's
// Child.

#include "../ipc/support.hpp"

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
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

// The helper (test-net-node-helper, or FERRY_NET_HELPER as set by meson), started with fork +
// exec as tests/ipc's Child, with the line protocol of tests/net/node.cpp on top.
class Helper : public ipc_test::Child {
public:
    explicit Helper(std::vector<std::string> args) : Child(path(), std::move(args)) {}

    // Sends a command and returns the helper's answer.
    std::string ask(const std::string& command) {
        write_line(command);
        return read_line();
    }
    // Asks the helper to exit and reaps it: its exit status (a sanitizer's report makes it
    // non-zero), 128 + the signal that ended it, or -1 when it did not exit within `limit`.
    int finish(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
        write_line("exit");
        return wait_exit(limit);
    }
    void signal(int sig) const {
        if (pid() > 0) {
            ::kill(pid(), sig);
        }
    }

private:
    // Called before the fork, so the helper inherits it too: a helper that died must fail the
    // test's checks, not kill it when it writes a command.
    static std::string path() {
        ::signal(SIGPIPE, SIG_IGN);
        return ipc_test::helper_path("FERRY_NET_HELPER", "test-net-node-helper");
    }
};

} // namespace net_test
