// Doorbell and DoorbellPark: a ring wakes a parked waiter at once; without a ring only the bounded
// park lets a waiter see run_flag. A wait that ends at its timeout still returns served when the
// flag is set by then, so these tests also bound how long the wake took: far below the timeout,
// far above what a ring or a park bound of a few milliseconds needs.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <ferry/afd.hpp>
#include <thread>

using namespace ferry::afd;
using namespace std::chrono_literals;

namespace {
struct Bell {
    LocalWindow local;
    ContextImage ctx;
    std::int32_t flag = 0;
    Bell() { ctx.view().set_run_flag(1); }
    [[nodiscard]] bool ready() const {
        return std::atomic_ref(const_cast<std::int32_t&>(flag)).load() == 1;
    }
    // Until the waiter has armed (registered as a sleeper); after that a ring cannot be lost.
    void wait_armed() const {
        while (std::atomic_ref(local.doorbell().word()->sleepers).load() == 0) {
            std::this_thread::yield();
        }
    }
};
} // namespace

TEST_CASE("a ring wakes a waiter parked on the doorbell", "[afd][doorbell]") {
    Bell b;
    std::atomic<int> exit{-1};
    std::thread waiter([&] {
        const ScheduleExit e = ferry::afd::detail::wait_until_ready(
            b.ctx.view(), DoorbellPark(b.local.doorbell(), 0, 60s), 20s, [&] { return b.ready(); });
        exit = static_cast<int>(e);
    });
    b.wait_armed();
    CHECK(b.local.window().publish(reinterpret_cast<std::uintptr_t>(&b.flag), 1) ==
          ferry::Status::ok);
    const auto rung = std::chrono::steady_clock::now();
    b.local.window().ring();
    waiter.join();
    // A 60 s park bound and a 20 s timeout: only the ring ends the wait well before 10 s.
    CHECK(exit == static_cast<int>(ScheduleExit::served));
    CHECK(std::chrono::steady_clock::now() - rung < 10s);
    CHECK(b.local.doorbell().word()->sleepers == 0); // the waiter disarmed
}

// The race the protocol exists for: the waiter has read the flags (not yet set) and is about to
// park when the writer publishes and rings. The waiter's check blocks in a handshake until the
// ring has happened, so the ring lands in exactly that gap, every run; the park must then refuse
// to sleep (the ring count moved since the snapshot) instead of sleeping out its 60 s bound.
TEST_CASE("a ring between the waiter's check and its park still wakes it", "[afd][doorbell]") {
    Bell b;
    std::atomic<int> stage{0}; // 1: the waiter checked and is held; 2: published and rung
    std::atomic<int> exit{-1};
    std::atomic<int> checks{0};
    std::thread waiter([&] {
        const ScheduleExit e = ferry::afd::detail::wait_until_ready(
            b.ctx.view(), DoorbellPark(b.local.doorbell(), 0, 60s), 20s, [&] {
                const bool ready = b.ready();
                if (checks.fetch_add(1) == 0) { // the first check, armed (spin 0), found nothing
                    stage = 1;
                    while (stage.load() != 2) {
                        std::this_thread::yield();
                    }
                }
                return ready;
            });
        exit = static_cast<int>(e);
    });
    while (stage.load() != 1) {
        std::this_thread::yield();
    }
    REQUIRE(b.local.doorbell().word()->sleepers == 1); // armed before the check
    REQUIRE(b.local.window().publish(reinterpret_cast<std::uintptr_t>(&b.flag), 1) ==
            ferry::Status::ok);
    b.local.window().ring(); // nobody is parked yet: this wake-up reaches no one
    const auto rung = std::chrono::steady_clock::now();
    stage = 2;
    waiter.join();
    CHECK(exit == static_cast<int>(ScheduleExit::served));
    CHECK(checks.load() == 2); // the failed check, then the one after the refused park
    // A lost ring would leave the waiter parked until its 20 s timeout.
    CHECK(std::chrono::steady_clock::now() - rung < 10s);
}

TEST_CASE("the bounded park sees run_flag 0 although nobody rings", "[afd][doorbell]") {
    Bell b;
    std::atomic<int> exit{-1};
    std::thread waiter([&] {
        exit = static_cast<int>(ferry::afd::detail::wait_until_ready(
            b.ctx.view(), DoorbellPark(b.local.doorbell(), 0, 1ms), 20s,
            [&] { return b.ready(); }));
    });
    b.wait_armed();
    const auto stopped = std::chrono::steady_clock::now();
    b.ctx.view().set_run_flag(0);
    waiter.join();
    CHECK(exit == static_cast<int>(ScheduleExit::stopped));
    CHECK(std::chrono::steady_clock::now() - stopped <
          10s); // the 1 ms park bound given here, not the 20 s timeout
}

TEST_CASE("a park never outlasts the timeout", "[afd][doorbell]") {
    Bell b;
    const auto start = std::chrono::steady_clock::now();
    const ScheduleExit e = ferry::afd::detail::wait_until_ready(
        b.ctx.view(), DoorbellPark(b.local.doorbell(), 0, 60s), 20ms, [&] { return b.ready(); });
    CHECK(e == ScheduleExit::timed_out);
    CHECK(std::chrono::steady_clock::now() - start < 30s);
}

TEST_CASE("DoorbellPark spins first, then parks; ring without sleepers only counts",
          "[afd][doorbell]") {
    Bell b;
    DoorbellPark w(b.local.doorbell(), 3, 1ms);
    for (int i = 0; i < 3; ++i) {
        w.prepare();
        w.pause();
    }
    CHECK(w.polls() == 3);
    CHECK(w.parks() == 0);
    CHECK(b.local.doorbell().word()->sleepers == 0); // spinning does not arm
    w.prepare();
    CHECK(b.local.doorbell().word()->sleepers == 1);
    w.pause(); // parks at most 1 ms
    CHECK(w.parks() == 1);
    w.finish();
    CHECK(b.local.doorbell().word()->sleepers == 0);
    b.local.window().ring();
    CHECK(b.local.doorbell().word()->rings == 1);
    STATIC_REQUIRE(WaitPolicy<DoorbellPark>);
}
