// Channel semantics (docs/cann-contract/tdt.md#typed-channels), one thread unless a test says
// otherwise: FIFO order, every timeout form on a full and an empty channel, timeouts never early,
// move-only payloads, the value handed back on every failed send, drain after stop, clear, exact
// size.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <ferry/channel/channel.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using ferry::Status;
using steady = std::chrono::steady_clock;

namespace {
// A move-only payload that counts live objects, so lost or doubly destroyed items show up.
struct Tracked {
    static inline std::atomic<int> live{0};
    int value = 0;
    bool engaged = false;

    explicit Tracked(int v) : value(v), engaged(true) { live.fetch_add(1); }
    Tracked(Tracked&& other) noexcept : value(other.value), engaged(other.engaged) {
        other.engaged = false;
    }
    Tracked& operator=(Tracked&& other) noexcept {
        reset();
        value = other.value;
        engaged = other.engaged;
        other.engaged = false;
        return *this;
    }
    Tracked(const Tracked&) = delete;
    Tracked& operator=(const Tracked&) = delete;
    ~Tracked() { reset(); }
    void reset() noexcept {
        if (engaged) {
            live.fetch_sub(1);
            engaged = false;
        }
    }
};

template <typename Policy>
using small_channel = ferry::Channel<std::unique_ptr<int>, 2, Policy>;

template <typename Channel>
void fill(Channel& ch) {
    while (ch.size() < ch.capacity()) {
        REQUIRE(ch.try_send(std::make_unique<int>(0)) == Status::ok);
    }
}
} // namespace

TEMPLATE_TEST_CASE("FIFO order survives many laps of the ring", "", ferry::spsc, ferry::mpmc) {
    ferry::Channel<int, ferry::dynamic_capacity, TestType> ch(5);
    int next_in = 0;
    int next_out = 0;
    for (int round = 0; round < 100; ++round) {
        const int burst = 1 + round % 5;
        for (int i = 0; i < burst; ++i) {
            REQUIRE(ch.try_send(next_in++) == Status::ok);
        }
        for (int i = 0; i < burst; ++i) {
            auto r = ch.try_receive();
            REQUIRE(r.has_value());
            REQUIRE(*r == next_out++);
        }
    }
    CHECK(ch.empty());
}

TEMPLATE_TEST_CASE("a full channel: every send form fails and hands the value back", "",
                   ferry::spsc, ferry::mpmc) {
    small_channel<TestType> ch;
    fill(ch);
    auto value = std::make_unique<int>(42);
    int* const address = value.get();
    const auto kept = [&] { return value != nullptr && value.get() == address && *value == 42; };

    CHECK(ch.try_send(std::move(value)) == Status::full);
    CHECK(kept());
    CHECK(ch.send(std::move(value), ferry::no_wait) == Status::full);
    CHECK(kept());
    CHECK(ch.send(std::move(value), *ferry::Timeout::from_milliseconds(0)) == Status::full);
    CHECK(kept());
    CHECK(ch.send_for(std::move(value), -5ms) == Status::full);
    CHECK(kept());
    CHECK(ch.send_until(std::move(value), steady::now() - 1s) == Status::full);
    CHECK(kept());
    CHECK(ch.send_for(std::move(value), 2ms) == Status::timed_out);
    CHECK(kept());
    CHECK(ch.send(std::move(value), 1ms) == Status::timed_out);
    CHECK(kept());
    CHECK(ch.send_until(std::move(value), steady::now() + 1ms) == Status::timed_out);
    CHECK(kept());
    CHECK(ch.send(std::move(value), *ferry::Timeout::from_milliseconds(1)) == Status::timed_out);
    CHECK(kept());
    CHECK(ch.size() == 2);

    ch.stop();
    CHECK(ch.send(std::move(value)) == Status::stopped); // forever, but stopped: no wait
    CHECK(kept());
    CHECK(ch.try_send(std::move(value)) == Status::stopped);
    CHECK(kept());
}

TEMPLATE_TEST_CASE("an empty channel: every receive form fails without blocking forever", "",
                   ferry::spsc, ferry::mpmc) {
    small_channel<TestType> ch;
    CHECK(ch.try_receive().status() == Status::empty);
    CHECK(ch.receive(ferry::no_wait).status() == Status::empty);
    CHECK(ch.receive_for(-1ms).status() == Status::empty);
    CHECK(ch.receive_until(steady::now() - 1s).status() == Status::empty);
    CHECK(ch.receive_for(2ms).status() == Status::timed_out);
    CHECK(ch.receive(1ms).status() == Status::timed_out);
    CHECK(ch.receive_until(steady::now() + 1ms).status() == Status::timed_out);
    std::unique_ptr<int> out = std::make_unique<int>(7);
    CHECK(ch.receive(out, ferry::no_wait) == Status::empty);
    CHECK(ch.receive(out, 1ms) == Status::timed_out);
    REQUIRE(out != nullptr);
    CHECK(*out == 7); // untouched on failure
}

// A wait whose deadline has passed by the time the call gets to waiting (a 1 ns timeout always
// has; so has a short one on a slow or preempted thread) expired: timed_out, not the no_wait
// answer that a deadline already past when the caller gave it gets.
TEMPLATE_TEST_CASE("a timed wait that expired before it began waiting answers timed_out", "",
                   ferry::spsc, ferry::mpmc) {
    using namespace std::chrono_literals;
    small_channel<TestType> empty_ch;
    small_channel<TestType> full_ch;
    fill(full_ch);
    CHECK(empty_ch.receive_for(1ns).status() == Status::timed_out);
    auto value = std::make_unique<int>(1);
    CHECK(full_ch.send_for(std::move(value), 1ns) == Status::timed_out);
    REQUIRE(value != nullptr); // untouched
    CHECK(empty_ch.receive_until(steady::now() - 1ns).status() == Status::empty);
    CHECK(full_ch.send_until(std::move(value), steady::now() - 1ns) == Status::full);
}

TEMPLATE_TEST_CASE("timed waits never return early", "", ferry::spsc, ferry::mpmc) {
    small_channel<TestType> empty_ch;
    small_channel<TestType> full_ch;
    fill(full_ch);
    for (const auto wait : {std::chrono::microseconds(50), std::chrono::microseconds(1000),
                            std::chrono::microseconds(5000)}) {
        auto start = steady::now();
        CHECK(empty_ch.receive_for(wait).status() == Status::timed_out);
        CHECK(steady::now() - start >= wait);

        auto value = std::make_unique<int>(1);
        start = steady::now();
        CHECK(full_ch.send_for(std::move(value), wait) == Status::timed_out);
        CHECK(steady::now() - start >= wait);

        const auto deadline = steady::now() + wait;
        CHECK(empty_ch.receive_until(deadline).status() == Status::timed_out);
        CHECK(steady::now() >= deadline);
    }
    const auto start = steady::now();
    CHECK(empty_ch.receive(*ferry::Timeout::from_milliseconds(3)).status() == Status::timed_out);
    CHECK(steady::now() - start >= 3ms);
}

TEMPLATE_TEST_CASE("move-only payloads: nothing leaks, nothing is destroyed twice", "", ferry::spsc,
                   ferry::mpmc) {
    REQUIRE(Tracked::live.load() == 0);
    {
        ferry::Channel<Tracked, 4, TestType> ch;
        for (int i = 0; i < 4; ++i) {
            REQUIRE(ch.send(Tracked(i)) == Status::ok);
        }
        CHECK(Tracked::live.load() == 4);
        Tracked extra(99);
        CHECK(ch.try_send(std::move(extra)) == Status::full);
        CHECK(extra.engaged);
        CHECK(extra.value == 99);

        auto first = ch.receive();
        REQUIRE(first.has_value());
        CHECK(first->value == 0);
        Tracked out(-1);
        REQUIRE(ch.receive(out) == Status::ok);
        CHECK(out.value == 1);
        CHECK(Tracked::live.load() == 5); // 2 queued + first + out + extra
    } // destroying the channel destroys the 2 items still queued
    CHECK(Tracked::live.load() == 0);
}

TEMPLATE_TEST_CASE("copyable payloads can be sent by const reference", "", ferry::spsc,
                   ferry::mpmc) {
    ferry::Channel<std::string, 2, TestType> ch;
    const std::string hello = "hello";
    CHECK(ch.send(hello) == Status::ok);
    CHECK(ch.try_send(hello) == Status::ok);
    CHECK(ch.try_send(hello) == Status::full);
    CHECK(hello == "hello");
    CHECK(ch.receive().value() == "hello");
}

TEMPLATE_TEST_CASE("stop: sticky, idempotent; send fails, receive drains then reports stopped", "",
                   ferry::spsc, ferry::mpmc) {
    ferry::Channel<int, 8, TestType> ch;
    CHECK_FALSE(ch.stopped());
    for (int i = 0; i < 3; ++i) {
        REQUIRE(ch.send(int{i}) == Status::ok);
    }
    ch.stop();
    ch.stop(); // idempotent
    CHECK(ch.stopped());
    CHECK(ch.try_send(10) == Status::stopped);
    CHECK(ch.send(11, 1s) == Status::stopped);
    CHECK(ch.size() == 3);
    for (int i = 0; i < 3; ++i) {
        auto r = ch.receive(); // forever, yet never blocks once stopped
        REQUIRE(r.has_value());
        CHECK(*r == i);
    }
    CHECK(ch.receive().status() == Status::stopped);
    CHECK(ch.try_receive().status() == Status::stopped);
    CHECK(ch.receive_for(1s).status() == Status::stopped);
    int out = -1;
    CHECK(ch.receive(out) == Status::stopped);
    CHECK(out == -1);
    CHECK(ch.stopped());
}

TEMPLATE_TEST_CASE("clear drops the queued items and frees their slots", "", ferry::spsc,
                   ferry::mpmc) {
    REQUIRE(Tracked::live.load() == 0);
    ferry::Channel<Tracked, 4, TestType> ch;
    CHECK(ch.clear() == 0);
    for (int i = 0; i < 4; ++i) {
        REQUIRE(ch.send(Tracked(i)) == Status::ok);
    }
    CHECK(ch.clear() == 4);
    CHECK(Tracked::live.load() == 0);
    CHECK(ch.size() == 0);
    CHECK(ch.try_receive().status() == Status::empty);
    for (int i = 0; i < 4; ++i) {
        REQUIRE(ch.try_send(Tracked(10 + i)) == Status::ok);
    }
    CHECK(ch.try_receive()->value == 10); // FIFO continues after a clear
    CHECK_FALSE(ch.stopped());            // clear is not stop
}

TEMPLATE_TEST_CASE("a blocked receiver gets an item sent later; a blocked sender gets a slot", "",
                   ferry::spsc, ferry::mpmc) {
    ferry::Channel<int, 2, TestType> ch;
    std::atomic<int> received{-1};
    std::thread receiver([&] {
        auto r = ch.receive();
        received.store(r.has_value() ? *r : -2);
    });
    while (ch.blocked() == 0) {
        std::this_thread::yield();
    }
    REQUIRE(ch.send(5) == Status::ok);
    receiver.join();
    CHECK(received.load() == 5);

    REQUIRE(ch.send(1) == Status::ok);
    REQUIRE(ch.send(2) == Status::ok);
    std::atomic<Status> sent{Status::failure};
    std::thread sender([&] { sent.store(ch.send(3)); });
    while (ch.blocked() == 0) {
        std::this_thread::yield();
    }
    CHECK(ch.receive().value() == 1);
    sender.join();
    CHECK(sent.load() == Status::ok);
    CHECK(ch.receive().value() == 2);
    CHECK(ch.receive().value() == 3);
}
