// Device and host allocations, CANN's rounding, limits, memcpy kinds against real pointer
// locations, memset, frees.
#include "support.hpp"

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

namespace {
using ferry::MemcpyKind;
using ferry::Runtime;
using ferry::Status;

Runtime& device_runtime(const char* memory = "1M") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_DEVICE_MEMORY", memory}});
    REQUIRE(rt.set_device(0) == Status::ok);
    return rt;
}
} // namespace

TEST_CASE("aclrtMalloc rounding", "[runtime][memory]") {
    using ferry::device_allocation_size;
    constexpr auto normal = static_cast<std::uint32_t>(ferry::MallocPolicy::huge_first);
    constexpr auto huge1g = static_cast<std::uint32_t>(ferry::MallocPolicy::huge1g_only);
    // (size + 32 + 32 - 1) / 32 * 32
    CHECK(device_allocation_size(1, normal) == 64);
    CHECK(device_allocation_size(32, normal) == 64);
    CHECK(device_allocation_size(33, normal) == 96);
    CHECK(device_allocation_size(100, normal) == 160);
    // no padding for HUGE1G: (size + 31) / 32 * 32
    CHECK(device_allocation_size(1, huge1g) == 32);
    CHECK(device_allocation_size(32, huge1g) == 32);
    CHECK(device_allocation_size(33, huge1g) == 64);
    CHECK(device_allocation_size(1, huge1g | ferry::k_malloc_high_band_width) == 32);
    CHECK(device_allocation_size(1, normal | ferry::k_malloc_user_readonly) == 64);
    CHECK_FALSE(device_allocation_size(SIZE_MAX - 10, normal).has_value()); // overflow
    CHECK_FALSE(device_allocation_size(1, 8).has_value());                  // unknown policy
    CHECK_FALSE(device_allocation_size(1, 0x2000).has_value());             // unknown flag
}

TEST_CASE("malloc records device allocations; bad requests change nothing", "[runtime][memory]") {
    Runtime& rt = device_runtime();
    auto p = rt.malloc(100);
    REQUIRE(p.has_value());
    CHECK(reinterpret_cast<std::uintptr_t>(*p) % ferry::k_device_alignment == 0);
    const auto a = rt.registry().find(*p);
    REQUIRE(a.has_value());
    CHECK(a->size == 100);
    CHECK(a->reserved == 160);
    CHECK(a->device == 0);
    CHECK(a->kind == ferry::AllocationKind::device);
    CHECK(rt.memory_used(0) == 160);
    CHECK(rt.pointer_attributes(static_cast<std::byte*>(*p) + 99).kind ==
          ferry::MemoryKind::device);

    CHECK(rt.malloc(0).status() == Status::invalid_param);
    CHECK(rt.malloc(16, 8).status() == Status::invalid_param);
    CHECK(rt.malloc(SIZE_MAX).status() == Status::invalid_param);
    CHECK(rt.malloc_host(0).status() == Status::invalid_param);
    CHECK(rt.registry().size() == 1);
    CHECK(rt.free(*p) == Status::ok);
    CHECK(rt.memory_used(0) == 0);
}

TEST_CASE("malloc needs a current context", "[runtime][memory]") {
    Runtime& rt = ferry_test::fresh_runtime();
    CHECK(rt.malloc(16).status() == Status::rt_context_null);
    CHECK(rt.registry().size() == 0);
}

TEST_CASE("out of memory at the configured limit keeps the registry intact", "[runtime][memory]") {
    Runtime& rt = device_runtime("4K"); // 4096 bytes per device
    std::vector<void*> blocks;          // 1056 reserved each: a 4th would need 4224 > 4096
    for (int i = 0; i < 3; ++i) {
        blocks.push_back(rt.malloc(1000).value());
    }
    CHECK(rt.memory_used(0) == 3 * 1056);
    const auto before = rt.registry().snapshot();
    CHECK(rt.malloc(1000).status() == Status::rt_memory_allocation);
    CHECK(rt.registry().snapshot() == before);
    CHECK(rt.memory_used(0) == 3 * 1056);
    CHECK(rt.malloc(4096 - 3 * 1056 - 32).has_value()); // exactly what is left still fits
    CHECK(rt.malloc(1).status() == Status::rt_memory_allocation);
    CHECK(rt.free(blocks[0]) == Status::ok);
    CHECK(rt.malloc(1000).has_value());         // freed room is reusable
    CHECK(rt.malloc_host(1 << 20).has_value()); // pinned host memory is not limited
}

TEST_CASE("freeing twice, foreign, interior or the wrong kind is an error", "[runtime][memory]") {
    Runtime& rt = device_runtime();
    auto* device = static_cast<std::byte*>(rt.malloc(64).value());
    void* host = rt.malloc_host(64).value();
    int local = 0;
    CHECK(rt.free(nullptr) == Status::invalid_param);
    CHECK(rt.free_host(nullptr) == Status::invalid_param);
    CHECK(rt.free(&local) == Status::rt_memory_free);
    CHECK(rt.free(device + 8) == Status::rt_memory_free);
    CHECK(rt.free(host) == Status::rt_memory_free);        // aclrtFree of MallocHost memory
    CHECK(rt.free_host(device) == Status::rt_memory_free); // aclrtFreeHost of device memory
    CHECK(rt.registry().size() == 2);
    CHECK(rt.free(device) == Status::ok);
    CHECK(rt.free(device) == Status::rt_memory_free); // double free
    CHECK(rt.free_host(host) == Status::ok);
    CHECK(rt.free_host(host) == Status::rt_memory_free);
    CHECK(rt.registry().size() == 0);
}

TEST_CASE("memcpy of every kind, checked against where pointers live", "[runtime][memory]") {
    Runtime& rt = device_runtime();
    auto* d1 = static_cast<std::byte*>(rt.malloc(64).value());
    auto* d2 = static_cast<std::byte*>(rt.malloc(64).value());
    auto* pinned = static_cast<std::byte*>(rt.malloc_host(64).value());
    std::array<std::byte, 64> in{};
    std::array<std::byte, 64> out{};
    for (std::size_t i = 0; i < in.size(); ++i) {
        in[i] = static_cast<std::byte>(i + 1);
    }
    REQUIRE(rt.memcpy(d1, 64, in.data(), 64, MemcpyKind::host_to_device) == Status::ok);
    REQUIRE(rt.memcpy(d2, 64, d1, 64, MemcpyKind::device_to_device) == Status::ok);
    REQUIRE(rt.memcpy(pinned, 64, d2, 64, MemcpyKind::device_to_host) == Status::ok);
    REQUIRE(rt.memcpy(out.data(), 64, pinned, 64, MemcpyKind::host_to_host) == Status::ok);
    CHECK(out == in);

    SECTION("DEFAULT and HOST_TO_BUF_TO_DEVICE infer or map the direction") {
        std::array<std::byte, 64> back{};
        REQUIRE(rt.memset(d1, 64, 0x5A, 64) == Status::ok);
        CHECK(rt.memcpy(back.data(), 64, d1, 64, MemcpyKind::automatic) == Status::ok);
        CHECK(back[63] == std::byte{0x5A});
        CHECK(rt.memcpy(d1, 64, in.data(), 64, MemcpyKind::host_to_buf_to_device) == Status::ok);
        CHECK(rt.memcpy(back.data(), 64, d1, 64, MemcpyKind::automatic) == Status::ok);
        CHECK(back == in);
    }
    SECTION("a kind that contradicts the pointers fails without copying") {
        std::array<std::byte, 64> untouched{};
        REQUIRE(rt.memset(d1, 64, 0x11, 64) == Status::ok);
        CHECK(rt.memcpy(untouched.data(), 64, in.data(), 64, MemcpyKind::host_to_device) ==
              Status::rt_param_invalid); // destination is host memory
        CHECK(rt.memcpy(d1, 64, d2, 64, MemcpyKind::host_to_device) == Status::rt_param_invalid);
        CHECK(rt.memcpy(untouched.data(), 64, in.data(), 64, MemcpyKind::device_to_host) ==
              Status::rt_param_invalid); // source is host memory
        CHECK(rt.memcpy(d1, 64, in.data(), 64, MemcpyKind::device_to_device) ==
              Status::rt_param_invalid);
        CHECK(rt.memcpy(untouched.data(), 64, d1, 64, MemcpyKind::host_to_host) ==
              Status::rt_param_invalid); // source is device memory
        CHECK(rt.memcpy(pinned, 64, d1, 64, MemcpyKind::host_to_host) == Status::rt_param_invalid);
        CHECK(std::all_of(untouched.begin(), untouched.end(),
                          [](std::byte b) { return b == std::byte{0}; }));
        std::array<std::byte, 64> check{};
        REQUIRE(rt.memcpy(check.data(), 64, d1, 64, MemcpyKind::device_to_host) == Status::ok);
        CHECK(check[0] == std::byte{0x11}); // d1 was not written by the failed copies
    }
    SECTION("device ranges must stay inside one allocation") {
        CHECK(rt.memcpy(d1 + 1, 64, in.data(), 64, MemcpyKind::host_to_device) ==
              Status::rt_param_invalid);
        CHECK(rt.memcpy(d1 + 1, 63, in.data(), 63, MemcpyKind::host_to_device) == Status::ok);
        CHECK(rt.memcpy(out.data(), 64, d1 + 32, 33, MemcpyKind::device_to_host) ==
              Status::rt_param_invalid);
    }
    SECTION("argument errors") {
        CHECK(rt.memcpy(d1, 64, in.data(), 0, MemcpyKind::host_to_device) == Status::ok);
        CHECK(rt.memcpy(nullptr, 64, in.data(), 8, MemcpyKind::host_to_device) ==
              Status::invalid_param);
        CHECK(rt.memcpy(d1, 64, nullptr, 8, MemcpyKind::host_to_device) == Status::invalid_param);
        CHECK(rt.memcpy(d1, 64, d2, 8, MemcpyKind::inner_device_to_device) ==
              Status::invalid_param);
        CHECK(rt.memcpy(d1, 64, d2, 8, MemcpyKind::inter_device_to_device) ==
              Status::invalid_param);
        CHECK(rt.memcpy(d1, 64, d2, 8, static_cast<MemcpyKind>(-1)) == Status::invalid_param);
        CHECK(rt.memcpy(d1, 8, in.data(), 9, MemcpyKind::host_to_device) ==
              Status::rt_param_invalid);
    }
}

TEST_CASE("memset checks bounds of runtime memory", "[runtime][memory]") {
    Runtime& rt = device_runtime();
    auto* d = static_cast<std::byte*>(rt.malloc(32).value());
    std::array<std::byte, 16> host{};
    CHECK(rt.memset(d, 32, 0x7F, 32) == Status::ok);
    CHECK(rt.memset(nullptr, 32, 0, 1) == Status::invalid_param);
    CHECK(rt.memset(d, 16, 0, 17) == Status::rt_param_invalid);
    CHECK(rt.memset(d + 16, 64, 0, 17) == Status::rt_param_invalid); // past the allocation
    CHECK(rt.memset(host.data(), 16, 1, 16) == Status::ok);
    CHECK(host[15] == std::byte{1});
    std::array<std::byte, 32> back{};
    REQUIRE(rt.memcpy(back.data(), 32, d, 32, MemcpyKind::device_to_host) == Status::ok);
    CHECK(std::all_of(back.begin(), back.end(), [](std::byte b) { return b == std::byte{0x7F}; }));
}

TEST_CASE("asynchronous memcpy and memset run in stream order", "[runtime][memory]") {
    Runtime& rt = device_runtime();
    auto* d = static_cast<std::byte*>(rt.malloc(256).value());
    ferry::Stream* s = rt.create_stream().value();
    std::vector<std::byte> in(256, std::byte{3});
    std::vector<std::byte> out(256);
    REQUIRE(rt.memset_async(d, 256, 9, 256, s) == Status::ok);
    REQUIRE(rt.memcpy_async(d, 256, in.data(), 128, MemcpyKind::host_to_device, s) == Status::ok);
    REQUIRE(rt.memcpy_async(out.data(), 256, d, 256, MemcpyKind::device_to_host, s) == Status::ok);
    REQUIRE(rt.synchronize_stream(s) == Status::ok);
    CHECK(out[0] == std::byte{3});
    CHECK(out[127] == std::byte{3});
    CHECK(out[128] == std::byte{9});
    CHECK(out[255] == std::byte{9});
    // Checked at submission: nothing is queued.
    CHECK(rt.memcpy_async(out.data(), 256, in.data(), 256, MemcpyKind::host_to_device, s) ==
          Status::rt_param_invalid);
    CHECK(rt.memset_async(d, 8, 0, 9, s) == Status::rt_param_invalid);
    CHECK(rt.query_stream(s).value());
    CHECK(rt.destroy_stream(s) == Status::ok);
}

TEST_CASE("memory freed before an async copy runs is reported, not written",
          "[runtime][memory][concurrency]") {
    Runtime& rt = device_runtime();
    const auto quiet = ferry::set_log_sink([](ferry::LogLevel, std::string_view) {}); // expected
    auto* d = static_cast<std::byte*>(rt.malloc(64).value());
    std::array<std::byte, 64> in{};
    ferry::Stream* s = rt.create_stream().value();
    std::atomic<bool> release{false};
    REQUIRE(rt.launch_host_task(s, [&] {
        while (!release.load()) {
            std::this_thread::yield();
        }
    }) == Status::ok);
    REQUIRE(rt.memcpy_async(d, 64, in.data(), 64, MemcpyKind::host_to_device, s) == Status::ok);
    REQUIRE(rt.free(d) == Status::ok);
    release.store(true);
    CHECK(rt.synchronize_stream(s) == Status::rt_param_invalid);
    CHECK(rt.synchronize_stream(s) == Status::ok); // reported once
    ferry::set_log_sink(quiet);
}
