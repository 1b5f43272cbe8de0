// detail::EventCount and the futex under it: a timed wait never returns before its deadline, a
// notification after prepare_wait() is never lost, notify_all wakes every sleeper.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <ferry/channel/detail/event_count.hpp>
#include <fstream>
#include <string>
#include <sys/syscall.h>
#include <sys/types.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;
using clock_type = ferry::detail::futex_clock;

namespace {
// The scheduler's state letter for thread `tid` of this process ('S': asleep in a wait), from
// /proc/self/task/<tid>/stat; '?' if it cannot be read.
char scheduler_state(pid_t tid) {
    std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto name_end = line.rfind(')'); // the thread name may contain spaces and parentheses
    return name_end == std::string::npos || name_end + 2 >= line.size() ? '?' : line[name_end + 2];
}
} // namespace

TEST_CASE("futex timed wait returns no earlier than its deadline") {
    std::atomic<std::uint32_t> word{0};
    for (const auto wait : {std::chrono::microseconds(10), std::chrono::microseconds(500),
                            std::chrono::microseconds(2000)}) {
        const auto deadline = clock_type::now() + wait;
        // One call: nobody wakes this word and no signal arrives, so the kernel may return only
        // at the deadline. A deadline read on the wrong clock (CLOCK_REALTIME is years ahead of
        // CLOCK_MONOTONIC) or taken as relative would return at once or far too late.
        ferry::detail::futex_wait_until(word, 0, deadline);
        const auto returned = clock_type::now();
        CHECK(returned >= deadline);
        CHECK(returned < deadline + 10s); // generous: the machine may be loaded
    }
}

TEST_CASE("a futex wait on a changed word returns at once") {
    // The word is not the expected value, so the kernel must refuse to sleep. A wait that slept
    // anyway would return at its deadline (an hour from now) or hang the test.
    std::atomic<std::uint32_t> word{1};
    const auto deadline = clock_type::now() + 1h;
    ferry::detail::futex_wait_until(word, 0, deadline);
    CHECK(clock_type::now() < deadline);
    ferry::detail::futex_wait_until(word, 0, clock_type::time_point::max()); // the untimed form
    CHECK(clock_type::now() < deadline);
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
    std::vector<std::atomic<pid_t>> tids(k_threads);
    std::atomic<int> woke{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < k_threads; ++i) {
        threads.emplace_back([&, i] {
            bool first = true;
            for (;;) {
                const auto key = event.prepare_wait();
                if (first) { // announced: from here on its only blocking call is the futex wait
                    tids[i].store(static_cast<pid_t>(::syscall(SYS_gettid)));
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
    // Every thread asleep in the kernel, not merely announced: the wake-up itself is under test.
    for (auto& tid : tids) {
        while (tid.load() == 0 || scheduler_state(tid.load()) != 'S') {
            std::this_thread::yield();
        }
    }
    ready.store(true);
    event.notify();
    for (auto& t : threads) {
        t.join();
    }
    CHECK(woke.load() == k_threads);
}
