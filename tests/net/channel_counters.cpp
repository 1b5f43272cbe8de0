// Counters of remote channels (net/detail/channel_handle.hpp; docs/multi-node-channels.md,
// Counters): two nodes of this process over UCX on loopback; the sender's end counts its sends
// and its waits for credit, the receiver's end its receives and waits, message lengths as bytes.
#include "channel_support.hpp"

#include <catch2/catch.hpp>
#include <ferry/net/channel.hpp>
#include <ferry/net/message_channel.hpp>

using ferry::Status;
using net_test::make_message;
using net_test::Message;
using namespace std::chrono_literals;

namespace {
constexpr auto k_bound = 10s;

struct TwoNodes {
    std::unique_ptr<ferry::net::Node> server = net_test::start_node(true);
    std::unique_ptr<ferry::net::Node> client = net_test::start_node(false);
    ferry::net::PeerId peer = 0;
    TwoNodes() {
        REQUIRE(server);
        REQUIRE(client);
        auto connected = client->connect(server->address(), k_bound);
        REQUIRE(connected);
        peer = *connected;
    }
};
} // namespace

TEST_CASE("net counters: each end counts its own calls", "[net]") {
    TwoNodes nodes;
    auto receiver = ferry::net::ChannelReceiver<Message, 4>::create(*nodes.server, "counted");
    REQUIRE(receiver);
    auto sender = ferry::net::ChannelSender<Message>::open(*nodes.client, nodes.peer, "counted");
    REQUIRE(sender);

    CHECK(receiver->try_receive().status() == Status::empty);         // found empty
    CHECK(receiver->receive_for(20ms).status() == Status::timed_out); // empty, then waited
    for (std::uint64_t i = 0; i < 4; ++i) {
        REQUIRE(sender->send(make_message(i, 1), k_bound) == Status::ok);
    }
    // The receiver holds 4 undelivered messages: no credit is left anywhere.
    CHECK(sender->try_send(make_message(9, 1)) == Status::full);            // full, refused
    CHECK(sender->send_for(make_message(9, 1), 20ms) == Status::timed_out); // full, refused
    for (int i = 0; i < 4; ++i) {
        REQUIRE(receiver->receive_for(k_bound).has_value());
    }

    const ferry::ChannelStats out = sender->stats();
    CHECK(out.sent == 4);
    CHECK(out.sent_bytes == 4 * sizeof(Message));
    CHECK(out.full == 2);
    CHECK(out.refused == 2);
    CHECK(out.send_blocked_ns >= 15'000'000U); // the 20 ms wait for a credit
    CHECK(out.received == 0);

    const ferry::ChannelStats in = receiver->stats();
    CHECK(in.received == 4);
    CHECK(in.received_bytes == 4 * sizeof(Message));
    CHECK(in.empty >= 2); // the first two; a receive_for racing an arrival may add one
    CHECK(in.receive_blocked_ns >= 15'000'000U);
    CHECK(in.sent == 0);
    CHECK(receiver->close().has_value());
    CHECK(receiver->stats() == ferry::ChannelStats{});
}

TEST_CASE("net counters: a message channel counts message lengths", "[net]") {
    TwoNodes nodes;
    auto receiver = ferry::net::MessageReceiver::create(*nodes.server, "msgs", 4, 1024);
    REQUIRE(receiver);
    auto sender = ferry::net::MessageSender::open(*nodes.client, nodes.peer, "msgs");
    REQUIRE(sender);
    const std::vector<std::byte> bytes(300, std::byte{5});
    REQUIRE(sender->send(std::span<const std::byte>(bytes), k_bound) == Status::ok);
    auto view = receiver->receive_view(k_bound);
    REQUIRE(view);
    CHECK(view->bytes().size() == 300);
    CHECK(sender->stats().sent_bytes == 300);
    CHECK(receiver->stats().received_bytes == 300);
    CHECK(receiver->stats().received == 1);
}

TEST_CASE("net counters: a node counts each peer's service messages and keeps lost peers",
          "[net]") {
    TwoNodes nodes;
    auto receiver = ferry::net::ChannelReceiver<Message, 8>::create(*nodes.server, "per-peer");
    REQUIRE(receiver);
    auto sender = ferry::net::ChannelSender<Message>::open(*nodes.client, nodes.peer, "per-peer");
    REQUIRE(sender);
    for (std::uint64_t i = 0; i < 5; ++i) {
        REQUIRE(sender->send(make_message(i, 1), k_bound) == Status::ok);
    }
    for (int i = 0; i < 5; ++i) {
        REQUIRE(receiver->receive_for(k_bound).has_value());
    }
    const auto out = nodes.client->peer_stats();
    REQUIRE(out.size() == 1);
    CHECK(out[0].peer == nodes.peer);
    CHECK(out[0].alive);
    CHECK_FALSE(out[0].accepted);
    CHECK(out[0].address == nodes.server->address());
    CHECK(out[0].messages_sent >= 6); // the OPEN and five DATA
    CHECK(out[0].bytes_sent >= 5 * sizeof(Message));
    CHECK(out[0].messages_received >= 1); // the ACCEPT at least

    auto in = nodes.server->peer_stats();
    REQUIRE(in.size() == 1);
    CHECK(in[0].accepted);
    // Everything the sender's five DATA needed has arrived; a later message may be in flight.
    CHECK(in[0].messages_received >= 6);
    CHECK(in[0].messages_received <= nodes.client->peer_stats()[0].messages_sent);
    CHECK(in[0].bytes_received >= 5 * sizeof(Message));

    CHECK(sender->close().has_value());
    nodes.client->disconnect(nodes.peer);
    const auto after = nodes.client->peer_stats();
    REQUIRE(after.size() == 1);
    CHECK_FALSE(after[0].alive);
    CHECK_FALSE(after[0].lost_reason.empty());
}
