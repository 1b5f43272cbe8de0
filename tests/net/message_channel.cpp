// net::MessageSender's loans (ferry/net/message_channel.hpp; docs/multi-node-channels.md,
// Sending without a copy): two nodes of this process over UCX on loopback.
#include "channel_support.hpp"

#include <catch2/catch.hpp>
#include <cstring>
#include <ferry/net/message_channel.hpp>
#include <optional>
#include <vector>

using ferry::Status;
using namespace std::chrono_literals;

namespace {
constexpr auto k_bound = 10s;
constexpr std::size_t k_capacity = 2;
constexpr std::size_t k_max_bytes = 4096;

struct Connected {
    std::unique_ptr<ferry::net::Node> server = net_test::start_node(true);
    std::unique_ptr<ferry::net::Node> client = net_test::start_node(false);
    std::optional<ferry::net::MessageReceiver> receiver;
    std::optional<ferry::net::MessageSender> sender;

    Connected() {
        REQUIRE(server);
        REQUIRE(client);
        auto created =
            ferry::net::MessageReceiver::create(*server, "loans", k_capacity, k_max_bytes);
        REQUIRE(created);
        receiver.emplace(std::move(*created));
        auto peer = client->connect(server->address(), k_bound);
        REQUIRE(peer);
        auto opened = ferry::net::MessageSender::open(*client, *peer, "loans");
        REQUIRE(opened);
        sender.emplace(std::move(*opened));
    }
};

void fill(std::span<std::byte> bytes, unsigned seed) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
    }
}
bool filled(std::span<const std::byte> bytes, unsigned seed) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] != static_cast<std::byte>((i * 31 + seed) & 0xff)) {
            return false;
        }
    }
    return true;
}
} // namespace

TEST_CASE("net message loan: written in place, sent without a copy, arrives byte for byte",
          "[net]") {
    Connected c;
    for (unsigned seed = 0; seed < 8; ++seed) { // more than the capacity: buffers come back
        const std::size_t size = seed % 2 == 0 ? k_max_bytes : 300 + seed;
        auto loan = c.sender->loan(size);
        REQUIRE(loan);
        REQUIRE(loan->size() == size);
        fill(loan->bytes(), seed);
        REQUIRE(c.sender->send(std::move(*loan), k_bound) == Status::ok);
        CHECK_FALSE(*loan); // spent
        auto view = c.receiver->receive_view(k_bound);
        REQUIRE(view);
        CHECK(view->bytes().size() == size);
        CHECK(filled(view->bytes(), seed));
    }
    CHECK(c.sender->stats().sent == 8);
}

TEST_CASE("net message loan: bad sizes and an empty loan are refused; nothing is sent", "[net]") {
    Connected c;
    CHECK(c.sender->loan(0).status() == Status::invalid_param);
    CHECK(c.sender->loan(k_max_bytes + 1).status() == Status::invalid_param);
    ferry::net::MessageLoan none;
    CHECK(c.sender->send(std::move(none), ferry::no_wait) == Status::invalid_param);
    CHECK(c.sender->credits() == k_capacity); // no credit spent
    CHECK(c.receiver->receive_view(ferry::no_wait).status() == Status::empty);
    REQUIRE(c.sender->close());
    CHECK(c.sender->loan(16).status() == Status::uninitialized);
}

TEST_CASE("net message loan: a send that cannot go leaves the loan with the caller", "[net]") {
    Connected c;
    for (unsigned i = 0; i < k_capacity; ++i) { // every credit spent, nothing received
        auto loan = c.sender->loan(64);
        REQUIRE(loan);
        fill(loan->bytes(), i);
        REQUIRE(c.sender->send(std::move(*loan), k_bound) == Status::ok);
    }
    auto kept = c.sender->loan(100);
    REQUIRE(kept);
    fill(kept->bytes(), 7);
    CHECK(c.sender->send(std::move(*kept), ferry::no_wait) == Status::full);
    CHECK(c.sender->send(std::move(*kept), 20ms) == Status::timed_out);
    REQUIRE(*kept); // still the caller's, its bytes as written
    CHECK(filled(kept->bytes(), 7));
    for (unsigned i = 0; i < k_capacity; ++i) {
        auto view = c.receiver->receive_view(k_bound);
        REQUIRE(view);
        CHECK(filled(view->bytes(), i));
    }
    REQUIRE(c.sender->send(std::move(*kept), k_bound) == Status::ok);
    auto view = c.receiver->receive_view(k_bound);
    REQUIRE(view);
    CHECK(view->bytes().size() == 100);
    CHECK(filled(view->bytes(), 7));
}
