// The other process of tests/ipc/segment.cpp, started with fork + exec. It reports through its
// exit status (0 done, 2 an ipc error — its message on stderr, 3 bad usage) and through lines
// on stdout ("ready" once it holds a segment). A holding command keeps the segment until its
// stdin reaches EOF (the parent closes the pipe, or dies).
//
//   open-write NAME BYTE      open, fill the payload with BYTE, close
//   open-mark NAME INDEX      open, set payload[INDEX] = 1, close
//   create-hold NAME BYTES    create, print "ready", hold
//   open-hold NAME            open, print "ready", hold
//   create-limited NAME BYTES create with RLIMIT_FSIZE below BYTES: print "<status code>"
//   open-hold-leaderless NAME open; the main thread then calls pthread_exit while a second
//                             thread prints "ready" and holds (the process lives on, its
//                             thread-group leader a zombie)
//   create-stalled NAME BYTES create, stopping between shm_open and the header write: print
//                             "stalled", go on after a line on stdin, then print "ready", hold

#include "support.hpp"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace {

using ferry::ipc::Segment;

int report(const ferry::ipc::Error& error) {
    std::fprintf(stderr, "helper: %s\n", error.message.c_str());
    return 2;
}

int hold(Segment& segment) {
    std::printf("ready\n");
    std::fflush(stdout);
    char c = 0;
    while (::read(STDIN_FILENO, &c, 1) > 0) {
    }
    static_cast<void>(segment.close());
    return 0;
}

int open_and(const std::string& name, const std::string& command, const std::string& arg) {
    auto segment = Segment::open(name, ipc_test::k_tag);
    if (!segment) {
        return report(segment.error());
    }
    auto bytes = segment->payload();
    if (command == "open-write") {
        std::memset(bytes.data(), std::stoi(arg), bytes.size());
    } else if (command == "open-mark") {
        bytes[std::stoul(arg)] = std::byte{1};
    } else if (command == "open-hold-leaderless") {
        return ipc_test::continue_without_leader(
            [held = std::make_shared<Segment>(std::move(*segment))] { return hold(*held); });
    } else {
        return hold(*segment);
    }
    return 0;
}

int create_and(const std::string& name, const std::string& command, std::size_t bytes) {
    if (command == "create-limited") {
        // posix_fallocate then fails with EFBIG after the header is written: the failure path
        // that must still leave nothing behind.
        const rlimit limit{8192, 8192};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        std::signal(SIGXFSZ, SIG_IGN);
    }
    if (command == "create-stalled") {
        ferry::ipc::detail::test_pause_after_shm_open = [] {
            std::printf("stalled\n");
            std::fflush(stdout);
            char c = 0;
            while (::read(STDIN_FILENO, &c, 1) == 1 && c != '\n') {
            }
        };
    }
    auto segment = Segment::create(name, bytes, ipc_test::k_tag);
    if (command == "create-limited") {
        std::printf("%d\n", static_cast<int>(segment.status()));
        return 0;
    }
    return segment ? hold(*segment) : report(segment.error());
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        return 3;
    }
    const std::string command = argv[1];
    const std::string name = argv[2];
    const std::string arg = argc > 3 ? argv[3] : "";
    if (command == "open-write" || command == "open-mark" || command == "open-hold" ||
        command == "open-hold-leaderless") {
        return open_and(name, command, arg);
    }
    if (command == "create-hold" || command == "create-limited" || command == "create-stalled") {
        return create_and(name, command, std::stoul(arg));
    }
    return 3;
}
