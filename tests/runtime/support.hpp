#pragma once
// Test helper: a fresh runtime booted with exactly the given FERRY_* variables. Each test case
// starts from a shut-down runtime, so no state leaks between cases.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <ferry/runtime.hpp>
#include <initializer_list>
#include <utility>

namespace ferry_test {

inline void clear_runtime_environment() {
    for (const char* name : {"FERRY_DEVICE_COUNT", "FERRY_DEVICE_MEMORY", "FERRY_LOG_LEVEL",
                             "FERRY_KERNEL_THREADS", "ASCEND_RT_VISIBLE_DEVICES"}) {
        ::unsetenv(name);
    }
}

inline ferry::Runtime&
fresh_runtime(std::initializer_list<std::pair<const char*, const char*>> environment = {}) {
    ferry::Runtime::shutdown();
    clear_runtime_environment();
    for (const auto& [name, value] : environment) {
        ::setenv(name, value, 1);
    }
    const auto runtime = ferry::Runtime::instance();
    REQUIRE(runtime.has_value());
    return **runtime;
}

} // namespace ferry_test
