// ferry::net::Node between this process and a helper process (node_helper.cpp) over UCX's TCP
// transport on loopback: handshake, services, refusals, liveness, one-sided puts.

#include "../compat/faults/alloc_hook.hpp"
#include "support.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <ferry/net.hpp>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <sched.h>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

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

// How many threads of this process run as SCHED_BATCH.
int batch_threads() {
    int count = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        const auto tid = static_cast<pid_t>(std::stol(task.path().filename().string()));
        count += ::sched_getscheduler(tid) == SCHED_BATCH ? 1 : 0;
    }
    return count;
}

} // namespace

TEST_CASE("net/node: progress_thread_batch puts the progress thread, and only it, on SCHED_BATCH") {
    const int before = batch_threads();
    {
        auto plain = start(options("127.0.0.1:0"));
        CHECK(batch_threads() == before); // off: the thread keeps the process's policy
    }
    net::NodeOptions o = options("127.0.0.1:0");
    o.progress_thread_batch = true;
    {
        auto node = start(o);
        CHECK(batch_threads() == before + 1);          // set before start() returned
        CHECK(::sched_getscheduler(0) != SCHED_BATCH); // not the caller's thread
    }
}

TEST_CASE("net/node: a post that no caller progresses completes within the progress thread's "
          "slice") {
    // The heartbeat far off: only the progress thread's slice brings it back to the worker.
    Connected c(options("127.0.0.1:0", 20s, 60s));
    const auto payload = net_test::patterned(std::size_t{64} << 10, 9); // a rendezvous
    const std::byte header[1] = {std::byte{9}};
    for (int round = 0; round < 8; ++round) {
        CAPTURE(round);
        // A caller progressed: the progress thread steps off the worker's fd and slices.
        c.node->progress();
        std::promise<Status> posted;
        REQUIRE(c.node->post(c.peer, net_test::k_service, header, payload,
                             [&](Status s) { posted.set_value(s); }) == Status::ok);
        // Nobody here progresses the worker again: the request is the progress thread's.
        auto done = posted.get_future();
        REQUIRE(done.wait_for(5s) == std::future_status::ready);
        CHECK(done.get() == Status::ok);
        CHECK(c.helper.read_line() == "got 65536 ok");
    }
    CHECK(c.helper.finish() == 0);
}

TEST_CASE("net/node: a post holding an owner delivers, then lets the owner go; a short post "
          "allocates nothing, a longer one twice (three times when the node copies it)") {
    Connected c(options("127.0.0.1:0"));
    const std::byte header[1] = {std::byte{9}};
    const std::size_t bytes = GENERATE(std::size_t{64}, std::size_t{64} << 10); // eager, rendezvous
    CAPTURE(bytes);
    auto owner = std::make_shared<const std::vector<std::byte>>(net_test::patterned(bytes, 9));
    const std::weak_ptr<const std::vector<std::byte>> watched = owner;
    const std::span<const std::byte> payload(*owner);
    REQUIRE(c.node->post_owned(c.peer, net_test::k_service, header, payload, std::move(owner)) ==
            Status::ok);
    CHECK(c.helper.read_line() == "got " + std::to_string(bytes) + " ok");
    // The peer has the bytes; the owner goes once this side's request completes.
    const auto deadline = clock_type::now() + 10s;
    while (!watched.expired() && clock_type::now() < deadline) {
        c.node->progress();
    }
    c.node->done_progressing();
    CHECK(watched.expired());

    // On the posting thread. A short message goes inside the call (UCX writes it to the socket
    // there and then): no request, no header buffer, nothing. One longer than a post sends at
    // once goes through a request (with its header, one buffer): two. Neither an owner handed
    // over nor a completion without captures costs an allocation.
    if (bytes == 64) {
        for (const std::size_t size : {std::size_t{64}, std::size_t{16} << 10}) {
            CAPTURE(size);
            auto small =
                std::make_shared<const std::vector<std::byte>>(net_test::patterned(size, 9));
            const std::span<const std::byte> small_payload(*small);
            const long expected = size == 64 ? 0 : 2;
            Status kept = Status::invalid_param;
            const long with_owner = ferry::test::alloc_hook::run_failing(0, [&] {
                kept =
                    c.node->post_owned(c.peer, net_test::k_service, header, small_payload, small);
            });
            CHECK(kept == Status::ok);
            CHECK(c.helper.read_line() == "got " + std::to_string(size) + " ok");
            Status posted = Status::invalid_param;
            const long with_done = ferry::test::alloc_hook::run_failing(0, [&] {
                posted =
                    c.node->post(c.peer, net_test::k_service, header, small_payload, [](Status) {});
            });
            CHECK(posted == Status::ok);
            CHECK(c.helper.read_line() == "got " + std::to_string(size) + " ok");
            // Copied by the node: the caller's bytes are its own again when post_copied
            // returns (overwritten here before the helper checks them); a longer one is
            // copied into a buffer of the request's (one allocation more).
            auto scratch = net_test::patterned(size, 9);
            Status copied = Status::invalid_param;
            const long with_copy = ferry::test::alloc_hook::run_failing(0, [&] {
                copied = c.node->post_copied(c.peer, net_test::k_service, header, scratch);
            });
            std::fill(scratch.begin(), scratch.end(), std::byte{0});
            CHECK(copied == Status::ok);
            CHECK(c.helper.read_line() == "got " + std::to_string(size) + " ok");
            CHECK(with_owner == expected);
            CHECK(with_done == expected);
            CHECK(with_copy == (size == 64 ? 0 : 3));
            const auto until = clock_type::now() + 10s; // the longer posts complete
            while (small.use_count() > 1 && clock_type::now() < until) {
                c.node->progress();
            }
            c.node->done_progressing();
        }
    }
    CHECK(c.helper.finish() == 0);
}

TEST_CASE("net/node: start refuses an empty secret and an unparsable address") {
    net::NodeOptions o = options("127.0.0.1:0");
    o.secret = {};
    const auto refused = net::Node::start(o);
    CHECK(refused.status() == Status::invalid_param);
    CHECK_THAT(refused.error().message, Catch::Contains("empty secret"));
    for (const char* bad : {"127.0.0.1", "localhost:1", "127.0.0.1:70000", "[::1:5", "1.2.3.4:x"}) {
        CAPTURE(bad);
        CHECK(net::Node::start(options(bad)).status() == Status::invalid_param);
    }
    auto node = start(options("127.0.0.1:0"));
    CHECK(node->address().rfind("127.0.0.1:", 0) == 0);
    CHECK(node->address() != "127.0.0.1:0");
    const auto nonsense = node->connect("nonsense", 1s);
    CHECK(nonsense.status() == Status::invalid_param);
    CHECK_THAT(nonsense.error().message, Catch::Contains("connect to nonsense"));
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
        CHECK(helper.finish() == 0); // its node closed cleanly (and leak-free under ASan)
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
    CHECK(c.helper.finish() == 0);
}

TEST_CASE("net/node: a wrong secret is refused before anything is revealed or delivered") {
    auto o = options("127.0.0.1:0");
    alignas(64) std::byte memory[256] = {};
    auto node = start(o);
    REQUIRE(node->expose(memory).has_value());
    std::atomic<int> deliveries{0};
    node->serve(net_test::k_service, [&](net::Delivery&) -> net::Verdict {
        ++deliveries;
        return nullptr;
    });
    Helper helper({"connect", "--secret", "not-the-secret"});
    helper.write_line(node->address());
    CHECK(helper.read_line() == "refused peer process lost");
    CHECK(helper.ask("regions") == "regions 0"); // the helper got no region table
    // The helper saw this node's proof fail and left before proving anything itself.
    CHECK(helper.ask("refusals") == "refusals 1 the listener did not prove the secret (" +
                                        node->address() + ")");
    // The node learns of the closed connection on its own progress thread, maybe after the helper
    // has answered: wait (bounded) for the count to move.
    const auto give_up = clock_type::now() + 10s;
    while (node->refusals() == 0 && clock_type::now() < give_up) {
        std::this_thread::sleep_for(1ms);
    }
    CHECK(node->refusals() == 1);
    CHECK(node->last_refusal() == "connection closed during the handshake");
    CHECK(node->peers().empty());
    CHECK(node->losses() == 0); // it never was a peer
    CHECK(deliveries == 0);
}

TEST_CASE("net/node: a refused message disconnects its peer; later calls answer peer_lost") {
    Connected c(options("127.0.0.1:0"));
    std::atomic<int> deliveries{0};
    c.node->serve(net_test::k_service, [&](net::Delivery& d) -> net::Verdict {
        ++deliveries;
        return d.header()[0] == std::byte{0xff} ? "forged header" : nullptr;
    });
    std::promise<net::PeerId> lost;
    c.node->on_peer_lost([&](net::PeerId p) { lost.set_value(p); });
    const std::byte header[1] = {std::byte{1}};
    SECTION("a handler's verdict") {
        CHECK(c.helper.ask("send 7 64 1 255") == "sent ok");
        CHECK(c.helper.ask("wait-lost") == "lost");
        CHECK(c.node->last_refusal() == "service 7: forged header");
        CHECK(deliveries == 1);
    }
    SECTION("a service nobody serves") {
        CHECK(c.helper.ask("send 99 64 1") == "sent ok");
        CHECK(c.helper.ask("wait-lost") == "lost");
        CHECK(c.node->last_refusal() == "message for service 99, which nobody serves");
        CHECK(deliveries == 0);
    }
    auto future = lost.get_future();
    REQUIRE(future.wait_for(10s) == std::future_status::ready);
    CHECK(future.get() == c.peer);
    CHECK(c.node->refusals() == 1);
    CHECK(c.node->losses() == 1);
    CHECK_FALSE(c.node->alive(c.peer));
    CHECK(c.node->peers().empty());
    CHECK(c.node->send(c.peer, net_test::k_service, header, {}, 1s) == Status::peer_lost);
    CHECK(c.node->post(c.peer, net_test::k_service, header, {}, nullptr) == Status::peer_lost);
    CHECK(c.node->put(c.peer, 0, 0, header) == Status::peer_lost);
    CHECK(c.node->flush(c.peer, 1s) == Status::peer_lost);
    CHECK(c.node->ring(c.peer, 0) == Status::peer_lost);
    CHECK(c.node->fence(c.peer) == Status::peer_lost);
    CHECK(c.node->send(c.peer + 100, net_test::k_service, header, {}, 1s) == Status::invalid_param);
}

namespace {

// Waits for the node's one on_peer_lost call; the time from `since` to it.
std::chrono::milliseconds time_to_loss(net::Node& node, net::PeerId peer, Helper& helper, int sig,
                                       std::chrono::milliseconds limit) {
    std::promise<clock_type::time_point> lost;
    std::atomic<int> calls{0};
    node.on_peer_lost([&](net::PeerId p) {
        if (p == peer && calls.fetch_add(1) == 0) {
            lost.set_value(clock_type::now());
        }
    });
    const auto since = clock_type::now();
    helper.signal(sig);
    auto future = lost.get_future();
    REQUIRE(future.wait_for(limit) == std::future_status::ready);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(future.get() - since);
    CHECK_FALSE(node.alive(peer));
    // A second report could come from the other detector (UCX's error after silence, or silence
    // after UCX's error): wait until both would have fired, watching for one.
    const auto quiet = clock_type::now() + limit;
    while (calls == 1 && clock_type::now() < quiet) {
        std::this_thread::sleep_for(10ms); // polls the observable count
    }
    CHECK(node.losses() == 1);
    CHECK(calls == 1);
    return ms;
}

} // namespace

TEST_CASE("net/node: a killed peer is lost at once (UCX's error), on_peer_lost runs once") {
    Connected c(options("127.0.0.1:0"));
    const auto ms = time_to_loss(*c.node, c.peer, c.helper, SIGKILL, 2500ms);
    WARN("kill -9 -> lost in " << ms.count() << " ms");
    CHECK(ms < 1000ms);
}

TEST_CASE("net/node: a stopped peer is lost after peer_timeout of silence, not before") {
    constexpr auto heartbeat = 50ms;
    constexpr auto peer_timeout = 500ms;
    Connected c(options("127.0.0.1:0", heartbeat, peer_timeout),
                {"connect", "--heartbeat", "50", "--peer-timeout", "500"});
    const auto ms = time_to_loss(*c.node, c.peer, c.helper, SIGSTOP, 1500ms);
    WARN("SIGSTOP -> lost in " << ms.count() << " ms");
    // Its last heartbeat may precede the stop by up to one period; the check runs once a
    // period. Measured on an idle machine: 511-551 ms; the upper bound leaves room for a
    // loaded one (a 2-core machine shared by builds reached 702 ms).
    CHECK(ms >= peer_timeout - heartbeat);
    CHECK(ms <= peer_timeout + heartbeat + 450ms);
    // The helper stays stopped and is killed so: resumed, it would answer UCX wire-up messages
    // for an endpoint this node already closed, which UCX 1.13 can trip over while destroying
    // the worker (docs/security.md, Known limits).
}

TEST_CASE("net/node: a send a stopped peer never takes times out, not earlier") {
    Connected c(options("127.0.0.1:0", 100ms, 10000ms));
    c.helper.signal(SIGSTOP);
    const auto payload = net_test::patterned(std::size_t{8} << 20, 1);
    const std::byte header[1] = {std::byte{1}};
    const auto since = clock_type::now();
    CHECK(c.node->send(c.peer, net_test::k_service, header, payload, 300ms) == Status::timed_out);
    CHECK(clock_type::now() - since >= 300ms);
    // UCX 1.13 cannot cancel a rendezvous send: the node closed the connection so that the
    // payload is not read after send() returned (docs/multi-node.md, Failure behaviour).
    CHECK_FALSE(c.node->alive(c.peer));
    // Killed while stopped, as above.
}

TEST_CASE("net/node: a put outside the peer's region is refused and writes nothing") {
    Connected c(options("127.0.0.1:0"));
    const auto region = c.node->regions(c.peer).at(0);
    const auto bytes = net_test::patterned(64, 1);
    const auto end = region.base + region.size;
    CHECK(c.node->put(c.peer, 0, end - 63, bytes) == Status::invalid_param);
    CHECK(c.node->put(c.peer, 0, region.base - 1, bytes) == Status::invalid_param);
    CHECK(c.node->put(c.peer, 0, end, std::span(bytes).first(1)) == Status::invalid_param);
    CHECK(c.node->put(c.peer, 0, ~std::uint64_t{0} - 8, bytes) == Status::invalid_param);
    CHECK(c.node->put(c.peer, 1, region.base, bytes) == Status::invalid_param);
    CHECK(c.node->ring(c.peer, 1) == Status::invalid_param);
    CHECK(c.node->flush(c.peer, 5s) == Status::ok);
    CHECK(c.helper.ask("zero") == "zero yes");
    CHECK(c.node->put(c.peer, 0, end - 64, bytes) == Status::ok); // the last 64 bytes fit
    CHECK(c.node->flush(c.peer, 5s) == Status::ok);
    CHECK(c.helper.ask("zero") == "zero no");
}

TEST_CASE("net/node: put, fence, put a flag, ring: the peer sees the data, then the flag") {
    Connected c(options("127.0.0.1:0"));
    const auto region = c.node->regions(c.peer).at(0);
    const auto data = net_test::patterned(2048, 3);
    const std::byte flag[1] = {std::byte{1}};
    c.helper.write_line("wait-ring 0 2048 3 3000");
    CHECK(c.node->put(c.peer, 0, region.base, data) == Status::ok);
    CHECK(c.node->fence(c.peer) == Status::ok);
    CHECK(c.node->put(c.peer, 0, region.base + 3000, flag) == Status::ok);
    CHECK(c.node->ring(c.peer, 0) == Status::ok);
    CHECK(c.helper.read_line() == "rang 1 data=ok flag=1");
    CHECK(c.node->refusals() == 0);
}

TEST_CASE("net/node: expose after a connection is refused") {
    Connected c(options("127.0.0.1:0"));
    std::byte memory[64] = {};
    CHECK(c.node->expose(memory).status() == Status::invalid_param);
    CHECK(c.node->expose({}).status() == Status::invalid_param);
}

TEST_CASE("net/node: messages of two peers are told apart") {
    auto node = start(options("127.0.0.1:0"));
    std::mutex mu;
    std::condition_variable cv;
    std::map<net::PeerId, std::set<unsigned>> seeds;
    int deliveries = 0;
    node->serve(net_test::k_service, [&](net::Delivery& d) -> net::Verdict {
        std::lock_guard lock(mu);
        seeds[d.peer()].insert(static_cast<unsigned>(d.header()[0]));
        ++deliveries;
        cv.notify_all();
        return nullptr;
    });
    Helper first({"connect"});
    first.write_line(node->address());
    REQUIRE(first.read_line() == "connected 1");
    REQUIRE(node->await_peers(1, 10s) == Status::ok);
    const auto first_peer = node->peers().at(0);
    Helper second({"connect"});
    second.write_line(node->address());
    REQUIRE(second.read_line() == "connected 1");
    REQUIRE(node->await_peers(2, 10s) == Status::ok);
    const auto second_peer = node->peers().at(1);
    for (int i = 0; i < 3; ++i) {
        CHECK(first.ask("send 7 64 11") == "sent ok");
        CHECK(second.ask("send 7 64 22") == "sent ok");
    }
    CHECK(first.ask("send 7 65536 11") == "sent ok");
    CHECK(second.ask("send 7 65536 22") == "sent ok");
    // A send completes when its payload may be reused: the message may still be on its way.
    std::unique_lock lock(mu);
    REQUIRE(cv.wait_for(lock, 10s, [&] { return deliveries == 8; }));
    CHECK(seeds[first_peer] == std::set<unsigned>{11});
    CHECK(seeds[second_peer] == std::set<unsigned>{22});
    CHECK(node->refusals() == 0);
}

TEST_CASE("net/node: a handler that calls a waiting function gets invalid_param, not a hang") {
    Connected c(options("127.0.0.1:0"));
    std::promise<std::vector<Status>> seen;
    c.node->serve(net_test::k_service, [&](net::Delivery& d) -> net::Verdict {
        const std::byte header[1] = {std::byte{1}};
        const auto payload = net_test::patterned(std::size_t{1} << 20, 1);
        seen.set_value({c.node->send(d.peer(), net_test::k_service, header, payload, 1s),
                        c.node->flush(d.peer(), 1s), c.node->await_peers(5, 1s),
                        c.node->connect(c.node->address(), 1s).status(),
                        c.node->progress() ? Status::failure : Status::ok});
        return nullptr;
    });
    CHECK(c.helper.ask("send 7 64 1") == "sent ok");
    auto future = seen.get_future();
    REQUIRE(future.wait_for(10s) == std::future_status::ready);
    CHECK(future.get() == std::vector<Status>{Status::invalid_param, Status::invalid_param,
                                              Status::invalid_param, Status::invalid_param,
                                              Status::ok});
    CHECK(c.node->alive(c.peer));
}

TEST_CASE("net/node: a rendezvous the handler neither receives nor refuses is dropped") {
    Connected c(options("127.0.0.1:0"));
    std::promise<bool> ignored;
    std::promise<std::size_t> eager;
    c.node->serve(net_test::k_service, [&](net::Delivery& d) -> net::Verdict {
        if (d.is_rendezvous()) {
            ignored.set_value(d.eager().empty());
        } else {
            eager.set_value(d.length());
        }
        return nullptr;
    });
    CHECK(c.helper.ask("send 7 1048576 1") == "sent ok"); // the sender is not left waiting
    auto ignored_future = ignored.get_future();
    REQUIRE(ignored_future.wait_for(10s) == std::future_status::ready);
    CHECK(ignored_future.get());
    CHECK(c.helper.ask("send 7 64 1") == "sent ok"); // and the connection goes on
    auto eager_future = eager.get_future();
    REQUIRE(eager_future.wait_for(10s) == std::future_status::ready);
    CHECK(eager_future.get() == 64);
    CHECK(c.node->alive(c.peer));
    CHECK(c.node->refusals() == 0);
}

TEST_CASE("net/node: a throwing on_peer_lost handler or completion is contained") {
    Connected c(options("127.0.0.1:0"));
    c.node->on_peer_lost([](net::PeerId) { throw std::runtime_error("handler bug"); });
    const std::byte header[1] = {std::byte{1}};
    const auto payload = net_test::patterned(std::size_t{1} << 20, 1);
    std::promise<void> posted;
    REQUIRE(c.node->post(c.peer, net_test::k_service, header, payload, [&](Status) {
        posted.set_value();
        throw std::runtime_error("completion bug");
    }) == Status::ok);
    auto posted_future = posted.get_future();
    REQUIRE(posted_future.wait_for(10s) == std::future_status::ready);
    std::promise<net::PeerId> lost;
    c.node->on_peer_lost([&](net::PeerId p) { lost.set_value(p); });
    c.helper.signal(SIGKILL);
    auto future = lost.get_future();
    REQUIRE(future.wait_for(10s) == std::future_status::ready);
    CHECK(future.get() == c.peer);
}

TEST_CASE("net/node: a peer that closes normally is reported closed, not lost") {
    std::mutex mu;
    std::vector<std::string> lines;
    const auto level = ferry::log_level();
    ferry::set_log_level(ferry::LogLevel::info);
    auto previous = ferry::set_log_sink([&](ferry::LogLevel, std::string_view text) {
        std::lock_guard lock(mu);
        lines.emplace_back(text);
    });
    {
        Connected c(options("127.0.0.1:0"));
        std::promise<net::PeerId> lost;
        c.node->on_peer_lost([&](net::PeerId p) { lost.set_value(p); });
        CHECK(c.helper.finish() == 0); // its node's destructor says goodbye
        auto future = lost.get_future();
        REQUIRE(future.wait_for(10s) == std::future_status::ready);
        CHECK(future.get() == c.peer); // gone either way: handlers run
        CHECK_FALSE(c.node->alive(c.peer));
    }
    ferry::set_log_sink(std::move(previous));
    ferry::set_log_level(level);
    std::lock_guard lock(mu);
    const auto has = [&](const std::string& what) {
        return std::any_of(lines.begin(), lines.end(),
                           [&](const std::string& l) { return l.find(what) != std::string::npos; });
    };
    CHECK(has(") closed"));
    CHECK_FALSE(has("lost peer"));
}

// While a caller progresses the worker itself, the progress thread stays off the worker's fd
// (docs/multi-node.md, The progress thread); heartbeats still go out and are still heard, and
// once the caller stops, messages are served without it.
TEST_CASE(
    "net/node: a caller progressing for 3x peer_timeout loses no peer; then the thread serves") {
    Connected c(options("127.0.0.1:0", 20ms, 200ms),
                {"connect", "--heartbeat", "20", "--peer-timeout", "200"});
    std::promise<std::size_t> got;
    c.node->serve(net_test::k_service, [&](net::Delivery& d) -> net::Verdict {
        got.set_value(d.length());
        return nullptr;
    });
    const auto until = clock_type::now() + 600ms;
    std::uint64_t calls = 0;
    while (clock_type::now() < until) {
        c.node->progress();
        ++calls;
    }
    const bool hand_back = GENERATE(true, false);
    CAPTURE(hand_back, calls);
    if (hand_back) {
        c.node->done_progressing();
    }
    CHECK(c.node->alive(c.peer));
    CHECK(c.node->losses() == 0);
    CHECK(c.helper.ask("peers") == "peers 1"); // the helper heard this node's heartbeats
    // Nobody progresses now: the progress thread must take the message.
    auto future = got.get_future();
    const auto since = clock_type::now();
    CHECK(c.helper.ask("send 7 64 3") == "sent ok");
    REQUIRE(future.wait_for(10s) == std::future_status::ready);
    CHECK(future.get() == 64);
    WARN("served "
         << std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - since).count()
         << " us after the caller stopped");
    CHECK(c.helper.finish() == 0);
}

namespace {

// Two nodes of this process: `flooded` serves service 7 with a handler slower than `flooder`
// can send, so its worker never runs dry while the flood goes on (docs/multi-node.md, A worker
// that never runs dry).
struct Flood {
    static constexpr std::uint64_t k_backlog = 500; // most sent and not yet handled
    std::chrono::microseconds handler_time;
    std::unique_ptr<net::Node> flooded = start(options("127.0.0.1:0", 20ms, 200ms));
    std::unique_ptr<net::Node> flooder = start(options("", 20ms, 200ms));
    net::PeerId to_flooded = 0; // on flooder
    net::PeerId to_flooder = 0; // on flooded
    std::atomic<std::uint64_t> handled{0};
    std::uint64_t sent = 0;
    std::uint64_t deepest = 0; // the largest backlog seen

    explicit Flood(std::chrono::microseconds handler) : handler_time(handler) {
        flooded->serve(7, [this](net::Delivery&) -> net::Verdict {
            const auto until = clock_type::now() + handler_time;
            while (clock_type::now() < until) {
            }
            handled.fetch_add(1, std::memory_order_relaxed);
            return nullptr;
        });
        auto peer = flooder->connect(flooded->address(), 10s);
        REQUIRE(peer.has_value());
        to_flooded = *peer;
        REQUIRE(flooded->await_peers(1, 10s) == Status::ok);
        to_flooder = flooded->peers().at(0);
    }

    // Floods until `until` or `enough()`; false when a send failed.
    template <typename Enough>
    bool run(clock_type::time_point until, Enough enough) {
        const std::array<std::byte, 64> payload{};
        while (clock_type::now() < until && !enough()) {
            const auto backlog = sent - handled.load(std::memory_order_relaxed);
            deepest = std::max(deepest, backlog);
            if (backlog >= k_backlog) {
                std::this_thread::yield();
                continue;
            }
            if (flooder->send(to_flooded, 7, {}, payload, 1s) != Status::ok) {
                return false;
            }
            ++sent;
        }
        return true;
    }
};

} // namespace

// The flooded node's progress thread used to drain its worker until it ran dry, which it never
// did: no heartbeat left it, and the flooder lost a live peer as silent after peer_timeout.
TEST_CASE("net/node: a node whose handlers cannot keep up is not lost by the peer flooding it") {
    Flood f(200us);
    const bool sent_all =
        f.run(clock_type::now() + 600ms, [&] { return f.flooder->losses() != 0; });
    CAPTURE(f.sent, f.deepest);
    CHECK(f.deepest >= Flood::k_backlog / 2); // the flooded node really fell behind
    CHECK(sent_all);
    CHECK(f.flooder->alive(f.to_flooded));
    CHECK(f.flooder->losses() == 0);
    CHECK(f.flooded->losses() == 0);
}

// A blocking send from the flooded node: it needs its node's lock, which its progress thread,
// draining a worker that never runs dry, used to keep (a mutex promises no turn), and the
// peer's answer to its rendezvous. It must return while the flood goes on. Handlers of 50 us:
// one progress call runs what UCX read in one go (thousands of messages over tcp), and the
// send waits for the call it finds running.
TEST_CASE("net/node: a flooded node's own blocking send returns while the flood goes on") {
    Flood f(50us);
    const std::vector<std::byte> big(1 << 20, std::byte{5});
    std::vector<std::byte> landed(big.size());
    std::atomic<bool> received{false};
    f.flooder->serve(8, [&](net::Delivery& d) -> net::Verdict {
        if (!d.is_rendezvous()) {
            return "expected a rendezvous";
        }
        return d.receive_into(landed, [&](Status s) { received = s == Status::ok; }) == Status::ok
                   ? nullptr
                   : "receive_into refused";
    });
    std::atomic<bool> flooding{false};
    std::atomic<bool> returned{false};
    std::promise<Status> sent;
    std::thread sender([&] {
        while (!flooding.load()) {
            std::this_thread::yield();
        }
        sent.set_value(f.flooded->send(f.to_flooder, 8, {}, big, 10s));
        returned = true;
    });
    const bool sent_all = f.run(clock_type::now() + 10s, [&] {
        if (f.deepest >= Flood::k_backlog / 2 || f.sent >= 4 * Flood::k_backlog) {
            flooding = true; // behind by half the backlog, or (a slow flooder) well under way
        }
        return returned.load();
    });
    const bool during_flood = returned.load(); // else the flood ran its 10 s out first
    flooding = true;
    sender.join();
    CAPTURE(f.sent, f.deepest);
    CHECK(sent_all);
    CHECK(during_flood);
    CHECK(sent.get_future().get() == Status::ok);
    CHECK(f.flooder->losses() == 0);
    CHECK(f.flooded->losses() == 0);
    // The payload may still be landing on the flooder's side; once it has, it is whole.
    const auto until = clock_type::now() + 10s;
    while (!received.load() && clock_type::now() < until) {
        f.flooder->progress();
    }
    CHECK(received.load());
    const bool whole = landed == big; // not the 1 MiB of both in a failure's message
    CHECK(whole);
}
