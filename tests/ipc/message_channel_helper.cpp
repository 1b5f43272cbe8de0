// The other process of tests/ipc/message_channel.cpp, started with fork + exec. Every command
// opens the channel POLICY (spsc | mpmc) NAME with CAPACITY and MAX message bytes. It reports
// through its exit status (0 done, 2 a channel call failed — what failed on stderr, 3 bad usage,
// 4 a received dataset differs from the one sent) and through lines on stdout.
//
//   send ... PRODUCER COUNT copy|loan   sends make_dataset(PRODUCER, 0 .. COUNT-1)
//   receive ... PRODUCER COUNT copy|view  receives and checks COUNT datasets, prints "ok"
//   receive-until-stopped ...   prints "ready", receive(forever): prints the status code
//   stop-when-blocked ...       waits until a call of another process is blocked, stops
//   drop-loan-then-send ...     loans a cell and drops it unpublished, then sends dataset 0
//   loan-crash ...              loans a cell, prints "loaned"; SIGKILL itself at stdin EOF
//   view-crash ...              receive_view, prints "holding"; SIGKILL itself at stdin EOF

#include "message_support.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ferry/ipc/message_channel.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using ferry::Status;

int fail(const char* what, Status s) {
    std::fprintf(stderr, "helper: %s: %s\n", what, ferry::name_of(s));
    return 2;
}

void say(const char* line) {
    std::printf("%s\n", line);
    std::fflush(stdout);
}

// Blocks until the parent closes our stdin (or dies).
void await_eof() {
    char c = 0;
    while (::read(STDIN_FILENO, &c, 1) > 0) {
    }
}

template <typename Channel>
Status send_one(Channel& ch, const ferry::Dataset& ds, bool by_loan) {
    if (!by_loan) {
        return ch.send(ds);
    }
    const auto size = ferry::serialized_size(ds);
    if (!size) {
        return size.status();
    }
    auto loan = ch.loan(*size);
    if (!loan) {
        return loan.status();
    }
    const auto written = ferry::serialize_into(ds, loan->bytes());
    return written ? loan->publish(*written) : written.status();
}

template <typename Channel>
int send(Channel& ch, unsigned producer, std::size_t count, bool by_loan) {
    for (std::size_t i = 0; i < count; ++i) {
        if (const Status s = send_one(ch, ipc_test::make_dataset(producer, i), by_loan);
            s != Status::ok) {
            return fail("send", s);
        }
    }
    return 0;
}

template <typename Channel>
int receive(Channel& ch, unsigned producer, std::size_t count, bool by_view) {
    for (std::size_t i = 0; i < count; ++i) {
        std::string diff;
        if (by_view) {
            auto view = ch.receive_view();
            if (!view) {
                return fail("receive_view", view.status());
            }
            auto ds = view->dataset();
            diff = ds ? ipc_test::check_dataset(*ds, producer, i) : "not a dataset";
        } else {
            auto ds = ch.receive();
            if (!ds) {
                return fail("receive", ds.status());
            }
            diff = ipc_test::check_dataset(*ds, producer, i);
        }
        if (!diff.empty()) {
            std::fprintf(stderr, "helper: %s\n", diff.c_str());
            return 4;
        }
    }
    say("ok");
    return 0;
}

template <typename Channel>
int stop_when_blocked(Channel& ch) {
    while (ch.blocked() == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1)); // polls observable state
    }
    ch.stop();
    return 0;
}

template <typename Channel>
int run(Channel& ch, const std::string& command, const std::vector<std::string>& rest) {
    if (command == "send" || command == "receive") {
        if (rest.size() != 3) {
            return 3;
        }
        const auto producer = static_cast<unsigned>(std::stoul(rest[0]));
        const std::size_t count = std::stoul(rest[1]);
        const bool in_place = rest[2] == "loan" || rest[2] == "view";
        return command == "send" ? send(ch, producer, count, in_place)
                                 : receive(ch, producer, count, in_place);
    }
    if (command == "receive-until-stopped") {
        say("ready");
        std::printf("%d\n", static_cast<int>(ch.receive().status()));
        return 0;
    }
    if (command == "stop-when-blocked") {
        return stop_when_blocked(ch);
    }
    if (command == "drop-loan-then-send") {
        if (auto loan = ch.loan(64); !loan) {
            return fail("loan", loan.status());
        } // dropped here, unpublished
        return send(ch, 1, 1, false);
    }
    if (command == "loan-crash") {
        auto loan = ch.loan(1024);
        if (!loan) {
            return fail("loan", loan.status());
        }
        say("loaned");
        await_eof();
        std::raise(SIGKILL); // the crash point: a claimed cell, never published
    }
    if (command == "view-crash") {
        auto view = ch.receive_view();
        if (!view) {
            return fail("receive_view", view.status());
        }
        say("holding");
        await_eof();
        std::raise(SIGKILL); // the crash point: a received cell, never released
    }
    return 3;
}

template <typename Policy>
int open_and_run(const std::string& command, const std::string& name, std::size_t capacity,
                 std::size_t max, const std::vector<std::string>& rest) {
    auto ch = ferry::ipc::MessageChannel<Policy>::open(name, capacity, max);
    if (!ch) {
        std::fprintf(stderr, "helper: %s\n", ch.error().message.c_str());
        return 2;
    }
    return run(*ch, command, rest);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 6) {
        return 3;
    }
    const std::string command = argv[1];
    const std::string policy = argv[2];
    const std::string name = argv[3];
    const std::size_t capacity = std::stoul(argv[4]);
    const std::size_t max = std::stoul(argv[5]);
    std::vector<std::string> rest;
    for (int i = 6; i < argc; ++i) {
        if (argv[i][0] != '\0') { // the parent pads short argument lists with ""
            rest.emplace_back(argv[i]);
        }
    }
    if (policy == "mpmc") {
        return open_and_run<ferry::mpmc>(command, name, capacity, max, rest);
    }
    return open_and_run<ferry::spsc>(command, name, capacity, max, rest);
}
