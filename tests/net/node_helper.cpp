// The other process of tests/net/node.cpp, started with fork + exec. It runs one ferry::net::Node
// that exposes a k_region_bytes region with a doorbell and serves net_test::k_service, and
// answers commands on stdin with one line each on stdout.
//
//   node_helper connect [--secret S]  reads the address to connect to from its first stdin line,
//                                     prints "connected <peer>" or "refused <status>"
//   node_helper listen                prints "address <host:port>"
//   node_helper raw SCENARIO          speaks the handshake and UCX itself (raw_scenarios.hpp);
//                                     prints the outcome
// Options: --heartbeat MS --peer-timeout MS.
// Commands: accepted | refusals | peers | regions | send SERVICE BYTES SEED [HEADER] | zero |
//           wait-ring OFFSET BYTES SEED FLAG_OFFSET | wait-lost | exit
// Service messages that arrive print "got <bytes> ok" (the pattern of the seed in the header's
// first byte) or "got <bytes> bad".

#include "raw_scenarios.hpp"
#include "support.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ferry/net.hpp>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

namespace {

using namespace std::chrono_literals;
using ferry::Status;
namespace net = ferry::net;

std::mutex print_mu;
void say(const std::string& line) {
    std::lock_guard lock(print_mu);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

struct State {
    std::unique_ptr<net::Node> node;
    alignas(64) std::byte region[net_test::k_region_bytes] = {};
    ferry::afd::DoorbellWord word;
    std::vector<std::byte> incoming;
    std::promise<void> lost;
    std::atomic<bool> lost_once{false};
    net::PeerId first_peer() const {
        const auto peers = node->peers();
        return peers.empty() ? 0 : peers.front();
    }
};

net::Verdict on_message(State& st, net::Delivery& d) {
    const unsigned seed = d.header().empty() ? 0 : static_cast<unsigned>(d.header()[0]);
    const auto n = d.length();
    if (!d.is_rendezvous()) {
        say("got " + std::to_string(n) +
            (net_test::is_patterned(d.eager(), seed) ? " ok" : " bad"));
        return nullptr;
    }
    st.incoming.assign(n, std::byte{0});
    const auto s = d.receive_into(st.incoming, [&st, seed, n](Status done) {
        const bool ok = done == Status::ok && net_test::is_patterned(st.incoming, seed);
        say("got " + std::to_string(n) + (ok ? " ok" : " bad"));
    });
    return s == Status::ok ? nullptr : "cannot receive";
}

void wait_ring(State& st, std::istringstream& args) {
    std::size_t offset = 0;
    std::size_t bytes = 0;
    unsigned seed = 0;
    std::size_t flag_at = 0;
    args >> offset >> bytes >> seed >> flag_at;
    const ferry::afd::Doorbell bell(&st.word, ferry::detail::FutexScope::process);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    bell.arm();
    auto seen = bell.snapshot();
    while (seen == 0 && std::chrono::steady_clock::now() < deadline) {
        bell.park(seen, deadline);
        seen = bell.snapshot();
    }
    bell.disarm();
    const auto flag = std::atomic_ref(reinterpret_cast<std::uint8_t&>(st.region[flag_at])).load();
    const bool data = net_test::is_patterned(std::span(st.region).subspan(offset, bytes), seed);
    say("rang " + std::to_string(seen) + " data=" + (data ? "ok" : "bad") +
        " flag=" + std::to_string(flag));
}

void command(State& st, const std::string& line) {
    std::istringstream args(line);
    std::string verb;
    args >> verb;
    if (verb == "accepted") {
        const auto s = st.node->await_peers(1, 10s);
        say("accepted " + std::string(ferry::name_of(s)));
    } else if (verb == "refusals") {
        say("refusals " + std::to_string(st.node->refusals()) + " " + st.node->last_refusal());
    } else if (verb == "peers") {
        say("peers " + std::to_string(st.node->peers().size()));
    } else if (verb == "regions") {
        say("regions " + std::to_string(st.node->regions(st.first_peer()).size()));
    } else if (verb == "send") {
        std::uint32_t service = 0;
        std::size_t bytes = 0;
        unsigned seed = 0;
        int header = -1;
        args >> service >> bytes >> seed >> header;
        const auto payload = net_test::patterned(bytes, seed);
        const std::byte h[1] = {static_cast<std::byte>(header < 0 ? seed : unsigned(header))};
        const auto s = st.node->send(st.first_peer(), service, h, payload, 10s);
        say("sent " + std::string(ferry::name_of(s)));
    } else if (verb == "zero") {
        // Puts land on the progress thread, under the worker's lock: taking it (progress())
        // before the read orders what landed before it, and after the read orders the read
        // before what lands later. A real reader waits for a doorbell instead.
        st.node->progress();
        bool zero = true;
        for (const auto b : st.region) {
            zero = zero && b == std::byte{0};
        }
        st.node->progress();
        say(zero ? "zero yes" : "zero no");
    } else if (verb == "wait-ring") {
        wait_ring(st, args);
    } else if (verb == "wait-lost") {
        const bool lost = st.lost.get_future().wait_for(10s) == std::future_status::ready;
        say(lost ? "lost" : "not lost");
    } else {
        say("unknown command " + verb);
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        return 3;
    }
    const std::string mode = argv[1];
    if (mode == "raw" && argc == 3) {
        return net_test::run_raw(argv[2]);
    }
    auto secret = net::Secret::from_environment();
    net::NodeOptions options;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--secret") {
            secret = net::Secret::from_bytes(argv[i + 1]);
        } else if (flag == "--heartbeat") {
            options.heartbeat = std::chrono::milliseconds(std::atoi(argv[i + 1]));
        } else if (flag == "--peer-timeout") {
            options.peer_timeout = std::chrono::milliseconds(std::atoi(argv[i + 1]));
        }
    }
    if (!secret) {
        return 3;
    }
    options.secret = *secret;
    options.listen = mode == "listen" ? "127.0.0.1:0" : "";
    auto st = std::make_unique<State>();
    auto node = net::Node::start(options);
    if (!node) {
        std::fprintf(stderr, "helper: cannot start: %s\n", ferry::name_of(node.status()));
        return 2;
    }
    st->node = std::move(*node);
    const ferry::afd::Doorbell bell(&st->word, ferry::detail::FutexScope::process);
    if (!st->node->expose(st->region, bell)) {
        return 2;
    }
    st->node->serve(net_test::k_service, [&st](net::Delivery& d) { return on_message(*st, d); });
    st->node->on_peer_lost([&st](net::PeerId) {
        if (!st->lost_once.exchange(true)) {
            st->lost.set_value();
        }
    });
    std::string line;
    if (mode == "listen") {
        say("address " + st->node->address());
    } else {
        std::getline(std::cin, line);
        const auto peer = st->node->connect(line, 10s);
        say(peer ? "connected " + std::to_string(*peer)
                 : "refused " + std::string(ferry::name_of(peer.status())));
    }
    while (std::getline(std::cin, line) && line != "exit") {
        command(*st, line);
    }
    st->node.reset(); // first: its thread runs the handlers that use the rest of `st`
    return 0;
}
