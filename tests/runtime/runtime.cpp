// Boot, shutdown, aclInit/aclFinalize semantics and the pointer locator.
#include "support.hpp"

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <ferry/runtime.hpp>
#include <ferry/tensor/dataset.hpp>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {
using ferry::BootStage;
using ferry::Runtime;
using ferry::Status;

constexpr int k_racers = 16;

// Calls Runtime::instance() from k_racers threads released together; returns each result.
std::vector<ferry::Result<Runtime*>> race_instance() {
    std::atomic<bool> go{false};
    std::vector<ferry::Result<Runtime*>> results(k_racers, Status::rt_internal_error);
    std::vector<std::thread> threads;
    for (int i = 0; i < k_racers; ++i) {
        threads.emplace_back([&, i] {
            while (!go.load()) {
                std::this_thread::yield();
            }
            results[static_cast<std::size_t>(i)] = Runtime::instance();
        });
    }
    go.store(true);
    for (auto& t : threads) {
        t.join();
    }
    return results;
}

std::uint64_t boot_attempts() {
    return ferry::detail::keeper().attempts.load();
}
} // namespace

// Runs first, before anything in this process has booted the runtime.
TEST_CASE("a failing boot rolls back to BOOT_INIT and can be retried",
          "[runtime][boot][concurrency]") {
    REQUIRE(Runtime::boot_stage() == BootStage::init);
    ferry_test::clear_runtime_environment();
    ::setenv("FERRY_DEVICE_COUNT", "65", 1);
    const auto quiet = ferry::set_log_sink([](ferry::LogLevel, std::string_view) {});

    const std::uint64_t before = boot_attempts();
    for (const auto& result : race_instance()) {
        CHECK(result.status() == Status::rt_internal_error);
    }
    CHECK(Runtime::boot_stage() == BootStage::init);
    CHECK(Runtime::boot_error().find("FERRY_DEVICE_COUNT='65'") != std::string::npos);
    CHECK(boot_attempts() > before);
    CHECK(ferry::locate(&before).kind == ferry::MemoryKind::host); // no locator installed

    ::unsetenv("FERRY_DEVICE_COUNT");
    ferry::set_log_sink(quiet);
    const auto retried = Runtime::instance();
    REQUIRE(retried.has_value());
    CHECK(Runtime::boot_stage() == BootStage::done);
    CHECK(Runtime::boot_error().empty());
    CHECK((*retried)->device_count() == 1);
}

TEST_CASE("concurrent first use boots exactly once", "[runtime][boot][concurrency]") {
    Runtime::shutdown();
    REQUIRE(Runtime::boot_stage() == BootStage::init);
    const std::uint64_t before = boot_attempts();
    const auto results = race_instance();
    std::set<Runtime*> seen;
    for (const auto& result : results) {
        REQUIRE(result.has_value());
        seen.insert(*result);
    }
    CHECK(seen.size() == 1);
    CHECK(boot_attempts() == before + 1);
    CHECK(Runtime::boot_stage() == BootStage::done);
}

TEST_CASE("configuration from the environment reaches the runtime", "[runtime][boot]") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_COUNT", "3"},
                                             {"FERRY_DEVICE_MEMORY", "1M"},
                                             {"FERRY_KERNEL_THREADS", "2"}});
    CHECK(rt.device_count() == 3);
    CHECK(rt.config().device_memory == (1u << 20));
    CHECK(rt.config().kernel_threads == 2);
    CHECK(rt.set_device(2) == Status::ok);
    CHECK(rt.set_device(3) == Status::rt_invalid_device_id);
    CHECK(rt.reset_device(2) == Status::ok);
}

TEST_CASE("shutdown releases everything and the next use boots again", "[runtime][boot]") {
    Runtime& rt = ferry_test::fresh_runtime();
    REQUIRE(rt.set_device(0) == Status::ok);
    void* p = rt.malloc(64).value();
    CHECK(ferry::locate(p).kind == ferry::MemoryKind::device);
    Runtime::shutdown();
    CHECK(Runtime::boot_stage() == BootStage::init);
    CHECK(ferry::locate(p).kind == ferry::MemoryKind::host); // locator removed with the runtime
    Runtime::shutdown();                                     // idempotent
    Runtime& again = ferry_test::fresh_runtime();
    CHECK(again.registry().size() == 0);
    CHECK(again.current_device().status() == Status::rt_context_null);
}

TEST_CASE("aclInit reference counting and aclFinalize repeat", "[runtime][init][concurrency]") {
    Runtime::shutdown();
    // Make sure the state starts finalized-then-uninitialized regardless of earlier cases.
    (void)ferry::finalize();
    CHECK(ferry::finalize() == Status::repeat_finalize);

    std::array<Status, 10> outcomes{};
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        threads.emplace_back([&, i] { outcomes[i] = ferry::initialize(nullptr); });
    }
    for (auto& t : threads) {
        t.join();
    }
    int ok = 0;
    int repeated = 0;
    for (const Status s : outcomes) {
        ok += s == Status::ok;
        repeated += s == Status::repeat_initialize;
    }
    CHECK(ok == 1); // CANN's MultiThreadConcurrentAclInit
    CHECK(repeated == 9);
    CHECK(ferry::initialize_count() == 10);
    CHECK(Runtime::boot_stage() == BootStage::done);

    CHECK(ferry::finalize() == Status::ok); // count goes to 0 however many inits came before
    CHECK(ferry::initialize_count() == 0);
    CHECK(Runtime::boot_stage() == BootStage::init);
    CHECK(ferry::finalize() == Status::repeat_finalize);
    CHECK(ferry::initialize() == Status::ok); // init → finalize → init works
    CHECK(ferry::initialize_count() == 1);
    CHECK(ferry::finalize() == Status::ok);
}

TEST_CASE("aclInit config files: unreadable, then must match the first one", "[runtime][init]") {
    Runtime::shutdown();
    (void)ferry::finalize();
    CHECK(ferry::initialize("/nonexistent/ferry/acl.json") == Status::invalid_file);
    CHECK(ferry::initialize_count() == 0);

    const std::string a = "ferry-test-acl-a.json";
    const std::string b = "ferry-test-acl-b.json";
    std::ofstream(a) << "{\"dump\":{}}";
    std::ofstream(b) << "{\"profiler\":{}}";
    // The first successful call in the process fixes the content: here, no file (empty).
    REQUIRE(ferry::initialize(nullptr) == Status::ok);
    REQUIRE(ferry::finalize() == Status::ok);
    CHECK(ferry::initialize(a.c_str()) == Status::invalid_param);
    CHECK(ferry::initialize_count() == 0);
    CHECK(ferry::initialize(nullptr) == Status::ok);
    CHECK(ferry::finalize() == Status::ok);
    std::remove(a.c_str());
    std::remove(b.c_str());
}

TEST_CASE("a failing boot during aclInit is returned and changes nothing", "[runtime][init]") {
    Runtime::shutdown();
    (void)ferry::finalize();
    ferry_test::clear_runtime_environment();
    ::setenv("FERRY_LOG_LEVEL", "loud", 1);
    const auto quiet = ferry::set_log_sink([](ferry::LogLevel, std::string_view) {});
    CHECK(ferry::initialize() == Status::rt_internal_error);
    CHECK(Runtime::boot_error().find("FERRY_LOG_LEVEL") != std::string::npos);
    CHECK(ferry::initialize_count() == 0);
    ::unsetenv("FERRY_LOG_LEVEL");
    ferry::set_log_sink(quiet);
    CHECK(ferry::initialize() == Status::ok);
    CHECK(ferry::finalize() == Status::ok);
}

TEST_CASE("the locator says device for device memory and host otherwise", "[runtime][locate]") {
    Runtime& rt = ferry_test::fresh_runtime();
    REQUIRE(rt.set_device(0) == Status::ok);
    auto* device = static_cast<std::byte*>(rt.malloc(256).value());
    void* pinned = rt.malloc_host(256).value();
    int stack = 0;
    CHECK(ferry::locate(device).kind == ferry::MemoryKind::device);
    CHECK(ferry::locate(device + 255).kind == ferry::MemoryKind::device);
    CHECK(ferry::locate(pinned).kind == ferry::MemoryKind::host); // HOST → host (CANN)
    CHECK(ferry::locate(&stack).kind == ferry::MemoryKind::host); // UNREGISTERED → host
    CHECK(ferry::locate(nullptr).kind == ferry::MemoryKind::unknown);
    CHECK(rt.free(device) == Status::ok);
    CHECK(ferry::locate(device).kind == ferry::MemoryKind::host); // freed: no longer device
    CHECK(rt.free_host(pinned) == Status::ok);
}

TEST_CASE("a dataset mixing device and host payloads is rejected", "[runtime][locate][tensor]") {
    Runtime& rt = ferry_test::fresh_runtime();
    REQUIRE(rt.set_device(0) == Status::ok);
    void* device = rt.malloc(64).value();
    std::array<std::byte, 64> host{};
    const std::int64_t dims[] = {64};
    auto on_device = ferry::DataItem::borrow(ferry::TensorKind::tensor, dims, 1,
                                             ferry::DType::uint8, device, 64);
    auto on_host = ferry::DataItem::borrow(ferry::TensorKind::tensor, dims, 1, ferry::DType::uint8,
                                           host.data(), host.size());
    REQUIRE(on_device.has_value());
    REQUIRE(on_host.has_value());

    ferry::Dataset device_first;
    CHECK(device_first.add(*on_device) == Status::ok);
    CHECK(device_first.memory_kind() == ferry::MemoryKind::device);
    CHECK(device_first.add(*on_host) == Status::invalid_param);
    CHECK(device_first.size() == 1);

    ferry::Dataset host_first;
    CHECK(host_first.add(*on_host) == Status::ok);
    CHECK(host_first.add(*on_device) == Status::invalid_param);
    CHECK(host_first.memory_kind() == ferry::MemoryKind::host);

    ferry::Dataset all_device;
    CHECK(all_device.add(*on_device) == Status::ok);
    CHECK(all_device.add(*on_device) == Status::ok);
    CHECK(rt.free(device) == Status::ok);
}
