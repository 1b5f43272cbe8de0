// Profiler: start/stop state, one trace event per task, Chrome-trace JSON that parses.
#include "support.hpp"

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {
using ferry::Runtime;
using ferry::Status;

// Stops the process-wide profiler when a case ends, whatever happened.
struct ProfilerSession {
    ProfilerSession() { REQUIRE(ferry::profiler().start() == Status::ok); }
    ~ProfilerSession() { (void)ferry::profiler().stop(); }
};

boost::property_tree::ptree parse(const std::string& text) {
    std::istringstream in(text);
    boost::property_tree::ptree tree;
    boost::property_tree::read_json(in, tree); // throws on invalid JSON
    return tree;
}
} // namespace

TEST_CASE("start and stop reject the wrong state", "[runtime][profiler]") {
    ferry::Profiler p;
    CHECK(p.stop() == Status::uninitialized);
    CHECK(p.start() == Status::ok);
    CHECK(p.enabled());
    CHECK(p.start() == Status::repeat_initialize);
    CHECK(p.stop() == Status::ok);
    CHECK_FALSE(p.enabled());
    CHECK(p.stop() == Status::uninitialized);
}

TEST_CASE("nothing is recorded while off", "[runtime][profiler]") {
    ferry::Profiler p;
    p.record({"x", "task", 0, 1, 10, 20});
    CHECK(p.events().empty());
    REQUIRE(p.start() == Status::ok);
    p.record({"x", "task", 0, 1, 10, 20});
    REQUIRE(p.stop() == Status::ok);
    CHECK(p.events().size() == 1); // kept after stop for export
    REQUIRE(p.start() == Status::ok);
    CHECK(p.events().empty()); // a new session starts empty
    REQUIRE(p.stop() == Status::ok);
}

TEST_CASE("one trace event per task, as valid Chrome-trace JSON",
          "[runtime][profiler][concurrency]") {
    Runtime& rt = ferry_test::fresh_runtime();
    REQUIRE(rt.set_device(0) == Status::ok);
    void* d = rt.malloc(64).value();
    std::vector<std::byte> host(64);
    ferry::Stream* s = rt.create_stream().value();
    {
        ProfilerSession session;
        REQUIRE(rt.memcpy_async(d, 64, host.data(), 64, ferry::MemcpyKind::host_to_device, s) ==
                Status::ok);
        REQUIRE(rt.launch([](const ferry::KernelContext&) {}, 4, std::vector<std::uint64_t>{}, s,
                          "my \"quoted\" kernel") == Status::ok);
        REQUIRE(rt.launch_host_task(
                    s, [] {}, "callback") == Status::ok);
        // The stream's tasks read `host` and write `d`: wait for them before copying back (the
        // synchronous copy is not ordered after another stream's work), into another buffer.
        REQUIRE(rt.synchronize_stream(s) == Status::ok);
        std::vector<std::byte> back(64);
        REQUIRE(rt.memcpy(back.data(), 64, d, 64, ferry::MemcpyKind::device_to_host) == Status::ok);
        { ferry::ProfileScope channel_send("send", "channel"); } // another module's own event
    }
    std::ostringstream out;
    ferry::profiler().write_chrome_trace(out);
    const auto tree = parse(out.str());

    std::map<std::string, int> per_category;
    std::vector<std::string> names;
    int complete = 0;
    int metadata = 0;
    for (const auto& [key, event] : tree.get_child("traceEvents")) {
        const auto phase = event.get<std::string>("ph");
        if (phase == "M") {
            ++metadata;
            continue;
        }
        REQUIRE(phase == "X");
        ++complete;
        ++per_category[event.get<std::string>("cat")];
        names.push_back(event.get<std::string>("name"));
        CHECK(event.get<double>("dur") >= 0.0);
        CHECK(event.get<double>("ts") >= 0.0);
    }
    CHECK(complete == 5);
    CHECK(per_category["memcpy"] == 2);
    CHECK(per_category["kernel"] == 1);
    CHECK(per_category["host_task"] == 1);
    CHECK(per_category["channel"] == 1);
    CHECK(std::find(names.begin(), names.end(), "my \"quoted\" kernel") != names.end());
    CHECK(metadata == 2); // "device 0" and "host"
    CHECK(rt.destroy_stream(s) == Status::ok);
}

TEST_CASE("the trace is written to a file", "[runtime][profiler]") {
    ferry::Profiler p;
    REQUIRE(p.start() == Status::ok);
    p.record({"task", "host_task", 0, 3, ferry::Profiler::now_ns(), ferry::Profiler::now_ns()});
    REQUIRE(p.stop() == Status::ok);
    const std::string path = "ferry-test-trace.json";
    REQUIRE(p.write_chrome_trace(path) == Status::ok);
    boost::property_tree::ptree tree;
    boost::property_tree::read_json(path, tree);
    CHECK(tree.get_child("traceEvents").size() == 2); // the task and its device's name
    std::remove(path.c_str());
    CHECK(p.write_chrome_trace("/nonexistent-dir/trace.json") == Status::invalid_file);
}
