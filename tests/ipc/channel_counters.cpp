// Counters of ferry/ipc channels kept in the segment (ipc/detail/channel_counters.hpp;
// docs/processes.md, Counters): what another process counted is in this process's stats(),
// every count after a known sequence of calls, time parked, a send in flight at the head, message
// lengths as bytes, a policy without counters, and a typed channel's totals derived from its ring
// (across wrap; scribbled).
#include "../channel/stats_support.hpp"
#include "channel_support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <ferry/ipc/message_channel.hpp>
#include <string>
#include <thread>

using ferry::Status;
using ipc_test::Child;
using ipc_test::make_message;
using ipc_test::Message;
using ipc_test::Small;
using ipc_test::unique_name;
using namespace std::chrono_literals;

using stats_test::HasStats;
using stats_test::uncounted;

static_assert(HasStats<Small>);
static_assert(!HasStats<ferry::ipc::Channel<Message, 8, uncounted>>);

TEST_CASE("ipc counters: what a sending process counted is read by the receiving one", "[ipc]") {
    constexpr std::uint64_t n = 1000; // fits the ring: the sender never waits
    const auto name = unique_name("counted");
    auto channel = ipc_test::Stream::create(name);
    REQUIRE(channel);
    Child child(ipc_test::channel_helper(), {"send", name, "stream", "1", std::to_string(n)});
    REQUIRE(child.read_line() == "done");
    REQUIRE(child.wait_exit() == 0); // the sender has closed: its counts stay in its block

    ferry::ChannelStats s = channel->stats();
    CHECK(s.sent == n);
    CHECK(s.sent_bytes == n * sizeof(Message));
    CHECK(s.received == 0);
    CHECK(s.full == 0);
    CHECK(s.high_water ==
          n / ferry::detail::k_high_water_sample * ferry::detail::k_high_water_sample);
    for (std::uint64_t i = 0; i < n; ++i) {
        REQUIRE(channel->try_receive().has_value());
    }
    s = channel->stats();
    CHECK(s.received == n);
    CHECK(s.received_bytes == n * sizeof(Message));
    CHECK(s.sent == n);
}

TEST_CASE("ipc counters: every count after a known sequence of calls", "[ipc]") {
    const auto name = unique_name("counts");
    auto ch = Small::create(name);
    REQUIRE(ch);
    CHECK(ch->stats() == ferry::ChannelStats{});
    for (std::uint64_t i = 0; i < ipc_test::k_small; ++i) {
        REQUIRE(ch->try_send(make_message(i, 1)) == Status::ok);
    }
    CHECK(ch->try_send(make_message(9, 1)) == Status::full);           // full, refused
    CHECK(ch->send_for(make_message(9, 1), 1ms) == Status::timed_out); // full, refused
    REQUIRE(ch->try_receive().has_value());
    REQUIRE(ch->try_receive().has_value());
    CHECK(ch->clear() == ipc_test::k_small - 2);
    CHECK(ch->try_receive().status() == Status::empty); // empty
    const auto started = std::chrono::steady_clock::now();
    CHECK(ch->receive_for(30ms).status() == Status::timed_out); // empty, then parked
    const auto took = std::chrono::steady_clock::now() - started;
    ch->stop();
    CHECK(ch->try_send(make_message(9, 1)) == Status::stopped); // refused

    const ferry::ChannelStats s = ch->stats();
    CHECK(s.sent == ipc_test::k_small);
    CHECK(s.received == 2);
    CHECK(s.full == 2);
    CHECK(s.refused == 3);
    CHECK(s.empty == 2);
    CHECK(s.dropped_by_clear == ipc_test::k_small - 2);
    CHECK(s.high_water == ipc_test::k_small);
    CHECK(s.send_blocked_ns <= static_cast<std::uint64_t>(std::chrono::nanoseconds(took).count()));
    CHECK(s.receive_blocked_ns >= 25'000'000U); // the 30 ms wait, never early
    CHECK(s.receive_blocked_ns <=
          static_cast<std::uint64_t>(std::chrono::nanoseconds(took).count()));
    REQUIRE(ch->close());
    CHECK(ch->stats() == ferry::ChannelStats{}); // closed: nothing to read
}

TEST_CASE("ipc counters: a message channel counts message lengths, not cancelled loans", "[ipc]") {
    const auto name = unique_name("msgcount");
    auto ch = ferry::ipc::MessageChannel<>::create(name, 4, 256);
    REQUIRE(ch);
    {
        auto loan = ch->loan(200);
        REQUIRE(loan);
        std::memset(loan->bytes().data(), 7, 37);
        REQUIRE(loan->publish(37) == Status::ok);
    }
    {
        auto dropped = ch->loan(100); // cancelled: a marker, not a message
        REQUIRE(dropped);
    }
    auto view = ch->receive_view(ferry::no_wait);
    REQUIRE(view);
    CHECK(view->bytes().size() == 37);
    view->release();
    CHECK(ch->receive_view(ferry::no_wait).status() == Status::empty); // the marker is skipped

    const ferry::ChannelStats s = ch->stats();
    CHECK(s.sent == 1);
    CHECK(s.sent_bytes == 37);
    CHECK(s.received == 1);
    CHECK(s.received_bytes == 37);
    CHECK(s.empty == 1);
}

// A receive that may wait polls first and waits only after: a send in flight at the head
// (claimed, not yet published) is what that first poll found, so it counts as empty and the wait
// for it as time blocked.
TEST_CASE("ipc counters: a waiting receive counts a send in flight at the head as empty", "[ipc]") {
    const auto name = unique_name("inflight");
    auto ch = ferry::ipc::MessageChannel<>::create(name, 4, 256);
    REQUIRE(ch);
    auto loan = ch->loan(16); // the head, claimed and not yet published
    REQUIRE(loan);
    std::atomic<std::size_t> length{0};
    std::thread receiver([&] {
        auto view = ch->receive_view(); // forever
        length.store(view ? view->bytes().size() : 0);
    });
    const bool parked = ipc_test::poll_for([&] { return ch->blocked() >= 1; }); // on the head
    const Status published = loan->publish(9); // lets the receiver go whatever happened
    receiver.join();
    REQUIRE(parked);
    REQUIRE(published == Status::ok);
    CHECK(length.load() == 9);

    const ferry::ChannelStats s = ch->stats();
    CHECK(s.received == 1);
    CHECK(s.empty == 1);
    CHECK(s.receive_blocked_ns > 0);
}

TEST_CASE("ipc counters: a policy without counters still carries messages", "[ipc]") {
    const auto name = unique_name("uncounted");
    auto ch = ferry::ipc::Channel<Message, 8, uncounted>::create(name);
    REQUIRE(ch);
    REQUIRE(ch->try_send(make_message(1, 1)) == Status::ok);
    CHECK(ch->try_receive()->sequence == 1);
}

// The message totals of a typed channel come from its ring's counters (published, released,
// minus what clear() dropped): exact across many laps of the ring, with clears in between.
TEMPLATE_TEST_CASE("ipc counters: totals derived from the ring are exact across wrap and clear",
                   "[ipc]", Small, ipc_test::SmallShared) {
    const auto name = unique_name("wrapcount");
    auto ch = TestType::create(name);
    REQUIRE(ch);
    std::uint64_t sent = 0;
    std::uint64_t received = 0;
    std::uint64_t dropped = 0;
    for (std::uint64_t lap = 0; lap < 25; ++lap) { // 25 laps of k_small (8) cells, odd counts
        const std::uint64_t burst = 1 + lap % ipc_test::k_small;
        for (std::uint64_t i = 0; i < burst; ++i) {
            REQUIRE(ch->try_send(make_message(sent, 1)) == Status::ok);
            ++sent;
        }
        if (lap % 5 == 4) {
            dropped += ch->clear();
            continue;
        }
        for (std::uint64_t i = 0; i < (burst + 1) / 2; ++i) {
            REQUIRE(ch->try_receive().has_value());
            ++received;
        }
        dropped += ch->clear(); // the other half
    }
    REQUIRE(sent > 4 * ipc_test::k_small);
    const ferry::ChannelStats s = ch->stats();
    CHECK(s.sent == sent);
    CHECK(s.sent_bytes == sent * sizeof(Message));
    CHECK(s.received == received);
    CHECK(s.received_bytes == received * sizeof(Message));
    CHECK(s.dropped_by_clear == dropped);
    CHECK(s.refused == 0);
}

// The ring's counters and the counter area are another process's to write: a scribbled value
// gives a wrong statistic (clamped, never wrapped below zero) and the channel then answers
// peer_lost; nothing reads out of bounds or waits.
TEST_CASE("ipc counters: scribbled ring counters and counter words give wrong figures, no harm",
          "[ipc]") {
    namespace detail = ferry::ipc::detail;
    const auto name = unique_name("scribcount");
    auto ch = Small::create(name);
    REQUIRE(ch);
    for (std::uint64_t i = 0; i < 3; ++i) {
        REQUIRE(ch->try_send(make_message(i, 1)) == Status::ok);
    }
    REQUIRE(ch->try_receive().has_value());
    ipc_test::SegmentFile peer(name);
    REQUIRE(peer.mapped());
    auto word = [&](std::size_t offset) {
        return std::atomic_ref<std::uint64_t>(
            *reinterpret_cast<std::uint64_t*>(peer.base() + offset));
    };
    const std::size_t ring = detail::k_payload_offset;
    const std::size_t block = detail::k_counters_offset; // slot 0: the creator's
    REQUIRE(word(ring + offsetof(detail::SpscControl, tail)).load() == 3);
    REQUIRE(word(ring + offsetof(detail::SpscControl, head)).load() == 1);

    // More dropped than released: received clamps at zero.
    word(block + offsetof(detail::ParticipantCounters, receive) +
         offsetof(ferry::detail::ReceiveCounterWords, dropped))
        .store(UINT64_MAX - 5);
    ferry::ChannelStats s = ch->stats();
    CHECK(s.sent == 3);
    CHECK(s.received == 0);
    CHECK(s.received_bytes == 0);

    // A tail far ahead: sent says so (a wrong figure), and the channel is lost.
    word(ring + offsetof(detail::SpscControl, tail)).store(UINT64_MAX / 3);
    s = ch->stats();
    CHECK(s.sent == UINT64_MAX / 3);
    CHECK(ch->try_send(make_message(9, 1)) == Status::peer_lost); // found by the sender
    CHECK(ch->try_receive().status() == Status::peer_lost);
    CHECK(ch->receive_for(10ms).status() == Status::peer_lost);
    CHECK(ch->lost());
}
