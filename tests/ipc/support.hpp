#pragma once
// Shared by tests/ipc/*.cpp and the helper they start: the layout tag, unique names, and a
// child process driven through pipes (the parent asserts; the child reports by exit status and
// by lines on its stdout).

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <ferry/ipc/segment.hpp>
#include <functional>
#include <initializer_list>
#include <poll.h>
#include <pthread.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ipc_test {

inline constexpr ferry::ipc::LayoutTag k_tag =
    ferry::ipc::layout_tag_of<std::uint64_t>("ferry.test", 1);

// Unique per test run: the test process's pid is part of every name.
inline std::string name_prefix() {
    return "t" + std::to_string(::getpid()) + "-";
}
inline std::string unique_name(const std::string& what) {
    return name_prefix() + what;
}
inline std::string shm_path(const std::string& name) {
    return "/dev/shm/ferry." + name;
}

// Entries /dev/shm/ferry.<prefix>* that exist now.
inline std::vector<std::string> leftovers(const std::string& prefix) {
    std::vector<std::string> found;
    DIR* dir = ::opendir("/dev/shm");
    if (dir == nullptr) {
        return found;
    }
    const std::string wanted = "ferry." + prefix;
    while (const dirent* entry = ::readdir(dir)) {
        if (std::string(entry->d_name).rfind(wanted, 0) == 0) {
            found.emplace_back(entry->d_name);
        }
    }
    ::closedir(dir);
    return found;
}

// A peer's own view of a segment: a descriptor and a read-write mapping of the whole file
// /dev/shm/ferry.<name>, as another program has it (tests/ipc/shared_ring.cpp,
// scribbling_peer.cpp and fuzz/ipc write through it). mapped() is false when the file is not there.
class SegmentFile {
public:
    explicit SegmentFile(const std::string& name) {
        fd_ = ::open(shm_path(name).c_str(), O_RDWR | O_CLOEXEC);
        struct stat st {};
        if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
            return;
        }
        bytes_ = static_cast<std::size_t>(st.st_size);
        void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        base_ = p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
    }
    ~SegmentFile() {
        if (base_ != nullptr) {
            ::munmap(base_, bytes_);
        }
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    SegmentFile(const SegmentFile&) = delete;
    SegmentFile& operator=(const SegmentFile&) = delete;

    [[nodiscard]] bool mapped() const { return base_ != nullptr; }
    [[nodiscard]] std::byte* base() const { return base_; }
    [[nodiscard]] std::size_t bytes() const { return bytes_; }
    [[nodiscard]] int fd() const { return fd_; }

private:
    int fd_ = -1;
    std::byte* base_ = nullptr;
    std::size_t bytes_ = 0;
};

// The helper binary named by `env` (set by meson), else `fallback` next to this executable.
// Waits (bounded) until the thread whose /proc/.../syscall is `syscall_path` is in the futex
// system call (parked); false on timeout. Polls observable state.
inline bool in_futex(const std::string& syscall_path, std::chrono::milliseconds limit) {
    const std::string futex = std::to_string(SYS_futex) + " ";
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        char buf[64] = {};
        const int fd = ::open(syscall_path.c_str(), O_RDONLY | O_CLOEXEC);
        const ssize_t n = fd >= 0 ? ::read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) {
            ::close(fd);
        }
        if (n > 0 && std::string(buf).rfind(futex, 0) == 0) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
}

inline std::string helper_path(const char* env = "FERRY_IPC_HELPER",
                               const char* fallback = "test-ipc-segment-helper") {
    if (const char* path = std::getenv(env)) {
        return path;
    }
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    std::string dir(self, n > 0 ? static_cast<std::size_t>(n) : 0);
    return dir.substr(0, dir.rfind('/') + 1) + fallback;
}

// The helper, started with fork + exec; its stdin and stdout are pipes to this process.
class Child {
public:
    explicit Child(std::initializer_list<std::string> args) : Child(helper_path(), args) {}
    Child(const std::string& path, std::initializer_list<std::string> args)
        : Child(path, std::vector<std::string>(args)) {}
    Child(const std::string& path, std::vector<std::string> args) {
        int in[2];
        int out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
            std::abort();
        }
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
        if (pid_ == 0) { // child: only async-signal-safe calls until exec
            ::dup2(in[0], STDIN_FILENO);
            ::dup2(out[1], STDOUT_FILENO);
            ::execv(path.c_str(), argv.data());
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        to_child_ = in[1];
        from_child_ = out[0];
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() {
        kill();
        close_fd(to_child_);
        close_fd(from_child_);
    }

    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

    // Writes `line` and '\n' to the child's stdin.
    void write_line(const std::string& line) {
        const std::string text = line + "\n";
        [[maybe_unused]] const auto n = ::write(to_child_, text.data(), text.size());
    }
    // The next line the child writes (without '\n'); "" on EOF or after `limit`.
    std::string read_line(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
        std::string line;
        const auto deadline = std::chrono::steady_clock::now() + limit;
        char c = 0;
        while (wait_readable(deadline) && ::read(from_child_, &c, 1) == 1 && c != '\n') {
            line.push_back(c);
        }
        return line;
    }
    // Closes the child's stdin: a holding child closes its segment and exits.
    void release() { close_fd(to_child_); }
    // Waits (bounded: the child's stdout reaching EOF) and reaps; the exit status, or 128 + the
    // signal, or -1 when the child did not finish in time (then it is killed).
    int wait_exit(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        char c = 0;
        while (wait_readable(deadline) && ::read(from_child_, &c, 1) == 1) {
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            kill();
            return -1;
        }
        return reap();
    }
    // SIGKILL, then wait until it has died, but leave it unreaped: a zombie.
    void kill_leaving_zombie() {
        ::kill(pid_, SIGKILL);
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 &&
               errno == EINTR) {
        }
    }
    // Waits (bounded) until the child is blocked in the futex system call; false on timeout.
    bool wait_blocked_in_futex(std::chrono::milliseconds limit = std::chrono::seconds(20)) const {
        return in_futex("/proc/" + std::to_string(pid_) + "/syscall", limit);
    }
    void kill() {
        if (pid_ > 0) { // never kill(-1, ...): that signals every process we may signal
            ::kill(pid_, SIGKILL);
            reap();
        }
    }

private:
    bool wait_readable(std::chrono::steady_clock::time_point deadline) const {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{from_child_, POLLIN, 0};
        return left.count() > 0 && ::poll(&p, 1, static_cast<int>(left.count())) == 1;
    }
    int reap() {
        if (pid_ <= 0) {
            return -1;
        }
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    static void close_fd(int& fd) {
        if (fd >= 0) {
            ::close(fd);
            fd = -1;
        }
    }

    pid_t pid_ = -1;
    int to_child_ = -1;
    int from_child_ = -1;
};

} // namespace ipc_test

namespace ipc_test {

// The header of the segment named `name`, mapped here apart from any Segment: how tests read
// and forge participant slots.
class HeaderView {
public:
    explicit HeaderView(const std::string& name) {
        const int fd = ::open(shm_path(name).c_str(), O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            void* p = ::mmap(nullptr, sizeof(Header), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            header_ = p == MAP_FAILED ? nullptr : static_cast<Header*>(p);
            ::close(fd);
        }
    }
    HeaderView(const HeaderView&) = delete;
    HeaderView& operator=(const HeaderView&) = delete;
    ~HeaderView() {
        if (header_ != nullptr) {
            ::munmap(header_, sizeof(Header));
        }
    }
    [[nodiscard]] bool mapped() const noexcept { return header_ != nullptr; }
    [[nodiscard]] ferry::ipc::detail::ParticipantSlot& slot(std::size_t i) const noexcept {
        return header_->participants[i];
    }

private:
    using Header = ferry::ipc::detail::SegmentHeader;
    Header* header_ = nullptr;
};

// Removes whatever a failed test left under `name` (the test's own checks run first).
struct ScrubName {
    std::string name;
    ~ScrubName() { ::unlink(shm_path(name).c_str()); }
};

// Waits (bounded) until /proc/<pid>/stat shows state `state`; false on timeout.
inline bool wait_for_state(pid_t pid, char state,
                           std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        const auto stat = ferry::ipc::detail::read_process_stat(pid);
        if (stat && stat->state == state) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1)); // polls observable state
    }
    return false;
}

// For a helper process: the main thread leaves with pthread_exit (the thread-group leader is
// then a zombie while the process lives on), and a second thread runs `rest` and ends the
// process with its result. The second thread does not wait for the leader to be gone (joining
// an exited main thread is beyond ThreadSanitizer): the parent watches /proc for it
// (wait_for_state). Returns only if the thread cannot be started.
inline int continue_without_leader(std::function<int()> rest) {
    static std::function<int()> body;
    body = std::move(rest);
    pthread_t next{};
    const auto run = [](void*) -> void* { std::exit(body()); };
    if (::pthread_create(&next, nullptr, run, nullptr) != 0) {
        return 4;
    }
    ::pthread_exit(nullptr);
}

} // namespace ipc_test
