// Profiling sessions: a configuration (devices, kinds) filters what the Chrome trace holds, checked
// in the written file; CANN's life cycle (init, start, stop, finalize) and its state errors; the
// aclprofCreateConfig data-type mapping.
#include "support.hpp"

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {
using ferry::ProfilerConfig;
using ferry::ProfilingSession;
using ferry::Runtime;
using ferry::Status;
using ferry::TraceKind;

// A fresh directory under the system's temporary directory, removed at the end of the case.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "ferry-prof-XXXXXX");
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

// (device, category) of every task in a trace file.
std::set<std::pair<int, std::string>> tasks_in(const std::string& file) {
    boost::property_tree::ptree tree;
    boost::property_tree::read_json(file, tree);
    std::set<std::pair<int, std::string>> seen;
    for (const auto& [key, event] : tree.get_child("traceEvents")) {
        if (event.get<std::string>("ph") == "X") {
            seen.emplace(event.get<int>("pid"), event.get<std::string>("cat"));
        }
    }
    return seen;
}

// On each of devices 0 and 1: a copy, a kernel and a host task on a stream, plus a host-side
// event of no device.
void work_on_both_devices(Runtime& rt) {
    for (const std::int32_t device : {0, 1}) {
        REQUIRE(rt.set_device(device) == Status::ok);
        ferry::Stream* s = rt.create_stream().value();
        void* d = rt.malloc(64).value();
        std::vector<std::byte> host(64);
        REQUIRE(rt.memcpy_async(d, 64, host.data(), 64, ferry::MemcpyKind::host_to_device, s) ==
                Status::ok);
        REQUIRE(rt.launch([](const ferry::KernelContext&) {}, 2, std::vector<std::uint64_t>{}, s,
                          "k") == Status::ok);
        REQUIRE(rt.launch_host_task(s, [] {}) == Status::ok);
        REQUIRE(rt.synchronize_stream(s) == Status::ok);
        REQUIRE(rt.destroy_stream(s) == Status::ok);
        REQUIRE(rt.free(d) == Status::ok);
    }
    ferry::ProfileScope host_side("send", "channel");
}
} // namespace

TEST_CASE("a configuration selects devices and kinds in the trace file",
          "[runtime][profiler][concurrency]") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_COUNT", "2"}});
    TempDir dir;
    ProfilingSession session;
    REQUIRE(session.init(dir.path.string()) == Status::ok);

    const ProfilerConfig device1_kernels{{1}, bit(TraceKind::kernel) | bit(TraceKind::host_task)};
    REQUIRE(session.start(device1_kernels) == Status::ok);
    work_on_both_devices(rt);
    const auto first = session.stop(device1_kernels);
    REQUIRE(first.has_value());
    CHECK(tasks_in(*first) ==
          std::set<std::pair<int, std::string>>{{1, "kernel"}, {1, "host_task"}});

    const ProfilerConfig everything;
    REQUIRE(session.start(everything) == Status::ok);
    work_on_both_devices(rt);
    const auto second = session.stop(everything);
    REQUIRE(second.has_value());
    CHECK(*second != *first); // one file per session
    const auto all = tasks_in(*second);
    for (const int device : {0, 1}) {
        for (const char* kind : {"memcpy", "kernel", "host_task"}) {
            CHECK(all.contains({device, kind}));
        }
    }
    CHECK(all.contains({ferry::k_host_trace_device, "channel"}));
    CHECK(session.finalize() == Status::ok);
}

TEST_CASE("the session's life cycle rejects calls out of order", "[runtime][profiler]") {
    TempDir dir;
    ferry::Profiler recorder;
    ProfilingSession session(recorder);
    const ProfilerConfig config;
    const ProfilerConfig other{{0}, bit(TraceKind::memcpy)};
    CHECK(session.start(config) == Status::uninitialized);
    CHECK(session.stop(config).status() == Status::uninitialized);
    CHECK(session.finalize() == Status::uninitialized);
    CHECK(session.init("") == Status::invalid_param);
    CHECK(session.init((dir.path / "missing").string()) == Status::invalid_param);
    REQUIRE(session.init(dir.path.string()) == Status::ok);
    CHECK(session.init(dir.path.string()) == Status::repeat_initialize);
    CHECK(session.stop(config).status() == Status::prof_not_run);
    REQUIRE(session.start(config) == Status::ok);
    CHECK(session.start(config) == Status::prof_already_run);
    CHECK(session.stop(other).status() == Status::invalid_param); // not the started config
    CHECK(recorder.enabled());
    // finalize stops the running session and writes its trace
    CHECK(session.finalize() == Status::ok);
    CHECK_FALSE(recorder.enabled());
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path),
                        std::filesystem::directory_iterator{}) == 1);
    CHECK(session.start(config) == Status::uninitialized);
    CHECK(recorder.start(ProfilerConfig{{-2}, 1}) == Status::invalid_param);
    CHECK(recorder.start(ProfilerConfig{{}, 1U << 5}) == Status::invalid_param);
}

TEST_CASE("CANN data types map onto trace kinds", "[runtime][profiler]") {
    using ferry::cann_trace_kinds;
    const std::uint32_t tasks = bit(TraceKind::memcpy) | bit(TraceKind::kernel) |
                                bit(TraceKind::host_task) | bit(TraceKind::event);
    CHECK(cann_trace_kinds(0x0002).value() == tasks);                  // ACL_PROF_TASK_TIME
    CHECK(cann_trace_kinds(0x8000).value() == tasks);                  // ACL_PROF_TASK_TIME_L3
    CHECK(cann_trace_kinds(0x0008).value() == bit(TraceKind::kernel)); // ACL_PROF_AICPU
    CHECK(cann_trace_kinds(0x0101).value() == bit(TraceKind::other));  // ACL_API | RUNTIME_API
    CHECK(cann_trace_kinds(0x0020).value() == 0);                      // HCCL: nothing here
    CHECK(cann_trace_kinds(0).value() == 0);
    CHECK_FALSE(cann_trace_kinds(0x0400).has_value()); // not a CANN data type
    CHECK_FALSE(cann_trace_kinds(std::uint64_t{1} << 63).has_value());
}
