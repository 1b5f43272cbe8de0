// The other process of tests/ipc/channel.cpp, started with fork + exec. It reports through its
// exit status (0 done, 2 an ipc error — its message on stderr, 3 bad usage, 4 a failed check)
// and through lines on stdout. Commands that hold keep their channel until stdin reaches EOF.
//
//   send NAME KIND ID COUNT   open KIND (stream | shared), send COUNT messages as producer ID
//   fill NAME                 open Small, try_send until full, print the count, hold
//   fill-then-send NAME       open Small, fill it, print "full", send once more (blocking),
//                             print the status code
//   receive NAME              open Small, print "ready", receive (blocking), print the status
//   stop-when-blocked NAME    open Small, wait until a call is parked, print the time, stop
//   die-when-blocked NAME     open Small, wait until a call is parked, print the time, SIGKILL
//   claim-die NAME WAIT       open SmallShared's ring; WAIT=1: wait until a call is parked;
//                             claim a cell, print the time, SIGKILL (never publishes)
//   publish-die-spsc NAME     open Small's ring (spsc), wait until a call is parked, claim a
//                             cell, write message 42, store the published counter as publish
//                             does first, print the time, SIGKILL (before the cell's turn)
//   claim-publish NAME        open SmallShared's ring, claim a cell, print "claimed", wait
//                             until a call is parked, then write message 42 and publish it
//   ring-stop-when-blocked NAME   as stop-when-blocked, on the ring directly
//   ring-send-parked NAME FENCE ROUNDS FREE   open Small's ring with FENCE (asymmetric |
//                             symmetric | unavailable); ROUNDS times: wait until a call is
//                             parked, publish message i, wait until it is released; then FREE
//                             messages more, 0..40 us apart, without waiting for anything
//   lock-hold NAME            open Small, take the segment file's flock, print "ready", hold
//   create-hold NAME          create Small, print "ready", hold
//   hold-leaderless NAME      open Small; the main thread calls pthread_exit, a second thread
//                             prints "ready" and holds, then closes (exit status 0)

#include "channel_support.hpp"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <new>
#include <string>
#include <sys/file.h>
#include <unistd.h>

namespace {

using namespace ipc_test;
using ferry::Status;

int report(const ferry::ipc::Error& error) {
    std::fprintf(stderr, "helper: %s\n", error.message.c_str());
    return 2;
}

void say(const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

void hold() {
    char c = 0;
    while (::read(STDIN_FILENO, &c, 1) > 0) {
    }
}

template <typename ChannelType>
int send_all(const std::string& name, std::uint32_t id, std::uint64_t count) {
    auto channel = ChannelType::open(name);
    if (!channel) {
        return report(channel.error());
    }
    for (std::uint64_t i = 0; i < count; ++i) {
        if (const Status s = channel->send(make_message(i, id)); s != Status::ok) {
            say(std::to_string(static_cast<int>(s)));
            return 4;
        }
    }
    say("done");
    return 0;
}

template <typename Blocked>
bool wait_parked(Blocked blocked) {
    return poll_for([&] { return blocked() >= 1; });
}

int small_command(const std::string& command, const std::string& name) {
    auto channel = Small::open(name);
    if (!channel) {
        return report(channel.error());
    }
    if (command == "fill" || command == "fill-then-send") {
        std::size_t sent = 0;
        while (channel->try_send(make_message(sent, 0)) == Status::ok) {
            ++sent;
        }
        if (command == "fill") {
            say(std::to_string(sent));
            hold();
            return 0;
        }
        say("full");
        say(std::to_string(static_cast<int>(channel->send(make_message(sent, 0)))));
        return 0;
    }
    if (command == "receive") {
        say("ready");
        say(std::to_string(static_cast<int>(channel->receive().status())));
        return 0;
    }
    if (command == "lock-hold") {
        const int fd = ::open(shm_path(name).c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0 || ::flock(fd, LOCK_EX) != 0) {
            return 4;
        }
        say("ready");
        hold();
        return 0;
    }
    if (!wait_parked([&] { return channel->blocked(); })) {
        return 4;
    }
    say(std::to_string(now_ns()));
    if (command == "stop-when-blocked") {
        channel->stop();
        return 0;
    }
    std::raise(SIGKILL); // die-when-blocked
    return 4;
}

// ring-stop-when-blocked and claim-die-spsc on Small's ring (spsc), the other claim commands on
// SmallShared's (mpmc: a claim visible to receivers before it is published).
template <typename ChannelType>
int ring_command(const std::string& command, const std::string& name, const std::string& arg) {
    auto raw = open_raw<ChannelType>(name);
    if (!raw) {
        return report(raw.error());
    }
    auto& ring = raw->ring;
    typename ipc_test::RingOf<ChannelType>::Claim claim;
    const auto forever = std::chrono::steady_clock::time_point::max();
    if (command == "claim-publish") {
        if (ring.claim(claim, forever, false, nullptr) != Status::ok) {
            return 4;
        }
        say("claimed");
        if (!wait_parked([&] { return ring.blocked(); })) {
            return 4;
        }
        const Message m = make_message(42, 1);
        std::memcpy(claim.cell, &m, sizeof m);
        ring.publish(claim);
        return 0;
    }
    if ((command != "claim-die" || arg == "1") && !wait_parked([&] { return ring.blocked(); })) {
        return 4;
    }
    if (command == "ring-stop-when-blocked") {
        say(std::to_string(now_ns()));
        ring.stop();
        return 0;
    }
    if (ring.claim(claim, forever, false, nullptr) != Status::ok) {
        return 4;
    }
    say(std::to_string(now_ns()));
    std::raise(SIGKILL); // between claim and publish
    return 4;
}

// publish-die-spsc: the first of an spsc publish's two stores (the published counter), written
// through the segment as SpscSharedRing::publish writes it, and not the second (the turn).
int publish_die_spsc(const std::string& name) {
    auto raw = open_raw<Small>(name);
    if (!raw) {
        return report(raw.error());
    }
    auto& ring = raw->ring;
    if (!wait_parked([&] { return ring.blocked(); })) {
        return 4;
    }
    ipc_test::RingOf<Small>::Claim claim;
    if (ring.claim(claim, std::chrono::steady_clock::time_point::max(), false, nullptr) !=
        Status::ok) {
        return 4;
    }
    const Message m = make_message(42, 1);
    std::memcpy(claim.cell, &m, sizeof m);
    auto* control = std::launder(
        reinterpret_cast<ferry::ipc::detail::SpscControl*>(raw->segment.payload().data()));
    std::atomic_ref<std::uint64_t>(control->tail)
        .store(claim.position + 1, std::memory_order_release);
    say(std::to_string(now_ns()));
    std::raise(SIGKILL); // inside publish: the counter stored, the turn not
    return 4;
}

ferry::ipc::detail::RingFence fence_named(const std::string& name) {
    using ferry::ipc::detail::RingFence;
    return name == "symmetric"     ? RingFence::symmetric
           : name == "unavailable" ? RingFence::unavailable
                                   : RingFence::asymmetric;
}

void pause_about(std::chrono::nanoseconds gap) {
    const auto until = std::chrono::steady_clock::now() + gap;
    while (std::chrono::steady_clock::now() < until) {
    }
}

// ring-send-parked: the sending side of the wake test in tests/ipc/channel.cpp.
int send_to_parked(const std::string& name, const std::string& fence, std::uint64_t rounds,
                   std::uint64_t free) {
    ferry::ipc::detail::force_ring_fence(fence_named(fence));
    auto raw = open_raw<Small>(name);
    if (!raw) {
        return report(raw.error());
    }
    auto& ring = raw->ring;
    const auto forever = std::chrono::steady_clock::time_point::max();
    for (std::uint64_t i = 0; i < rounds + free; ++i) {
        if (i < rounds && !wait_parked([&] { return ring.blocked(); })) {
            return 4;
        }
        if (i >= rounds) {
            // 0..40 us, swept so that publishes land at every point of the receiver's spin
            // and park (its spin phase takes about 10 us).
            pause_about(std::chrono::nanoseconds(i * 7919 % 40000));
        }
        RingOf<Small>::Claim claim;
        if (ring.claim(claim, forever, true, nullptr) != Status::ok) {
            return 4;
        }
        const Message m = make_message(i, 1);
        std::memcpy(claim.cell, &m, sizeof m);
        ring.publish(claim);
        if (i < rounds && !poll_for([&] { return ring.released() == i + 1; })) {
            return 4;
        }
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        return 3;
    }
    const std::string command = argv[1];
    const std::string name = argv[2];
    if (command == "send" && argc == 6) {
        const auto id = static_cast<std::uint32_t>(std::stoul(argv[4]));
        const auto count = std::stoull(argv[5]);
        return std::string(argv[3]) == "shared" ? send_all<Shared>(name, id, count)
                                                : send_all<Stream>(name, id, count);
    }
    if (command == "hold-leaderless") {
        auto channel = Small::open(name);
        if (!channel) {
            return report(channel.error());
        }
        return continue_without_leader([held = std::make_shared<Small>(std::move(*channel))] {
            say("ready");
            hold();
            return held->close() ? 0 : 4;
        });
    }
    if (command == "create-hold") {
        auto channel = Small::create(name);
        if (!channel) {
            return report(channel.error());
        }
        say("ready");
        hold();
        return 0;
    }
    if (command == "ring-send-parked" && argc == 6) {
        return send_to_parked(name, argv[3], std::stoull(argv[4]), std::stoull(argv[5]));
    }
    if (command == "publish-die-spsc") {
        return publish_die_spsc(name);
    }
    if (command == "claim-die-spsc") { // claim-die on Small's (spsc) ring
        return ring_command<Small>("claim-die", name, argc > 3 ? argv[3] : "");
    }
    if (command == "claim-die" || command == "claim-publish" ||
        command == "ring-stop-when-blocked") {
        const std::string arg = argc > 3 ? argv[3] : "";
        return command == "ring-stop-when-blocked" ? ring_command<Small>(command, name, arg)
                                                   : ring_command<SmallShared>(command, name, arg);
    }
    return small_command(command, name);
}
