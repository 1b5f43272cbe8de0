// ferry::net::Node against a hostile process (node_helper.cpp's raw scenarios, raw_scenarios.hpp)
// on loopback: garbage at every port the node's process listens on, a listener without the
// secret, a replayed handshake, a second hello, forged tokens, writes outside a region, one-sided
// RMA with a key of the attacker's making (docs/security.md).

#include "support.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <dirent.h>
#include <ferry/net.hpp>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using ferry::Status;
namespace net = ferry::net;
using net_test::Helper;

net::NodeOptions options() {
    net::NodeOptions o;
    o.listen = "127.0.0.1:0";
    o.secret = net::Secret::from_environment().value();
    o.handshake_timeout = 2000ms;
    return o;
}

std::unique_ptr<net::Node> start(net::NodeOptions o = options()) {
    auto node = net::Node::start(std::move(o));
    REQUIRE(node.has_value());
    return std::move(*node);
}

// Calls visit(fd, target) for each of this process's descriptors (the walk's own included).
template <typename Visit>
void for_each_descriptor(Visit visit) {
    DIR* dir = ::opendir("/proc/self/fd");
    REQUIRE(dir != nullptr);
    while (const dirent* e = ::readdir(dir)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char target[256] = {};
        const auto path = std::string("/proc/self/fd/") + e->d_name;
        const auto len = ::readlink(path.c_str(), target, sizeof target - 1);
        visit(std::string(e->d_name),
              std::string(target, len > 0 ? static_cast<std::size_t>(len) : 0));
    }
    ::closedir(dir);
}

// The inodes of this process's sockets (/proc/self/fd), and how many descriptors it has.
std::set<std::string> socket_inodes(std::size_t* count = nullptr) {
    std::set<std::string> out;
    std::size_t n = 0;
    for_each_descriptor([&](const std::string&, const std::string& target) {
        ++n;
        if (target.rfind("socket:[", 0) == 0) {
            out.insert(target.substr(8, target.size() - 9));
        }
    });
    if (count != nullptr) {
        *count = n - 1; // the directory's own descriptor
    }
    return out;
}

// Every TCP port this process listens on: /proc/self/net/tcp and tcp6 rows in state 0A
// (LISTEN) whose inode is one of this process's sockets.
std::vector<int> listening_ports() {
    const auto mine = socket_inodes();
    std::vector<int> ports;
    for (const char* table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
        std::ifstream in(table);
        std::string line;
        std::getline(in, line); // the header
        while (std::getline(in, line)) {
            std::istringstream row(line);
            std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
            row >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
                timeout >> inode;
            if (state == "0A" && mine.contains(inode)) {
                ports.push_back(std::stoi(local.substr(local.rfind(':') + 1), nullptr, 16));
            }
        }
    }
    std::sort(ports.begin(), ports.end());
    return ports;
}

std::size_t descriptors() {
    std::size_t n = 0;
    static_cast<void>(socket_inodes(&n));
    return n;
}

// What each of this process's descriptors refers to, one "fd -> target" a line.
std::string descriptor_listing() {
    std::string out;
    for_each_descriptor([&](const std::string& fd, const std::string& target) {
        out += fd + " -> " + target + "\n";
    });
    return out;
}

// Waits (bounded) until this process has at most `n` descriptors again; when it does not, the
// failure lists what is open.
bool descriptors_back_to(std::size_t n, net::Node& node) {
    // One observation at or under `n` decides: a descriptor opened and closed again between two
    // looks (the node's threads keep working) is not one left behind.
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    auto open = descriptors();
    while (open > n && std::chrono::steady_clock::now() < deadline) {
        node.progress(); // closing is the node's work: it happens on the next event anyway
        std::this_thread::sleep_for(10ms);
        open = descriptors();
    }
    if (open > n) {
        UNSCOPED_INFO("expected at most " << n << " descriptors, open:\n" << descriptor_listing());
        return false;
    }
    return true;
}

// Waits (bounded) until the node has lost `n` peers.
bool lost_one(net::Node& node, std::uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (node.losses() < n && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    return node.losses() >= n;
}

// Waits (bounded) until the node has refused something for `reason`.
bool refused_for(net::Node& node, const std::string& reason) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!node.refusals_by_reason().contains(reason) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    return node.refusals_by_reason().contains(reason);
}

// A legitimate helper connects, and the node has read its Ready (the listening side's peer
// exists only then; a client gone before that was never a peer, so never lost).
bool is_connected(net::Node& node) {
    Helper legit({"connect"});
    legit.write_line(node.address());
    return legit.read_line() == "connected 1" && node.await_peers(1, 10s) == Status::ok;
}

bool all_equal(std::span<const std::byte> bytes, std::byte value) {
    return std::all_of(bytes.begin(), bytes.end(), [&](std::byte b) { return b == value; });
}

} // namespace

TEST_CASE("net/hostile: garbage at every listening port leaves the node serving, fds freed") {
    auto node = start();
    const auto ports = listening_ports();
    // ferry's listener and UCX's tcp worker sockets (docs/security.md, What listens).
    std::string listed;
    for (const int port : ports) {
        listed += " " + std::to_string(port);
    }
    WARN("this process listens on" << listed << "; ferry's listener is " << node->address());
    REQUIRE(ports.size() >= 2);
    const auto own = std::stoi(node->address().substr(node->address().rfind(':') + 1));
    CHECK(std::find(ports.begin(), ports.end(), own) != ports.end());
    // A first peer makes UCX create what it keeps for good (a timer descriptor); its own
    // connections then close with it.
    REQUIRE(is_connected(*node));
    REQUIRE(lost_one(*node, 1));
    const auto baseline = descriptors();
    std::string line;
    for (const int port : ports) {
        line += std::to_string(port) + " ";
    }
    {
        Helper raw({"raw", "garbage"});
        raw.write_line(line);
        CHECK(raw.read_line() == "done");
        CHECK(raw.finish() == 0);
    }
    // 1 byte and the zero-length connection end the handshake early, 16 and 2000 zero bytes are
    // a hello of length 0, 65536 bytes too; the crowd is over the cap of unfinished handshakes.
    for (const char* reason : {"malformed hello", "connection closed during the handshake",
                               "too many unfinished handshakes"}) {
        CHECK(refused_for(*node, reason));
    }
    CHECK(descriptors_back_to(baseline, *node));
    CHECK(node->peers().empty());
    CHECK(is_connected(*node));
    CHECK(lost_one(*node, 2));
    CHECK(descriptors_back_to(baseline, *node));
}

TEST_CASE("net/hostile: an unfinished handshake is closed at its deadline") {
    auto node = start();
    const auto baseline = descriptors();
    const auto parsed = ferry::net::detail::parse_address(node->address());
    const auto since = std::chrono::steady_clock::now();
    auto fd = ferry::net::detail::bootstrap::connect_to(*parsed.address, since + 5s);
    REQUIRE(fd.valid());
    CHECK(refused_for(*node, "no handshake within the handshake timeout"));
    CHECK(std::chrono::steady_clock::now() - since >= 2000ms);
    CHECK(descriptors_back_to(baseline + 1, *node)); // ours stays open; the node's is closed
}

TEST_CASE("net/hostile: a listener without the secret learns nothing from a connecting node") {
    alignas(64) std::byte memory[256] = {};
    net::NodeOptions o = options();
    o.listen = "";
    auto node = start(o);
    REQUIRE(node->expose(memory).has_value());
    Helper fake({"raw", "fake-listener"});
    const auto line = fake.read_line();
    REQUIRE(line.rfind("address ", 0) == 0);
    CHECK(node->connect(line.substr(8), 5s).status() == Status::peer_lost);
    // Only the Hello (a length and 56 bytes of nonce and identity): no proof, no regions.
    CHECK(fake.read_line() == "got 60 secret=no");
    CHECK(node->refusals() == 1);
    CHECK(node->last_refusal().rfind("the listener did not prove the secret", 0) == 0);
}

TEST_CASE("net/hostile: a recorded handshake replayed to another listener is refused") {
    auto first = start();
    auto second = start();
    Helper raw({"raw", "replay"});
    raw.write_line(first->address());
    raw.write_line(second->address());
    CHECK(raw.read_line() == "closed");
    CHECK(second->refusals_by_reason() == std::map<std::string, std::uint64_t>{{"wrong secret", 1}});
    CHECK(second->peers().empty());
    // The original handshake went through (first counts the peer on its own progress thread).
    CHECK(first->await_peers(1, 10s) == Status::ok);
    CHECK(first->peers().size() == 1);
}

TEST_CASE("net/hostile: after the handshake, forged tokens, bad writes, RMA and a second hello") {
    alignas(64) std::byte memory[4096];
    std::fill(std::begin(memory), std::end(memory), std::byte{0x5a});
    auto node = start();
    REQUIRE(node->expose(memory).has_value());
    std::mutex mu;
    std::condition_variable cv;
    std::vector<unsigned> seeds;
    node->serve(net_test::k_service, [&](net::Delivery& d) -> net::Verdict {
        std::lock_guard lock(mu);
        seeds.push_back(static_cast<unsigned>(d.header()[0]));
        cv.notify_all();
        return nullptr;
    });
    const auto untouched = [&] {
        node->progress(); // orders what landed before the read (as tests/net/node.cpp's "zero")
        return all_equal(memory, std::byte{0x5a});
    };
    SECTION("a message with a token nobody was given") {
        Helper raw({"raw", "forged"});
        raw.write_line(node->address());
        CHECK(raw.read_line() == "sent");
        std::unique_lock lock(mu);
        REQUIRE(cv.wait_for(lock, 10s, [&] { return !seeds.empty(); }));
        CHECK(seeds == std::vector<unsigned>{2}); // the proper one, after the forged one
        lock.unlock();
        CHECK(node->last_refusal() == "unknown connection token");
        CHECK(node->peers().size() == 1);
    }
    for (const char* scenario : {"outside", "unexposed"}) {
        DYNAMIC_SECTION("a put " << scenario) {
            Helper raw({"raw", scenario});
            raw.write_line(node->address());
            CHECK(raw.read_line() == "sent");
            CHECK(refused_for(*node, std::string(scenario) == "outside"
                                         ? "write outside its region"
                                         : "write to a region that is not exposed"));
            CHECK(node->last_refusal() == (std::string(scenario) == "outside"
                                               ? "write outside its region"
                                               : "write to a region that is not exposed"));
            CHECK(untouched());
            CHECK(node->peers().empty());
        }
    }
    SECTION("one-sided put and get with the attacker's own key") {
        Helper raw({"raw", "rma"});
        raw.write_line(node->address());
        CHECK(raw.read_line() == "nothing");
        CHECK(untouched()); // UCX drops the put and the get (the node's context has no RMA)
    }
    SECTION("a second hello on the handshake's connection") {
        Helper raw({"raw", "rehello"});
        raw.write_line(node->address());
        CHECK(raw.read_line() == "closed");
        CHECK(node->peers().size() == 1);
    }
    CHECK(is_connected(*node));
}
