// A program that leaves the runtime busy and returns from main without aclFinalize must exit
// cleanly: no crash in static destruction, no joinable thread (std::terminate), exit status 0.
// Registered as a plain test: meson checks the exit status.
#include <atomic>
#include <cstdio>
#include <ferry/runtime.hpp>
#include <vector>

int main() {
    auto runtime = ferry::Runtime::instance();
    if (!runtime) {
        return 1;
    }
    ferry::Runtime& rt = **runtime;
    if (rt.set_device(0) != ferry::Status::ok) {
        return 2;
    }
    static std::atomic<int> ran{0}; // static: tasks may still run while main returns
    std::vector<ferry::Stream*> streams;
    for (int i = 0; i < 4; ++i) {
        streams.push_back(rt.create_stream().value());
        for (int j = 0; j < 100; ++j) {
            if (rt.launch([](const ferry::KernelContext&) { ran.fetch_add(1); }, 4,
                          std::vector<std::uint64_t>{}, streams.back()) != ferry::Status::ok) {
                return 3;
            }
        }
    }
    void* leaked = rt.malloc(1 << 16).value(); // still allocated at exit
    (void)leaked;
    if (ferry::profiler().start() != ferry::Status::ok) {
        return 4;
    }
    std::printf("leaving main with work queued (%d blocks ran so far)\n", ran.load());
    return 0;
}
