// ferry::ipc::Channel across processes: tests/ipc/channel_helper.cpp is the other process.
// Every blocking call here is bounded (a hang fails as timed_out, not as a stuck test), and
// every hand-off waits for observable state: a line from the child, or blocked() of the ring.
#include "channel_support.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <ferry/runtime/profiler.hpp>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

using ferry::Status;
using ipc_test::Child;
using ipc_test::make_message;
using ipc_test::Message;
using ipc_test::Small;
using ipc_test::unique_name;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto k_bound = 10s; // what "would hang" is cut off at

// 10^6; FERRY_IPC_MESSAGES overrides it by hand (tests/ipc/meson.build).
std::uint64_t message_count() {
    const char* text = std::getenv("FERRY_IPC_MESSAGES");
    return text != nullptr ? std::strtoull(text, nullptr, 10) : 1000000;
}

Child helper(std::initializer_list<std::string> args) {
    return Child(ipc_test::channel_helper(), args);
}
// Milliseconds from a steady-clock stamp the child printed (CLOCK_MONOTONIC is system-wide).
std::int64_t ms_since(const std::string& stamp_ns) {
    return (ipc_test::now_ns() - std::stoll(stamp_ns)) / 1000000;
}
std::string code(Status s) {
    return std::to_string(static_cast<int>(s));
}
bool parked(const auto& channel) {
    return ipc_test::poll_for([&] { return channel.blocked() >= 1; });
}

// Receives `count` messages and checks each: per producer, sequences 0, 1, 2, ... in order with
// a valid checksum. Returns the next expected sequence of each producer (1 and 2).
template <typename ChannelType>
std::array<std::uint64_t, 3> receive_checked(ChannelType& channel, std::uint64_t count,
                                             std::uint64_t& bad) {
    std::array<std::uint64_t, 3> next{};
    for (std::uint64_t i = 0; i < count; ++i) {
        auto r = channel.receive_for(k_bound);
        if (!r) {
            FAIL("receive " << i << " answered " << static_cast<int>(r.status()));
        }
        const Message m = *r;
        const bool known = m.producer == 1 || m.producer == 2;
        if (known && m.sequence == next[m.producer] &&
            m.check == ipc_test::checksum(m.sequence, m.producer)) {
            ++next[m.producer];
        } else {
            ++bad;
        }
    }
    return next;
}

} // namespace

TEST_CASE("ipc channel: spsc carries every message between processes intact and in order",
          "[ipc]") {
    const auto n = message_count();
    const auto name = unique_name("stream");
    auto channel = ipc_test::Stream::create(name);
    REQUIRE(channel);
    Child child = helper({"send", name, "stream", "1", std::to_string(n)});
    std::uint64_t bad = 0;
    const auto next = receive_checked(*channel, n, bad);
    CHECK(bad == 0);
    CHECK(next[1] == n);
    CHECK(child.read_line() == "done");
    CHECK(child.wait_exit() == 0);
    CHECK(channel->try_receive().status() == Status::empty);
}

TEST_CASE("ipc channel: mpmc from two producer processes delivers each producer's messages "
          "exactly once and in order",
          "[ipc]") {
    const auto n = message_count();
    const auto name = unique_name("shared");
    auto channel = ipc_test::Shared::create(name);
    REQUIRE(channel);
    Child a = helper({"send", name, "shared", "1", std::to_string(n / 2)});
    Child b = helper({"send", name, "shared", "2", std::to_string(n / 2)});
    std::uint64_t bad = 0;
    const auto next = receive_checked(*channel, 2 * (n / 2), bad);
    CHECK(bad == 0);
    CHECK(next[1] == n / 2);
    CHECK(next[2] == n / 2);
    CHECK(a.wait_exit() == 0);
    CHECK(b.wait_exit() == 0);
    CHECK(channel->try_receive().status() == Status::empty);
}

TEST_CASE("ipc channel: holds exactly its capacity across processes, and drains after stop",
          "[ipc]") {
    const auto name = unique_name("capacity");
    auto channel = Small::create(name);
    REQUIRE(channel);
    Child child = helper({"fill", name});
    REQUIRE(child.read_line() == std::to_string(ipc_test::k_small)); // the child filled it
    CHECK(channel->size() == ipc_test::k_small);
    CHECK(channel->try_send(make_message(99, 0)) == Status::full);
    channel->stop();
    CHECK(channel->send(make_message(99, 0)) == Status::stopped);
    for (std::uint64_t i = 0; i < ipc_test::k_small; ++i) { // queued items still come out
        auto r = channel->receive_for(k_bound);
        REQUIRE(r);
        CHECK(r->sequence == i);
    }
    CHECK(channel->receive_for(k_bound).status() == Status::stopped);
    CHECK(channel->size() == 0);
    child.release();
    CHECK(child.wait_exit() == 0);
}

TEST_CASE("ipc channel: a receive that finds the head claimed in another process waits for its "
          "publication",
          "[ipc]") {
    // Reporting "empty" there would let a later send that already answered ok be overtaken,
    // and a receive after stop() miss it (docs/channel.md, "A send in flight"). A no-wait
    // receive waits too, but only k_pending_grace (tests/ipc/shared_ring.cpp): a timed one is
    // used here so that a slow child cannot make the test fail.
    const auto name = unique_name("pending");
    auto channel = ipc_test::SmallShared::create(name);
    REQUIRE(channel);
    Child child = helper({"claim-publish", name});
    REQUIRE(child.read_line() == "claimed");
    auto r = channel->receive_for(k_bound); // parks until the child, seeing it parked, publishes
    REQUIRE(r);
    CHECK(r->sequence == 42);
    CHECK(r->check == ipc_test::checksum(42, 1));
    CHECK(child.wait_exit() == 0);
}

TEST_CASE("ipc channel: timeouts are never early, whichever process filled the channel", "[ipc]") {
    const auto name = unique_name("timeouts");
    auto channel = Small::create(name);
    REQUIRE(channel);
    Child child = helper({"fill", name});
    REQUIRE(child.read_line() == std::to_string(ipc_test::k_small));
    auto start = Clock::now();
    CHECK(channel->send_for(make_message(0, 0), 30ms) == Status::timed_out);
    CHECK(Clock::now() - start >= 30ms);
    CHECK(channel->clear() == ipc_test::k_small);
    start = Clock::now();
    CHECK(channel->receive_for(30ms).status() == Status::timed_out);
    CHECK(Clock::now() - start >= 30ms);
    const auto deadline = Clock::now() + 25ms;
    CHECK(channel->receive_until(deadline).status() == Status::timed_out);
    CHECK(Clock::now() >= deadline);
    CHECK(channel->try_receive().status() == Status::empty);
    child.release();
    CHECK(child.wait_exit() == 0);
}

TEST_CASE("ipc channel: a positive timeout that runs out before the call waits answers timed_out; "
          "a deadline already past when given answers like no_wait",
          "[ipc]") {
    const auto name = unique_name("short-timeouts");
    auto channel = Small::create(name);
    REQUIRE(channel);
    CHECK(channel->receive_for(1ns).status() == Status::timed_out);
    CHECK(channel->receive_until(Clock::now() - 1ms).status() == Status::empty);
    for (std::uint64_t i = 0; i < ipc_test::k_small; ++i) {
        REQUIRE(channel->try_send(make_message(0, i)) == Status::ok);
    }
    CHECK(channel->send_for(make_message(0, 0), 1ns) == Status::timed_out);
    CHECK(channel->send_until(make_message(0, 0), Clock::now() - 1ms) == Status::full);
    CHECK(channel->size() == ipc_test::k_small);
}

TEST_CASE("ipc channel: clear drops what another process queued and wakes its blocked send",
          "[ipc]") {
    const auto name = unique_name("clear");
    auto channel = Small::create(name);
    REQUIRE(channel);
    Child child = helper({"fill-then-send", name});
    REQUIRE(child.read_line() == "full");
    REQUIRE(parked(*channel)); // the child's ninth send is parked
    CHECK(channel->clear() == ipc_test::k_small);
    CHECK(child.read_line() == code(Status::ok));
    auto r = channel->receive_for(k_bound);
    REQUIRE(r);
    CHECK(r->sequence == ipc_test::k_small);
    CHECK(channel->size() == 0);
    CHECK(child.wait_exit() == 0);
}

TEST_CASE("ipc channel: stop from either process wakes the calls blocked in the other", "[ipc]") {
    const auto name = unique_name("stop");
    auto channel = Small::create(name);
    REQUIRE(channel);
    SECTION("the other process stops this one's blocked receive") {
        Child child = helper({"stop-when-blocked", name});
        CHECK(channel->receive_for(k_bound).status() == Status::stopped);
        CHECK(child.wait_exit() == 0);
    }
    SECTION("this process stops the other's blocked receive") {
        Child child = helper({"receive", name});
        REQUIRE(child.read_line() == "ready");
        REQUIRE(parked(*channel));
        channel->stop();
        CHECK(child.read_line() == code(Status::stopped));
        CHECK(child.wait_exit() == 0);
    }
    SECTION("this process stops the other's blocked send") {
        Child child = helper({"fill-then-send", name});
        REQUIRE(child.read_line() == "full");
        REQUIRE(parked(*channel));
        channel->stop();
        CHECK(child.read_line() == code(Status::stopped));
        CHECK(child.wait_exit() == 0);
    }
    CHECK(channel->stopped());
    CHECK(channel->send(make_message(0, 0)) == Status::stopped); // sticky
}

TEST_CASE("ipc ring: a stop from another process wakes a waiter through the shared futex alone",
          "[ipc]") {
    // Without peers to watch, a wait is not sliced: only the futex wake from the other process
    // can end it before the deadline (a process-private futex would sleep the full 5 s).
    const auto name = unique_name("futex");
    auto channel = Small::create(name);
    REQUIRE(channel);
    auto raw = ipc_test::open_raw<Small>(name);
    REQUIRE(raw);
    Child child = helper({"ring-stop-when-blocked", name});
    ferry::ipc::detail::SpscSharedRing::Claim claim;
    CHECK(raw->ring.acquire(claim, Clock::now() + 5s, true, nullptr) == Status::stopped);
    CHECK(ms_since(child.read_line()) < 1000);
    CHECK(child.wait_exit() == 0);
}

// The wake protocol of the spsc ring (shared_ring_fence.hpp) in one mode of this process and of
// the sender's: first rounds in which the sender publishes only once this receiver is parked
// (blocked() says so), then messages 0..40 us apart, so that publishes race with parks. The
// ring is used without peers, so a wait is not sliced: a lost wake sleeps to its 5 s deadline and
// fails the round.
namespace {

void check_parked_receiver_woken(ferry::ipc::detail::RingFence mine, const std::string& theirs) {
    constexpr std::uint64_t k_rounds = 50;
    constexpr std::uint64_t k_free = 2000;
    const auto name = unique_name("wake");
    auto channel = Small::create(name);
    REQUIRE(channel);
    const auto before = ferry::ipc::detail::force_ring_fence(mine);
    auto raw = ipc_test::open_raw<Small>(name);
    ferry::ipc::detail::force_ring_fence(before);
    REQUIRE(raw);
    Child child = helper(
        {"ring-send-parked", name, theirs, std::to_string(k_rounds), std::to_string(k_free)});
    std::uint64_t late = 0;
    for (std::uint64_t i = 0; i < k_rounds + k_free; ++i) {
        ferry::ipc::detail::SpscSharedRing::Claim claim;
        const Status s = raw->ring.acquire(claim, Clock::now() + 5s, true, nullptr);
        if (s != Status::ok) {
            FAIL("receive " << i << " answered " << static_cast<int>(s));
        }
        Message m{};
        std::memcpy(&m, claim.cell, sizeof m);
        raw->ring.release(claim);
        late += m.sequence != i ? 1 : 0;
    }
    CHECK(late == 0);
    CHECK(child.wait_exit() == 0);
}

} // namespace

TEST_CASE("ipc spsc ring: a receiver parked on an empty ring is woken by a send from another "
          "process, with membarrier and with the seq_cst pair",
          "[ipc]") {
    using ferry::ipc::detail::RingFence;
    SECTION("membarrier: the waiter forces the barrier, the sender stores with release") {
        if (ferry::ipc::detail::ring_fence() != RingFence::asymmetric) {
            WARN("membarrier is not available here: this section runs the fallback");
        }
        check_parked_receiver_woken(ferry::ipc::detail::ring_fence(), "asymmetric");
    }
    SECTION("fallback: both processes seq_cst") {
        check_parked_receiver_woken(RingFence::symmetric, "symmetric");
    }
    SECTION("a receiver without membarrier against a sender that has it re-checks in slices") {
        check_parked_receiver_woken(RingFence::unavailable, "asymmetric");
    }
}

TEST_CASE("ipc channel: open_or_create creates once and then opens; await_open waits for the name",
          "[ipc]") {
    const auto name = unique_name("lifecycle");
    auto first = Small::open_or_create(name); // no such name: creates
    REQUIRE(first);
    auto second = Small::open_or_create(name); // now it exists: opens the same channel
    REQUIRE(second);
    REQUIRE(first->try_send(make_message(7, 1)) == Status::ok);
    const auto got = second->try_receive();
    REQUIRE(got);
    CHECK(got->sequence == 7);

    const auto later = unique_name("later");
    const auto began = Clock::now();
    const auto never = Small::await_open(later, 50ms);
    CHECK(never.status() == Status::not_found);
    CHECK(Clock::now() - began >= 50ms);
    std::optional<ferry::Expected<Small>> awaited;
    std::thread waiter([&] { awaited.emplace(Small::await_open(later, k_bound)); });
    auto made = Small::create(later); // before or after the waiter looks: it must find it
    REQUIRE(made);
    waiter.join();
    REQUIRE(awaited->has_value());
    REQUIRE(made->try_send(make_message(9, 1)) == Status::ok);
    CHECK((*awaited)->try_receive()->sequence == 9);
    REQUIRE((*awaited)->close());
    REQUIRE(made->close());
    REQUIRE(first->close());
    REQUIRE(second->close());
    CHECK(first->close()); // idempotent
}

TEST_CASE("ipc channel: send, receive and park are traced while the profiler records", "[ipc]") {
    const auto name = unique_name("traced");
    auto channel = Small::create(name);
    REQUIRE(channel);
    REQUIRE(channel->try_send(make_message(1, 1)) == Status::ok); // profiler off: not recorded
    REQUIRE(ferry::profiler().start() == Status::ok);
    REQUIRE(channel->try_send(make_message(2, 1)) == Status::ok);
    REQUIRE(channel->try_receive());
    REQUIRE(channel->try_receive());
    CHECK(channel->receive_for(5ms).status() == Status::timed_out); // empty: parks, then times out
    REQUIRE(ferry::profiler().stop() == Status::ok);
    std::map<std::string, int> seen;
    for (const auto& e : ferry::profiler().events()) {
        if (e.category == "channel") {
            ++seen[e.name];
        }
    }
    CHECK(seen["ipc.send"] == 1);
    CHECK(seen["ipc.receive"] == 3);
    CHECK(seen["ipc.park"] == 1);
}

TEST_CASE("ipc channel: no channel of this run is left in /dev/shm after every process closed",
          "[ipc]") {
    CHECK(ipc_test::leftovers(ipc_test::name_prefix()).empty());
}
