// The bad-input table (bad_inputs.hpp): builds the World, runs every row, and checks each row's
// answer and that the World is unchanged after it.

#include "bad_inputs.hpp"

#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <cstring>
#include <ferry/channel/message_channels.hpp>
#include <ferry/runtime/init.hpp>
#include <map>
#include <string>

namespace ferry::test {
namespace {

acltdtChannelHandle* channel_with(std::uint32_t capacity, int messages, acltdtDataset* d) {
    acltdtChannelHandle* c = acltdtCreateChannelWithCapacity(0, "faults-bad", capacity);
    REQUIRE(c != nullptr);
    for (int i = 0; i < messages; ++i) {
        REQUIRE(acltdtSendTensor(c, d, 0) == ACL_SUCCESS);
    }
    return c;
}

} // namespace

World::World() {
    REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS);
    REQUIRE(aclrtCreateContext(&context, 1) == ACL_SUCCESS); // becomes current: switch back
    REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS);
    REQUIRE(aclrtCreateStream(&stream) == ACL_SUCCESS);
    REQUIRE(aclrtCreateEvent(&event) == ACL_SUCCESS);
    REQUIRE(aclrtRecordEvent(event, stream) == ACL_SUCCESS);
    REQUIRE(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT) == ACL_SUCCESS);
    std::uint32_t device0[1] = {0};
    prof_config = aclprofCreateConfig(device0, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME);
    REQUIRE(prof_config != nullptr);
    REQUIRE(aclrtMalloc(&device_memory, 4096, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    REQUIRE(aclrtMemset(device_memory, 4096, 0x5A, 4096) == ACL_SUCCESS);
    REQUIRE(aclrtMallocHost(&host_memory, 64) == ACL_SUCCESS);
    std::memset(host_memory, 0x3C, 64);
    REQUIRE(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
    const std::int64_t sixteen[1] = {16};
    tensor = aclCreateTensor(sixteen, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, sixteen, 1,
                             device_memory);
    REQUIRE(tensor != nullptr);

    item =
        acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, payload, sizeof payload);
    dataset = acltdtCreateDataset();
    empty = acltdtCreateDataset();
    received = acltdtCreateDataset();
    REQUIRE((item != nullptr && dataset != nullptr && empty != nullptr && received != nullptr));
    REQUIRE(acltdtAddDataItem(dataset, item) == ACL_SUCCESS);
    huge_item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, payload, SIZE_MAX);
    huge = acltdtCreateDataset();
    if (huge_item != nullptr) {
        REQUIRE(acltdtAddDataItem(huge, huge_item) == ACL_SUCCESS);
    }
    for (int i = 0; i < 2; ++i) {
        const auto type = static_cast<acltdtTensorType>(i == 0 ? 99 : INT_MIN);
        odd_items[i] = acltdtCreateDataItem(type, nullptr, 0, ACL_FLOAT, nullptr, 0);
        odd[i] = acltdtCreateDataset();
        REQUIRE(acltdtAddDataItem(odd[i], odd_items[i]) == ACL_SUCCESS);
    }
    queue = channel_with(4, 2, dataset);
    REQUIRE(acltdtReceiveTensor(queue, received, 0) == ACL_SUCCESS); // one stays queued
    sender = acltdtCreateChannel(0, "faults-bad");
    receiver = acltdtCreateChannel(0, "TF_RECEIVE_faults-bad");
    REQUIRE((sender != nullptr && receiver != nullptr));
    stopped_full = channel_with(2, 2, dataset);
    stopped_empty = channel_with(2, 0, dataset);
    REQUIRE(acltdtStopChannel(stopped_full) == ACL_SUCCESS);
    REQUIRE(acltdtStopChannel(stopped_empty) == ACL_SUCCESS);

    // The destroyed handles, last: nothing is created after them.
    REQUIRE(aclrtCreateStream(&dead_stream) == ACL_SUCCESS);
    REQUIRE(aclrtCreateEvent(&dead_event) == ACL_SUCCESS);
    REQUIRE(aclrtCreateNotify(&dead_notify, ACL_NOTIFY_DEFAULT) == ACL_SUCCESS);
    dead_prof_config = aclprofCreateConfig(nullptr, 0, ACL_AICORE_NONE, nullptr, 0);
    REQUIRE(dead_prof_config != nullptr);
    REQUIRE(aclrtMalloc(&dead_device_memory, 64, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    REQUIRE(aclrtMallocHost(&dead_host_memory, 64) == ACL_SUCCESS);
    dead_tensor =
        aclCreateTensor(sixteen, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, sixteen, 1, nullptr);
    dead_item = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, nullptr, 0, ACL_DT_UNDEFINED,
                                     nullptr, 0);
    dead_dataset = acltdtCreateDataset();
    dead_channel = acltdtCreateChannelWithCapacity(0, "faults-dead", 2);
    REQUIRE(aclrtCreateContext(&dead_context, 1) == ACL_SUCCESS);
    REQUIRE(aclrtDestroyContext(dead_context) == ACL_SUCCESS);
    REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS); // the destroyed context was current
    REQUIRE(aclrtDestroyStream(dead_stream) == ACL_SUCCESS);
    REQUIRE(aclrtDestroyEvent(dead_event) == ACL_SUCCESS);
    REQUIRE(aclrtDestroyNotify(dead_notify) == ACL_SUCCESS);
    REQUIRE(aclprofDestroyConfig(dead_prof_config) == ACL_SUCCESS);
    REQUIRE(aclrtFree(dead_device_memory) == ACL_SUCCESS);
    REQUIRE(aclrtFreeHost(dead_host_memory) == ACL_SUCCESS);
    REQUIRE(aclDestroyTensor(dead_tensor) == ACLNN_SUCCESS);
    REQUIRE(acltdtDestroyDataItem(dead_item) == ACL_SUCCESS);
    REQUIRE(acltdtDestroyDataset(dead_dataset) == ACL_SUCCESS);
    REQUIRE(acltdtDestroyChannel(dead_channel) == ACL_SUCCESS);
}

World::~World() {
    for (acltdtChannelHandle* c : {queue, sender, receiver, stopped_full, stopped_empty}) {
        CHECK(acltdtDestroyChannel(c) == ACL_SUCCESS);
    }
    for (acltdtDataset* d : {dataset, empty, received, huge, odd[0], odd[1]}) {
        CHECK(acltdtDestroyDataset(d) == ACL_SUCCESS);
    }
    for (acltdtDataItem* i : {item, odd_items[0], odd_items[1]}) {
        CHECK(acltdtDestroyDataItem(i) == ACL_SUCCESS);
    }
    if (huge_item != nullptr) {
        CHECK(acltdtDestroyDataItem(huge_item) == ACL_SUCCESS);
    }
    CHECK(aclDestroyTensor(tensor) == ACLNN_SUCCESS);
    CHECK(aclrtFreeHost(host_memory) == ACL_SUCCESS);
    CHECK(aclrtFree(device_memory) == ACL_SUCCESS);
    CHECK(aclrtDestroyNotify(notify) == ACL_SUCCESS);
    CHECK(aclprofDestroyConfig(prof_config) == ACL_SUCCESS);
    CHECK(aclrtDestroyEvent(event) == ACL_SUCCESS);
    CHECK(aclrtDestroyStream(stream) == ACL_SUCCESS);
    CHECK(aclrtDestroyContext(context) == ACL_SUCCESS);
    CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
}

std::vector<long long> World::snapshot() {
    std::vector<long long> s;
    const auto add = [&](auto v) { s.push_back(answer(v)); };
    int32_t device = -1;
    aclrtContext current = nullptr;
    size_t free = 0;
    size_t total = 0;
    std::uint32_t count = 0;
    add(aclrtGetDevice(&device));
    add(device);
    add(aclrtGetCurrentContext(&current));
    s.push_back(reinterpret_cast<std::intptr_t>(current));
    add(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total));
    add(free);
    add(aclrtGetDeviceCount(&count));
    add(count);
    add(ferry::initialize_count());
    unsigned char bytes[4096] = {};
    add(aclrtMemcpy(bytes, sizeof bytes, device_memory, sizeof bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (const unsigned char b : bytes) {
        s.back() += b == 0x5A ? 0 : 1000;
    }
    for (int i = 0; i < 64; ++i) {
        s.back() += static_cast<unsigned char*>(host_memory)[i] == 0x3C ? 0 : 1000;
    }
    aclrtStreamStatus stream_status = ACL_STREAM_STATUS_RESERVED;
    aclrtEventStatus event_status = ACL_EVENT_STATUS_RESERVED;
    add(aclrtStreamQuery(stream, &stream_status));
    add(stream_status);
    add(aclrtQueryEvent(event, &event_status));
    add(event_status);
    add(host_func_runs);
    std::uint32_t notify_id = 0;
    add(aclrtGetNotifyId(notify, &notify_id));
    add(notify_id);
    // TDT
    for (const acltdtDataset* d : {dataset, empty, received, huge}) {
        add(acltdtGetDatasetSize(d));
        s.push_back(reinterpret_cast<std::intptr_t>(acltdtGetDataItem(d, 0)));
    }
    add(acltdtGetTensorTypeFromItem(item));
    add(acltdtGetDataTypeFromItem(item));
    s.push_back(reinterpret_cast<std::intptr_t>(acltdtGetDataAddrFromItem(item)));
    add(acltdtGetDataSizeFromItem(item));
    add(acltdtGetDimNumFromItem(item));
    for (acltdtChannelHandle* c : {queue, stopped_full, stopped_empty}) {
        size_t size = 0;
        add(acltdtQueryChannelSize(c, &size));
        add(size);
    }
    add(ferry::message_channels().registry.size());
    // out-parameters
    s.push_back(reinterpret_cast<std::intptr_t>(out_ptr));
    for (const std::int64_t d : out_dims) {
        add(d);
    }
    for (const long long v : {static_cast<long long>(out_size), static_cast<long long>(out_size2),
                              static_cast<long long>(out_u64), static_cast<long long>(out_enum),
                              static_cast<long long>(out_i32), static_cast<long long>(out_u32)}) {
        s.push_back(v);
    }
    s.push_back(reinterpret_cast<std::intptr_t>(out_executor));
    add(out_ms == -1.0f);
    return s;
}

} // namespace ferry::test

using ferry::test::Row;
using ferry::test::World;

TEST_CASE("every exported C function answers bad input with its documented code and changes "
          "nothing",
          "[compat][faults]") {
    World w;
    std::vector<Row> rows = ferry::test::runtime_rows(w);
    for (Row& r : ferry::test::tdt_rows(w)) {
        rows.push_back(std::move(r));
    }
    for (Row& r : ferry::test::runtime_sync_rows(w)) {
        rows.push_back(std::move(r));
    }
    std::map<std::string, int> per_function;
    const std::vector<long long> before = w.snapshot();
    for (const Row& r : rows) {
        ++per_function[r.function];
        if (!r.call) {
            continue; // NO_BAD_INPUT: listed for the coverage check only
        }
        INFO(r.function << " with " << r.input);
        CHECK(r.call() == r.expected);
        CHECK(w.snapshot() == before);
    }
    // The row counts docs/reliability.md quotes (printed with -s).
    int functions = 0;
    std::size_t calls = 0;
    for (const auto& [name, n] : per_function) {
        ++functions;
        calls += static_cast<std::size_t>(n);
    }
    for (const Row& r : rows) {
        calls -= r.call ? 0 : 1; // NO_BAD_INPUT entries are not calls
    }
    WARN(functions << " functions, " << calls << " rows");
}
