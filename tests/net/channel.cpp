// ferry::net remote channels across processes over UCX on loopback: tests/net/channel_helper.cpp
// is the other process. Every blocking call here is bounded (a hang fails as timed_out, not as a
// stuck test), and every hand-off waits for observable state: a line from the child, or
// blocked() / size() of a channel.
#include "channel_support.hpp"

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <ferry/runtime/profiler.hpp>
#include <map>
#include <string>
#include <optional>
#include <thread>

using ferry::Status;
using ipc_test::Child;
using ipc_test::poll_for;
using net_test::make_message;
using net_test::Message;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto k_bound = 10s; // what "would hang" is cut off at
// How long after a kill -9 a blocked call must have answered peer_lost: UCX reports the broken
// connection in milliseconds; this leaves room for a loaded machine and the 20 ms park slices.
constexpr auto k_loss_bound = 3s;

Child helper(std::initializer_list<std::string> args) {
    return Child(net_test::channel_helper(), args);
}
std::string code(Status s) {
    return std::to_string(static_cast<int>(s));
}
std::unique_ptr<ferry::net::Node> listening_node() {
    auto node = net_test::start_node(true);
    REQUIRE(node);
    return node;
}

// A helper serving a receiver of capacity k_small under `name`, and a node (not listening)
// connected to it as `peer`.
struct Served {
    Child child;
    std::unique_ptr<ferry::net::Node> node;
    ferry::net::PeerId peer = 0;

    explicit Served(const std::string& name) : child(helper({"serve", name})) {
        const std::string address = child.read_line();
        REQUIRE(child.read_line() == "ready");
        node = net_test::start_node(false);
        REQUIRE(node);
        auto connected = node->connect(address, k_bound);
        REQUIRE(connected);
        peer = *connected;
    }
};

// Kills `child`, whose death the thread `waiter` waits on in a channel call (blocked there when
// `parked`), joins it and checks that the call answered peer_lost (`got`) within k_loss_bound.
void kill_and_check_loss(Child& child, std::thread& waiter, bool parked,
                         const std::atomic<Status>& got, const char* seen) {
    const auto killed = Clock::now();
    child.kill();
    waiter.join();
    const auto took = Clock::now() - killed;
    REQUIRE(parked);
    CHECK(got == Status::peer_lost);
    CHECK(took < k_loss_bound);
    WARN(seen << " after " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
              << " ms");
}

// Receives `count` messages and checks each: per producer, sequences 0, 1, 2, ... in order with
// a valid checksum. Returns the next expected sequence of each producer (1 and 2).
template <typename Receiver>
std::array<std::uint64_t, 3> receive_checked(Receiver& channel, std::uint64_t count,
                                             std::uint64_t& bad) {
    std::array<std::uint64_t, 3> next{};
    for (std::uint64_t i = 0; i < count; ++i) {
        auto r = channel.receive_for(k_bound);
        if (!r) {
            FAIL("receive " << i << " answered " << ferry::name_of(r.status()));
        }
        const Message m = *r;
        const bool known = m.producer == 1 || m.producer == 2;
        if (known && m.sequence == next[m.producer] &&
            m.check == net_test::checksum(m.sequence, m.producer)) {
            ++next[m.producer];
        } else {
            ++bad;
        }
    }
    return next;
}

// The number after `word ` in a line like "filled 8"; -1 when the line is something else.
long long number_after(const std::string& line, const std::string& word) {
    return line.rfind(word + " ", 0) == 0 ? std::stoll(line.substr(word.size() + 1)) : -1;
}

} // namespace

TEST_CASE("net channel: 100k messages from two sender processes arrive exactly once, in order "
          "and intact",
          "[net]") {
    constexpr std::uint64_t n = 50000; // per sender
    auto node = listening_node();
    auto channel = net_test::StreamReceiver::create(*node, "stream");
    REQUIRE(channel);
    Child a = helper({"send", node->address(), "stream", "1", std::to_string(n)});
    Child b = helper({"send", node->address(), "stream", "2", std::to_string(n)});
    std::uint64_t bad = 0;
    const auto start = Clock::now();
    const auto next = receive_checked(*channel, 2 * n, bad);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    WARN("100k messages of " << sizeof(Message) << " B from 2 senders: " << ms.count() << " ms");
    CHECK(bad == 0);
    CHECK(next[1] == n);
    CHECK(next[2] == n);
    CHECK(a.read_line() == "sent " + std::to_string(n));
    CHECK(b.read_line() == "sent " + std::to_string(n));
    CHECK(channel->try_receive().status() == Status::empty); // not one more
    a.release();
    b.release();
    CHECK(a.wait_exit() == 0);
    CHECK(b.wait_exit() == 0);
    // The senders closed before their processes ended: leaving is not getting lost. (The node
    // takes the CLOSEs on its own progress thread.)
    CHECK(poll_for([&] { return channel->senders() == 0; }));
    CHECK(!channel->lost());
    CHECK(channel->try_receive().status() == Status::empty);
}

TEST_CASE("net channel: a stalled receiver holds at most its capacity; its senders see full and "
          "timed_out, its stop wakes them, and what arrived drains",
          "[net]") {
    auto node = listening_node();
    auto channel = net_test::SmallReceiver::create(*node, "bound");
    REQUIRE(channel);
    Child a = helper({"fill", node->address(), "bound"});
    Child b = helper({"fill", node->address(), "bound"});
    const long long filled_a = number_after(a.read_line(), "filled");
    const long long filled_b = number_after(b.read_line(), "filled");
    CHECK(a.read_line() == "timed " + code(Status::timed_out));
    CHECK(b.read_line() == "timed " + code(Status::timed_out));
    // What the senders were told went through (their credits), not what the receiver's pool can
    // hold (it cannot hold more): more than the capacity would be credits granted twice.
    CHECK(filled_a + filled_b <= static_cast<long long>(net_test::k_small));
    CHECK(poll_for([&] { return channel->size() == net_test::k_small; }));
    CHECK(a.read_line() == "blocked");
    CHECK(b.read_line() == "blocked");
    CHECK(channel->size() == net_test::k_small); // both senders still blocked: nothing more came

    channel->stop();
    const std::string stopped = "send " + code(Status::stopped);
    const std::string end_a = a.read_line();
    const std::string end_b = b.read_line();
    CHECK(end_a.rfind(stopped + " ", 0) == 0);
    CHECK(end_b.rfind(stopped + " ", 0) == 0);
    const long long more = number_after(end_a, stopped) + number_after(end_b, stopped);
    CHECK(filled_a + filled_b + more == static_cast<long long>(net_test::k_small)); // no more
    for (std::size_t i = 0; i < net_test::k_small; ++i) { // queued messages still come out
        auto r = channel->receive_for(k_bound);
        REQUIRE(r);
        CHECK(r->check == net_test::checksum(r->sequence, r->producer));
    }
    CHECK(channel->receive_for(k_bound).status() == Status::stopped);
    CHECK(a.wait_exit() == 0);
    CHECK(b.wait_exit() == 0);
}

TEST_CASE("net channel: a sender's stop wakes the receive blocked on the other node", "[net]") {
    auto node = listening_node();
    auto channel = net_test::SmallReceiver::create(*node, "stop");
    REQUIRE(channel);
    SECTION("a receive blocked on an empty channel answers stopped") {
        Child child = helper({"stopper", node->address(), "stop", "0"});
        REQUIRE(child.read_line() == "sent");
        std::atomic<Status> got{Status::ok};
        std::thread receiver([&] { got = channel->receive_for(k_bound).status(); });
        const bool parked = poll_for([&] { return channel->blocked() >= 1; });
        child.release(); // the child stops its sender
        receiver.join();
        REQUIRE(parked);
        CHECK(got == Status::stopped);
        CHECK(child.read_line() == "stopped");
        CHECK(child.wait_exit() == 0);
    }
    SECTION("what arrived before the stop drains first") {
        Child child = helper({"stopper", node->address(), "stop", "3"});
        REQUIRE(child.read_line() == "sent");
        child.release();
        REQUIRE(child.read_line() == "stopped");
        REQUIRE(poll_for([&] { return channel->stopped(); }));
        for (std::uint64_t i = 0; i < 3; ++i) {
            auto r = channel->receive_for(k_bound);
            REQUIRE(r);
            CHECK(r->sequence == i);
        }
        CHECK(channel->receive_for(k_bound).status() == Status::stopped);
        CHECK(child.wait_exit() == 0);
    }
    CHECK(channel->stopped());
}

TEST_CASE("net channel: kill -9 of a sender: the receiver drains what arrived, then its blocked "
          "receive answers peer_lost within the bound",
          "[net]") {
    auto node = listening_node();
    auto channel = net_test::SmallReceiver::create(*node, "lost");
    REQUIRE(channel);
    Child child = helper({"send", node->address(), "lost", "1", "5"});
    REQUIRE(child.read_line() == "sent 5");
    std::atomic<Status> got{Status::ok};
    std::atomic<int> drained{0};
    std::thread receiver([&] {
        for (int i = 0; i < 5 && channel->receive_for(k_bound); ++i) {
            ++drained;
        }
        got = channel->receive_for(k_bound).status();
    });
    const bool parked = poll_for([&] { return drained == 5 && channel->blocked() >= 1; });
    kill_and_check_loss(child, receiver, parked, got, "receiver saw the sender's death");
    CHECK(channel->lost());
    CHECK(channel->try_receive().status() == Status::peer_lost); // sticky
}

TEST_CASE("net channel: kill -9 of the receiver: a blocked sender answers peer_lost within the "
          "bound; timeouts are never early",
          "[net]") {
    Served served("victim");
    auto sender = net_test::Sender::open(*served.node, served.peer, "victim");
    REQUIRE(sender);
    std::uint64_t sent = 0;
    while (sender->try_send(make_message(sent, 1)) == Status::ok) {
        ++sent;
    }
    CHECK(sent == net_test::k_small);
    auto start = Clock::now();
    CHECK(sender->send_for(make_message(sent, 1), 30ms) == Status::timed_out);
    CHECK(Clock::now() - start >= 30ms);
    CHECK(sender->send_until(make_message(sent, 1), Clock::now() - 1ms) == Status::full);

    std::atomic<Status> got{Status::ok};
    std::thread blocked([&] { got = sender->send_for(make_message(sent, 1), k_bound); });
    const bool parked = poll_for([&] { return sender->blocked() >= 1; });
    kill_and_check_loss(served.child, blocked, parked, got, "sender saw the receiver's death");
    CHECK(sender->lost());
    CHECK(sender->try_send(make_message(0, 1)) == Status::peer_lost); // sticky
}

TEST_CASE("net channel: an open the receiver cannot take is refused with a clear status, and "
          "nothing changes",
          "[net]") {
    Served served("served");
    using Wide = ferry::net::ChannelSender<std::array<std::uint64_t, 5>>;
    const auto missing = net_test::Sender::open(*served.node, served.peer, "no-such");
    CHECK(missing.status() == Status::not_found);
    CHECK_THAT(missing.error().message,
               Catch::Contains("'no-such'") && Catch::Contains("no receiver serves"));
    const auto wide = Wide::open(*served.node, served.peer, "served");
    CHECK(wide.status() == Status::mismatch);
    CHECK_THAT(wide.error().message, Catch::Contains("another kind or size"));
    CHECK(ferry::net::MessageSender::open(*served.node, served.peer, "served").status() ==
          Status::mismatch);
    CHECK(net_test::Sender::open(*served.node, served.peer, "").status() == Status::invalid_param);
    CHECK(net_test::Sender::open(*served.node, 4242, "served").status() == Status::peer_lost);
    // The connection survived the refusals, and the channel took no sender: a good open gets
    // every credit.
    auto sender = net_test::Sender::open(*served.node, served.peer, "served");
    REQUIRE(sender);
    CHECK(sender->credits() == net_test::k_small);
    CHECK(sender->try_send(make_message(0, 1)) == Status::ok);
    CHECK(served.node->refusals() == 0);
    served.child.release();
    CHECK(served.child.wait_exit() == 0);
}

TEST_CASE("net channel: a second receiver under the same name on one node is refused", "[net]") {
    auto node = listening_node();
    auto first = net_test::SmallReceiver::create(*node, "twice");
    REQUIRE(first);
    CHECK(net_test::SmallReceiver::create(*node, "twice").status() == Status::repeat_initialize);
    CHECK(ferry::net::MessageReceiver::create(*node, "twice", 4, 64).status() ==
          Status::repeat_initialize);
    REQUIRE(first->close());
    CHECK(net_test::SmallReceiver::create(*node, "twice")); // the name is free again
}

TEST_CASE("net message channel: datasets of 64 B, 64 KiB and 4 MiB arrive byte for byte; an "
          "oversized one is refused before anything is sent",
          "[net]") {
    auto node = listening_node();
    auto channel = ferry::net::MessageReceiver::create(*node, "datasets", net_test::k_messages,
                                                       net_test::k_max_message);
    REQUIRE(channel);
    Child child = helper({"datasets", node->address(), "datasets"});
    for (std::size_t i = 0; i < std::size(net_test::k_dataset_sizes); ++i) {
        const std::size_t bytes = net_test::k_dataset_sizes[i];
        if (i == 1) { // read in place: the items borrow from the pool buffer
            auto view = channel->receive_view(k_bound);
            REQUIRE(view);
            auto ds = view->dataset();
            REQUIRE(ds);
            CHECK(net_test::check_sized_dataset(*ds, bytes, i) == "");
            continue;
        }
        auto ds = channel->receive(k_bound);
        REQUIRE(ds);
        CHECK(net_test::check_sized_dataset(*ds, bytes, i) == "");
    }
    CHECK(child.read_line() == "oversize " + code(Status::invalid_param));
    ferry::Dataset next;
    REQUIRE(channel->receive(next, k_bound) == Status::ok);
    CHECK(net_test::check_sized_dataset(next, 64, 99) == ""); // the oversized one never came
    CHECK(child.read_line() == "sent");
    CHECK(channel->receive_view(ferry::no_wait).status() == Status::empty);
    child.release();
    CHECK(child.wait_exit() == 0);
}

TEST_CASE("net channel: a peer forging sender ids cannot grow the receiver's table; it is cut off",
          "[net]") {
    namespace d = ferry::net::detail;
    auto node = listening_node();
    auto channel = net_test::SmallReceiver::create(*node, "flood");
    REQUIRE(channel);
    auto forger = net_test::start_node(false); // a member of the job, hostile to this receiver
    REQUIRE(forger);
    // The receiver answers each open: the forger takes the answers and ignores them.
    forger->serve(d::k_channel_service, [](ferry::net::Delivery&) -> ferry::net::Verdict {
        return nullptr;
    });
    const auto peer = forger->connect(node->address(), std::chrono::seconds(10));
    REQUIRE(peer.has_value());
    const std::string name = "flood";
    const auto payload = std::as_bytes(std::span(name.data(), name.size()));
    int sent = 0;
    for (std::uint32_t id = 1; id <= 3000; ++id) {
        const d::ChannelWire w = d::make_wire(d::WireKind::open, d::fnv1a32(name), id,
                                              sizeof(net_test::Message),
                                              static_cast<std::uint16_t>(d::Flavor::typed));
        if (forger->send(*peer, d::k_channel_service, d::bytes_of(w), payload,
                         std::chrono::seconds(5)) != Status::ok) {
            break;
        }
        ++sent;
    }
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (forger->alive(*peer) && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5)); // polls the observable loss
    }
    CHECK_FALSE(forger->alive(*peer)); // the receiver's node disconnected it
    CHECK(sent > 64);
    CHECK(channel->senders() <= 64);
    CHECK(node->refusals_by_reason().contains("service " + std::to_string(d::k_channel_service) +
                                              ": ferry.net.channel: too many senders"));
}


TEST_CASE("net channel: await_open waits for the name; connect, send and a lost peer are traced",
          "[net]") {
    REQUIRE(ferry::profiler().start() == Status::ok);
    std::optional<Served> served;
    served.emplace("traced"); // connects while the profiler records
    const auto began = Clock::now();
    const auto never =
        net_test::Sender::await_open(*served->node, served->peer, "never-served", 50ms);
    CHECK(never.status() == Status::not_found);
    CHECK(Clock::now() - began >= 50ms);
    auto sender = net_test::Sender::await_open(*served->node, served->peer, "traced", k_bound);
    REQUIRE(sender);
    REQUIRE(sender->send(make_message(0, 1), k_bound) == Status::ok);
    served->child.kill();
    CHECK(poll_for([&] { return !served->node->alive(served->peer); }));
    REQUIRE(ferry::profiler().stop() == Status::ok);
    std::map<std::string, int> seen;
    for (const auto& e : ferry::profiler().events()) {
        ++seen[e.category + "/" + e.name];
    }
    CHECK(seen["net/net.connect"] == 1);
    CHECK(seen["channel/net.send"] == 1);
    CHECK(seen["net/net.peer_lost"] == 1);
    REQUIRE(sender->close());
}
