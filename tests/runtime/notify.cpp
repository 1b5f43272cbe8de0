// Notifies: record on one stream, wait-and-reset on another, one record per wait, timeouts,
// destroy while waited on, device reset, stale handles, and a ping-pong between two streams.
#include "support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace {
using ferry::Runtime;
using ferry::Status;
using namespace std::chrono_literals;

Runtime& device_runtime() {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_COUNT", "2"}});
    REQUIRE(rt.set_device(0) == Status::ok);
    return rt;
}

// A host task that holds its stream until open() (synchronised on the future, not on time).
struct Gate {
    std::promise<void> opened;
    std::shared_future<void> is_open = opened.get_future().share();
    void open() { opened.set_value(); }
    auto task() {
        return [f = is_open] { f.wait(); };
    }
};

// Spins until the notify has `n` streams blocked inside a wait on it.
void until_waiting(const ferry::Notify& n, std::uint32_t count) {
    while (n.waiting() != count) {
        std::this_thread::yield();
    }
}
} // namespace

TEST_CASE("a wait holds its stream until the other stream reaches the record",
          "[runtime][notify]") {
    Runtime& rt = device_runtime();
    ferry::Notify* n = rt.create_notify().value();
    ferry::Stream* producer = rt.create_stream().value();
    ferry::Stream* consumer = rt.create_stream().value();
    Gate gate;
    std::atomic<bool> produced{false};
    std::atomic<bool> consumed_after{false};
    REQUIRE(rt.launch_host_task(producer, gate.task()) == Status::ok);
    REQUIRE(rt.launch_host_task(producer, [&] { produced = true; }) == Status::ok);
    REQUIRE(rt.record_notify(n, producer) == Status::ok);
    REQUIRE(rt.wait_and_reset_notify(n, consumer) == Status::ok);
    REQUIRE(rt.launch_host_task(consumer, [&] { consumed_after = produced.load(); }) == Status::ok);

    until_waiting(*n, 1);
    CHECK(rt.synchronize_stream(consumer, 1ms) == Status::rt_stream_sync_timeout);
    gate.open();
    CHECK(rt.synchronize_stream(consumer) == Status::ok);
    CHECK(consumed_after.load()); // the task behind the wait saw the producer's work
    CHECK_FALSE(n->is_set());     // the wait reset it
    CHECK(rt.destroy_notify(n) == Status::ok);
}

TEST_CASE("the record may come after the wait; one record releases one wait", "[runtime][notify]") {
    Runtime& rt = device_runtime();
    ferry::Notify* n = rt.create_notify().value();
    ferry::Stream* waiter = rt.create_stream().value();
    REQUIRE(rt.wait_and_reset_notify(n, waiter) == Status::ok);
    REQUIRE(rt.wait_and_reset_notify(n, waiter) == Status::ok);
    until_waiting(*n, 1);
    REQUIRE(rt.record_notify(n, nullptr) == Status::ok); // the default stream
    CHECK(rt.synchronize_stream(nullptr) == Status::ok);
    // The first wait consumes the record; then the second waits.
    while (n->is_set() || n->waiting() != 1) {
        std::this_thread::yield();
    }
    CHECK(rt.synchronize_stream(waiter, 1ms) == Status::rt_stream_sync_timeout);
    REQUIRE(rt.record_notify(n, nullptr) == Status::ok);
    CHECK(rt.synchronize_stream(waiter) == Status::ok);
    CHECK(rt.destroy_notify(n) == Status::ok);
}

TEST_CASE("two records before a wait merge into one", "[runtime][notify]") {
    Runtime& rt = device_runtime();
    ferry::Notify* n = rt.create_notify().value();
    REQUIRE(rt.record_notify(n, nullptr) == Status::ok);
    REQUIRE(rt.record_notify(n, nullptr) == Status::ok);
    REQUIRE(rt.synchronize_stream(nullptr) == Status::ok);
    ferry::Stream* waiter = rt.create_stream().value();
    REQUIRE(rt.wait_and_reset_notify(n, waiter) == Status::ok);
    REQUIRE(rt.wait_and_reset_notify(n, waiter, 20ms) == Status::ok);
    CHECK(rt.synchronize_stream(waiter) == Status::rt_wait_timeout);
    CHECK(rt.synchronize_stream(waiter) == Status::ok); // reported once
}

TEST_CASE("destroying a notify releases the stream waiting on it with an error",
          "[runtime][notify]") {
    Runtime& rt = device_runtime();
    ferry::Notify* n = rt.create_notify().value();
    ferry::Stream* waiter = rt.create_stream().value();
    std::atomic<bool> after{false};
    REQUIRE(rt.wait_and_reset_notify(n, waiter) == Status::ok);
    REQUIRE(rt.wait_and_reset_notify(n, waiter) == Status::ok); // reached after the destroy
    REQUIRE(rt.launch_host_task(waiter, [&] { after = true; }) == Status::ok);
    until_waiting(*n, 1);
    CHECK(rt.destroy_notify(n) == Status::ok);
    CHECK(rt.synchronize_stream(waiter) == Status::rt_param_invalid);
    CHECK_FALSE(after.load()); // aborted behind the failed wait
    // The handle is gone; the stream works again.
    CHECK(rt.destroy_notify(n) == Status::rt_param_invalid);
    CHECK(rt.record_notify(n, waiter) == Status::rt_param_invalid);
    CHECK(rt.wait_and_reset_notify(n, waiter) == Status::rt_param_invalid);
    CHECK(rt.notify_id(n).status() == Status::rt_param_invalid);
    REQUIRE(rt.launch_host_task(waiter, [&] { after = true; }) == Status::ok);
    CHECK(rt.synchronize_stream(waiter) == Status::ok);
    CHECK(after.load());
}

TEST_CASE("resetting the notify's device releases waiters on other devices", "[runtime][notify]") {
    Runtime& rt = device_runtime();
    REQUIRE(rt.set_device(1) == Status::ok);
    ferry::Notify* n = rt.create_notify().value(); // device 1
    CHECK(n->device() == 1);
    ferry::Stream* own = rt.create_stream().value(); // device 1: drained by the reset
    REQUIRE(rt.wait_and_reset_notify(n, own) == Status::ok);
    REQUIRE(rt.set_device(0) == Status::ok);
    ferry::Stream* other = rt.create_stream().value(); // device 0
    REQUIRE(rt.wait_and_reset_notify(n, other) == Status::ok);
    until_waiting(*n, 2);
    CHECK(rt.reset_device(1) == Status::ok); // returns: its own stream's wait ended too
    CHECK(rt.synchronize_stream(other) == Status::rt_param_invalid);
    CHECK(rt.notify_id(n).status() == Status::rt_param_invalid);
}

TEST_CASE("notify ids are distinct; no current context is an error", "[runtime][notify]") {
    Runtime& rt = ferry_test::fresh_runtime();
    CHECK(rt.create_notify().status() == Status::rt_context_null);
    REQUIRE(rt.set_device(0) == Status::ok);
    ferry::Notify* a = rt.create_notify().value();
    ferry::Notify* b = rt.create_notify().value();
    CHECK(rt.notify_id(a).value() != rt.notify_id(b).value());
    CHECK(rt.destroy_notify(a) == Status::ok);
    CHECK(rt.destroy_notify(b) == Status::ok);
}

TEST_CASE("two streams driven from two threads alternate through notifies",
          "[runtime][notify][concurrency]") {
    Runtime& rt = device_runtime();
    ferry::Notify* ping = rt.create_notify().value();
    ferry::Notify* pong = rt.create_notify().value();
    ferry::Stream* left = rt.create_stream().value();
    ferry::Stream* right = rt.create_stream().value();
    constexpr int rounds = 200;
    std::vector<int> order; // written by one stream at a time: the notifies order them
    std::atomic<int> refused{0};
    const auto expect_ok = [&](Status s) { refused += failed(s) ? 1 : 0; };
    std::thread left_thread([&] {
        for (int i = 0; i < rounds; ++i) {
            expect_ok(rt.launch_host_task(left, [&order] { order.push_back(0); }));
            expect_ok(rt.record_notify(ping, left));
            expect_ok(rt.wait_and_reset_notify(pong, left));
        }
    });
    std::thread right_thread([&] {
        for (int i = 0; i < rounds; ++i) {
            expect_ok(rt.wait_and_reset_notify(ping, right));
            expect_ok(rt.launch_host_task(right, [&order] { order.push_back(1); }));
            expect_ok(rt.record_notify(pong, right));
        }
    });
    left_thread.join();
    right_thread.join();
    REQUIRE(refused.load() == 0);
    CHECK(rt.synchronize_stream(left) == Status::ok);
    CHECK(rt.synchronize_stream(right) == Status::ok);
    REQUIRE(order.size() == 2 * rounds);
    for (std::size_t i = 0; i < order.size(); ++i) {
        CHECK(order[i] == static_cast<int>(i % 2));
    }
}
