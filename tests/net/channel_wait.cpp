// How remote channels' blocking calls wait (ferry/net/detail/channel_wait.hpp), between two
// nodes of this process over UCX's tcp loopback: a parked receive (typed or message channel)
// progresses its node itself, so what arrives while it sleeps is handled on its own thread;
// its timeout ends it at the deadline and no earlier, even when unrelated messages wake it;
// a stop from another thread of its own process ends it at once, and a blocked send the same.
#include "channel_support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

using ferry::Status;
using net_test::make_message;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto k_bound = 10s;
constexpr ferry::net::ServiceId k_probe_service = 0x7e58;

pid_t this_thread_id() {
    return static_cast<pid_t>(::syscall(SYS_gettid));
}

// Two nodes, the second connected to the first; the first serves a probe service that records
// which thread handled it.
struct Nodes {
    std::unique_ptr<ferry::net::Node> rx_node = net_test::start_node(true);
    std::unique_ptr<ferry::net::Node> tx_node = net_test::start_node(false);
    ferry::net::PeerId peer = 0;
    std::atomic<pid_t> probe_thread{0};

    Nodes() {
        REQUIRE(rx_node);
        REQUIRE(tx_node);
        rx_node->serve(k_probe_service, [this](ferry::net::Delivery&) -> ferry::net::Verdict {
            probe_thread.store(this_thread_id());
            return nullptr;
        });
        const auto p = tx_node->connect(rx_node->address(), k_bound);
        REQUIRE(p);
        peer = *p;
    }
    // Sends a probe to the receiving node and waits until some thread there handled it.
    [[nodiscard]] bool probe() {
        probe_thread.store(0);
        static const std::byte header[8]{};
        if (tx_node->post(peer, k_probe_service, header, {}, [](Status) {}) != Status::ok) {
            return false;
        }
        return ipc_test::poll_for([&] { return probe_thread.load() != 0; });
    }
};

struct Typed {
    using Receiver = net_test::SmallReceiver;
    std::optional<Receiver> rx;
    std::optional<net_test::Sender> tx;
    Typed(Nodes& n, const std::string& name) {
        auto r = Receiver::create(*n.rx_node, name);
        REQUIRE(r);
        rx.emplace(std::move(*r));
        auto s = net_test::Sender::open(*n.tx_node, n.peer, name);
        REQUIRE(s);
        tx.emplace(std::move(*s));
    }
    Status receive(ferry::Timeout t) { return rx->receive(t).status(); }
    Status send(ferry::Timeout t) { return tx->send(make_message(1, 1), t); }
};

struct Messages {
    std::optional<ferry::net::MessageReceiver> rx;
    std::optional<ferry::net::MessageSender> tx;
    Messages(Nodes& n, const std::string& name) {
        auto r = ferry::net::MessageReceiver::create(*n.rx_node, name, net_test::k_small, 256);
        REQUIRE(r);
        rx.emplace(std::move(*r));
        auto s = ferry::net::MessageSender::open(*n.tx_node, n.peer, name);
        REQUIRE(s);
        tx.emplace(std::move(*s));
    }
    Status receive(ferry::Timeout t) { // raw bytes, not a dataset: read in place
        return rx->receive_view(t).status();
    }
    Status send(ferry::Timeout t) {
        static const std::byte bytes[64]{};
        return tx->send(std::span<const std::byte>(bytes), t);
    }
};

} // namespace

TEMPLATE_TEST_CASE("net channel wait: what arrives for a parked receive is handled on its own "
                   "thread",
                   "[net]", Typed, Messages) {
    Nodes n;
    TestType ch(n, "parked-" + std::to_string(::getpid()));
    std::atomic<pid_t> receiver_thread{0};
    std::atomic<Status> got{Status::failure};
    std::thread receiver([&] {
        receiver_thread.store(this_thread_id());
        got = ch.receive(ferry::Timeout(k_bound));
    });
    const bool parked = ipc_test::poll_for([&] { return ch.rx->blocked() >= 1; });
    const bool probed = n.probe(); // handled by whoever progresses the receiving node
    const pid_t handler = n.probe_thread.load();
    CHECK(ch.send(ferry::Timeout(k_bound)) == Status::ok);
    receiver.join();
    REQUIRE(parked);
    REQUIRE(probed);
    CHECK(got == Status::ok);
    CHECK(handler == receiver_thread.load());
}

TEMPLATE_TEST_CASE("net channel wait: a parked receive times out at its deadline, not before, "
                   "though other messages wake it",
                   "[net]", Typed, Messages) {
    Nodes n;
    TestType ch(n, "deadline-" + std::to_string(::getpid()));
    constexpr auto timeout = 300ms;
    std::atomic<Status> got{Status::ok};
    std::atomic<Clock::duration> took{};
    std::thread receiver([&] {
        const auto start = Clock::now();
        got = ch.receive(ferry::Timeout(timeout));
        took = Clock::now() - start;
    });
    const bool parked = ipc_test::poll_for([&] { return ch.rx->blocked() >= 1; });
    const bool probed = n.probe() && n.probe(); // wake-ups that bring nothing for the channel
    receiver.join();
    REQUIRE(parked);
    REQUIRE(probed);
    CHECK(got == Status::timed_out);
    CHECK(took.load() >= timeout);
    CHECK(ch.rx->blocked() == 0);
}

TEMPLATE_TEST_CASE("net channel wait: a stop from another thread of the process ends a parked "
                   "receive and a parked send",
                   "[net]", Typed, Messages) {
    Nodes n;
    SECTION("receive") {
        TestType ch(n, "stop-rx-" + std::to_string(::getpid()));
        std::atomic<Status> got{Status::ok};
        std::thread receiver([&] { got = ch.receive(ferry::Timeout(k_bound)); });
        const bool parked = ipc_test::poll_for([&] { return ch.rx->blocked() >= 1; });
        const auto stopped_at = Clock::now();
        ch.rx->stop();
        receiver.join();
        REQUIRE(parked);
        CHECK(got == Status::stopped);
        CHECK(Clock::now() - stopped_at < k_bound / 2);
    }
    SECTION("send") {
        TestType ch(n, "stop-tx-" + std::to_string(::getpid()));
        for (std::size_t i = 0; i < net_test::k_small; ++i) { // every credit spent, none back
            REQUIRE(ch.send(ferry::Timeout(k_bound)) == Status::ok);
        }
        std::atomic<Status> got{Status::ok};
        std::thread sender([&] { got = ch.send(ferry::Timeout(k_bound)); });
        const bool parked = ipc_test::poll_for([&] { return ch.tx->blocked() >= 1; });
        const auto stopped_at = Clock::now();
        ch.tx->stop();
        sender.join();
        REQUIRE(parked);
        CHECK(got == Status::stopped);
        CHECK(Clock::now() - stopped_at < k_bound / 2);
    }
}
