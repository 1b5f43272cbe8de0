#pragma once
// The poll loop both schedulers share: check run_flag, then readiness, then the deadline, then
// pause. Order as in CANN's loops (docs/cann-contract/afd.md#all-sync-mode, #grouped-mode and
// #attentionworkerscheduler): `while (run_flag) { if (ready) break; pause; }`, so run_flag == 0
// wins over a ready micro batch.
//
// A policy may add hooks (DoorbellPark does): prepare() runs before each poll, so that it can
// take its doorbell snapshot before the flags are read; pause_until(deadline) replaces pause()
// so that a park never outlasts the timeout; finish() runs once when the wait ends.

#include <concepts>
#include <ferry/afd/schedule_context_view.hpp>
#include <ferry/afd/schedule_outcome.hpp>
#include <ferry/afd/wait_policy.hpp>
#include <ferry/core/timeout.hpp>

namespace ferry::afd::detail {

template <WaitPolicy W, std::predicate Ready>
ScheduleExit poll_until_ready(ConstScheduleContextView view, W& waiter, const Timeout& timeout,
                              Ready&& ready) {
    const bool bounded = !timeout.is_forever();
    const Timeout::clock::time_point deadline =
        bounded ? timeout.deadline_from(Timeout::clock::now()) : Timeout::clock::time_point::max();
    for (;;) {
        if constexpr (requires { waiter.prepare(); }) {
            waiter.prepare();
        }
        if (view.run_flag() == 0) {
            return ScheduleExit::stopped;
        }
        if (ready()) {
            return ScheduleExit::served;
        }
        if (bounded && Timeout::clock::now() >= deadline) {
            return ScheduleExit::timed_out;
        }
        if constexpr (requires { waiter.pause_until(deadline); }) {
            waiter.pause_until(deadline);
        } else {
            waiter.pause();
        }
    }
}

template <WaitPolicy W, std::predicate Ready>
ScheduleExit wait_until_ready(ConstScheduleContextView view, W waiter, const Timeout& timeout,
                              Ready&& ready) {
    const ScheduleExit exit = poll_until_ready(view, waiter, timeout, ready);
    if constexpr (requires { waiter.finish(); }) {
        waiter.finish();
    }
    return exit;
}

} // namespace ferry::afd::detail
