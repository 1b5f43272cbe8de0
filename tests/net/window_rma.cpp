// One-sided RMA for windows (NodeOptions::one_sided_rma; docs/security.md, One-sided RMA): a
// RemoteWindow writes by ucp_put_nbx only when both nodes enabled it and the owner gave its key,
// and falls back to checked put messages otherwise; the key travels in the handshake's Info only
// to a side that proved the secret, and the Info's keys are bounded when decoded. The window
// tests of window.cpp run on the one-sided path too (meson: net/window-rma-path).
#include "raw_peer.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <ferry/net/window.hpp>
#include <memory>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <vector>

using ferry::Status;
using namespace ferry;

namespace {

constexpr auto k_limit = std::chrono::seconds(10);
namespace hs = net::detail::handshake;
namespace bs = net::detail::bootstrap;

std::unique_ptr<net::Node> start(const std::string& listen, bool one_sided) {
    net::NodeOptions o;
    o.listen = listen;
    o.secret = net::Secret::from_environment().value();
    o.one_sided_rma = one_sided;
    auto n = net::Node::start(std::move(o));
    REQUIRE(n.has_value());
    return std::move(*n);
}

// An owner that exposes 4 KiB and a writer connected to it, each with its own choice.
struct Pair {
    std::vector<std::byte> memory = std::vector<std::byte>(4096);
    std::unique_ptr<net::ExposedWindow> exposed;
    std::unique_ptr<net::Node> owner, writer;
    std::unique_ptr<net::RemoteWindow> remote;

    Pair(bool owner_one_sided, bool writer_one_sided) {
        owner = start("127.0.0.1:0", owner_one_sided);
        auto e = net::ExposedWindow::expose(*owner, memory);
        REQUIRE(e.has_value());
        exposed = std::move(*e);
        writer = start("", writer_one_sided);
        const auto peer = writer->connect(owner->address(), k_limit);
        REQUIRE(peer.has_value());
        auto r = net::RemoteWindow::open(*writer, *peer, exposed->region());
        REQUIRE(r.has_value());
        remote = std::move(*r);
    }
    [[nodiscard]] std::int32_t flag(std::size_t offset) {
        return std::atomic_ref(*reinterpret_cast<std::int32_t*>(memory.data() + offset))
            .load(std::memory_order_acquire);
    }
    // A payload, its flag and a ring through the window; then, after a flush, whether both are
    // in the owner's memory and nothing else changed.
    bool round_trip() {
        const afd::Window w = remote->window();
        const std::uint64_t base = exposed->owner_base();
        const std::vector<std::byte> payload(1000, std::byte{0xA7});
        if (w.write(base + 1024, payload) != Status::ok || w.publish(base + 64, 5) != Status::ok ||
            w.ring() != Status::ok || w.flush(k_limit) != Status::ok) {
            return false;
        }
        const auto rest = [&](std::size_t from, std::size_t to) {
            return std::all_of(memory.begin() + static_cast<std::ptrdiff_t>(from),
                               memory.begin() + static_cast<std::ptrdiff_t>(to),
                               [](std::byte b) { return b == std::byte{0}; });
        };
        return flag(64) == 5 && rest(0, 64) && rest(68, 1024) && rest(2024, memory.size()) &&
               std::all_of(memory.begin() + 1024, memory.begin() + 2024,
                           [](std::byte b) { return b == std::byte{0xA7}; });
    }
};

} // namespace

TEST_CASE("net/window-rma: with both nodes one-sided the window writes by RMA, bounds kept",
          "[net][window]") {
    Pair pair(true, true);
    CHECK(pair.remote->one_sided());
    CHECK(pair.round_trip());
    // The writer's own bounds still hold: nothing outside the window is sent.
    const afd::Window w = pair.remote->window();
    const std::array<std::byte, 16> bytes{};
    CHECK(w.write(pair.exposed->owner_base() + 4096 - 15, bytes) == Status::invalid_param);
    CHECK(w.write(pair.exposed->owner_base() - 16, bytes) == Status::invalid_param);
    CHECK(pair.owner->refusals() == 0);
}

TEST_CASE("net/window-rma: when either node is not one-sided, checked puts carry the bytes",
          "[net][window]") {
    const bool owner_one_sided = GENERATE(true, false);
    Pair pair(owner_one_sided, !owner_one_sided);
    CHECK_FALSE(pair.remote->one_sided());
    CHECK(pair.round_trip());
    CHECK(pair.owner->refusals() == 0);
}

TEST_CASE("net/window-rma: a listener gives its key only to a client that proved the secret",
          "[net][window]") {
    std::vector<std::byte> memory(4096);
    auto node = start("127.0.0.1:0", true);
    REQUIRE(node->expose(memory).has_value());
    SECTION("a wrong proof gets the Challenge, then the connection closes: no Info, no key") {
        const auto deadline = std::chrono::steady_clock::now() + k_limit;
        const auto fd =
            bs::connect_to(*net::detail::parse_address(node->address()).address, deadline);
        REQUIRE(fd.valid());
        hs::Identity id{};
        hs::ClientSession session(net::Secret::from_bytes("not the job's secret").value(), id);
        REQUIRE(bs::write_all(fd.get(), session.hello(), deadline));
        REQUIRE(bs::read_message(fd.get(), sizeof(hs::Challenge), deadline).has_value());
        hs::Info mine;
        mine.token = 1;
        mine.worker_address.assign(8, std::byte{1});
        REQUIRE(bs::write_all(fd.get(), hs::encode_proof(hs::Mac{}, mine), deadline));
        std::size_t after = 0;
        std::byte sink[256];
        ssize_t got = 0;
        while (bs::wait_for(fd.get(), POLLIN, deadline) &&
               (got = ::recv(fd.get(), sink, sizeof sink, 0)) > 0) {
            after += static_cast<std::size_t>(got);
        }
        CHECK(got == 0); // closed, not timed out
        CHECK(after == 0);
        CHECK(node->last_refusal() == "wrong secret");
    }
    SECTION("the right secret gets the region's packed key in the Info") {
        net_test::RawPeer raw;
        REQUIRE(raw.ok());
        REQUIRE(raw.handshake(node->address(), std::string(std::getenv("FERRY_NET_SECRET"))));
        REQUIRE(raw.server().regions.size() == 1);
        REQUIRE(raw.server().keys.size() == 1);
        CHECK(raw.server().regions[0].key_length == raw.server().keys[0].size());
        CHECK_FALSE(raw.server().keys[0].empty());
    }
}

TEST_CASE("net/window-rma: a node without one_sided_rma gives no key", "[net][window]") {
    std::vector<std::byte> memory(4096);
    auto node = start("127.0.0.1:0", false);
    REQUIRE(node->expose(memory).has_value());
    net_test::RawPeer raw;
    REQUIRE(raw.ok());
    REQUIRE(raw.handshake(node->address(), std::string(std::getenv("FERRY_NET_SECRET"))));
    REQUIRE(raw.server().keys.size() == 1);
    CHECK(raw.server().keys[0].empty());
    CHECK(raw.server().regions[0].key_length == 0);
}

TEST_CASE("net/window-rma: the Info's keys are bounded and must fill it exactly", "[net][window]") {
    hs::Info info;
    info.token = 9;
    info.worker_address.assign(16, std::byte{2});
    info.regions.push_back({0, 0, 0x1000, 64});
    info.regions.push_back({1, 0, 0x2000, 64});
    info.keys = {std::vector<std::byte>(40, std::byte{3}), {}};
    std::vector<std::byte> body;
    hs::encode_info(body, info);
    const auto back = hs::decode_info(body);
    REQUIRE(back.has_value());
    CHECK(back->keys == info.keys);
    CHECK(back->regions[0].key_length == 40);

    auto shorter = body;
    shorter.pop_back(); // a key's last byte missing
    CHECK_FALSE(hs::decode_info(shorter).has_value());
    auto longer = body;
    longer.push_back(std::byte{0}); // a byte after the last key
    CHECK_FALSE(hs::decode_info(longer).has_value());

    // A key over k_max_key is refused even when its bytes are all there.
    info.keys = {std::vector<std::byte>(hs::k_max_key + 1, std::byte{3}), {}};
    body.clear();
    hs::encode_info(body, info);
    CHECK_FALSE(hs::decode_info(body).has_value());
    // So are keys over k_max_keys together, each within k_max_key.
    info.regions.clear();
    info.keys.clear();
    for (std::uint32_t i = 0; i * hs::k_max_key <= hs::k_max_keys; ++i) {
        info.regions.push_back({i, 0, 0x1000 + i * 0x1000, 64});
        info.keys.emplace_back(hs::k_max_key, std::byte{4});
    }
    body.clear();
    hs::encode_info(body, info);
    CHECK_FALSE(hs::decode_info(body).has_value());
}

TEST_CASE("net/window-rma: a connecting one-sided node tells a listener without the secret nothing",
          "[net][window]") {
    std::vector<std::byte> memory(256);
    auto node = start("", true);
    REQUIRE(node->expose(memory).has_value());
    net_test::Helper fake({"raw", "fake-listener"});
    const auto line = fake.read_line();
    REQUIRE(line.rfind("address ", 0) == 0);
    CHECK(node->connect(line.substr(8), std::chrono::seconds(5)).status() == Status::peer_lost);
    // Only the Hello (a length and 56 bytes): no proof, no Info, no key.
    CHECK(fake.read_line() == "got 60 secret=no");
}

// The flag's put carries the ring on the checked path: a publish alone rings the owner's
// doorbell once, the ring() after it sends nothing, and a ring() after a plain write still rings.
// (Rings counted by the doorbell; a flush orders everything before it.)
TEST_CASE("net/window-rma: a checked publish rings with its flag, in one message",
          "[net][window]") {
    Pair pair(false, false);
    const afd::Window w = pair.remote->window();
    const afd::Doorbell bell = pair.exposed->doorbell();
    const std::uint64_t base = pair.exposed->owner_base();
    const std::uint32_t before = bell.snapshot();
    REQUIRE(w.publish(base + 64, 3) == Status::ok);
    REQUIRE(w.flush(k_limit) == Status::ok);
    CHECK(pair.flag(64) == 3);
    CHECK(bell.snapshot() == before + 1); // the publish rang
    REQUIRE(w.ring() == Status::ok);
    REQUIRE(w.flush(k_limit) == Status::ok);
    CHECK(bell.snapshot() == before + 1); // nothing more to ring
    const std::array<std::byte, 8> bytes{};
    REQUIRE(w.write(base + 128, bytes) == Status::ok);
    REQUIRE(w.ring() == Status::ok);
    REQUIRE(w.flush(k_limit) == Status::ok);
    CHECK(bell.snapshot() == before + 2);
    CHECK(pair.owner->refusals() == 0);
}
