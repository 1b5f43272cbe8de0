// Channel counters (ferry/channel/stats.hpp; docs/channel.md, Counters): every count after a
// known sequence of calls, time parked, the high-water mark, counts from several threads, and a
// policy without counters.
#include "stats_support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <ferry/channel/channel.hpp>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using ferry::Status;

using stats_test::HasStats;
using stats_test::uncounted;

static_assert(HasStats<ferry::Channel<int, 4>>);
static_assert(!HasStats<ferry::Channel<int, 4, uncounted>>);

TEMPLATE_TEST_CASE("counters after a known sequence of calls", "", ferry::spsc, ferry::mpmc) {
    ferry::Channel<std::uint32_t, 4, TestType> ch;
    CHECK(ch.stats() == ferry::ChannelStats{});

    for (std::uint32_t i = 0; i < 4; ++i) {
        REQUIRE(ch.try_send(std::uint32_t{i}) == Status::ok);
    }
    CHECK(ch.try_send(9U) == Status::full);           // found full, refused
    CHECK(ch.send_for(9U, 1ms) == Status::timed_out); // found full, refused
    REQUIRE(ch.try_receive().has_value());
    REQUIRE(ch.try_receive().has_value());
    CHECK(ch.clear() == 2);
    CHECK(ch.try_receive().status() == Status::empty);        // found empty
    CHECK(ch.receive_for(1ms).status() == Status::timed_out); // found empty
    ch.stop();
    CHECK(ch.try_send(9U) == Status::stopped); // refused, not full

    const ferry::ChannelStats s = ch.stats();
    CHECK(s.sent == 4);
    CHECK(s.sent_bytes == 4 * sizeof(std::uint32_t));
    CHECK(s.received == 2);
    CHECK(s.received_bytes == 2 * sizeof(std::uint32_t));
    CHECK(s.full == 2);
    CHECK(s.refused == 3);
    CHECK(s.empty == 2);
    CHECK(s.dropped_by_clear == 2);
    CHECK(s.high_water == 4); // the capacity, once a send found the channel full
}

TEST_CASE("the high-water mark samples the depth without a full channel") {
    ferry::Channel<int, 256> ch;
    for (int i = 0; i < 64; ++i) { // the 64th send samples a depth of 64
        REQUIRE(ch.try_send(int{i}) == Status::ok);
    }
    CHECK(ch.stats().high_water == 64);
    CHECK(ch.stats().full == 0);
}

TEST_CASE("a ring smaller than the sample period is still sampled, about every 64 sends") {
    ferry::Channel<int, 4> ch; // 4 cells: one wrap in 16 is sampled
    for (int i = 0; i < 3; ++i) {
        REQUIRE(ch.try_send(int{i}) == Status::ok);
    }
    for (int i = 3; i < 3 + 64; ++i) { // the depth stays at 3, the channel never full
        REQUIRE(ch.try_receive().has_value());
        REQUIRE(ch.try_send(int{i}) == Status::ok);
        CHECK(ch.stats().high_water <= 3);
    }
    CHECK(ch.stats().high_water == 3); // sampled at least once in 64 sends
    CHECK(ch.stats().full == 0);
}

TEST_CASE("time parked is counted for the side that waited") {
    ferry::Channel<int, 2> ch;
    SECTION("a timed receive that expires") {
        const auto started = std::chrono::steady_clock::now();
        CHECK(ch.receive_for(30ms).status() == Status::timed_out);
        const auto took = std::chrono::steady_clock::now() - started;
        const auto s = ch.stats();
        // Parked for all of it but the short spin phase; never longer than the call.
        CHECK(s.receive_blocked_ns >= 15'000'000U);
        CHECK(s.receive_blocked_ns <=
              static_cast<std::uint64_t>(std::chrono::nanoseconds(took).count()));
        CHECK(s.send_blocked_ns == 0);
    }
    SECTION("a blocked send released by a receive") {
        REQUIRE(ch.try_send(1) == Status::ok);
        REQUIRE(ch.try_send(2) == Status::ok);
        std::atomic<Status> got{Status::failure}; // Catch's checks stay on this thread
        std::thread sender([&ch, &got] { got = ch.send(3); });
        while (ch.blocked() == 0) { // the sender is parked
            std::this_thread::yield();
        }
        REQUIRE(ch.try_receive().has_value());
        sender.join();
        CHECK(got == Status::ok);
        const auto s = ch.stats();
        CHECK(s.send_blocked_ns > 0);
        CHECK(s.receive_blocked_ns == 0);
        CHECK(s.full == 1);
        CHECK(s.sent == 3);
        CHECK(s.refused == 0);
    }
}

TEST_CASE("counts from several senders and receivers add up exactly") {
    constexpr int k_threads = 3;
    constexpr std::uint64_t k_each = 5000;
    ferry::Channel<std::uint64_t, 8, ferry::mpmc> ch;
    std::atomic<int> failures{0}; // counted by the threads, checked by this one
    std::vector<std::thread> threads;
    for (int t = 0; t < k_threads; ++t) {
        threads.emplace_back([&ch, &failures] {
            for (std::uint64_t i = 0; i < k_each; ++i) {
                failures += ch.send(std::uint64_t{i}) == Status::ok ? 0 : 1;
            }
        });
        threads.emplace_back([&ch, &failures] {
            for (std::uint64_t i = 0; i < k_each; ++i) {
                failures += ch.receive().has_value() ? 0 : 1;
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    CHECK(failures == 0);
    const auto s = ch.stats();
    CHECK(s.sent == k_threads * k_each);
    CHECK(s.received == k_threads * k_each);
    CHECK(s.sent_bytes == k_threads * k_each * sizeof(std::uint64_t));
    CHECK(s.refused == 0);
    CHECK(s.high_water <= 8);
}

TEST_CASE("a policy without counters still sends and receives") {
    ferry::Channel<int, 2, uncounted> ch;
    REQUIRE(ch.try_send(5) == Status::ok);
    CHECK(*ch.try_receive() == 5);
    static_assert(sizeof(ferry::Channel<int, 2, uncounted>) < sizeof(ferry::Channel<int, 2>));
}

// The message counts come from the rings (docs/channel.md, Counters): an spsc ring's lap counts,
// an mpmc ring's positions. Fill, drain and clear to every depth for many laps, comparing each
// count with the calls' own after every round.
template <typename Channel>
void check_counts_over_laps(Channel& ch) {
    const std::uint64_t capacity = ch.capacity();
    ferry::ChannelStats want;
    for (std::uint64_t round = 0; round < 1000; ++round) {
        const std::uint64_t depth = round % (capacity + 1);
        for (std::uint64_t i = 0; i < depth; ++i) {
            REQUIRE(ch.try_send(std::uint64_t{i}) == Status::ok);
        }
        want.sent += depth;
        for (std::uint64_t i = 0; i < depth / 2; ++i) {
            REQUIRE(ch.try_receive().has_value());
        }
        want.received += depth / 2;
        if (round % 5 == 0) {
            want.dropped_by_clear += ch.clear(); // cleared: dropped, not received
        } else {
            while (ch.try_receive().has_value()) {
                ++want.received;
            }
        }
        const ferry::ChannelStats s = ch.stats();
        REQUIRE(s.sent == want.sent);
        REQUIRE(s.received == want.received);
        REQUIRE(s.dropped_by_clear == want.dropped_by_clear);
        REQUIRE(s.sent_bytes == want.sent * sizeof(std::uint64_t));
        REQUIRE(s.received_bytes == want.received * sizeof(std::uint64_t));
    }
    CHECK(want.sent > 100 * capacity); // many laps of the ring
    CHECK(want.dropped_by_clear > 0);
}

TEMPLATE_TEST_CASE("message counts stay exact over many laps of the ring", "", ferry::spsc,
                   ferry::mpmc) {
    SECTION("capacity 2") {
        ferry::Channel<std::uint64_t, 2, TestType> ch;
        check_counts_over_laps(ch);
    }
    SECTION("a dynamic capacity") {
        ferry::Channel<std::uint64_t, ferry::dynamic_capacity, TestType> ch(5);
        check_counts_over_laps(ch);
    }
}

TEMPLATE_TEST_CASE("stats() read while both sides run never goes back", "", ferry::spsc,
                   ferry::mpmc) {
    constexpr std::uint64_t k_messages = 5'000; // 1666 laps of a 3-cell ring
    ferry::Channel<std::uint64_t, 2, TestType> ch;
    std::atomic<bool> done{false};
    std::atomic<int> wrong{0}; // counted by the reader, checked by this thread
    std::thread reader([&ch, &done, &wrong] {
        ferry::ChannelStats last;
        while (!done.load(std::memory_order_acquire)) {
            const ferry::ChannelStats s = ch.stats();
            // A count taken later is never smaller, and nothing is received before it was sent
            // (stats() reads the receiving side first).
            wrong += s.sent < last.sent || s.received < last.received || s.received > s.sent;
            last = s;
            std::this_thread::yield(); // the two sides may share this thread's CPU
        }
    });
    std::thread sender([&ch] {
        for (std::uint64_t i = 0; i < k_messages; ++i) {
            (void)ch.send(std::uint64_t{i});
        }
    });
    std::uint64_t got = 0;
    for (std::uint64_t i = 0; i < k_messages; ++i) {
        got += ch.receive().has_value() ? 1 : 0;
    }
    sender.join();
    done.store(true, std::memory_order_release);
    reader.join();
    CHECK(got == k_messages);
    CHECK(wrong == 0);
    CHECK(ch.stats().sent == k_messages);
    CHECK(ch.stats().received == k_messages);
}
