// aclrtSetExceptionInfoCallback (docs/c-api.md, Exception info): a host kernel that throws,
// launched through the C++ API on a stream made by the C API, calls the C callback on the stream's
// thread with the task's number, stream, queueing thread, device and error code; NULL unregisters
// it. The runtime is shared by both APIs (one process, one runtime).

#include "acl/acl.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/runtime/runtime.hpp>
#include <mutex>
#include <stdexcept>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

struct Seen {
    std::uint32_t task = 0, stream = 0, thread = 0, device = 0, code = 0;
};

std::mutex seen_mutex;
std::vector<Seen> seen;

void on_exception(aclrtExceptionInfo* info) {
    const Seen s{aclrtGetTaskIdFromExceptionInfo(info), aclrtGetStreamIdFromExceptionInfo(info),
                 aclrtGetThreadIdFromExceptionInfo(info), aclrtGetDeviceIdFromExceptionInfo(info),
                 aclrtGetErrorCodeFromExceptionInfo(info)};
    std::lock_guard lock(seen_mutex);
    seen.push_back(s);
}

std::vector<Seen> take_seen() {
    std::lock_guard lock(seen_mutex);
    return std::exchange(seen, {});
}

ferry::Runtime& runtime() {
    auto booted = ferry::Runtime::instance();
    REQUIRE(booted.has_value());
    return **booted;
}

} // namespace

TEST_CASE("a failing host kernel calls the exception-info callback", "[compat][exception-info]") {
    REQUIRE(aclrtSetDevice(1) == ACL_SUCCESS);
    aclrtStream stream = nullptr;
    REQUIRE(aclrtCreateStream(&stream) == ACL_SUCCESS);
    REQUIRE(aclrtSetExceptionInfoCallback(on_exception) == ACL_SUCCESS);
    ferry::Runtime& rt = runtime();
    // The C handle is a token, not the Stream*: launch on the C++ side's own stream of device 1.
    ferry::Stream* cxx_stream = rt.create_stream().value();
    const std::uint64_t stream_id = rt.stream_id(cxx_stream).value();
    const auto ok = [](const ferry::KernelContext&) {};
    const auto fails = [](const ferry::KernelContext&) { throw std::runtime_error("bad block"); };
    REQUIRE(rt.launch(ok, 1, {}, cxx_stream) == ferry::Status::ok);    // task 1
    REQUIRE(rt.launch(fails, 2, {}, cxx_stream) == ferry::Status::ok); // task 2
    CHECK(rt.synchronize_stream(cxx_stream) == ferry::k_task_exception_status);

    const auto calls = take_seen();
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].task == 2);
    CHECK(calls[0].stream == static_cast<std::uint32_t>(stream_id));
    CHECK(calls[0].thread == static_cast<std::uint32_t>(::gettid()));
    CHECK(calls[0].device == 1);
    CHECK(calls[0].code == static_cast<std::uint32_t>(ACL_ERROR_RT_AICPU_INTERNAL_ERROR));

    // Unregistered: the next failure calls nothing.
    REQUIRE(aclrtSetExceptionInfoCallback(nullptr) == ACL_SUCCESS);
    REQUIRE(rt.launch(fails, 1, {}, cxx_stream) == ferry::Status::ok);
    CHECK(rt.synchronize_stream(cxx_stream) == ferry::k_task_exception_status);
    CHECK(take_seen().empty());

    CHECK(rt.destroy_stream(cxx_stream) == ferry::Status::ok);
    CHECK(aclrtDestroyStream(stream) == ACL_SUCCESS);
    CHECK(aclrtResetDevice(1) == ACL_SUCCESS);
}

TEST_CASE("the accessors answer 0xFFFFFFFF for a NULL info", "[compat][exception-info]") {
    CHECK(aclrtGetTaskIdFromExceptionInfo(nullptr) == 0xFFFFFFFFU);
    CHECK(aclrtGetStreamIdFromExceptionInfo(nullptr) == 0xFFFFFFFFU);
    CHECK(aclrtGetThreadIdFromExceptionInfo(nullptr) == 0xFFFFFFFFU);
    CHECK(aclrtGetDeviceIdFromExceptionInfo(nullptr) == 0xFFFFFFFFU);
    CHECK(aclrtGetErrorCodeFromExceptionInfo(nullptr) == 0xFFFFFFFFU);
}
