// detail::EventCount and the futex under it: a timed wait never returns before its deadline, a
// notification after prepare_wait() is never lost, notify_all wakes every sleeper.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <ferry/channel/detail/event_count.hpp>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using clock_type = ferry::detail::futex_clock;

TEST_CASE("futex timed wait returns no earlier than its deadline") {
    std::atomic<std::uint32_t> word{0};
    for (const auto wait : {std::chrono::microseconds(10), std::chrono::microseconds(500),
                            std::chrono::microseconds(2000)}) {
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
    ferry::detail::futex_wait_until(word, 0,
                                    clock_type::time_point::max()); // would hang if it slept
    CHECK(clock_type::now() >= start);
}

TEST_CASE("a notification between prepare_wait and wait_until is not lost") {
    ferry::detail::EventCount event(GENERATE(true, false)); // membarrier and RMW modes
    const auto key = event.prepare_wait();
    CHECK(event.has_sleepers());
    event.notify();                    // arrives before the sleep
    CHECK_FALSE(event.has_sleepers()); // consumed: later notifiers skip the syscall
    event.wait_until(key, clock_type::time_point::max()); // must return at once
}

TEST_CASE("a consumed announcement cannot be slept on after someone else re-announces") {
    // A announces, a notification consumes it, B announces again: A's key must not match.
    ferry::detail::EventCount event(GENERATE(true, false)); // membarrier and RMW modes
    const auto key_a = event.prepare_wait();
    event.notify();
    const auto key_b = event.prepare_wait();
    CHECK(key_a != key_b);
    event.wait_until(key_a, clock_type::time_point::max()); // would hang if the epoch had not moved
    CHECK(event.has_sleepers());                            // B's announcement stands
}

TEST_CASE("notify with no announced sleeper changes nothing") {
    ferry::detail::EventCount event(GENERATE(true, false)); // membarrier and RMW modes
    event.notify();
    const auto key = event.prepare_wait();
    event.notify();
    CHECK(event.prepare_wait() != key);
}

TEST_CASE("notify wakes every sleeper; a flag set before notify is seen by all") {
    constexpr int k_threads = 4;
    ferry::detail::EventCount event(GENERATE(true, false)); // membarrier and RMW modes
    std::atomic<bool> ready{false};
    std::atomic<int> announced{0};
    std::atomic<int> woke{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < k_threads; ++i) {
        threads.emplace_back([&] {
            bool first = true;
            for (;;) {
                const auto key = event.prepare_wait();
                if (first) {
                    announced.fetch_add(1);
                    first = false;
                }
                if (ready.load()) {
                    break;
                }
                event.wait_until(key, clock_type::time_point::max());
            }
            woke.fetch_add(1);
        });
    }
    while (announced.load() < k_threads) {
        std::this_thread::sleep_for(100us);
    }
    std::this_thread::sleep_for(1ms); // most of them are asleep in the kernel by now
    ready.store(true);
    event.notify();
    for (auto& t : threads) {
        t.join();
    }
    CHECK(woke.load() == k_threads);
}
