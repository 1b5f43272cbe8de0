// Devices, primary and explicit contexts, the current context per thread, device reset.
#include "support.hpp"

#include <catch2/catch.hpp>
#include <ferry/channel/message_channels.hpp>
#include <thread>

namespace {
using ferry::Runtime;
using ferry::Status;
} // namespace

TEST_CASE("device ids are checked", "[runtime][device]") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_COUNT", "2"}});
    CHECK(rt.device_count() == 2);
    CHECK(rt.set_device(-1) == Status::rt_invalid_device_id);
    CHECK(rt.set_device(2) == Status::rt_invalid_device_id);
    CHECK(rt.reset_device(2) == Status::rt_invalid_device_id);
    CHECK(rt.reset_device_force(-5) == Status::rt_invalid_device_id);
    CHECK(rt.create_context(7).status() == Status::rt_invalid_device_id);
    CHECK(rt.primary_context(64).status() == Status::rt_invalid_device_id);
    CHECK(rt.primary_context(0, 2).status() == Status::rt_param_invalid); // ts > RT_MAX_TS_ID
    CHECK(rt.current_device().status() == Status::rt_context_null);
}

TEST_CASE("only visible devices exist, under their user ids", "[runtime][device]") {
    Runtime& rt = ferry_test::fresh_runtime(
        {{"FERRY_DEVICE_COUNT", "4"}, {"ASCEND_RT_VISIBLE_DEVICES", "1,3"}});
    CHECK(rt.device_count() == 2);
    CHECK(rt.physical_device(0).value() == 1);
    CHECK(rt.physical_device(1).value() == 3);
    CHECK(rt.physical_device(2).status() == Status::rt_invalid_device_id);
    // Physical device 3 is user device 1: id 3 is outside the visible set.
    CHECK(rt.set_device(2) == Status::rt_invalid_device_id);
    CHECK(rt.set_device(3) == Status::rt_invalid_device_id);
    CHECK(rt.create_context(3).status() == Status::rt_invalid_device_id);
    CHECK(rt.reset_device(3) == Status::rt_invalid_device_id);
    REQUIRE(rt.set_device(1) == Status::ok);
    CHECK(rt.current_device().value() == 1);
    CHECK(rt.memory_used(1) == 0);
    const auto p = rt.malloc(64);
    REQUIRE(p.has_value());
    CHECK(rt.pointer_attributes(*p).device == 1);
    CHECK(rt.free(*p) == Status::ok);
    CHECK(rt.reset_device(1) == Status::ok);
    ferry::Runtime::shutdown();
    ::unsetenv("ASCEND_RT_VISIBLE_DEVICES");
}

TEST_CASE("a bad visible-device list fails the boot with a clear error", "[runtime][device]") {
    ferry::Runtime::shutdown();
    ferry_test::clear_runtime_environment();
    ::setenv("FERRY_DEVICE_COUNT", "2", 1);
    ::setenv("ASCEND_RT_VISIBLE_DEVICES", "0,2", 1);
    CHECK(ferry::Runtime::instance().status() == Status::rt_internal_error);
    CHECK(ferry::Runtime::boot_error().find("ASCEND_RT_VISIBLE_DEVICES='0,2'") !=
          std::string::npos);
    ::unsetenv("ASCEND_RT_VISIBLE_DEVICES");
    CHECK(ferry::Runtime::instance().has_value()); // fixed: the next boot succeeds
    ferry::Runtime::shutdown();
}

TEST_CASE("set device retains the primary context; reset releases it", "[runtime][device]") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_COUNT", "2"}});
    CHECK(rt.primary_context(1).status() == Status::rt_context_null);
    REQUIRE(rt.set_device(1) == Status::ok);
    REQUIRE(rt.set_device(1) == Status::ok);
    CHECK(rt.primary_refs(1) == 2);
    CHECK(rt.current_device().value() == 1);
    const ferry::Context* primary = rt.primary_context(1).value();
    CHECK(primary->primary());
    CHECK(primary->device() == 1);
    CHECK(rt.current_context().value() == primary);

    CHECK(rt.reset_device(1) == Status::ok);
    CHECK(rt.primary_refs(1) == 1);
    CHECK(rt.current_device().value() == 1); // still referenced
    CHECK(rt.reset_device(1) == Status::ok);
    CHECK(rt.primary_refs(1) == 0);
    CHECK(rt.primary_context(1).status() == Status::rt_context_null);
    CHECK(rt.current_device().status() == Status::rt_context_null);
    CHECK(rt.reset_device(1) == Status::ok); // nothing held: a no-op
}

TEST_CASE("reset force drops every reference at once", "[runtime][device]") {
    Runtime& rt = ferry_test::fresh_runtime();
    for (int i = 0; i < 5; ++i) {
        REQUIRE(rt.set_device(0) == Status::ok);
    }
    CHECK(rt.primary_refs(0) == 5);
    CHECK(rt.reset_device_force(0) == Status::ok);
    CHECK(rt.primary_refs(0) == 0);
    CHECK(rt.current_context().status() == Status::rt_context_null);
}

TEST_CASE("reset of a device frees its streams and memory", "[runtime][device]") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_COUNT", "2"}});
    REQUIRE(rt.set_device(1) == Status::ok);
    void* a = rt.malloc(1000).value();
    void* b = rt.malloc(10).value();
    ferry::Stream* stream = rt.create_stream().value();
    ferry::Event* event = rt.create_event().value();
    REQUIRE(rt.set_device(0) == Status::ok);
    void* other = rt.malloc(10).value(); // device 0: must survive device 1's reset
    void* pinned = rt.malloc_host(10).value();
    CHECK(rt.registry().size() == 4);
    CHECK(rt.memory_used(1) > 0);

    REQUIRE(rt.set_device(1) == Status::ok); // current again (reference count 2)
    int ran = 0;
    REQUIRE(rt.launch_host_task(stream, [&] { ++ran; }) == Status::ok);
    CHECK(rt.reset_device_force(1) == Status::ok);
    CHECK(ran == 1); // queued work finished before the stream went away
    CHECK(rt.memory_used(1) == 0);
    CHECK(rt.registry().size() == 2);
    CHECK_FALSE(rt.registry().find(a).has_value());
    CHECK(rt.free(b) == Status::rt_memory_free); // already released by the reset
    CHECK(rt.synchronize_stream(stream) == Status::rt_param_invalid);
    CHECK(rt.destroy_stream(stream) == Status::rt_param_invalid);
    CHECK(rt.record_event(event, nullptr) == Status::rt_param_invalid);
    CHECK(rt.registry().find(other)->device == 0);
    CHECK(rt.current_context().status() == Status::rt_context_null); // its context went too
    CHECK(rt.free(other) == Status::ok); // freeing needs no current context
    CHECK(rt.free_host(pinned) == Status::ok);
    CHECK(rt.registry().size() == 0);
}

TEST_CASE("the current context is per thread", "[runtime][device][concurrency]") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_COUNT", "2"}});
    REQUIRE(rt.set_device(1) == Status::ok);
    Status other_before = Status::ok;
    Status other_after = Status::ok;
    std::int32_t other_device = -1;
    std::thread([&] {
        other_before = rt.current_device().status();
        other_after = rt.set_device(0);
        other_device = rt.current_device().value_or(-1);
        (void)rt.reset_device(0);
    }).join();
    CHECK(other_before == Status::rt_context_null);
    CHECK(other_after == Status::ok);
    CHECK(other_device == 0);
    CHECK(rt.current_device().value() == 1); // unaffected by the other thread
}

TEST_CASE("explicit contexts: create, set current, destroy", "[runtime][device]") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_COUNT", "2"}});
    const ferry::Context* c0 = rt.create_context(0).value();
    CHECK_FALSE(c0->primary());
    CHECK(rt.current_context().value() == c0);
    void* p = rt.malloc(32).value();
    CHECK(rt.registry().find(p)->device == 0);
    const ferry::Context* c1 = rt.create_context(1).value();
    CHECK(rt.current_device().value() == 1);
    CHECK(rt.set_current_context(c0) == Status::ok);
    CHECK(rt.current_device().value() == 0);

    CHECK(rt.destroy_context(c0) == Status::ok);
    CHECK(rt.current_context().status() == Status::rt_context_null);
    CHECK_FALSE(rt.registry().find(p).has_value());            // device 0 had no context left
    CHECK(rt.destroy_context(c0) == Status::rt_param_invalid); // twice
    CHECK(rt.set_current_context(c0) == Status::rt_param_invalid);
    CHECK(rt.set_current_context(nullptr) == Status::rt_param_invalid);

    REQUIRE(rt.set_device(1) == Status::ok);
    const ferry::Context* primary = rt.primary_context(1).value();
    CHECK(rt.destroy_context(primary) == Status::rt_param_invalid); // primary: reset instead
    CHECK(rt.destroy_context(c1) == Status::ok);
    CHECK(rt.reset_device(1) == Status::ok);
}

TEST_CASE("synchronize device waits for every stream of the device", "[runtime][device]") {
    Runtime& rt = ferry_test::fresh_runtime();
    CHECK(rt.synchronize_device() == Status::rt_context_null);
    REQUIRE(rt.set_device(0) == Status::ok);
    std::atomic<int> done{0};
    ferry::Stream* s1 = rt.create_stream().value();
    ferry::Stream* s2 = rt.create_stream().value();
    for (int i = 0; i < 50; ++i) {
        REQUIRE(rt.launch_host_task(s1, [&] { done.fetch_add(1); }) == Status::ok);
        REQUIRE(rt.launch_host_task(s2, [&] { done.fetch_add(1); }) == Status::ok);
        REQUIRE(rt.launch_host_task(nullptr, [&] { done.fetch_add(1); }) == Status::ok);
    }
    CHECK(rt.synchronize_device() == Status::ok);
    CHECK(done.load() == 150);
    CHECK(rt.destroy_stream(s1) == Status::ok);
    CHECK(rt.destroy_stream(s2) == Status::ok);
}

// docs/channel.md (Registry): a device reset stops every channel of the device, so a thread
// blocked on one wakes instead of waiting for a device that is gone.
TEST_CASE("releasing a device stops its message channels", "[runtime][device][concurrency]") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_COUNT", "2"}});
    auto& registry = ferry::message_channels().registry;
    auto on_0 = registry.create_queue(0, "device-reset", 2);
    auto on_1 = registry.create_queue(1, "device-reset", 2);
    REQUIRE((on_0.has_value() && on_1.has_value()));
    REQUIRE(rt.set_device(0) == Status::ok);
    REQUIRE(rt.set_device(0) == Status::ok);
    REQUIRE(rt.set_device(1) == Status::ok);
    Status received = Status::ok;
    std::thread receiver([&] { received = on_0->channel->receive().status(); });
    while (on_0->channel->blocked() == 0) {
        std::this_thread::yield();
    }
    CHECK(rt.reset_device(0) == Status::ok); // one reference left: the device stays
    CHECK_FALSE(on_0->channel->stopped());
    CHECK(rt.reset_device(0) == Status::ok); // the last one: the device is released
    const bool stopped_by_reset = on_0->channel->stopped();
    if (!stopped_by_reset) {
        on_0->channel->stop(); // let the receiver go, so the failure is reported, not a hang
    }
    receiver.join();
    CHECK(stopped_by_reset);
    CHECK(received == Status::stopped);
    CHECK_FALSE(on_1->channel->stopped()); // another device's channels are untouched
    CHECK(registry.close(on_0->id) == Status::ok);
    CHECK(registry.close(on_1->id) == Status::ok);
}
