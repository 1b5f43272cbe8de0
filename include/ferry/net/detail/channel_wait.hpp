#pragma once
// How a remote channel's blocking calls wait (docs/multi-node-channels.md, Waiting): they spin
// on Node::progress() for a short while — the reply usually comes within a round trip, and a
// caller that progresses the worker itself sees it without a thread switch — then park. A parked
// caller joins the node's waiters (Node::join_waiters) and sleeps on the worker's fd in
// Node::progress_or_sleep, so what arrives for it is handled on its own thread, several messages
// per wake-up, as raw UCX's receiver does; a thread that cannot join parks on the endpoint's
// condition variable instead, which the handlers (run by the node's progress thread) notify.
// Either way a parked caller wakes at least every k_park_slice to look at the node's peer losses
// itself, so a lost peer is noticed even if a notification raced. Whoever changes an endpoint's
// state outside a handler (stop) wakes both kinds of sleeper: WaitState::wake.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/net/detail/channel_wire.hpp>
#include <ferry/net/node.hpp>
#include <ferry/runtime/profiler.hpp>
#include <mutex>
#include <vector>

namespace ferry::net::detail {

using Clock = Timeout::clock;

inline constexpr auto k_spin_time = std::chrono::microseconds(50);
inline constexpr auto k_park_slice = std::chrono::milliseconds(20);
// A parked caller sleeps only after this many progress calls in a row found nothing, as raw
// UCX's waiters poll before they arm: a stream's next bytes come within microseconds of the
// last, and sleeping between them costs a thread switch each time.
inline constexpr std::uint32_t k_idle_polls = 64;
// A caller's deadline that had passed when it was given: answered like no_wait (full / empty).
inline constexpr Clock::time_point k_past_deadline = Clock::time_point::min();

// What a blocking call was given, as (may_wait, deadline). forever: time_point::max().
struct Deadline {
    bool may_wait = true;
    Clock::time_point at = Clock::time_point::max();

    static Deadline of(Timeout timeout) noexcept {
        if (timeout.is_no_wait()) {
            return {false, Clock::time_point::max()};
        }
        return {true, timeout.deadline_from(Clock::now())};
    }
    template <typename Duration>
    static Deadline until(std::chrono::time_point<Clock, Duration> deadline) noexcept {
        const auto d = std::chrono::ceil<Clock::duration>(deadline);
        return {true, d <= Clock::now() ? k_past_deadline : d};
    }
};

// The state an endpoint shares with its waiters.
struct WaitState {
    std::mutex mutex;
    std::condition_variable cv;
    std::size_t blocked = 0;
    std::atomic<std::uint64_t> losses_seen{0};

    // Ends the sleep of every caller parked on this state: the condition variable's, and the
    // node's joined waiters (these sleep on the worker's fd, which a local change does not
    // touch). Handlers need only notify the condition variable: a handler runs either on the
    // waiter's own thread or on a thread whose progress already woke the joined waiters.
    void wake(Node& node) {
        cv.notify_all();
        node.wake_waiters();
    }
};

template <typename F>
auto with_lock(std::mutex& m, F f) {
    const std::lock_guard lock(m);
    return f();
}

// wait_until's parked phase for a thread that joined the node's waiters (and leaves them on
// return): the attempt runs with the mutex held, the sleep (Node::progress_or_sleep) without it,
// since the handlers it runs take the mutex. A wake-up between the attempt and the sleep is not
// lost: progress by another thread and WaitState::wake write this thread's eventfd, which the
// sleep polls.
template <typename Attempt, typename OnLoss, typename OnIdle>
Status park_on_worker(Node& node, WaitState& ws, Deadline d, Status busy, Attempt& attempt,
                      OnLoss& on_loss, OnIdle& on_idle) {
    std::vector<Outgoing> out;
    with_lock(ws.mutex, [&] { return ++ws.blocked; }); // parked (or about to be) until return
    const TraceSpan parked("net.park", "channel");
    Status s = busy;
    std::uint32_t idle = 0; // progress calls in a row that found nothing
    for (;;) {
        {
            const std::lock_guard lock(ws.mutex);
            if ((s = attempt(out)) == busy && out.empty()) {
                on_idle(out);
            }
        }
        if (!out.empty()) {
            post_all(node, out);
            out.clear();
        }
        if (s != busy) {
            break;
        }
        const auto now = Clock::now();
        if (now >= d.at) {
            s = Status::timed_out;
            break;
        }
        if (idle < k_idle_polls) {
            idle = node.progress() ? 0 : idle + 1;
        } else {
            node.progress_or_sleep(d.at - now < k_park_slice ? d.at : now + k_park_slice);
            idle = 0;
        }
        if (const auto losses = node.losses(); losses != ws.losses_seen.exchange(losses)) {
            on_loss(); // a hint only: on_loss() asks alive() itself
        }
    }
    with_lock(ws.mutex, [&] { return --ws.blocked; });
    node.leave_waiters();
    return s;
}

// wait_until's parked phase for a thread that could not join the node's waiters: it sleeps on
// the condition variable while the node's progress thread serves the worker.
template <typename Attempt, typename OnLoss, typename OnIdle>
Status park_on_cv(Node& node, WaitState& ws, Deadline d, Status busy, Attempt& attempt,
                  OnLoss& on_loss, OnIdle& on_idle) {
    std::vector<Outgoing> out;
    Status s = busy;
    node.done_progressing(); // the node's progress thread serves the parked call
    std::unique_lock lock(ws.mutex);
    ++ws.blocked; // parked (or about to be) until this call returns
    const TraceSpan parked("net.park", "channel");
    for (;;) {
        if ((s = attempt(out)) == busy && out.empty()) {
            on_idle(out);
        }
        if (s != busy || !out.empty()) {
            lock.unlock();
            post_all(node, out);
            out.clear();
            lock.lock();
            if (s != busy) {
                break;
            }
            continue;
        }
        const auto now = Clock::now();
        if (now >= d.at) {
            s = Status::timed_out;
            break;
        }
        ws.cv.wait_until(lock, d.at - now < k_park_slice ? d.at : now + k_park_slice);
        if (const auto losses = node.losses(); losses != ws.losses_seen.exchange(losses)) {
            lock.unlock(); // a hint only: on_loss() asks alive() itself, without the mutex
            on_loss();
            lock.lock();
        }
    }
    --ws.blocked;
    return s;
}

// Runs attempt(out) (with `mutex` held; it may queue control messages in `out`, posted once the
// mutex is released) until it answers something other than `busy`, or the deadline passes:
// then timed_out, or `busy` itself for no_wait and a deadline already past when given.
// `on_loss()` runs without the mutex whenever the node's loss counter moved while parked.
// `on_idle(out)` runs with the mutex held whenever the call is about to give up or park with
// nothing to show (not during the spin phase): a receiver returns the credits it owes then.
template <typename Attempt, typename OnLoss, typename OnIdle>
Status wait_until(Node& node, WaitState& ws, Deadline d, Status busy, Attempt attempt,
                  OnLoss on_loss, OnIdle on_idle) {
    std::vector<Outgoing> out;
    const auto try_once = [&](bool last) {
        Status s;
        {
            const std::lock_guard lock(ws.mutex);
            s = attempt(out);
            if (s == busy && last) {
                on_idle(out);
            }
        }
        if (!out.empty()) {
            post_all(node, out);
            out.clear();
        }
        return s;
    };
    const bool may_wait = d.may_wait && d.at != k_past_deadline;
    Status s = try_once(!may_wait);
    if (s != busy || !may_wait) {
        return s;
    }
    const auto spin_end = Clock::now() + k_spin_time;
    while (Clock::now() < spin_end && Clock::now() < d.at) {
        node.progress();
        if ((s = try_once(false)) != busy) {
            return s;
        }
    }
    return node.join_waiters() ? park_on_worker(node, ws, d, busy, attempt, on_loss, on_idle)
                               : park_on_cv(node, ws, d, busy, attempt, on_loss, on_idle);
}

// The same, for a waiter with nothing to do when idle (a sender).
template <typename Attempt, typename OnLoss>
Status wait_until(Node& node, WaitState& ws, Deadline d, Status busy, Attempt attempt,
                  OnLoss on_loss) {
    return wait_until(node, ws, d, busy, attempt, on_loss, [](std::vector<Outgoing>&) {});
}

} // namespace ferry::net::detail
