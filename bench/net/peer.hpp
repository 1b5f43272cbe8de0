#pragma once
// The second process of the net benchmarks: this same executable, started again (fork + exec)
// with a role argument and pinned to the second CPU while the parent keeps the first, as the
// ipc benchmarks pin their forked peer (bench/ipc/harness.hpp). exec, not a bare fork: the
// parent has UCX (and with ferry rows a Node's progress thread) running when it starts the
// peer, and a forked copy of a threaded UCX process is not usable; the peer builds its own UCX
// from scratch, as an unrelated process on another host would.
//
// The peer reports progress as single bytes on a pipe ('r' ready, 'w' warm, 'd' done) and its
// verdict (sums, echoes) by its exit status; every figure is timed in the parent. After 'd' the
// peer answers a LineProbe (bench/channel/harness.hpp) on a memory file it inherits, which the
// parent leads as soon as it has heard the byte: where the host placed the two CPUs at the end
// of the timed part. Only then: at 'r' or 'w' the parent may still need the peer's worker to
// progress (the connection request, a credit) before it can hear the byte, and a peer spinning
// in the probe would not progress it.

#include "../channel/harness.hpp"
#include "../ipc/harness.hpp"

#include <benchmark/benchmark.h>
#include <cerrno>
#include <exception>
#include <fcntl.h>
#include <functional>
#include <map>
#include <poll.h>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace ferry::bench::net {

// The first argument that makes this executable a peer:
// `--net-peer <report fd> <probe fd> <role> <args...>`.
inline constexpr const char* k_peer_flag = "--net-peer";

// How a peer reports: one byte on the pipe inherited from the parent; after 'd' (done), its
// side of the placement probe the parent leads on hearing it.
class Reporter {
public:
    Reporter(int fd, LineProbe& probe) noexcept : fd_(fd), probe_(&probe) {}
    void operator()(char what) const noexcept {
        (void)!::write(fd_, &what, 1);
        if (what == 'd') {
            (void)probe_->follow(); // a parent that never leads costs the probe's patience
        }
    }

private:
    int fd_;
    LineProbe* probe_;
};

// A peer role: runs with the arguments after the role name; exit status 0 when its checks held,
// 1 when the data was wrong, 2 when something failed.
using Role = std::function<int(const std::vector<std::string>& args, Reporter report)>;

inline std::map<std::string, Role>& roles() {
    static std::map<std::string, Role> all;
    return all;
}

// Registers a role at static initialisation: `const bool x = add_role("name", fn);`.
inline bool add_role(const std::string& name, Role role) {
    return roles().emplace(name, std::move(role)).second;
}

// The peer's side of main(): argv is `exe --net-peer <report fd> <probe fd> <role> <args...>`.
int run_peer(int argc, char** argv);

// The parent's handle on a started peer (the pipe, await and finish are the ipc peer's).
class ExecPeer : public PeerProcess {
public:
    // Starts `/proc/self/exe --net-peer <fd> <probe fd> <role> args...` pinned to `cpu`.
    ExecPeer(int cpu, const std::string& role, const std::vector<std::string>& args)
        : PeerProcess("peer: wrong data (sum, order or echo)"), probe_file_(probe_file()),
          probe_(probe_file_) {
        int fds[2];
        if (probe_file_ < 0 || ::pipe2(fds, O_CLOEXEC) != 0) {
            return;
        }
        // Everything exec needs is built before the fork: the child only makes system calls.
        std::vector<std::string> words{"/proc/self/exe", k_peer_flag, std::to_string(fds[1]),
                                       std::to_string(probe_file_), role};
        words.insert(words.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& w : words) {
            argv.push_back(w.data());
        }
        argv.push_back(nullptr);
        cpu_set_t only;
        CPU_ZERO(&only);
        if (cpu >= 0) {
            CPU_SET(cpu, &only);
        }
        const pid_t pid = ::fork();
        if (pid == 0) {
            if (cpu >= 0) {
                (void)::sched_setaffinity(0, sizeof only, &only);
            }
            (void)::fcntl(fds[1], F_SETFD, 0);      // the report pipe survives the exec
            (void)::fcntl(probe_file_, F_SETFD, 0); // and so does the probe's page
            ::execv("/proc/self/exe", argv.data());
            ::_exit(127);
        }
        started(pid, fds);
    }

    // Whether the byte `what` is there now (a parent that must keep its worker progressing
    // while it waits asks this between progress calls). A wrong byte or a closed pipe is an
    // error: `failed` is set.
    bool arrived(char what, bool& failed) {
        pollfd p{from_peer_, POLLIN, 0};
        if (::poll(&p, 1, 0) != 1) {
            return false;
        }
        char got = 0;
        failed = ::read(from_peer_, &got, 1) != 1 || got != what;
        return !failed;
    }

    // The report pipe, for a parent that sleeps in poll until the peer reports.
    [[nodiscard]] int fd() const noexcept { return from_peer_; }

    // The parent's side of the probe that follows the peer's 'd': call it once on hearing 'd'.
    double probe() noexcept { return probe_.lead(); }

    ExecPeer(const ExecPeer&) = delete;
    ExecPeer& operator=(const ExecPeer&) = delete;
    ~ExecPeer() {
        if (probe_file_ >= 0) {
            ::close(probe_file_);
        }
    }

private:
    static int probe_file() noexcept {
        const int fd = ::memfd_create("ferry-bench-probe", MFD_CLOEXEC);
        if (fd >= 0 && ::ftruncate(fd, LineProbe::k_page) != 0) {
            ::close(fd);
            return -1;
        }
        return fd;
    }

    int probe_file_;
    LineProbe probe_;
};

// Runs `run()` (a Timed or Rounds), turning an exception (UCX or a Node that could not start)
// into a void run instead of letting it escape the benchmark.
template <typename Result, typename Run>
Result guarded(Run run) {
    try {
        return run();
    } catch (const std::exception& e) {
        Result r;
        r.error = e.what();
        return r;
    }
}

// Seconds to stream `count` messages to the peer: send(i) sends message i; heard(c) waits for
// the peer's byte c (a raw UCX parent progresses its worker meanwhile). The peer reports 'r'
// when open, 'w' after an untimed warm-up of count / 4 messages, 'd' after `count` more; the
// time runs from the first timed send to 'd'. ferry's and the baselines' rows all use it.
template <typename Send, typename Heard>
Timed timed_stream(ExecPeer& peer, std::uint64_t count, Send send, Heard heard) {
    const std::uint64_t warmup = count / 4;
    Timed result;
    bool ok = heard('r');
    for (std::uint64_t i = 0; ok && i < warmup; ++i) {
        ok = send(i);
    }
    ok = ok && heard('w');
    const auto start = clock::now();
    for (std::uint64_t i = 0; ok && i < count; ++i) {
        ok = send(warmup + i);
    }
    ok = ok && heard('d');
    const auto stop = clock::now();
    if (ok) {
        result.placement.after_ns = peer.probe();
    }
    result.error = peer.finish();
    if (result.error.empty() && !ok) {
        result.error = "a send failed or the peer did not report";
    }
    result.seconds = std::chrono::duration<double>(stop - start).count();
    return result;
}

// Round trips of an exchange: `round(r)` runs round r (1, 2, ...) and returns when its answer
// came. rounds / 4 untimed rounds first (after heard('r')), then `rounds` timed one by one;
// heard('d') after the last. The times in microseconds, or why the run is void.
struct Rounds {
    std::vector<double> us;
    std::string error;
    Placement placement; // probed at 'd' only
};

template <typename Round, typename Heard>
Rounds timed_rounds(ExecPeer& peer, std::uint64_t rounds, Round round, Heard heard) {
    const std::uint64_t warmup = rounds / 4;
    Rounds result;
    bool ok = heard('r');
    for (std::uint64_t r = 1; ok && r <= warmup; ++r) {
        ok = round(r);
    }
    result.us.reserve(rounds);
    for (std::uint64_t r = warmup + 1; ok && r <= warmup + rounds; ++r) {
        const auto start = clock::now();
        ok = round(r);
        result.us.push_back(
            std::chrono::duration<double, std::micro>(clock::now() - start).count());
    }
    ok = ok && heard('d');
    if (ok) {
        result.placement.after_ns = peer.probe();
    }
    result.error = peer.finish();
    if (result.error.empty() && !ok) {
        result.error = "a round failed or the peer did not report";
    }
    return result;
}

// Records a repetition of an exchange: total time as the iteration time, the median and p99
// of its rounds as counters (the last repetition's; each repetition is its own JSON entry).
inline bool record_rounds(benchmark::State& state, Rounds& rounds) {
    if (!rounds.error.empty()) {
        state.SkipWithError(rounds.error.c_str());
        return false;
    }
    double total = 0;
    for (const double us : rounds.us) {
        total += us;
    }
    state.SetIterationTime(total / 1e6);
    state.counters["p50_us"] = quantile(rounds.us, 0.5);
    state.counters["p99_us"] = quantile(rounds.us, 0.99);
    record_placement(state, rounds.placement);
    return true;
}

// A benchmark's loop over exchange repetitions: `run()` gives one repetition's Rounds (its
// exceptions turned into a void run); `rounds` round trips of `size` bytes each.
template <typename Run>
void exchange_rows(benchmark::State& state, std::uint64_t rounds, std::size_t size, Run run) {
    for (auto _ : state) {
        Rounds r = guarded<Rounds>(run);
        if (!record_rounds(state, r)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(rounds) * state.iterations());
    state.SetBytesProcessed(static_cast<std::int64_t>(rounds * size) * state.iterations());
}

} // namespace ferry::bench::net
