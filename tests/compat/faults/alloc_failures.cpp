// Fault injection: every heap allocation that creating, adding, sending, receiving or cleaning
// makes through the C API (and the channel registry under it) fails once, in turn. For each
// operation: run it once to count its allocations N, then for k = 1..N fail the k-th and check
// that the call answers its documented code (ACL_ERROR_BAD_ALLOC; NULL for the create functions,
// Status::bad_alloc for the registry), that the state it works on is unchanged, that the same
// call then works, and that the whole cycle leaves no allocation behind (docs/reliability.md).

#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "aclnn/acl_meta.h"
#include "alloc_hook.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/channel/message_channels.hpp>
#include <ferry/core/status.hpp>
#include <functional>
#include <string>
#include <vector>

namespace hook = ferry::test::alloc_hook;

namespace {

// What a create function's NULL is reported as below (no aclError has this value).
constexpr aclError k_null = -1;

using Snapshot = std::vector<std::int64_t>;

// One operation under fault injection. `setup` builds what `call` works on and `teardown` frees
// it (neither runs with failures armed); `snapshot` observes the state `call` must not change
// when it fails.
struct Scenario {
    std::function<void()> setup;
    std::function<aclError()> call;
    std::function<Snapshot()> snapshot = [] { return Snapshot{}; };
    std::function<void()> teardown;
    // Checks what the call that worked (after a failed one) did, before the teardown.
    std::function<void()> after = [] {};
    aclError fails_with = ACL_ERROR_BAD_ALLOC;
    long raw_mallocs = 0; // malloc calls allowed to bypass operator new (aclrtMalloc's bytes)
};

// One failure point: fail the k-th allocation, then retry without failure.
void fail_once(const Scenario& s, long k) {
    CAPTURE(k);
    const long live_before = hook::live_allocations();
    {
        s.setup();
        const Snapshot before = s.snapshot();
        aclError code = ACL_SUCCESS;
        hook::run_failing(k, [&] { code = s.call(); });
        REQUIRE(hook::injected());
        CHECK(code == s.fails_with);
        CHECK(s.snapshot() == before);
        hook::run_failing(0, [&] { code = s.call(); });
        CHECK(code == ACL_SUCCESS);
        s.after();
        s.teardown();
    }
    CHECK(hook::live_allocations() == live_before); // nothing leaked, nothing cached anew
}

// Runs the whole protocol; returns N, the number of failure points injected.
long inject_every_failure(const Scenario& s) {
    // Warm-up: the runtime boots, process-wide tables get their buckets, so that the leak check
    // of each cycle below compares like with like.
    for (int i = 0; i < 2; ++i) {
        s.setup();
        REQUIRE(s.call() == ACL_SUCCESS);
        s.teardown();
    }
    s.setup();
    aclError code = k_null;
    const long n = hook::run_failing(0, [&] { code = s.call(); });
    REQUIRE(code == ACL_SUCCESS);
    s.teardown();
    // Every other allocation of the call goes through operator new, so failing those covers them.
    // (A leak of a raw allocation is LeakSanitizer's to find: the live count sees operator new.)
    s.setup();
    if (const auto raw = hook::raw_mallocs_in([&] { (void)s.call(); })) {
        CHECK(*raw <= s.raw_mallocs); // at most: TSan's hook does not see aligned_alloc
    }
    s.teardown();
    for (long k = 1; k <= n; ++k) {
        fail_once(s, k);
    }
    return n;
}

aclError null_is(const void* p) {
    return p != nullptr ? ACL_SUCCESS : k_null;
}

aclError code_of(ferry::Status s) {
    return static_cast<aclError>(ferry::to_code(s));
}

std::int64_t registry_size() {
    return static_cast<std::int64_t>(ferry::message_channels().registry.size());
}

std::int64_t queued(const acltdtChannelHandle* channel) {
    size_t size = 0;
    return acltdtQueryChannelSize(channel, &size) == ACL_SUCCESS ? static_cast<std::int64_t>(size)
                                                                 : -1;
}

// A dataset of two items (a 2x3 float tensor and an end-of-sequence) to send.
struct Message {
    float payload[6] = {1, 2, 3, 4, 5, 6};
    std::int64_t dims[2] = {2, 3};
    acltdtDataItem* tensor = nullptr;
    acltdtDataItem* eos = nullptr;
    acltdtDataset* dataset = nullptr;

    void make() {
        tensor = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, payload,
                                      sizeof payload);
        eos = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, nullptr, 0, ACL_DT_UNDEFINED,
                                   nullptr, 0);
        dataset = acltdtCreateDataset();
        REQUIRE(acltdtAddDataItem(dataset, tensor) == ACL_SUCCESS);
        REQUIRE(acltdtAddDataItem(dataset, eos) == ACL_SUCCESS);
    }
    void free() {
        CHECK(acltdtDestroyDataset(dataset) == ACL_SUCCESS);
        CHECK(acltdtDestroyDataItem(tensor) == ACL_SUCCESS);
        CHECK(acltdtDestroyDataItem(eos) == ACL_SUCCESS);
    }
};

void destroy_channel(acltdtChannelHandle*& channel) {
    if (channel != nullptr) {
        CHECK(acltdtDestroyChannel(channel) == ACL_SUCCESS);
        channel = nullptr;
    }
}

void destroy_dataset(acltdtDataset*& dataset) {
    if (dataset != nullptr) {
        CHECK(acltdtDestroyDataset(dataset) == ACL_SUCCESS);
        dataset = nullptr;
    }
}

} // namespace

TEST_CASE("acltdtCreateDataset and acltdtCreateDataItem survive every allocation failure",
          "[compat][faults]") {
    acltdtDataset* dataset = nullptr;
    const long datasets = inject_every_failure({
        .setup = [] {},
        .call = [&] { return null_is(dataset = acltdtCreateDataset()); },
        .teardown = [&] { destroy_dataset(dataset); },
        .fails_with = k_null,
    });
    CHECK(datasets > 0);

    acltdtDataItem* item = nullptr;
    float payload[4] = {};
    const std::int64_t dims[2] = {2, 2};
    const long items = inject_every_failure({
        .setup = [] {},
        .call =
            [&] {
                item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, payload,
                                            sizeof payload);
                return null_is(item);
            },
        .teardown =
            [&] {
                if (item != nullptr) {
                    CHECK(acltdtDestroyDataItem(item) == ACL_SUCCESS);
                    item = nullptr;
                }
            },
        .fails_with = k_null,
    });
    CHECK(items > 0);
}

TEST_CASE("acltdtAddDataItem survives every allocation failure", "[compat][faults]") {
    Message m;
    acltdtDataset* target = nullptr;
    const auto contents = [&] {
        Snapshot s{static_cast<std::int64_t>(acltdtGetDatasetSize(target))};
        for (std::size_t i = 0; i < acltdtGetDatasetSize(target); ++i) {
            s.push_back(reinterpret_cast<std::intptr_t>(acltdtGetDataItem(target, i)));
        }
        return s;
    };
    SECTION("a user item, into a dataset that holds one already") {
        m.make();
        const long n = inject_every_failure({
            .setup =
                [&] {
                    target = acltdtCreateDataset();
                    REQUIRE(acltdtAddDataItem(target, m.eos) == ACL_SUCCESS);
                },
            .call = [&] { return acltdtAddDataItem(target, m.tensor); },
            .snapshot = contents,
            .teardown = [&] { destroy_dataset(target); },
        });
        CHECK(n > 0);
        m.free();
    }
    SECTION("an item of a received dataset (forwarding copies its payload)") {
        m.make();
        acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "faults-forward", 4);
        acltdtDataset* received = acltdtCreateDataset();
        REQUIRE(acltdtSendTensor(channel, m.dataset, 0) == ACL_SUCCESS);
        REQUIRE(acltdtReceiveTensor(channel, received, 0) == ACL_SUCCESS);
        const long n = inject_every_failure({
            .setup = [&] { target = acltdtCreateDataset(); },
            .call = [&] { return acltdtAddDataItem(target, acltdtGetDataItem(received, 0)); },
            .snapshot = contents,
            .teardown = [&] { destroy_dataset(target); },
        });
        CHECK(n > 0);
        destroy_dataset(received);
        destroy_channel(channel);
        m.free();
    }
}

TEST_CASE("acltdtCreateChannelWithCapacity and acltdtCreateChannel survive every allocation "
          "failure",
          "[compat][faults]") {
    acltdtChannelHandle* channel = nullptr;
    const auto registered = [] {
        return Snapshot{registry_size(),
                        static_cast<std::int64_t>(
                            ferry::message_channels().registry.find(0, "faults-create").size())};
    };
    const auto teardown = [&] { destroy_channel(channel); };
    SECTION("a queue channel") {
        CHECK(inject_every_failure({
                  .setup = [] {},
                  .call =
                      [&] {
                          return null_is(
                              channel = acltdtCreateChannelWithCapacity(0, "faults-create", 8));
                      },
                  .snapshot = registered,
                  .teardown = teardown,
                  .fails_with = k_null,
              }) > 0);
    }
    SECTION("a process channel's first handle") {
        CHECK(
            inject_every_failure({
                .setup = [] {},
                .call = [&] { return null_is(channel = acltdtCreateChannel(0, "faults-create")); },
                .snapshot = registered,
                .teardown = teardown,
                .fails_with = k_null,
            }) > 0);
    }
    SECTION("a process channel's receive side, opened while the send side is open") {
        acltdtChannelHandle* sender = nullptr;
        CHECK(inject_every_failure({
                  .setup = [&] { REQUIRE((sender = acltdtCreateChannel(0, "faults-create"))); },
                  .call =
                      [&] {
                          return null_is(channel =
                                             acltdtCreateChannel(0, "TF_RECEIVE_faults-create"));
                      },
                  .snapshot = registered,
                  .teardown =
                      [&] {
                          destroy_channel(channel);
                          destroy_channel(sender);
                          // The channel left the registry with its last handle: a failed open
                          // left no handle count behind.
                          CHECK(
                              ferry::message_channels().registry.find(0, "faults-create").empty());
                      },
                  .fails_with = k_null,
              }) > 0);
    }
}

TEST_CASE("acltdtSendTensor and acltdtCleanChannel survive every allocation failure",
          "[compat][faults]") {
    Message m;
    m.make();
    acltdtChannelHandle* channel = nullptr;
    acltdtDataset* received = nullptr;
    const auto state = [&] {
        return Snapshot{queued(channel), static_cast<std::int64_t>(acltdtGetDatasetSize(received))};
    };
    const auto teardown = [&] {
        destroy_dataset(received);
        destroy_channel(channel);
    };
    // A new channel each time: its buffer pool is empty, so the send allocates its message.
    const auto fresh = [&](int messages) {
        REQUIRE((channel = acltdtCreateChannelWithCapacity(0, "faults-io", 4)));
        REQUIRE((received = acltdtCreateDataset()));
        for (int i = 0; i < messages; ++i) {
            REQUIRE(acltdtSendTensor(channel, m.dataset, 0) == ACL_SUCCESS);
        }
    };
    SECTION("send") {
        CHECK(inject_every_failure({
                  .setup = [&] { fresh(0); },
                  .call = [&] { return acltdtSendTensor(channel, m.dataset, 0); },
                  .snapshot = state,
                  .teardown = teardown,
              }) > 0);
    }
    SECTION("clean") {
        // Cleaning allocates nothing: there is no failure point to inject, which is checked.
        CHECK(inject_every_failure({
                  .setup = [&] { fresh(3); },
                  .call = [&] { return acltdtCleanChannel(channel); },
                  .teardown = teardown,
              }) == 0);
    }
    m.free();
}

// What a receiving dataset shows: its size, and per item its handle, kind, dims and payload
// (reading the payload of items a failed receive kept is also what lets AddressSanitizer see a
// payload whose buffer was freed under them).
Snapshot received_contents(const acltdtDataset* d) {
    Snapshot s{static_cast<std::int64_t>(acltdtGetDatasetSize(d))};
    for (std::size_t i = 0; i < acltdtGetDatasetSize(d); ++i) {
        const acltdtDataItem* item = acltdtGetDataItem(d, i);
        s.push_back(reinterpret_cast<std::intptr_t>(item));
        s.push_back(acltdtGetTensorTypeFromItem(item));
        std::int64_t dims[4] = {};
        s.push_back(acltdtGetDimsFromItem(item, dims, 4));
        s.insert(s.end(), dims, dims + acltdtGetDimNumFromItem(item));
        const auto* data = static_cast<const float*>(acltdtGetDataAddrFromItem(item));
        for (std::size_t k = 0; k < acltdtGetDataSizeFromItem(item) / sizeof(float); ++k) {
            s.push_back(static_cast<std::int64_t>(data[k]));
        }
    }
    return s;
}

// A receive that fails for memory takes nothing off the channel for good: the message it had
// dequeued is the one the next receive delivers (in order), and the dataset still shows the
// previous message with the same item handles.
TEST_CASE("acltdtReceiveTensor survives every allocation failure", "[compat][faults]") {
    Message m;
    m.make();
    acltdtChannelHandle* channel = nullptr;
    acltdtDataset* received = nullptr;
    float next = 0; // payload[0] of the message the next receive must deliver
    const auto state = [&] {
        Snapshot s = received_contents(received);
        s.push_back(queued(channel));
        return s;
    };
    const auto teardown = [&] {
        destroy_dataset(received);
        destroy_channel(channel);
    };
    // Messages told apart by payload[0]: 100, 101, ...; `taken` of them received already.
    const auto fresh = [&](int messages, int taken) {
        REQUIRE((channel = acltdtCreateChannelWithCapacity(0, "faults-io", 4)));
        REQUIRE((received = acltdtCreateDataset()));
        for (int i = 0; i < messages; ++i) {
            m.payload[0] = static_cast<float>(100 + i);
            REQUIRE(acltdtSendTensor(channel, m.dataset, 0) == ACL_SUCCESS);
        }
        for (int i = 0; i < taken; ++i) {
            REQUIRE(acltdtReceiveTensor(channel, received, 0) == ACL_SUCCESS);
        }
        next = static_cast<float>(100 + taken);
    };
    // What the receive that worked must show: the next message, whole.
    const auto delivered = [&] {
        REQUIRE(acltdtGetDatasetSize(received) == 2);
        const acltdtDataItem* tensor = acltdtGetDataItem(received, 0);
        CHECK(acltdtGetTensorTypeFromItem(tensor) == ACL_TENSOR_DATA_TENSOR);
        CHECK(acltdtGetDataTypeFromItem(tensor) == ACL_FLOAT);
        std::int64_t dims[2] = {};
        CHECK(acltdtGetDimsFromItem(tensor, dims, 2) == ACL_SUCCESS);
        CHECK((dims[0] == 2 && dims[1] == 3));
        REQUIRE(acltdtGetDataSizeFromItem(tensor) == sizeof m.payload);
        const auto* data = static_cast<const float*>(acltdtGetDataAddrFromItem(tensor));
        const float want[6] = {next, 2, 3, 4, 5, 6};
        CHECK(std::equal(data, data + 6, want));
        CHECK(acltdtGetTensorTypeFromItem(acltdtGetDataItem(received, 1)) ==
              ACL_TENSOR_DATA_END_OF_SEQUENCE);
    };
    SECTION("into a new dataset") {
        CHECK(inject_every_failure({
                  .setup = [&] { fresh(2, 0); },
                  .call = [&] { return acltdtReceiveTensor(channel, received, 0); },
                  .snapshot = state,
                  .teardown = teardown,
                  .after = delivered,
              }) > 0);
    }
    SECTION("into a dataset that holds a received message") {
        CHECK(inject_every_failure({
                  .setup = [&] { fresh(3, 1); },
                  .call = [&] { return acltdtReceiveTensor(channel, received, 0); },
                  .snapshot = state,
                  .teardown = teardown,
                  .after = delivered,
              }) > 0);
    }
    m.free();
}

TEST_CASE("the channel registry survives every allocation failure", "[compat][faults]") {
    auto& registry = ferry::message_channels().registry;
    // A name too long for the small-string buffer: copying it allocates, so the copies of the
    // name are failure points too.
    const std::string name = "faults-registry-with-a-name-longer-than-sso";
    const std::string receive_name = "TF_RECEIVE_" + name;
    std::vector<ferry::ChannelId> opened;
    const auto open = [&](ferry::Result<ferry::MessageChannelRegistry::Entry> entry) {
        if (!entry) {
            return code_of(entry.status());
        }
        opened.push_back(entry->id);
        return ACL_SUCCESS;
    };
    const auto registered = [&] {
        return Snapshot{registry_size(), static_cast<std::int64_t>(registry.find(1, name).size())};
    };
    const auto close_all = [&] {
        for (const ferry::ChannelId id : opened) {
            CHECK(registry.close(id) == ferry::Status::ok);
        }
        opened.clear();
        CHECK(registry.find(1, name).empty());
    };
    SECTION("create_queue") {
        CHECK(inject_every_failure({.setup = [] {},
                                    .call = [&] { return open(registry.create_queue(1, name, 4)); },
                                    .snapshot = registered,
                                    .teardown = close_all}) > 0);
    }
    SECTION("open_process, first and later handles") {
        for (const int earlier : {0, 1}) {
            CAPTURE(earlier);
            CHECK(inject_every_failure(
                      {.setup =
                           [&] {
                               for (int i = 0; i < earlier; ++i) {
                                   REQUIRE(open(registry.open_process(1, name)) == 0);
                               }
                           },
                       .call = [&] { return open(registry.open_process(1, receive_name)); },
                       .snapshot = registered,
                       .teardown = close_all}) > 0);
        }
    }
}

TEST_CASE("the runtime's create functions survive every allocation failure", "[compat][faults]") {
    REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS);
    void* handle = nullptr;
    SECTION("aclrtCreateStream") {
        CHECK(inject_every_failure(
                  {.setup = [] {},
                   .call = [&] { return aclrtCreateStream(&handle); },
                   .teardown = [&] { CHECK(aclrtDestroyStream(handle) == ACL_SUCCESS); }}) > 0);
    }
    SECTION("aclrtCreateEvent") {
        CHECK(inject_every_failure(
                  {.setup = [] {},
                   .call = [&] { return aclrtCreateEvent(&handle); },
                   .teardown = [&] { CHECK(aclrtDestroyEvent(handle) == ACL_SUCCESS); }}) > 0);
    }
    SECTION("aclrtMalloc") {
        const auto free_memory = [] {
            size_t free = 0;
            size_t total = 0;
            REQUIRE(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total) == ACL_SUCCESS);
            return Snapshot{static_cast<std::int64_t>(free)};
        };
        CHECK(inject_every_failure(
                  {.setup = [] {},
                   .call = [&] { return aclrtMalloc(&handle, 4096, ACL_MEM_MALLOC_HUGE_FIRST); },
                   .snapshot = free_memory,
                   .teardown = [&] { CHECK(aclrtFree(handle) == ACL_SUCCESS); },
                   .raw_mallocs = 1}) > 0);
    }
    SECTION("aclCreateTensor") {
        const std::int64_t dims[2] = {4, 8};
        aclTensor* tensor = nullptr;
        CHECK(inject_every_failure(
                  {.setup = [] {},
                   .call =
                       [&] {
                           tensor = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                                                    dims, 2, nullptr);
                           return null_is(tensor);
                       },
                   .teardown = [&] { CHECK(aclDestroyTensor(tensor) == ACLNN_SUCCESS); },
                   .fails_with = k_null}) > 0);
    }
    CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
}
