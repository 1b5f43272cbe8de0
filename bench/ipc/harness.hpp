#pragma once
// The two-process harness of the ipc benchmarks: a forked peer pinned to its own CPU, a handshake
// over a pipe, and the two timed patterns (round trip, one-way transfer). Every figure is timed
// in the parent; the peer reports "ready", "warm" and "done" as single bytes on a pipe, and its
// verdict (checksum, echo) by its exit status. ferry and every baseline go through these same
// functions, so none of them gets a different warm-up, pinning or timing.

#include "../channel/harness.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace ferry::bench {

// A unique name for a kernel object of one benchmark run (shared memory, message queue): the
// parent's pid and a counter, so that repetitions and concurrent runs never meet.
inline std::string object_name(const char* what) {
    static unsigned counter = 0;
    return std::string("ferry-bench-") + std::to_string(::getpid()) + "-" + what + "-" +
           std::to_string(counter++);
}

// What a timed run gives back: its seconds, or why it is void; and, where the run measured it,
// how far apart the host had placed the two CPUs just before and just after the timed part.
struct Timed {
    double seconds = 0;
    std::string error; // empty when the run is valid
    Placement placement;
};

// The parent's handle on a peer process: the pipe it reports on by single bytes, and its
// verdict by exit status. `wrong_data` is what exit status 1 means for that kind of peer.
class PeerProcess {
public:
    // How long the parent waits for any one byte from the peer before declaring it hung.
    static constexpr int k_patience_ms = 60'000;

    PeerProcess(const PeerProcess&) = delete;
    PeerProcess& operator=(const PeerProcess&) = delete;
    ~PeerProcess() {
        if (pid_ > 0) { // never kill(-1, ...)
            ::kill(pid_, SIGKILL);
            (void)finish();
        }
        if (from_peer_ >= 0) {
            ::close(from_peer_);
        }
    }

    // Waits up to `ms` for the byte `what`; false when it died, sent something else or hung.
    bool await(char what, int ms = k_patience_ms) {
        pollfd p{from_peer_, POLLIN, 0};
        char got = 0;
        return from_peer_ >= 0 && ::poll(&p, 1, ms) == 1 && ::read(from_peer_, &got, 1) == 1 &&
               got == what;
    }

    // Reaps the peer: "" when it exited 0, otherwise what went wrong.
    std::string finish() {
        if (pid_ <= 0) {
            return "fork failed";
        }
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            return {};
        }
        if (WIFEXITED(status)) {
            return WEXITSTATUS(status) == 1
                       ? std::string(wrong_data_)
                       : "peer failed, exit status " + std::to_string(WEXITSTATUS(status));
        }
        return "peer killed by signal " + std::to_string(WTERMSIG(status));
    }

protected:
    explicit PeerProcess(const char* wrong_data) noexcept : wrong_data_(wrong_data) {}
    // After the fork: keeps the child (pid <= 0 when fork failed) and the pipe's read end.
    void started(pid_t pid, const int (&fds)[2]) {
        ::close(fds[1]);
        pid_ = pid;
        from_peer_ = pid > 0 ? fds[0] : (::close(fds[0]), -1);
    }

    pid_t pid_ = -1;
    int from_peer_ = -1;

private:
    const char* wrong_data_;
};

// A forked child running `body(report)` on the second CPU of two_cpus() while the parent keeps
// the first: the channel harness pins its two threads the same way, for the same reason (a
// peer started next to its creator is moved only milliseconds later). fork without exec is
// safe here: the benchmark process has one thread when it forks (every earlier benchmark has
// joined its threads), and the child leaves through _exit, never through the parent's atexit
// handlers or stdio buffers.
class Peer : public PeerProcess {
public:
    template <typename Body>
    Peer(int cpu, Body body) : PeerProcess("peer: wrong data (echo or checksum)") {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            return;
        }
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(fds[0]);
            const PinnedToCpu pinned(cpu);
            int status = 3;
            try {
                status = body([fd = fds[1]](char what) { (void)!::write(fd, &what, 1); }) ? 0 : 1;
            } catch (const std::exception& e) {
                std::fprintf(stderr, "ipc bench peer: %s\n", e.what());
                status = 2;
            }
            ::_exit(status);
        }
        started(pid, fds);
    }
};

// Seconds for `n` round trips, timed in this process: ping(i) sends i, waits for the echo and
// returns whether the echo carried i. The peer calls open_echo() once (opening its side by name
// where the transport has names), reports ready, then calls the returned echo() n + n / 4 times;
// echo() returns false on failure. The first n / 4 round trips are an untimed warm-up.
template <typename Ping, typename OpenEcho>
Timed round_trip_across(std::uint64_t n, Ping ping, OpenEcho open_echo) {
    const std::uint64_t warmup = n / 4;
    const auto cpus = two_cpus();
    const PinnedToCpu pinned(cpus.first);
    Peer peer(cpus.second, [&](auto report) {
        auto echo = open_echo();
        report('r');
        for (std::uint64_t i = 0; i < warmup + n; ++i) {
            if (!echo()) {
                return false;
            }
        }
        return true;
    });
    Timed result;
    if (!peer.await('r')) {
        result.error = peer.finish();
        return result;
    }
    bool echoed = true;
    for (std::uint64_t i = 0; i < warmup; ++i) {
        echoed = ping(i) && echoed;
    }
    const auto start = clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
        echoed = ping(warmup + i) && echoed;
    }
    const auto stop = clock::now();
    result.error = peer.finish();
    if (result.error.empty() && !echoed) {
        result.error = "an echo did not carry the value sent";
    }
    result.seconds = std::chrono::duration<double>(stop - start).count();
    return result;
}

// Seconds to move `n` values from this process (send(i)) to the peer, timed from the first
// timed send to the peer's report that it has received the last one. The peer calls
// open_receive() once, reports ready, receives an untimed warm-up of n / 4 and reports warm,
// then receives n; it checks both sums (receive() returns the value received) so a lost or
// duplicated value voids the run. A LineProbe before and after the timed part records where the
// host had placed the two CPUs.
template <typename Send, typename OpenReceive>
Timed transfer_across(std::uint64_t n, Send send, OpenReceive open_receive) {
    const std::uint64_t warmup = n / 4;
    const auto sum_below = [](std::uint64_t k) { return k == 0 ? 0 : k * (k - 1) / 2; };
    const auto cpus = two_cpus();
    const PinnedToCpu pinned(cpus.first);
    LineProbe probe;
    Peer peer(cpus.second, [&](auto report) {
        auto receive = open_receive();
        report('r');
        std::uint64_t sum = 0; // in a register: the peer shares no line with anyone
        for (std::uint64_t i = 0; i < warmup; ++i) {
            sum += receive();
        }
        (void)probe.follow(); // a probe the parent misses leaves its figure NaN, the run valid
        report('w');
        const bool warm_ok = sum == sum_below(warmup);
        sum = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            sum += receive();
        }
        report('d');
        (void)probe.follow();
        return warm_ok && sum == sum_below(n);
    });
    Timed result;
    if (!peer.await('r')) {
        result.error = peer.finish();
        return result;
    }
    for (std::uint64_t i = 0; i < warmup; ++i) {
        send(i);
    }
    result.placement.before_ns = probe.lead();
    if (!peer.await('w')) {
        result.error = peer.finish();
        return result;
    }
    const auto start = clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
        send(i);
    }
    const bool done = peer.await('d');
    const auto stop = clock::now();
    result.placement.after_ns = probe.lead();
    result.error = peer.finish();
    if (result.error.empty() && !done) {
        result.error = "peer did not report done";
    }
    result.seconds = std::chrono::duration<double>(stop - start).count();
    return result;
}

} // namespace ferry::bench
