// One process, one runtime (docs/c-api.md#one-process-one-runtime): a program that calls both
// ferry-acl's C API and ferry's header-only C++ API sees one set of devices, contexts, memory and
// one aclInit count — whether it links the shared library (whose copies of the header-only
// singletons are bound to the program's through the process-state exports,
// src/acl/rt/process_state.hpp) or the static one.

#include "acl/acl.h"
#include "acl/acl_tdt.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/channel/message_channels.hpp>
#include <ferry/runtime/init.hpp>
#include <ferry/runtime/runtime.hpp>
#include <ferry/tensor/dataset.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <vector>

namespace {
ferry::Runtime& cxx_runtime() {
    auto booted = ferry::Runtime::instance();
    REQUIRE(booted.has_value());
    return **booted;
}
} // namespace

TEST_CASE("aclInit's reference count is ferry::initialize's", "[compat][one-runtime]") {
    REQUIRE(aclInit(nullptr) == ACL_SUCCESS);
    CHECK(ferry::initialize_count() == 1);
    CHECK(ferry::initialize() == ferry::Status::repeat_initialize);
    CHECK(aclInit(nullptr) == ACL_ERROR_REPEAT_INITIALIZE);
    CHECK(ferry::initialize_count() == 3);
    CHECK(ferry::finalize() == ferry::Status::ok);
    CHECK(aclFinalize() == ACL_ERROR_REPEAT_FINALIZE);
    CHECK(ferry::Runtime::boot_stage() == ferry::BootStage::init); // the C++ side saw the shutdown
}

TEST_CASE("the device set through the C API is the C++ thread's current device",
          "[compat][one-runtime]") {
    REQUIRE(aclrtSetDevice(1) == ACL_SUCCESS);
    ferry::Runtime& rt = cxx_runtime();
    const auto device = rt.current_device();
    REQUIRE(device.has_value());
    CHECK(*device == 1);
    CHECK(rt.primary_refs(1) == 1);
    REQUIRE(rt.set_device(0) == ferry::Status::ok); // and the other way round
    std::int32_t current = -1;
    CHECK(aclrtGetDevice(&current) == ACL_SUCCESS);
    CHECK(current == 0);
    CHECK(aclrtResetDevice(1) == ACL_SUCCESS);
    CHECK(rt.primary_refs(1) == 0);
    CHECK(rt.reset_device(0) == ferry::Status::ok);
}

TEST_CASE("memory allocated on one side is known to the other", "[compat][one-runtime]") {
    REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS);
    ferry::Runtime& rt = cxx_runtime();
    void* from_c = nullptr;
    REQUIRE(aclrtMalloc(&from_c, 100, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    const auto found = rt.registry().find(from_c);
    REQUIRE(found.has_value());
    CHECK(found->kind == ferry::AllocationKind::device);
    CHECK(found->device == 0);
    CHECK(ferry::locate(from_c).kind ==
          ferry::MemoryKind::device); // the runtime's locator is installed

    const auto from_cxx = rt.malloc(64);
    REQUIRE(from_cxx.has_value());
    std::uint32_t pattern = 0xC0FFEE;
    CHECK(aclrtMemcpy(*from_cxx, 64, &pattern, sizeof pattern, ACL_MEMCPY_HOST_TO_DEVICE) ==
          ACL_SUCCESS);
    CHECK(aclrtFree(*from_cxx) == ACL_SUCCESS);
    CHECK(rt.free(from_c) == ferry::Status::ok);
    CHECK(aclrtFree(from_c) == ACL_ERROR_RT_MEMORY_FREE); // already freed by the C++ side
    CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
}

// The current context, hence its default stream, is shared: C++ queues, C synchronizes. A stream
// the C API made is reached through its handle only, which is a token and not a ferry::Stream*
// (docs/c-api.md, Handle identity): the runtime rejects such a cast without dereferencing it.
TEST_CASE("the default stream is shared; C stream handles are tokens", "[compat][one-runtime]") {
    REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS);
    ferry::Runtime& rt = cxx_runtime();
    int runs = 0;
    REQUIRE(rt.launch_host_task(nullptr, [&runs] { ++runs; }) == ferry::Status::ok);
    CHECK(aclrtSynchronizeStream(nullptr) == ACL_SUCCESS);
    CHECK(runs == 1);
    aclrtStream stream = nullptr;
    REQUIRE(aclrtCreateStream(&stream) == ACL_SUCCESS);
    CHECK(rt.destroy_stream(static_cast<ferry::Stream*>(stream)) ==
          ferry::Status::rt_param_invalid);
    CHECK(aclrtDestroyStream(stream) == ACL_SUCCESS); // untouched by the rejected cast
    CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
}

TEST_CASE("channels made by the C API are the C++ message channels", "[compat][one-runtime]") {
    acltdtChannelHandle* handle = acltdtCreateChannelWithCapacity(0, "one-runtime-feed", 4);
    REQUIRE(handle != nullptr);
    const auto entries = ferry::message_channels().registry.find(0, "one-runtime-feed");
    REQUIRE(entries.size() == 1);
    const auto channel = entries.front().channel;
    REQUIRE(channel != nullptr);
    CHECK(channel->capacity() == 4);

    // C++ sends a dataset as a message; the C API receives it.
    const std::vector<std::int32_t> values{7, 8, 9};
    ferry::Dataset batch;
    REQUIRE(batch.add(*ferry::DataItem::from(values, {3})) == ferry::Status::ok);
    auto message = ferry::serialize(batch);
    REQUIRE(message);
    REQUIRE(channel->try_send(std::move(*message)) == ferry::Status::ok);
    size_t size = 0;
    REQUIRE(acltdtQueryChannelSize(handle, &size) == ACL_SUCCESS);
    CHECK(size == 1);
    acltdtDataset* received = acltdtCreateDataset();
    REQUIRE(acltdtReceiveTensor(handle, received, 1000) == ACL_SUCCESS);
    REQUIRE(acltdtGetDatasetSize(received) == 1);
    acltdtDataItem* item = acltdtGetDataItem(received, 0);
    CHECK(acltdtGetDataTypeFromItem(item) == ACL_INT32);
    REQUIRE(acltdtGetDataSizeFromItem(item) == sizeof(std::int32_t) * 3);
    const auto* data = static_cast<const std::int32_t*>(acltdtGetDataAddrFromItem(item));
    CHECK(data[0] == 7);
    CHECK(data[2] == 9);

    // The C API sends; C++ receives the message and parses it.
    std::int64_t dims[1] = {3};
    std::int32_t out[3] = {1, 2, 3};
    acltdtDataItem* sent_item =
        acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_INT32, out, sizeof out);
    acltdtDataset* sent = acltdtCreateDataset();
    REQUIRE(acltdtAddDataItem(sent, sent_item) == ACL_SUCCESS);
    REQUIRE(acltdtSendTensor(handle, sent, 1000) == ACL_SUCCESS);
    auto bytes = channel->try_receive();
    REQUIRE(bytes);
    auto parsed = ferry::parse(*bytes);
    REQUIRE(parsed);
    REQUIRE(parsed->size() == 1);
    CHECK((*parsed)[0].dtype() == ferry::DType::int32);
    CHECK((*parsed)[0].values<std::int32_t>().value()[1] == 2);

    CHECK(acltdtDestroyDataset(sent) == ACL_SUCCESS);
    CHECK(acltdtDestroyDataItem(sent_item) == ACL_SUCCESS);
    CHECK(acltdtDestroyDataset(received) == ACL_SUCCESS);
    CHECK(acltdtDestroyChannel(handle) == ACL_SUCCESS);
    CHECK(ferry::message_channels().registry.find(0, "one-runtime-feed").empty());
}
