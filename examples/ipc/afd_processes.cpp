// afd_processes: Attention/FFN disaggregation between processes over shared memory.
//
//   this binary, started with no role, runs the exchange twice (scheduler + NORM batching, then
//   RECV batching):
//     1. in-process: one FFN thread and two attention threads over LocalWindows;
//     2. across processes: it starts itself (fork + exec) as one FFN process, which owns the
//        window with its ScheduleContext, descriptors, token data and scheduler outputs, and two
//        attention processes, each owning the window with its context, flags and results. They
//        open each other's windows (ferry::ipc::SharedWindow), write through them, ring the
//        owners' doorbells and wait with the default policy, AutoWait (parked on their own
//        doorbell, watching for a dead peer);
//   and checks that every process's digest — the FFN's batches, each session's results, over
//   all layers and micro batches — is bit-identical to the in-process run's.
// When a role process dies, the others end within a second with a line naming it (exit status
// 4; see afd_ending.hpp), and this process reports the run as FAILED.
// Usage: afd_processes [steps-per-session]   (exit status 0 when every digest matches)
// Roles (what it starts): afd_processes ffn PREFIX STEPS norm|recv
//                         afd_processes attention PREFIX STEPS SESSION

#include "afd_roles.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

// A started role: its pid, a pipe to its stdin and one from its stdout.
struct Process {
    pid_t pid = -1;
    FILE* out = nullptr;
    int in = -1;

    std::string line() const {
        char buf[256] = {};
        return out != nullptr && std::fgets(buf, sizeof buf, out) != nullptr ? std::string(buf)
                                                                             : std::string();
    }
    void close_stdin() {
        if (in >= 0) {
            ::close(in);
            in = -1;
        }
    }
    int wait() {
        close_stdin();
        if (out != nullptr) {
            std::fclose(out);
            out = nullptr;
        }
        int status = 0;
        while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
};

Process start(std::vector<std::string> args) {
    int to[2];
    int from[2];
    Process p;
    if (::pipe2(to, O_CLOEXEC) != 0 || ::pipe2(from, O_CLOEXEC) != 0) {
        return p;
    }
    args.insert(args.begin(), "/proc/self/exe");
    std::vector<char*> argv;
    for (std::string& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    p.pid = ::fork();
    if (p.pid == 0) { // only async-signal-safe calls until exec
        ::dup2(to[0], STDIN_FILENO);
        ::dup2(from[1], STDOUT_FILENO);
        ::execv("/proc/self/exe", argv.data());
        ::_exit(127);
    }
    ::close(to[0]);
    ::close(from[1]);
    p.in = to[1];
    p.out = ::fdopen(from[0], "r");
    return p;
}

bool same(const char* who, const afd_ipc::Report& got, const afd_ipc::Report& expected) {
    const bool ok = got.errors == 0 && got.rows == expected.rows && got.digest == expected.digest;
    std::printf("  %-12s %4llu rows, digest %016llx (in-process %016llx) -> %s\n", who,
                static_cast<unsigned long long>(got.rows),
                static_cast<unsigned long long>(got.digest),
                static_cast<unsigned long long>(expected.digest), ok ? "identical" : "DIFFERENT");
    return ok;
}

bool run(afd_ipc::Config c) {
    const afd_ipc::Reports expected = afd_ipc::run_in_process(c);
    const std::string prefix =
        "afd-example-" + std::to_string(::getpid()) + (c.recv ? "-recv" : "-norm");
    const std::string steps = std::to_string(c.steps);
    std::printf("%s: %u sessions, %u micro batches, %u layers\n",
                c.recv ? "RECV batching" : "scheduler + NORM", c.sessions, c.micro_batches,
                c.steps);
    Process ffn = start({"ffn", prefix, steps, c.recv ? "recv" : "norm"});
    bool ok = ffn.line() == "ready\n";
    std::vector<Process> sessions;
    for (std::uint32_t s = 0; ok && s < c.sessions; ++s) {
        sessions.push_back(start({"attention", prefix, steps, std::to_string(s)}));
        ok = sessions.back().line() == "ready\n";
    }
    ffn.close_stdin(); // every attention window exists: the FFN opens them
    for (std::uint32_t s = 0; s < sessions.size(); ++s) {
        const std::string who = "session " + std::to_string(s);
        ok = same(who.c_str(), afd_ipc::parse_report(sessions[s].line()), expected.sessions[s]) &&
             ok;
        ok = sessions[s].wait() == 0 && ok;
    }
    ok = ok && same("ffn", afd_ipc::parse_report(ffn.line()), expected.ffn);
    ok = ffn.wait() == 0 && ok;
    // Every role has exited: a window whose processes were all killed would stay in /dev/shm
    // (its name holds this pid, so no later run reclaims it). Nothing is left to use them.
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        (void)ferry::ipc::Segment::unlink(prefix + "-att" + std::to_string(s));
    }
    (void)ferry::ipc::Segment::unlink(prefix + "-ffn");
    return ok;
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    afd_ipc::Config c;
    c.micro_batches = 3;
    c.steps = 24;
    if (args.size() >= 3) { // a role
        c.steps = static_cast<std::uint32_t>(std::strtoul(args[2].c_str(), nullptr, 10));
        if (args.size() == 4 && args[0] == "ffn") {
            c.recv = args[3] == "recv";
            return afd_ipc::ffn_process(args[1], c);
        }
        if (args.size() == 4 && args[0] == "attention") {
            return afd_ipc::attention_process(args[1],
                                              static_cast<std::uint32_t>(std::stoul(args[3])), c);
        }
        return 3;
    }
    if (!args.empty()) {
        c.steps = static_cast<std::uint32_t>(std::strtoul(args[0].c_str(), nullptr, 10));
    }
    if (c.steps == 0) {
        std::fprintf(stderr, "usage: %s [steps-per-session > 0]\n", argv[0]);
        return 2;
    }
    bool ok = run(c);
    c.recv = true;
    ok = run(c) && ok;
    std::printf("%s\n",
                ok ? "OK: every process's output is identical to the in-process run" : "FAILED");
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
