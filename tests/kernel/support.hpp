#pragma once
// Test helpers for ferry/kernel: a freshly booted runtime with device 0 current, a registered
// host kernel, and a launch info naming it.

#include <array>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <ferry/kernel.hpp>
#include <ferry/runtime.hpp>
#include <optional>
#include <utility>
#include <vector>

namespace kernel_test {

inline constexpr std::array<std::byte, 8> k_binary{std::byte{0x7F}, std::byte{'E'}};

// Each test case starts from a shut-down runtime, so no state leaks between cases.
inline ferry::Runtime& fresh_runtime(const char* kernel_threads = "2") {
    ferry::Runtime::shutdown();
    for (const char* name : {"FERRY_DEVICE_COUNT", "FERRY_DEVICE_MEMORY", "FERRY_LOG_LEVEL"}) {
        ::unsetenv(name);
    }
    ::setenv("FERRY_KERNEL_THREADS", kernel_threads, 1);
    const auto runtime = ferry::Runtime::instance();
    REQUIRE(runtime.has_value());
    REQUIRE((*runtime)->set_device(0) == ferry::Status::ok);
    return **runtime;
}

// Registers `body` as kernel `name` on a new program; `stub` must be unique per kernel.
inline void register_kernel(ferry::Runtime& rt, const void* stub, const char* name,
                            ferry::HostKernel body) {
    const auto program =
        rt.register_program({ferry::k_magic_elf, 0, k_binary.data(), k_binary.size()});
    REQUIRE(program.has_value());
    REQUIRE(rt.register_kernel(*program, {stub, name, std::nullopt, std::move(body)}) ==
            ferry::Status::ok);
}

inline ferry::LaunchInfo launch_info(const char* name, std::uint32_t block_dim = 1,
                                     std::uint32_t stream_id = 0) {
    return {name, k_binary.data(), k_binary.size(), block_dim, stream_id};
}

// A copy of device memory.
inline std::vector<std::byte> read_device(ferry::Runtime& rt, const void* device,
                                          std::size_t size) {
    std::vector<std::byte> host(size);
    REQUIRE(rt.memcpy(host.data(), size, device, size, ferry::MemcpyKind::device_to_host) ==
            ferry::Status::ok);
    return host;
}

} // namespace kernel_test
