// stop() and clear() against blocked threads (docs/cann-contract/tdt.md#stop): stop wakes every
// blocked sender and receiver at once and is sticky for threads that arrive later; clear wakes
// blocked senders. Worker threads record what happened; the main thread asserts after joining
// (Catch2 2.x is not thread-safe).
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <ferry/channel/channel.hpp>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using ferry::Status;

namespace {
// The same channel with barriers on both sides (no membarrier): the fallback mode.
struct symmetric_mpmc : ferry::mpmc {
    static constexpr bool asymmetric_barrier = false;
};

constexpr int k_senders = 4;
constexpr int k_receivers = 4;

struct SendOutcome {
    Status status = Status::failure;
    bool value_kept = false;
};

template <typename Channel>
void wait_until_blocked(const Channel& ch, std::size_t n) {
    while (ch.blocked() < n) {
        std::this_thread::yield();
    }
}

// Starts `count` threads that each try to send one unique_ptr with `timeout`.
template <typename Channel>
std::vector<std::thread> start_senders(Channel& ch, std::vector<SendOutcome>& outcomes,
                                       ferry::Timeout timeout, int count = k_senders) {
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i) {
        threads.emplace_back([&ch, &outcomes, i, timeout] {
            auto value = std::make_unique<int>(100 + i);
            outcomes[i].status = ch.send(std::move(value), timeout);
            outcomes[i].value_kept = value != nullptr && *value == 100 + i;
        });
    }
    return threads;
}

void join_all(std::vector<std::thread>& threads) {
    for (auto& t : threads) {
        t.join();
    }
}
} // namespace

TEMPLATE_TEST_CASE("stop wakes every blocked sender, value handed back", "", ferry::spsc,
                   ferry::mpmc, symmetric_mpmc) {
    // spsc admits one sender at a time: several blocked senders is an mpmc situation; spsc gets
    // one.
    const int senders = TestType::multi_producer ? k_senders : 1;
    for (const ferry::Timeout timeout : {ferry::forever, ferry::Timeout(1h)}) {
        ferry::Channel<std::unique_ptr<int>, 2, TestType> ch;
        REQUIRE(ch.send(std::make_unique<int>(1)) == Status::ok);
        REQUIRE(ch.send(std::make_unique<int>(2)) == Status::ok);
        std::vector<SendOutcome> outcomes(k_senders);
        auto threads = start_senders(ch, outcomes, timeout, senders);
        wait_until_blocked(ch, static_cast<std::size_t>(senders));
        ch.stop();
        join_all(threads);
        CHECK(ch.blocked() == 0);
        for (int i = 0; i < senders; ++i) {
            CHECK(outcomes[i].status == Status::stopped);
            CHECK(outcomes[i].value_kept);
        }
        // The two items queued before stop are still delivered, then stopped.
        CHECK(*ch.receive().value() == 1);
        CHECK(*ch.receive().value() == 2);
        CHECK(ch.receive().status() == Status::stopped);
    }
}

TEMPLATE_TEST_CASE("stop wakes every blocked receiver", "", ferry::spsc, ferry::mpmc,
                   symmetric_mpmc) {
    const int receivers = TestType::multi_consumer ? k_receivers : 1;
    ferry::Channel<int, 64, TestType> ch;
    std::vector<Status> outcomes(k_receivers, Status::failure);
    std::vector<std::thread> threads;
    for (int i = 0; i < receivers; ++i) {
        threads.emplace_back([&ch, &outcomes, i] {
            outcomes[i] = ch.receive(i % 2 == 0 ? ferry::forever : ferry::Timeout(1h)).status();
        });
    }
    wait_until_blocked(ch, static_cast<std::size_t>(receivers));
    ch.stop();
    join_all(threads);
    for (int i = 0; i < receivers; ++i) {
        CHECK(outcomes[i] == Status::stopped);
    }
    // Sticky: a thread that arrives after stop() does not block either.
    std::atomic<Status> late{Status::failure};
    std::thread latecomer([&] { late.store(ch.receive().status()); });
    latecomer.join();
    CHECK(late.load() == Status::stopped);
}

TEST_CASE("mpmc: N blocked senders and M blocked receivers all wake on stop") {
    // N senders blocked on a full channel and M receivers blocked on an empty one, woken together.
    ferry::Channel<std::unique_ptr<int>, 2, ferry::mpmc> full;
    ferry::Channel<std::unique_ptr<int>, 2, ferry::mpmc> empty;
    REQUIRE(full.send(std::make_unique<int>(1)) == Status::ok);
    REQUIRE(full.send(std::make_unique<int>(2)) == Status::ok);
    std::vector<SendOutcome> sends(k_senders);
    std::vector<Status> receives(k_receivers, Status::failure);
    auto threads = start_senders(full, sends, ferry::forever);
    for (int i = 0; i < k_receivers; ++i) {
        threads.emplace_back([&empty, &receives, i] { receives[i] = empty.receive().status(); });
    }
    wait_until_blocked(full, k_senders);
    wait_until_blocked(empty, k_receivers);
    full.stop();
    empty.stop();
    join_all(threads);
    for (const auto& s : sends) {
        CHECK(s.status == Status::stopped);
        CHECK(s.value_kept);
    }
    for (Status s : receives) {
        CHECK(s == Status::stopped);
    }
}

TEST_CASE("clear wakes blocked senders, which then fill the freed slots") {
    ferry::Channel<std::unique_ptr<int>, 2, ferry::mpmc> ch;
    REQUIRE(ch.send(std::make_unique<int>(1)) == Status::ok);
    REQUIRE(ch.send(std::make_unique<int>(2)) == Status::ok);
    std::vector<SendOutcome> outcomes(k_senders);
    auto threads = start_senders(ch, outcomes, ferry::forever);
    wait_until_blocked(ch, k_senders);
    CHECK(ch.clear() == 2);
    // Two of the four senders get the two freed slots; the other two stay blocked.
    while (ch.size() < 2 || ch.blocked() > k_senders - 2) {
        std::this_thread::yield();
    }
    ch.stop(); // releases the rest
    join_all(threads);
    int ok = 0;
    int stopped = 0;
    for (const auto& o : outcomes) {
        ok += o.status == Status::ok ? 1 : 0;
        stopped += o.status == Status::stopped && o.value_kept ? 1 : 0;
    }
    CHECK(ok == 2);
    CHECK(stopped == k_senders - 2);
    // The two sent values are the senders' (100..103), not the cleared 1 and 2.
    for (int i = 0; i < 2; ++i) {
        auto r = ch.receive();
        REQUIRE(r.has_value());
        CHECK(**r >= 100);
    }
    CHECK(ch.receive().status() == Status::stopped);
}

TEST_CASE("spsc: clear from the receiving side wakes the blocked sender") {
    ferry::Channel<int, 2> ch;
    REQUIRE(ch.send(1) == Status::ok);
    REQUIRE(ch.send(2) == Status::ok);
    std::atomic<Status> sent{Status::failure};
    std::thread sender([&] { sent.store(ch.send(3)); });
    wait_until_blocked(ch, 1);
    CHECK(ch.clear() == 2);
    sender.join();
    CHECK(sent.load() == Status::ok);
    auto third = ch.try_receive();
    REQUIRE(third.has_value());
    CHECK(*third == 3);
}

namespace {
// An item that runs `on_drop` (once, on its own thread) when a live one is destroyed in the ring.
struct Tracked {
    static inline std::function<void()> on_drop;
    int value = 0;
    bool live = false;

    Tracked() = default;
    explicit Tracked(int v) noexcept : value(v), live(true) {}
    Tracked(Tracked&& o) noexcept : value(o.value), live(std::exchange(o.live, false)) {}
    Tracked& operator=(Tracked&& o) noexcept {
        value = o.value;
        live = std::exchange(o.live, false);
        return *this;
    }
    ~Tracked() {
        if (live && on_drop) {
            std::exchange(on_drop, nullptr)();
        }
    }
};
} // namespace

TEST_CASE("spsc: clear drops what was queued when it began, not an item sent meanwhile") {
    // The first drop sends a third item from another thread and waits for its answer, so the send
    // lands while clear() runs. A drain that popped until empty took it too (and, against a sender
    // that keeps refilling, never returned).
    ferry::Channel<Tracked, 4> ch;
    REQUIRE(ch.send(Tracked(1)) == Status::ok);
    REQUIRE(ch.send(Tracked(2)) == Status::ok);
    Status sent = Status::failure;
    Tracked::on_drop = [&] { std::thread([&] { sent = ch.send(Tracked(3)); }).join(); };
    CHECK(ch.clear() == 2);
    CHECK(sent == Status::ok);
    auto third = ch.try_receive();
    REQUIRE(third.has_value());
    CHECK(third->value == 3);
    CHECK(ch.empty());
    Tracked::on_drop = nullptr;
}
