#pragma once
// ferry::net::NetWait — the wait policy for memory an ExposedWindow exposes: the waiting thread
// progresses the window's Node itself, so that the put and the flag that end the wait are applied
// on the waiter's own thread, and sleeps on the worker's event fd between events, as a raw UCX
// program does (ucp_worker_progress, then ucp_worker_arm and poll when idle).
//
// afd::DoorbellPark on the same window waits for the Node's progress thread instead: that thread
// sleeps in epoll on the worker's fd, wakes for the data, applies it, rings the doorbell, and a
// futex wake hands the flag to the waiter — two more context switches per hand-off.
// docs/multi-node.md, Waiting with the latency of raw UCX.
//
// It satisfies afd::WaitPolicy with the hooks of afd's wait loop (detail/wait_loop.hpp):
// prepare() before each poll (the first one joins the Node's waiters), pause_until(deadline)
// between polls, finish() once at the end, peer_lost() after an unsuccessful poll (the window's
// probe). Between polls it progresses the worker; after `spin` calls in a row that found
// nothing it sleeps. While joined, the Node's progress thread stays off the worker; it keeps
// sending heartbeats, and judges silence by what this waiter receives, so a live peer is never
// reported silent. A sleep never outlasts `max_sleep` (default 1 ms), so a stop flag stored without
// a ring is seen within it; it ends early when another thread progresses the worker, a peer is
// lost, or Node::wake_waiters() is called (whoever sets a stop flag calls it to end the sleep at
// once). afd::AutoWait over an ExposedWindow's memory takes the same steps (the window enters
// them in afd::WaitDirectory), so the schedulers' default wait has this latency too.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ferry/afd/wait_policy.hpp>
#include <ferry/net/detail/window_wait.hpp>
#include <ferry/net/window.hpp>

namespace ferry::net {

class NetWait {
public:
    using clock = std::chrono::steady_clock;
    static constexpr std::chrono::microseconds k_default_max_sleep{1000};
    // Progress calls in a row that found nothing before the waiter sleeps: the flag often
    // follows its data by a few microseconds, which a sleep would turn into a second wake-up
    // (raw UCX waiters do the same).
    static constexpr std::uint32_t k_default_spin = 64;

    // The window (and its Node) must outlive every wait with this policy.
    explicit NetWait(ExposedWindow& window,
                     std::chrono::microseconds max_sleep = k_default_max_sleep,
                     std::uint32_t spin = k_default_spin) noexcept
        : window_(&window) {
        state_.max_sleep = std::max(max_sleep, std::chrono::microseconds(1));
        state_.spin = spin;
    }

    // Sleeps on the worker's fd (or naps, when the thread could not join) and progressed.
    [[nodiscard]] std::uint32_t sleeps() const noexcept { return state_.sleeps; }

    void prepare() noexcept { detail::drive_prepare(window_->node(), state_); }
    void pause_until(clock::time_point deadline) noexcept {
        detail::drive_pause_until(window_->node(), state_, deadline);
    }
    void pause() noexcept { pause_until(clock::time_point::max()); }
    void finish() noexcept { detail::drive_finish(window_->node(), state_); }
    [[nodiscard]] bool peer_lost() const noexcept { return window_->peer_lost(); }

private:
    ExposedWindow* window_;
    afd::DriverState state_;
};

static_assert(afd::WaitPolicy<NetWait>);

} // namespace ferry::net
