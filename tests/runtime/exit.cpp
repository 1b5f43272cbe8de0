// Exit without finalize is prompt whatever is queued: runs tests/runtime/exit_without_finalize.cpp
// (path in FERRY_EXIT_HELPER) once per scenario and requires it to exit with status 0 before a
// deadline; a child still running then is killed and the case fails (the defect is a hang).
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace {
// Generous for sanitizer builds; a correct exit takes well under a second plus the runtime's
// exit grace for tasks that never return (docs/runtime.md, Exit without finalize).
constexpr auto k_deadline = std::chrono::seconds(30);

struct Outcome {
    bool exited = false; // false: still running at the deadline (killed)
    int status = -1;     // the exit status when it exited
};

Outcome run_helper(const std::string& scenario) {
    const char* helper = std::getenv("FERRY_EXIT_HELPER");
    REQUIRE(helper != nullptr);
    std::string path = helper;
    std::string arg = scenario;
    char* argv[] = {path.data(), arg.data(), nullptr};
    pid_t pid = 0;
    REQUIRE(::posix_spawn(&pid, helper, nullptr, nullptr, argv, environ) == 0);
    const auto deadline = std::chrono::steady_clock::now() + k_deadline;
    int status = 0;
    // Polls the child's state (waitpid has no timeout); this paces a bounded wait for another
    // process, it does not order threads of this one.
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return {};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return {true, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

void check_exits_promptly(const std::string& scenario) {
    const Outcome outcome = run_helper(scenario);
    INFO("scenario " << scenario);
    CHECK(outcome.exited);
    CHECK(outcome.status == 0);
}
} // namespace

TEST_CASE("exit without finalize is prompt with busy streams", "[runtime][exit]") {
    check_exits_promptly("busy");
}

TEST_CASE("exit without finalize is prompt while a stream waits for an event another stream "
          "never reaches",
          "[runtime][exit]") {
    check_exits_promptly("event-wait");
}

TEST_CASE("exit without finalize is prompt with a host task that never returns",
          "[runtime][exit]") {
    check_exits_promptly("blocked-task");
}

TEST_CASE("exit without finalize is prompt with kernel blocks that never return",
          "[runtime][exit]") {
    check_exits_promptly("blocked-kernel");
}

TEST_CASE("exit without finalize is prompt while a stream waits for an unrecorded event",
          "[runtime][exit]") {
    check_exits_promptly("never-recorded");
}
