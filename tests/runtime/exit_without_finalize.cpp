// A program that returns from main without finalize, leaving the runtime busy, must exit at once
// and cleanly: no crash in static destruction, no joinable thread (std::terminate), exit status 0.
// Without an argument it is a plain test (meson checks the exit status); tests/runtime/exit.cpp
// runs it with each scenario below, bounding how long the exit may take.
//   busy            four streams full of kernels, memory still allocated, the profiler on
//   event-wait      stream B waits for an event whose record stream A never reaches (A is
//                   inside a host task that never returns)
//   blocked-task    a host task that never returns, running when main returns
//   blocked-kernel  a kernel whose blocks (on the stream thread and the pool) never return,
//                   running when main returns
//   never-recorded  a stream waits for an event that was never recorded
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ferry/runtime.hpp>
#include <string_view>
#include <vector>

namespace {
using ferry::Runtime;
using ferry::Status;

// Never set: what a task that blocks forever waits for. Static, as the tasks outlive main.
std::atomic<bool> never{false};
std::atomic<int> blocked{0}; // tasks (or kernel blocks) inside block_forever

void block_forever() {
    blocked.fetch_add(1);
    blocked.notify_all();
    never.wait(false);
}

// Returns once `n` tasks are blocked: main must return while they run, not while still queued.
void wait_blocked(int n) {
    for (int seen = blocked.load(); seen < n; seen = blocked.load()) {
        blocked.wait(seen);
    }
}

int busy(Runtime& rt) {
    static std::atomic<int> ran{0};
    std::vector<ferry::Stream*> streams;
    for (int i = 0; i < 4; ++i) {
        streams.push_back(rt.create_stream().value());
        for (int j = 0; j < 100; ++j) {
            if (rt.launch([](const ferry::KernelContext&) { ran.fetch_add(1); }, 4,
                          std::vector<std::uint64_t>{}, streams.back()) != Status::ok) {
                return 3;
            }
        }
    }
    void* leaked = rt.malloc(1 << 16).value(); // still allocated at exit
    (void)leaked;
    if (ferry::profiler().start() != Status::ok) {
        return 4;
    }
    std::printf("leaving main with work queued (%d blocks ran so far)\n", ran.load());
    return 0;
}

int event_wait(Runtime& rt) {
    ferry::Stream* a = rt.create_stream().value();
    ferry::Stream* b = rt.create_stream().value();
    ferry::Event* e = rt.create_event().value();
    const bool queued = rt.launch_host_task(a, block_forever) == Status::ok &&
                        rt.record_event(e, a) == Status::ok &&
                        rt.stream_wait_event(b, e) == Status::ok &&
                        rt.launch_host_task(b, [] {}) == Status::ok;
    if (queued) {
        wait_blocked(1);
    }
    return queued ? 0 : 3;
}

int blocked_task(Runtime& rt) {
    if (rt.launch_host_task(nullptr, block_forever) != Status::ok) {
        return 3;
    }
    wait_blocked(1);
    return 0;
}

int blocked_kernel(Runtime& rt) {
    const Status s = rt.launch([](const ferry::KernelContext&) { block_forever(); }, 8,
                               std::vector<std::uint64_t>{}, nullptr);
    if (s != Status::ok) {
        return 3;
    }
    wait_blocked(2); // the stream thread and the pool's one worker (FERRY_KERNEL_THREADS=2)
    return 0;
}

int never_recorded(Runtime& rt) {
    ferry::Stream* s = rt.create_stream().value();
    ferry::Event* e = rt.create_event().value();
    const bool queued =
        rt.stream_wait_event(s, e) == Status::ok && rt.launch_host_task(s, [] {}) == Status::ok;
    return queued ? 0 : 3;
}
} // namespace

int main(int argc, char** argv) {
    ::setenv("FERRY_KERNEL_THREADS", "2", 1);
    auto runtime = Runtime::instance();
    if (!runtime) {
        return 1;
    }
    Runtime& rt = **runtime;
    if (rt.set_device(0) != Status::ok) {
        return 2;
    }
    const std::string_view scenario = argc > 1 ? argv[1] : "busy";
    if (scenario == "busy") {
        return busy(rt);
    }
    if (scenario == "event-wait") {
        return event_wait(rt);
    }
    if (scenario == "blocked-task") {
        return blocked_task(rt);
    }
    if (scenario == "blocked-kernel") {
        return blocked_kernel(rt);
    }
    if (scenario == "never-recorded") {
        return never_recorded(rt);
    }
    std::fprintf(stderr, "unknown scenario '%s'\n", argv[1]);
    return 5;
}
