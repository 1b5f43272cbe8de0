// detail::EventCount and the futex under it: a timed wait never returns before its deadline, a
// notification after prepare_wait() is never lost, notify_all wakes every sleeper.
#include <catch2/catch.hpp>

#include <ferry/channel/detail/event_count.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using clock_type = ferry::detail::futex_clock;

TEST_CASE("futex timed wait returns no earlier than its deadline") {
    std::atomic<std::uint32_t> word{0};
    for (const auto wait : {std::chrono::microseconds(10), std::chrono::microseconds(500), std::chrono::microseconds(2000)}) {
        const auto deadline = clock_type::now() + wait;
        // The futex may return early for its own reasons; the caller's loop on the deadline is
        // what the channel relies on, so test exactly that loop.
        while (clock_type::now() < deadline) {
            ferry::detail::futex_wait_until(word, 0, deadline);
        }
        CHECK(clock_type::now() >= deadline);
    }
}

TEST_CASE("a futex wait on a changed word returns at once") {
    std::atomic<std::uint32_t> word{1};
    const auto start = clock_type::now();
    ferry::detail::futex_wait_until(word, 0, clock_type::time_point::max()); // would hang if it slept
    CHECK(clock_type::now() >= start);
}

TEST_CASE("a notification between prepare_wait and wait_until is not lost") {
    ferry::detail::EventCount event;
    const auto key = event.prepare_wait();
    CHECK(event.waiters() == 1);
    event.notify_one();                                    // arrives before the sleep
    event.wait_until(key, clock_type::time_point::max()); // must return at once
    CHECK(event.waiters() == 0);
}

TEST_CASE("cancel_wait withdraws the announcement; notify with no waiters is a no-op") {
    ferry::detail::EventCount event;
    const auto key = event.prepare_wait();
    event.cancel_wait();
    CHECK(event.waiters() == 0);
    event.notify_all();
    CHECK(event.prepare_wait() == key); // no waiter: the epoch was not bumped
    event.cancel_wait();
}

TEST_CASE("notify_all wakes every sleeper; a flag set before notify is seen by all") {
    constexpr int k_threads = 4;
    ferry::detail::EventCount event;
    std::atomic<bool> ready{false};
    std::atomic<int> woke{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < k_threads; ++i) {
        threads.emplace_back([&] {
            for (;;) {
                const auto key = event.prepare_wait();
                if (ready.load()) {
                    event.cancel_wait();
                    break;
                }
                event.wait_until(key, clock_type::time_point::max());
            }
            woke.fetch_add(1);
        });
    }
    while (event.waiters() < k_threads) {
        std::this_thread::sleep_for(100us);
    }
    ready.store(true);
    event.notify_all();
    for (auto& t : threads) {
        t.join();
    }
    CHECK(woke.load() == k_threads);
    CHECK(event.waiters() == 0);
}
