// The receiving end's credit ledger without a Node (detail/channel_ledger.hpp): when an idle
// receive returns what is owed (docs/multi-node-channels.md, Credits).
#include <catch2/catch.hpp>
#include <cstddef>
#include <ferry/net/detail/channel_ledger.hpp>
#include <string>
#include <vector>

namespace nd = ferry::net::detail;

namespace {

constexpr std::size_t k_capacity = 16; // a batch is a quarter: 4 consumed messages
constexpr std::size_t k_bytes = 64;
constexpr std::uint32_t k_peer = 1;
constexpr std::uint32_t k_sender = 5;
const std::string k_name = "ledger.test";

// The credits the receiver's control messages grant.
std::uint64_t granted(const std::vector<nd::Outgoing>& out) {
    std::uint64_t n = 0;
    for (const auto& o : out) {
        if (o.wire.kind == static_cast<std::uint16_t>(nd::WireKind::credit)) {
            n += o.wire.a;
        }
    }
    return n;
}

struct OneSender {
    nd::ReceiverLedger ledger{k_name, nd::Flavor::message, k_bytes, k_capacity};
    std::vector<std::byte> payload = std::vector<std::byte>(k_bytes, std::byte{0x3c});

    OneSender() {
        ledger.set_id(9);
        std::vector<nd::Outgoing> out;
        const auto open = nd::make_wire(nd::WireKind::open, nd::fnv1a32(k_name), k_sender, k_bytes,
                                        static_cast<std::uint16_t>(nd::Flavor::message));
        REQUIRE(ledger.open(k_peer, open, false, std::as_bytes(std::span(k_name)), out) == nullptr);
        REQUIRE(out.size() == 1);
        REQUIRE(out[0].wire.a == k_capacity); // the first sender gets every credit
    }

    // The sender's DATA arrives and is received: its credit is now owed.
    void arrive_and_consume(std::vector<nd::Outgoing>& out) {
        nd::Arrival arrival;
        const auto data = nd::make_wire(nd::WireKind::data, 9, k_sender, 1);
        REQUIRE(ledger.data(k_peer, data, k_bytes, false, payload, arrival) == nullptr);
        nd::Taken t;
        REQUIRE(ledger.take(t, out) == ferry::Status::ok);
        ledger.give_back(t, out);
    }
    void arrive(int n) {
        for (int i = 0; i < n; ++i) {
            nd::Arrival arrival;
            const auto data = nd::make_wire(nd::WireKind::data, 9, k_sender, 1);
            REQUIRE(ledger.data(k_peer, data, k_bytes, false, payload, arrival) == nullptr);
        }
    }
    void consume(int n, std::vector<nd::Outgoing>& out) {
        for (int i = 0; i < n; ++i) {
            nd::Taken t;
            REQUIRE(ledger.take(t, out) == ferry::Status::ok);
            ledger.give_back(t, out);
        }
    }
};

} // namespace

TEST_CASE("net channel ledger: an idle receive keeps what is owed while the sender holds more",
          "[net]") {
    // A receiver faster than its sender finds nothing after every message; a CREDIT each time
    // would cost both nodes a send and a wake-up per message.
    OneSender r;
    std::vector<nd::Outgoing> out;
    for (int i = 0; i < 3; ++i) {
        r.arrive_and_consume(out);
        r.ledger.idle(out);
    }
    CHECK(granted(out) == 0);
    // The fourth consumed message completes a batch: the three owed and it go back together.
    r.arrive_and_consume(out);
    CHECK(granted(out) == 4);
    CHECK(r.ledger.credits_accounted() == k_capacity);
}

TEST_CASE("net channel ledger: an idle receive returns what is owed to a sender running low",
          "[net]") {
    OneSender r;
    std::vector<nd::Outgoing> out;
    r.arrive(static_cast<int>(k_capacity)); // every credit spent
    r.consume(3, out);                      // 3 owed, less than a batch; the sender holds 0
    CHECK(granted(out) == 0);
    r.ledger.idle(out);
    CHECK(granted(out) == 3);
    CHECK(r.ledger.credits_accounted() == k_capacity);
}
