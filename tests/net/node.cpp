// ferry::net::Node between this process and a helper process (node_helper.cpp) over UCX's TCP
// transport on loopback: handshake, services, refusals, liveness, one-sided puts.

#include "support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <ferry/net.hpp>
#include <future>
#include <string>

namespace {

using namespace std::chrono_literals;
using ferry::Status;
namespace net = ferry::net;
using net_test::Helper;
using clock_type = std::chrono::steady_clock;

net::NodeOptions options(std::string listen, std::chrono::milliseconds heartbeat = 100ms,
                         std::chrono::milliseconds peer_timeout = 2000ms) {
    net::NodeOptions o;
    o.listen = std::move(listen);
    o.secret = net::Secret::from_environment().value();
    o.heartbeat = heartbeat;
    o.peer_timeout = peer_timeout;
    return o;
}

std::unique_ptr<net::Node> start(net::NodeOptions o) {
    auto node = net::Node::start(std::move(o));
    REQUIRE(node.has_value());
    return std::move(*node);
}

// A listening node and a helper connected to it: the helper is peer `peer`.
struct Connected {
    std::unique_ptr<net::Node> node;
    Helper helper;
    net::PeerId peer = 0;

    explicit Connected(net::NodeOptions o, std::vector<std::string> args = {"connect"})
        : node(start(std::move(o))), helper(std::move(args)) {
        helper.write_line(node->address());
        REQUIRE(helper.read_line().rfind("connected ", 0) == 0);
        REQUIRE(node->await_peers(1, 10s) == Status::ok);
        peer = node->peers().at(0);
    }
};

} // namespace

TEST_CASE("net/node: start refuses an empty secret and an unparsable address") {
    net::NodeOptions o = options("127.0.0.1:0");
    o.secret = {};
    CHECK(net::Node::start(o).status() == Status::invalid_param);
    for (const char* bad : {"127.0.0.1", "localhost:1", "127.0.0.1:70000", "[::1:5", "1.2.3.4:x"}) {
        CAPTURE(bad);
        CHECK(net::Node::start(options(bad)).status() == Status::invalid_param);
    }
    auto node = start(options("127.0.0.1:0"));
    CHECK(node->address().rfind("127.0.0.1:", 0) == 0);
    CHECK(node->address() != "127.0.0.1:0");
    CHECK(node->connect("nonsense", 1s).status() == Status::invalid_param);
}

TEST_CASE("net/node: handshake both ways; peers() lists the peer, regions() its region") {
    SECTION("the helper connects") {
        Connected c(options("127.0.0.1:0"));
        CHECK(c.node->peers() == std::vector<net::PeerId>{c.peer});
        CHECK(c.node->alive(c.peer));
        const auto regions = c.node->regions(c.peer);
        REQUIRE(regions.size() == 1);
        CHECK(regions[0].size == net_test::k_region_bytes);
        CHECK(c.helper.ask("peers") == "peers 1");
        CHECK(c.helper.ask("regions") == "regions 0"); // this node exposed nothing
    }
    SECTION("this node connects to the helper") {
        Helper helper({"listen"});
        const auto line = helper.read_line();
        REQUIRE(line.rfind("address ", 0) == 0);
        auto node = start(options(""));
        const auto peer = node->connect(line.substr(8), 10s);
        REQUIRE(peer.has_value());
        CHECK(node->peers() == std::vector<net::PeerId>{*peer});
        CHECK(node->regions(*peer).size() == 1);
        CHECK(helper.ask("accepted") == "accepted ok");
        CHECK(node->refusals() == 0);
    }
}

TEST_CASE("net/node: service messages arrive byte-exact, eager and rendezvous, both ways") {
    auto o = options("127.0.0.1:0");
    std::vector<std::byte> received;
    std::promise<std::pair<std::size_t, bool>> got;
    auto node_options = o;
    Connected c(node_options);
    std::atomic<int> deliveries{0};
    c.node->serve(net_test::k_service, [&](net::Delivery& d) -> net::Verdict {
        ++deliveries;
        const unsigned seed = static_cast<unsigned>(d.header()[0]);
        if (!d.is_rendezvous()) {
            got.set_value({d.length(), net_test::is_patterned(d.eager(), seed)});
            return nullptr;
        }
        received.assign(d.length(), std::byte{0});
        const auto s = d.receive_into(received, [&, seed](Status done) {
            got.set_value(
                {received.size(), done == Status::ok && net_test::is_patterned(received, seed)});
        });
        return s == Status::ok ? nullptr : "cannot receive";
    });
    const std::size_t bytes = GENERATE(std::size_t{64}, std::size_t{1} << 20);
    CAPTURE(bytes);
    auto future = got.get_future();
    CHECK(c.helper.ask("send 7 " + std::to_string(bytes) + " 5") == "sent ok");
    REQUIRE(future.wait_for(10s) == std::future_status::ready);
    CHECK(future.get() == std::pair{bytes, true});
    CHECK(deliveries == 1);

    const auto payload = net_test::patterned(bytes, 9);
    const std::byte header[1] = {std::byte{9}};
    CHECK(c.node->send(c.peer, net_test::k_service, header, payload, 10s) == Status::ok);
    CHECK(c.helper.read_line() == "got " + std::to_string(bytes) + " ok");

    std::promise<Status> posted;
    REQUIRE(c.node->post(c.peer, net_test::k_service, header, payload,
                         [&](Status s) { posted.set_value(s); }) == Status::ok);
    CHECK(c.helper.read_line() == "got " + std::to_string(bytes) + " ok");
    auto posted_future = posted.get_future();
    REQUIRE(posted_future.wait_for(10s) == std::future_status::ready);
    CHECK(posted_future.get() == Status::ok);
    CHECK(c.node->refusals() == 0); // every message was told to its peer: the tokens matched
}
