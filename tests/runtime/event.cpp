// Events: record, query, synchronize, elapsed time, cross-stream waits.
#include "support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

namespace {
using ferry::EventStatus;
using ferry::Runtime;
using ferry::Status;

Runtime& device_runtime() {
    Runtime& rt = ferry_test::fresh_runtime();
    REQUIRE(rt.set_device(0) == Status::ok);
    return rt;
}
} // namespace

TEST_CASE("record, query and synchronize", "[runtime][event][concurrency]") {
    Runtime& rt = device_runtime();
    ferry::Event* e = rt.create_event().value();
    ferry::Stream* s = rt.create_stream().value();
    CHECK(rt.query_event(e).value() == EventStatus::not_recorded);
    CHECK(rt.synchronize_event(e) == Status::ok); // nothing to wait for

    std::atomic<bool> release{false};
    REQUIRE(rt.launch_host_task(s, [&] {
        while (!release.load()) {
            std::this_thread::yield();
        }
    }) == Status::ok);
    REQUIRE(rt.record_event(e, s) == Status::ok);
    CHECK(rt.query_event(e).value() == EventStatus::pending);
    CHECK(rt.synchronize_event(e, std::chrono::milliseconds(2)) == Status::rt_wait_timeout);
    release.store(true);
    CHECK(rt.synchronize_event(e) == Status::ok);
    CHECK(rt.query_event(e).value() == EventStatus::complete);
    CHECK(rt.destroy_event(e) == Status::ok);
    CHECK(rt.destroy_event(e) == Status::rt_param_invalid);
    CHECK(rt.query_event(e).status() == Status::rt_param_invalid);
    CHECK(rt.record_event(e, s) == Status::rt_param_invalid);
    CHECK(rt.destroy_stream(s) == Status::ok);
}

TEST_CASE("elapsed time is non-negative and monotone", "[runtime][event]") {
    Runtime& rt = device_runtime();
    ferry::Event* events[4];
    for (auto& e : events) {
        e = rt.create_event().value();
    }
    CHECK(rt.event_elapsed_time(events[0], events[1]).status() == Status::rt_param_invalid);
    for (auto* e : events) {
        REQUIRE(rt.record_event(e, nullptr) == Status::ok);
        REQUIRE(rt.launch_host_task(nullptr, [] {
            volatile int spin = 0;
            for (int i = 0; i < 10000; ++i) {
                spin = spin + i;
            }
        }) == Status::ok);
    }
    REQUIRE(rt.synchronize_stream(nullptr) == Status::ok);
    float previous = 0.0F;
    for (int i = 1; i < 4; ++i) {
        const float ms = rt.event_elapsed_time(events[0], events[i]).value();
        CHECK(ms >= 0.0F);
        CHECK(ms >= previous);
        previous = ms;
    }
    CHECK(rt.event_elapsed_time(events[0], nullptr).status() == Status::rt_param_invalid);
}

TEST_CASE("a stream waits for an event recorded on another stream",
          "[runtime][event][concurrency]") {
    Runtime& rt = device_runtime();
    ferry::Stream* producer = rt.create_stream().value();
    ferry::Stream* consumer = rt.create_stream().value();
    ferry::Event* ready = rt.create_event().value();
    std::atomic<bool> release{false};
    int value = 0;
    int observed = -1;
    REQUIRE(rt.launch_host_task(producer, [&] {
        while (!release.load()) {
            std::this_thread::yield();
        }
        value = 42;
    }) == Status::ok);
    REQUIRE(rt.record_event(ready, producer) == Status::ok);
    REQUIRE(rt.stream_wait_event(consumer, ready) == Status::ok);
    REQUIRE(rt.launch_host_task(consumer, [&] { observed = value; }) == Status::ok);
    CHECK_FALSE(rt.query_stream(consumer).value());
    release.store(true);
    CHECK(rt.synchronize_stream(consumer) == Status::ok);
    CHECK(observed == 42);
    CHECK(rt.synchronize_stream(producer) == Status::ok);
}

TEST_CASE("a reset forgets completed records when its stream reaches it",
          "[runtime][event][concurrency]") {
    Runtime& rt = device_runtime();
    ferry::Stream* s = rt.create_stream().value();
    ferry::Stream* other = rt.create_stream().value();
    ferry::Event* e = rt.create_event().value();
    REQUIRE(rt.record_event(e, s) == Status::ok);
    REQUIRE(rt.synchronize_stream(s) == Status::ok);

    std::atomic<bool> release{false};
    const auto hold = [&] {
        while (!release.load()) {
            std::this_thread::yield();
        }
    };
    REQUIRE(rt.launch_host_task(s, hold) == Status::ok);
    REQUIRE(rt.reset_event(e, s) == Status::ok);
    CHECK(rt.query_event(e).value() == EventStatus::complete); // not reached yet
    release.store(true);
    REQUIRE(rt.synchronize_stream(s) == Status::ok);
    CHECK(rt.query_event(e).value() == EventStatus::not_recorded);
    CHECK(rt.event_elapsed_time(e, e).status() == Status::rt_param_invalid);

    // a record pending on another stream when the reset runs is kept
    release.store(false);
    REQUIRE(rt.launch_host_task(other, hold) == Status::ok);
    REQUIRE(rt.record_event(e, other) == Status::ok);
    REQUIRE(rt.reset_event(e, s) == Status::ok);
    REQUIRE(rt.synchronize_stream(s) == Status::ok);
    CHECK(rt.query_event(e).value() == EventStatus::pending);
    release.store(true);
    CHECK(rt.synchronize_event(e) == Status::ok);
    CHECK(rt.query_event(e).value() == EventStatus::complete);

    CHECK(rt.reset_event(nullptr, s) == Status::rt_param_invalid);
    CHECK(rt.destroy_event(e) == Status::ok);
    CHECK(rt.reset_event(e, s) == Status::rt_param_invalid);
    CHECK(rt.destroy_stream(s) == Status::ok);
    CHECK(rt.destroy_stream(other) == Status::ok);
}

// A record whose stream is destroyed between the handle lookup and the enqueue fails; the event
// must then be as it was, not pending on a record no stream will ever reach. The recorder keeps
// recording until the destroy makes it fail, so every round ends inside that race.
TEST_CASE("a record racing the destroy of its stream never leaves the event pending",
          "[runtime][event][concurrency]") {
    Runtime& rt = device_runtime();
    ferry::Event* e = rt.create_event().value();
    int failed_enqueues = 0;
    for (int round = 0; round < 200; ++round) {
        ferry::Stream* s = rt.create_stream().value();
        std::atomic<bool> started{false};
        Status last = Status::ok;
        std::thread recorder([&] {
            started.store(true);
            started.notify_one();
            while ((last = rt.record_event(e, s)) == Status::ok) {
            }
        });
        started.wait(false);
        REQUIRE(rt.destroy_stream(s) == Status::ok);
        recorder.join();
        failed_enqueues += last == Status::rt_stream_context ? 1 : 0;
        REQUIRE(rt.query_event(e).value() != EventStatus::pending);
        REQUIRE(rt.synchronize_event(e, ferry::no_wait) == Status::ok);
    }
    UNSCOPED_INFO("records that found the stream stopping: " << failed_enqueues);
    CHECK(rt.destroy_event(e) == Status::ok);
}

TEST_CASE("a record its stream refuses leaves the event as it was", "[runtime][event]") {
    ferry::Event event(1, 0);
    CHECK(event.record([](std::uint64_t) { return Status::rt_stream_context; }) ==
          Status::rt_stream_context);
    CHECK(event.status() == EventStatus::not_recorded);
    CHECK(event.generation() == 0);
    std::uint64_t first = 0;
    REQUIRE(event.record([&](std::uint64_t generation) {
        first = generation;
        return Status::ok;
    }) == Status::ok);
    event.complete(first);
    CHECK(event.status() == EventStatus::complete);
    const auto stamp = event.timestamp_ns();
    CHECK(event.record([](std::uint64_t) { return Status::rt_stream_context; }) ==
          Status::rt_stream_context);
    CHECK(event.status() == EventStatus::complete); // still the first record, timestamp kept
    CHECK(event.timestamp_ns() == stamp);
    CHECK(event.synchronize(ferry::no_wait) == Status::ok);
}
