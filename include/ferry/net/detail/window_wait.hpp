#pragma once
// The wait of a thread that progresses a Node itself while it waits on memory the Node exposes:
// net::NetWait's steps, and the afd::WaitDriver an ExposedWindow enters in afd::WaitDirectory so
// that afd::AutoWait takes them too (docs/multi-node.md, Waiting with the latency of raw UCX).
// The first prepare joins the Node's waiters; a pause progresses the worker, and after
// `state.spin` idle calls in a row sleeps on the worker's fd until the deadline or `max_sleep`;
// finish leaves. A thread that cannot join progresses and naps instead.

#include <algorithm>
#include <chrono>
#include <ferry/afd/wait_directory.hpp>
#include <ferry/net/node.hpp>
#include <thread>

namespace ferry::net::detail {

inline void drive_prepare(Node& node, afd::DriverState& state) noexcept {
    if (!state.started) {
        state.started = true;
        state.joined = node.join_waiters();
    }
}

inline void drive_pause_until(Node& node, afd::DriverState& state,
                              std::chrono::steady_clock::time_point deadline) noexcept {
    if (state.idle < state.spin) {
        state.idle = node.progress() ? 0 : state.idle + 1;
        return;
    }
    state.idle = 0;
    ++state.sleeps;
    const auto now = std::chrono::steady_clock::now();
    const auto bound = deadline - now > state.max_sleep ? now + state.max_sleep : deadline;
    if (state.joined) {
        node.progress_or_sleep(bound);
    } else if (!node.progress()) {
        std::this_thread::sleep_until(bound);
    }
}

inline void drive_finish(Node& node, afd::DriverState& state) noexcept {
    if (!state.started) {
        return;
    }
    state.started = false;
    if (state.joined) {
        node.leave_waiters();
        state.joined = false;
    } else {
        node.done_progressing();
    }
}

// The driver for memory exposed on `node` (which must outlive the directory's entry).
[[nodiscard]] inline afd::WaitDriver wait_driver(Node& node) noexcept {
    afd::WaitDriver d;
    d.prepare = [](void* n, afd::DriverState& s) noexcept {
        drive_prepare(*static_cast<Node*>(n), s);
    };
    d.pause_until = [](void* n, afd::DriverState& s,
                       std::chrono::steady_clock::time_point deadline) noexcept {
        drive_pause_until(*static_cast<Node*>(n), s, deadline);
    };
    d.finish = [](void* n, afd::DriverState& s) noexcept {
        drive_finish(*static_cast<Node*>(n), s);
    };
    d.arg = &node;
    return d;
}

} // namespace ferry::net::detail
