// Streams: order under load, failures, callbacks, timeouts, destroy, bad handles.
#include "support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {
using ferry::Runtime;
using ferry::Status;

Runtime& device_runtime() {
    Runtime& rt = ferry_test::fresh_runtime();
    REQUIRE(rt.set_device(0) == Status::ok);
    return rt;
}

// Collects callback invocations from stream threads; read on the main thread after a sync.
struct FailureLog {
    std::mutex mutex;
    std::vector<ferry::TaskFailure> exceptions;
    std::vector<ferry::TaskFailure> aborts;
    void install(Runtime& rt) {
        rt.set_exception_callback([this](const ferry::TaskFailure& f) {
            std::lock_guard lock(mutex);
            exceptions.push_back(f);
        });
        rt.set_task_abort_callback([this](const ferry::TaskFailure& f) {
            std::lock_guard lock(mutex);
            aborts.push_back(f);
        });
    }
};

struct QuietLog {
    ferry::LogSink previous = ferry::set_log_sink([](ferry::LogLevel, std::string_view) {});
    ~QuietLog() { ferry::set_log_sink(previous); }
};
} // namespace

TEST_CASE("tasks run in submission order under load", "[runtime][stream][concurrency]") {
    Runtime& rt = device_runtime();
    constexpr int k_streams = 4;
    constexpr int k_tasks = 2000;
    std::vector<ferry::Stream*> streams;
    std::vector<std::vector<int>> seen(k_streams);
    for (int s = 0; s < k_streams; ++s) {
        streams.push_back(rt.create_stream().value());
    }
    // Several submitting threads, each with its own stream, all at once.
    std::vector<std::thread> producers;
    std::atomic<int> submit_failures{0};
    for (int s = 0; s < k_streams; ++s) {
        producers.emplace_back([&, s] {
            for (int i = 0; i < k_tasks; ++i) {
                auto& sink = seen[static_cast<std::size_t>(s)];
                if (rt.launch_host_task(streams[static_cast<std::size_t>(s)],
                                        [&sink, i] { sink.push_back(i); }) != Status::ok) {
                    submit_failures.fetch_add(1);
                }
            }
        });
    }
    for (auto& p : producers) {
        p.join();
    }
    for (ferry::Stream* s : streams) {
        CHECK(rt.synchronize_stream(s) == Status::ok);
    }
    CHECK(submit_failures.load() == 0);
    for (const auto& sequence : seen) {
        REQUIRE(sequence.size() == k_tasks);
        bool in_order = true;
        for (int i = 0; i < k_tasks; ++i) {
            in_order = in_order && sequence[static_cast<std::size_t>(i)] == i;
        }
        CHECK(in_order);
    }
    for (ferry::Stream* s : streams) {
        CHECK(rt.destroy_stream(s) == Status::ok);
    }
}

TEST_CASE("a throwing task is reported on synchronize and through the callbacks",
          "[runtime][stream][concurrency]") {
    Runtime& rt = device_runtime();
    QuietLog quiet;
    FailureLog failures;
    failures.install(rt);
    ferry::Stream* s = rt.create_stream().value();
    int before = 0;
    int after = 0;
    REQUIRE(rt.launch_host_task(s, [&] { ++before; }) == Status::ok);
    REQUIRE(rt.launch_host_task(
                s, [] { throw std::runtime_error("boom"); }, "exploding") == Status::ok);
    REQUIRE(rt.launch_host_task(
                s, [&] { ++after; }, "skipped") == Status::ok);
    CHECK(rt.synchronize_stream(s) == ferry::k_task_exception_status);
    CHECK(before == 1);
    CHECK(after == 0); // aborted: the stream was in its error state
    {
        std::lock_guard lock(failures.mutex);
        REQUIRE(failures.exceptions.size() == 1);
        CHECK(failures.exceptions[0].task == "exploding");
        CHECK(failures.exceptions[0].message == "boom");
        CHECK(failures.exceptions[0].status == ferry::k_task_exception_status);
        CHECK(failures.exceptions[0].stream == s->id());
        CHECK(failures.exceptions[0].device == 0);
        REQUIRE(failures.aborts.size() == 2);
        CHECK_FALSE(failures.aborts[0].aborted);
        CHECK(failures.aborts[1].aborted);
        CHECK(failures.aborts[1].task == "skipped");
    }
    // The error was reported once; the stream works again.
    REQUIRE(rt.launch_host_task(s, [&] { ++after; }) == Status::ok);
    CHECK(rt.synchronize_stream(s) == Status::ok);
    CHECK(after == 1);
    CHECK(rt.destroy_stream(s) == Status::ok);
}

TEST_CASE("a task returning a failing Status puts the stream in error", "[runtime][stream]") {
    Runtime& rt = device_runtime();
    QuietLog quiet;
    REQUIRE(rt.launch_host_task(nullptr, [] { return Status::rt_device_oom; }) == Status::ok);
    CHECK(rt.synchronize_stream(nullptr) == Status::rt_device_oom);
    CHECK(rt.synchronize_stream(nullptr) == Status::ok);
}

TEST_CASE("synchronize with a timeout expires and keeps waiting work",
          "[runtime][stream][concurrency]") {
    Runtime& rt = device_runtime();
    ferry::Stream* s = rt.create_stream().value();
    std::atomic<bool> release{false};
    REQUIRE(rt.launch_host_task(s, [&] {
        while (!release.load()) {
            std::this_thread::yield();
        }
    }) == Status::ok);
    CHECK(rt.synchronize_stream(s, ferry::no_wait) == Status::rt_stream_sync_timeout);
    CHECK(rt.synchronize_stream(s, std::chrono::milliseconds(5)) == Status::rt_stream_sync_timeout);
    CHECK_FALSE(rt.query_stream(s).value());
    release.store(true);
    CHECK(rt.synchronize_stream(s) == Status::ok);
    CHECK(rt.query_stream(s).value());
    CHECK(rt.destroy_stream(s) == Status::ok);
}

TEST_CASE("destroy drains the stream; stale and null handles are errors", "[runtime][stream]") {
    Runtime& rt = device_runtime();
    ferry::Stream* s = rt.create_stream().value();
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i) {
        REQUIRE(rt.launch_host_task(s, [&] { ran.fetch_add(1); }) == Status::ok);
    }
    CHECK(rt.destroy_stream(s) == Status::ok);
    CHECK(ran.load() == 100);
    CHECK(rt.destroy_stream(s) == Status::rt_param_invalid);
    CHECK(rt.destroy_stream(nullptr) == Status::rt_param_invalid); // the default stream
    CHECK(rt.synchronize_stream(s) == Status::rt_param_invalid);
    CHECK(rt.launch_host_task(s, [] {}) == Status::rt_param_invalid);
    CHECK(rt.query_stream(s).status() == Status::rt_param_invalid);
    auto* foreign = reinterpret_cast<ferry::Stream*>(&ran);
    CHECK(rt.synchronize_stream(foreign) == Status::rt_param_invalid);
}

TEST_CASE("streams need a current context", "[runtime][stream]") {
    Runtime& rt = ferry_test::fresh_runtime();
    CHECK(rt.create_stream().status() == Status::rt_context_null);
    CHECK(rt.synchronize_stream(nullptr) == Status::rt_context_null);
    CHECK(rt.launch_host_task(nullptr, [] {}) == Status::rt_context_null);
}

namespace {
// Set by a task queued behind the one under test: the stream thread got past that task.
struct Latch {
    std::atomic<bool> open{false};
    void release() {
        open.store(true);
        open.notify_all();
    }
    void wait() const { open.wait(false); }
};
} // namespace

// The stream's thread keeps running after the task returns (it finishes the task, then drains
// what is queued behind it), so the stream must not be freed under it.
TEST_CASE("a host task may destroy its own stream", "[runtime][stream][concurrency]") {
    Runtime& rt = device_runtime();
    ferry::Stream* s = rt.create_stream().value();
    Status destroyed = Status::failure;
    Latch gate;
    Latch tail;
    REQUIRE(rt.launch_host_task(s, [&] {
        gate.wait(); // until the tail task is queued
        destroyed = rt.destroy_stream(s);
    }) == Status::ok);
    REQUIRE(rt.launch_host_task(s, [&] { tail.release(); }) == Status::ok);
    gate.release();
    tail.wait(); // queued before the destroy: it still runs
    CHECK(destroyed == Status::ok);
    CHECK(rt.synchronize_stream(s) == Status::rt_param_invalid);
    // Later destroys (and the shutdown of the next test case) join the stream's thread.
    ferry::Stream* other = rt.create_stream().value();
    CHECK(rt.destroy_stream(other) == Status::ok);
}

TEST_CASE("a host task may force-reset the device of its own stream",
          "[runtime][stream][concurrency]") {
    Runtime& rt = device_runtime();
    ferry::Stream* s = rt.create_stream().value();
    Status reset = Status::failure;
    Latch gate;
    Latch tail;
    REQUIRE(rt.launch_host_task(s, [&] {
        gate.wait();
        reset = rt.reset_device_force(0);
    }) == Status::ok);
    REQUIRE(rt.launch_host_task(s, [&] { tail.release(); }) == Status::ok);
    gate.release();
    tail.wait();
    CHECK(reset == Status::ok);
    CHECK(rt.primary_refs(0) == 0);
    CHECK(rt.synchronize_stream(s) == Status::rt_param_invalid);
    // The device can be used again at once; finalize joins the reset stream's thread.
    REQUIRE(rt.set_device(0) == Status::ok);
    CHECK(rt.launch_host_task(nullptr, [] {}) == Status::ok);
    CHECK(rt.synchronize_stream(nullptr) == Status::ok);
    ferry::Runtime::shutdown();
}

// Process exit stops streams without draining; a stream waiting for an event whose record was
// dropped with another stream's queue must still end, so that its thread can be joined.
TEST_CASE("a stop without draining ends a running event wait", "[runtime][stream][concurrency]") {
    auto event = std::make_shared<ferry::Event>(1, 0);
    std::uint64_t pending = 0;
    // A record whose task is never run: the event stays pending.
    REQUIRE(event->record([&](std::uint64_t generation) {
        pending = generation;
        return Status::ok;
    }) == Status::ok);
    ferry::Stream stream(2, 0, nullptr);
    Latch waiting;
    std::atomic<bool> completed{true};
    REQUIRE(stream.enqueue("event_wait", "event", [&, event, stop = stream.stop_token()] {
        waiting.release();
        completed.store(event->wait(pending, stop));
        return Status::ok;
    }) == Status::ok);
    waiting.wait();
    CHECK(stream.shutdown(false)); // joins: would hang if the wait did not end
    CHECK(stream.finished());
    CHECK_FALSE(completed.load());
    CHECK(event->status() == ferry::EventStatus::pending);
}
