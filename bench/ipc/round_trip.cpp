// Round trip of a 64-byte message between two processes, every transport through the same
// harness (harness.hpp: the peer pinned to the second CPU, n / 4 untimed round trips first):
//   roundtrip/socketpair/64B  AF_UNIX SOCK_STREAM socketpair, blocking write + read each way
//   roundtrip/posix_mq/64B    two POSIX message queues (mq_open), blocking mq_send + mq_receive
//   roundtrip/boost_mq/64B    two boost::interprocess::message_queue, blocking send + receive
//   roundtrip/ferry/64B       two ferry::ipc::Channel<Message, 8>, blocking send + receive
// Transports with names (boost, ferry) are created by name here and opened by name in the peer.
// Each message carries its sequence number; the parent checks every echo, so a lost or mixed-up
// message voids the run (SkipWithError, which tools/bench_ipc_plot.py refuses).
#include "messages.hpp"

#include <array>
#include <benchmark/benchmark.h>
#include <boost/interprocess/ipc/message_queue.hpp>
#include <cerrno>
#include <fcntl.h>
#include <ferry/ipc/channel.hpp>
#include <memory>
#include <mqueue.h>
#include <optional>
#include <sys/socket.h>
#include <unistd.h>

namespace {
using ferry::bench::Message;
using ferry::bench::message_of;
using ferry::bench::object_name;
using ferry::bench::open_channel;
using ferry::bench::record;
using ferry::bench::round_trip_across;
using ferry::bench::value_of;

constexpr std::uint64_t k_round_trips = 20'000;
// Messages a queue holds: within Linux's default /proc/sys/fs/mqueue/msg_max (10) for an
// unprivileged mq_open. A round trip has one message in flight, so the bound never binds.
constexpr long k_queue_depth = 8;

bool read_all(int fd, void* to, std::size_t n) {
    auto* at = static_cast<char*>(to);
    while (n > 0) {
        const ssize_t got = ::read(fd, at, n);
        if (got <= 0 && !(got < 0 && errno == EINTR)) {
            return false;
        }
        at += got > 0 ? got : 0;
        n -= got > 0 ? static_cast<std::size_t>(got) : 0;
    }
    return true;
}

bool write_all(int fd, const void* from, std::size_t n) {
    const auto* at = static_cast<const char*>(from);
    while (n > 0) {
        const ssize_t put = ::write(fd, at, n);
        if (put <= 0 && !(put < 0 && errno == EINTR)) {
            return false;
        }
        at += put > 0 ? put : 0;
        n -= put > 0 ? static_cast<std::size_t>(put) : 0;
    }
    return true;
}

void roundtrip_socketpair(benchmark::State& state) {
    for (auto _ : state) {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
            state.SkipWithError("socketpair failed");
            break;
        }
        const int ours = fds[0];
        const int theirs = fds[1];
        const auto timed = round_trip_across(
            k_round_trips,
            [&](std::uint64_t i) {
                const Message sent = message_of(i);
                Message echo{};
                return write_all(ours, sent.data(), sent.size()) &&
                       read_all(ours, echo.data(), echo.size()) && value_of(echo) == i;
            },
            [&] {
                return [theirs] {
                    Message m{};
                    return read_all(theirs, m.data(), m.size()) &&
                           write_all(theirs, m.data(), m.size());
                };
            });
        ::close(ours);
        ::close(theirs);
        if (!record(state, timed)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_round_trips) * state.iterations());
}

// A POSIX message queue, made and unlinked at once: the forked peer inherits the descriptor.
mqd_t anonymous_queue() {
    mq_attr attr{};
    attr.mq_maxmsg = k_queue_depth;
    attr.mq_msgsize = sizeof(Message);
    const std::string name = "/" + object_name("mq");
    const mqd_t q = ::mq_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &attr);
    if (q != static_cast<mqd_t>(-1)) {
        ::mq_unlink(name.c_str());
    }
    return q;
}

bool mq_exchange(mqd_t to, mqd_t from, Message& m) {
    return ::mq_send(to, reinterpret_cast<const char*>(m.data()), m.size(), 0) == 0 &&
           ::mq_receive(from, reinterpret_cast<char*>(m.data()), m.size(), nullptr) ==
               static_cast<ssize_t>(m.size());
}

void roundtrip_posix_mq(benchmark::State& state) {
    for (auto _ : state) {
        const mqd_t there = anonymous_queue();
        const mqd_t back = anonymous_queue();
        if (there == static_cast<mqd_t>(-1) || back == static_cast<mqd_t>(-1)) {
            state.SkipWithError("mq_open failed (see /proc/sys/fs/mqueue)");
            break;
        }
        const auto timed = round_trip_across(
            k_round_trips,
            [&](std::uint64_t i) {
                Message m = message_of(i);
                return mq_exchange(there, back, m) && value_of(m) == i;
            },
            [&] {
                return [there, back] {
                    Message m{};
                    return ::mq_receive(there, reinterpret_cast<char*>(m.data()), m.size(),
                                        nullptr) == static_cast<ssize_t>(m.size()) &&
                           ::mq_send(back, reinterpret_cast<const char*>(m.data()), m.size(), 0) ==
                               0;
                };
            });
        ::mq_close(there);
        ::mq_close(back);
        if (!record(state, timed)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_round_trips) * state.iterations());
}

namespace bip = boost::interprocess;

// Two boost message queues made by name in this process and opened by name in the peer, as two
// unrelated processes would; removed by name when the run ends.
struct BoostQueues {
    std::string there_name = object_name("bmq");
    std::string back_name = object_name("bmq");
    bip::message_queue there{bip::create_only, there_name.c_str(), k_queue_depth, sizeof(Message)};
    bip::message_queue back{bip::create_only, back_name.c_str(), k_queue_depth, sizeof(Message)};
    ~BoostQueues() {
        bip::message_queue::remove(there_name.c_str());
        bip::message_queue::remove(back_name.c_str());
    }
};

bool boost_receive(bip::message_queue& q, Message& m) {
    std::size_t got = 0;
    unsigned priority = 0;
    q.receive(m.data(), m.size(), got, priority);
    return got == m.size();
}

void roundtrip_boost_mq(benchmark::State& state) {
    for (auto _ : state) {
        std::optional<BoostQueues> made;
        try {
            made.emplace();
        } catch (const bip::interprocess_exception& e) {
            state.SkipWithError(e.what());
            break;
        }
        BoostQueues& queues = *made;
        const auto timed = round_trip_across(
            k_round_trips,
            [&](std::uint64_t i) {
                Message m = message_of(i);
                queues.there.send(m.data(), m.size(), 0);
                return boost_receive(queues.back, m) && value_of(m) == i;
            },
            [&] {
                // The peer's own handles, opened by name (the parent's objects are not used).
                return [there = std::make_shared<bip::message_queue>(bip::open_only,
                                                                     queues.there_name.c_str()),
                        back = std::make_shared<bip::message_queue>(bip::open_only,
                                                                    queues.back_name.c_str())] {
                    Message m{};
                    if (!boost_receive(*there, m)) {
                        return false;
                    }
                    back->send(m.data(), m.size(), 0);
                    return true;
                };
            });
        if (!record(state, timed)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_round_trips) * state.iterations());
}

using RoundTripChannel = ferry::ipc::Channel<Message, k_queue_depth>;

void roundtrip_ferry(benchmark::State& state) {
    for (auto _ : state) {
        const std::string there_name = object_name("rt");
        const std::string back_name = object_name("rt");
        auto there = RoundTripChannel::create(there_name);
        auto back = RoundTripChannel::create(back_name);
        if (!there || !back) {
            state.SkipWithError((there ? back : there).error().message.c_str());
            break;
        }
        const auto timed = round_trip_across(
            k_round_trips,
            [&](std::uint64_t i) {
                if (there->send(message_of(i)) != ferry::Status::ok) {
                    return false;
                }
                const auto echo = back->receive();
                return echo.has_value() && value_of(*echo) == i;
            },
            [&] {
                return [there = open_channel<RoundTripChannel>(there_name),
                        back = open_channel<RoundTripChannel>(back_name)] {
                    const auto m = there->receive();
                    return m.has_value() && back->send(*m) == ferry::Status::ok;
                };
            });
        if (!record(state, timed)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_round_trips) * state.iterations());
}

#define FERRY_IPC_ROUND_TRIP(function, side)                                                       \
    BENCHMARK(function)->Name("roundtrip/" side "/64B")->UseManualTime()->Iterations(1)

FERRY_IPC_ROUND_TRIP(roundtrip_socketpair, "socketpair");
FERRY_IPC_ROUND_TRIP(roundtrip_posix_mq, "posix_mq");
FERRY_IPC_ROUND_TRIP(roundtrip_boost_mq, "boost_mq");
FERRY_IPC_ROUND_TRIP(roundtrip_ferry, "ferry");
} // namespace

BENCHMARK_MAIN();
