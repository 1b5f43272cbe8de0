// The mpmc ring with a send in flight (docs/channel.md, "A send in flight"): a sender that has
// claimed the head position but not yet published its item must not make a receive or clear()
// report "empty" / "stopped" while completed sends queue behind it.
//
// Deterministic construction, no test seam: the ring moves the item into its cell between the
// claim and the publication, so an item whose move constructor waits on a gate holds its sender
// exactly there. A receiver that waits for that publication counts itself in blocked(), which is
// the observable state the main thread waits for before it opens the gate.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <ferry/channel/channel.hpp>
#include <optional>
#include <thread>
#include <utility>

using namespace std::chrono_literals;
using ferry::Status;

namespace {

struct Gate {
    std::atomic<bool> entered{false};
    std::atomic<bool> open{false};
};

// An item whose first move (the one into the ring's cell) waits until its gate opens.
struct Held {
    int value = 0;
    Gate* gate = nullptr;

    explicit Held(int v, Gate* g = nullptr) noexcept : value(v), gate(g) {}
    Held(Held&& other) noexcept : value(other.value) {
        if (Gate* g = std::exchange(other.gate, nullptr); g != nullptr) {
            g->entered.store(true);
            while (!g->open.load()) {
                std::this_thread::yield();
            }
        }
    }
    Held& operator=(Held&& other) noexcept {
        value = other.value;
        gate = std::exchange(other.gate, nullptr);
        return *this;
    }
    ~Held() = default;
};

using Ch = ferry::Channel<Held, 4, ferry::mpmc>;

// Sends 1 from its own thread and leaves that sender between claim and publication (position 0),
// then completes sends of 2 and 3 (positions 1 and 2) from the calling thread.
class InFlight {
public:
    explicit InFlight(Ch& ch) : ch_(ch) {
        sender_ = std::thread([this] { status_.store(ch_.send(Held(1, &gate_))); });
        while (!gate_.entered.load()) {
            std::this_thread::yield();
        }
        // CHECK, not REQUIRE: a throw here would skip the destructor that opens the gate.
        CHECK(ch_.send(Held(2)) == Status::ok);
        CHECK(ch_.send(Held(3)) == Status::ok);
    }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    ~InFlight() { finish(); }

    // Waits until `done` or until a thread waits in the channel, then lets the sender publish.
    void release_when_waited_on(const std::atomic<bool>& done) {
        while (!done.load() && ch_.blocked() == 0) {
            std::this_thread::yield();
        }
        finish();
    }
    [[nodiscard]] Status status() const { return status_.load(); }

private:
    void finish() {
        gate_.open.store(true);
        if (sender_.joinable()) {
            sender_.join();
        }
    }

    Ch& ch_;
    Gate gate_;
    std::atomic<Status> status_{Status::failure};
    std::thread sender_;
};

// Runs `call` on its own thread while a send is held in flight ahead of two completed ones
// (stopping the channel first if asked); returns what it returned.
template <typename Call>
auto with_send_in_flight(Ch& ch, bool stop_first, Call call) {
    InFlight in_flight(ch);
    if (stop_first) {
        ch.stop();
    }
    CHECK(ch.size() == 3); // the claimed position counts: three sends answered or will answer ok
    std::atomic<bool> done{false};
    std::optional<decltype(call())> result;
    std::thread caller([&] {
        result.emplace(call());
        done.store(true);
    });
    in_flight.release_when_waited_on(done);
    caller.join();
    CHECK(in_flight.status() == Status::ok);
    return std::move(*result);
}

// What a receive returned: the item's value, or -1.
int value_of(const ferry::Result<Held>& r) {
    return r.has_value() ? r->value : -1;
}

} // namespace

TEST_CASE("mpmc: a receive after stop waits for the send in flight, then drains everything") {
    Ch ch;
    const auto first = with_send_in_flight(ch, true, [&] { return ch.receive(); });
    CHECK(first.status() == Status::ok);
    CHECK(value_of(first) == 1);
    CHECK(ch.size() == 2);
    CHECK(value_of(ch.receive()) == 2);
    CHECK(value_of(ch.receive()) == 3);
    CHECK(ch.receive().status() == Status::stopped);
    CHECK(ch.size() == 0);
}

TEST_CASE("mpmc: a timed receive after stop waits for the send in flight") {
    Ch ch;
    const auto first = with_send_in_flight(ch, true, [&] { return ch.receive_for(1h); });
    CHECK(value_of(first) == 1);
    CHECK(value_of(ch.receive_for(1h)) == 2);
    CHECK(value_of(ch.receive_for(1h)) == 3);
    CHECK(ch.receive_for(1h).status() == Status::stopped);
}

TEST_CASE("mpmc: try_receive waits for the send in flight instead of answering empty") {
    Ch ch;
    const auto first = with_send_in_flight(ch, false, [&] { return ch.try_receive(); });
    CHECK(first.status() == Status::ok);
    CHECK(value_of(first) == 1);
    CHECK(ch.size() == 2);
    CHECK(value_of(ch.try_receive()) == 2);
    CHECK(value_of(ch.try_receive()) == 3);
    CHECK(ch.try_receive().status() == Status::empty);
}

TEST_CASE("mpmc: a timed receive whose deadline has passed returns the item, not empty") {
    // A deadline already past makes one attempt; that attempt must see the queued items.
    Ch ch;
    const auto first =
        with_send_in_flight(ch, false, [&] { return ch.receive_until(Ch::clock::now() - 1ms); });
    CHECK(value_of(first) == 1);
    CHECK(value_of(ch.receive_for(1h)) == 2);
    CHECK(value_of(ch.receive_for(1h)) == 3);
    CHECK(ch.receive_for(1ms).status() == Status::timed_out);
}

TEST_CASE("mpmc: clear waits for the send in flight and drops all three") {
    Ch ch;
    const std::size_t dropped = with_send_in_flight(ch, false, [&] { return ch.clear(); });
    CHECK(dropped == 3);
    CHECK(ch.size() == 0);
    CHECK(ch.try_receive().status() == Status::empty);
}
