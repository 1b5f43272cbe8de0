// AutoWait, the default wait policy: over memory whose window has a doorbell in the WaitDirectory
// it parks on that doorbell (the waiter registers as a sleeper and a ring wakes it); over any other
// memory it polls as SpinThenPark; a peer probe that reports a dead process ends the wait with
// peer_lost. The cross-process cases are in tests/ipc/afd_window.cpp.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <ferry/afd.hpp>
#include <ferry/afd/auto_wait.hpp>
#include <thread>
#include <type_traits>

using namespace ferry::afd;
using namespace std::chrono_literals;

namespace {
struct Watched {
    LocalWindow local;
    ContextImage ctx;
    std::int32_t flag = 0;
    std::uint64_t token = 0;
    // `rung`: the entry carries the local window's doorbell (an owner's window); `driver`: the
    // registrant's wait driver (as a net::ExposedWindow gives).
    Watched(bool rung, PeerProbe peers, WaitDriver driver = {}) {
        ctx.view().set_run_flag(1);
        token = WaitDirectory::instance().add(
            ctx.view().bytes(), {rung ? local.doorbell() : Doorbell{}, peers, driver});
    }
    Watched(const Watched&) = delete;
    Watched& operator=(const Watched&) = delete;
    ~Watched() { WaitDirectory::instance().remove(token); }
    [[nodiscard]] bool ready() const {
        return std::atomic_ref(const_cast<std::int32_t&>(flag)).load() == 1;
    }
    [[nodiscard]] std::uint32_t sleepers() const {
        return std::atomic_ref(local.doorbell().word()->sleepers).load();
    }
};

std::atomic<bool> g_peer_dead{false};
const PeerProbe k_test_probe{[](const void*) noexcept { return g_peer_dead.load(); }, nullptr};

// A registrant's WaitDriver that records how the waiter drove it; a pause sleeps 1 ms at most,
// never past the deadline it is given.
struct DriverLog {
    std::atomic<int> prepares{0};
    std::atomic<int> pauses{0};
    std::atomic<int> finishes{0};
    // The latest deadline a pause was given: a wait that ended before it would have let the
    // driver sleep past the wait's timeout.
    std::atomic<std::chrono::steady_clock::time_point> latest{};

    WaitDriver driver() {
        WaitDriver d;
        d.prepare = [](void* self, DriverState& s) noexcept {
            s.started = true;
            ++static_cast<DriverLog*>(self)->prepares;
        };
        d.pause_until = [](void* self, DriverState& s,
                           std::chrono::steady_clock::time_point deadline) noexcept {
            auto& log = *static_cast<DriverLog*>(self);
            ++log.pauses;
            ++s.sleeps;
            log.latest = std::max(log.latest.load(), deadline);
            std::this_thread::sleep_until(
                std::min(deadline, std::chrono::steady_clock::now() + 1ms));
        };
        d.finish = [](void* self, DriverState& s) noexcept {
            s.started = false;
            ++static_cast<DriverLog*>(self)->finishes;
        };
        d.arg = this;
        return d;
    }
};
} // namespace

TEST_CASE("the schedulers and simulators wait with AutoWait by default", "[afd][auto_wait]") {
    STATIC_REQUIRE(std::is_same_v<GroupSyncScheduler<>, GroupSyncScheduler<AutoWait>>);
    STATIC_REQUIRE(std::is_same_v<AttentionWorkerScheduler<>, AttentionWorkerScheduler<AutoWait>>);
    STATIC_REQUIRE(WaitPolicy<AutoWait>);
}

TEST_CASE("by default a wait over a window whose writers ring parks on its doorbell",
          "[afd][auto_wait][concurrency]") {
    Watched w(true, {});
    std::atomic<int> exit{-1};
    std::thread waiter([&] {
        exit = static_cast<int>(
            detail::wait_until_ready(w.ctx.view(), AutoWait{}, 20s, [&] { return w.ready(); }));
    });
    while (w.sleepers() == 0) { // observable: the default policy armed the doorbell
        std::this_thread::yield();
    }
    REQUIRE(w.local.window().publish(reinterpret_cast<std::uintptr_t>(&w.flag), 1) ==
            ferry::Status::ok);
    w.local.window().ring();
    waiter.join();
    CHECK(exit == static_cast<int>(ScheduleExit::served));
    CHECK(w.sleepers() == 0);

    AutoWait bound;
    bound.bind(w.ctx.view().data());
    CHECK(bound.parks_on_doorbell());
}

TEST_CASE("without a doorbell the default policy still polls", "[afd][auto_wait]") {
    ContextImage plain;
    plain.view().set_run_flag(1);
    AutoWait unknown;
    unknown.bind(plain.view().data()); // memory no window covers
    CHECK_FALSE(unknown.parks_on_doorbell());
    CHECK_FALSE(unknown.watches_peers());
    CHECK(detail::wait_until_ready(plain.view(), AutoWait{}, 5ms, [] { return false; }) ==
          ScheduleExit::timed_out);

    Watched peer_side(false, k_test_probe); // a peer's mapping: nobody rings
    AutoWait peer;
    peer.bind(peer_side.ctx.view().data());
    CHECK_FALSE(peer.parks_on_doorbell());
    CHECK(peer.watches_peers());
    for (int i = 0; i < 200; ++i) { // polling: spins, yields, then sleeps; never parks
        peer.prepare();
        peer.pause();
    }
    CHECK(peer.parks() == 0);
    CHECK(peer_side.sleepers() == 0);
}

TEST_CASE("a lost peer ends a default wait with peer_lost", "[afd][auto_wait][concurrency]") {
    g_peer_dead = false;
    Watched w(true, k_test_probe);
    std::atomic<int> exit{-1};
    std::thread waiter([&] {
        exit = static_cast<int>(
            detail::wait_until_ready(w.ctx.view(), AutoWait{}, 20s, [&] { return w.ready(); }));
    });
    while (w.sleepers() == 0) {
        std::this_thread::yield();
    }
    const auto died = std::chrono::steady_clock::now();
    g_peer_dead = true;
    waiter.join();
    CHECK(exit == static_cast<int>(ScheduleExit::peer_lost));
    CHECK(std::chrono::steady_clock::now() - died < 10s); // the 20 ms probe period, not 20 s
    g_peer_dead = false;
}

TEST_CASE("a wait over memory with a wait driver takes the driver's steps, never parks",
          "[afd][auto_wait][concurrency]") {
    DriverLog log;
    Watched w(true, {}, log.driver()); // a doorbell too: the driver still goes first
    AutoWait bound;
    bound.bind(w.ctx.view().data());
    CHECK(bound.drives_transport());
    CHECK_FALSE(bound.parks_on_doorbell());

    const auto start = std::chrono::steady_clock::now();
    CHECK(detail::wait_until_ready(w.ctx.view(), AutoWait{}, 30ms, [] { return false; }) ==
          ScheduleExit::timed_out);
    const auto ended = std::chrono::steady_clock::now();
    CHECK(ended - start >= 30ms); // never early
    CHECK(log.pauses >= 1);
    CHECK(log.prepares == log.pauses + 1); // one before each poll
    CHECK(log.finishes == 1);
    CHECK(log.latest.load() <= ended); // no pause asked for past the timeout
    CHECK(w.sleepers() == 0);          // never parked on the doorbell
}

TEST_CASE("a lost peer ends a driven default wait with peer_lost",
          "[afd][auto_wait][concurrency]") {
    g_peer_dead = false;
    DriverLog log;
    Watched w(false, k_test_probe, log.driver());
    std::atomic<int> exit{-1};
    std::thread waiter([&] {
        exit = static_cast<int>(
            detail::wait_until_ready(w.ctx.view(), AutoWait{}, 20s, [&] { return w.ready(); }));
    });
    const auto patience = std::chrono::steady_clock::now() + 10s;
    while (log.pauses == 0 && std::chrono::steady_clock::now() < patience) {
        std::this_thread::yield(); // observable: the waiter drives
    }
    CHECK(log.pauses > 0);
    const auto died = std::chrono::steady_clock::now();
    g_peer_dead = true;
    waiter.join();
    CHECK(exit == static_cast<int>(ScheduleExit::peer_lost));
    CHECK(std::chrono::steady_clock::now() - died < 10s); // the 20 ms probe period, not 20 s
    CHECK(log.finishes == 1);
    g_peer_dead = false;
}
