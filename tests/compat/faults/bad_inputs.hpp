#pragma once
// The bad-input table of the C API (docs/reliability.md): every exported function is called with
// null, destroyed ("stale") and wrong-kind handles, out-of-range enums, huge sizes and dims and
// timeouts at the int32 edges, against one World of live objects. Each row names the function,
// the input, and the answer it must give; after each row the whole World must be unchanged.
// bad_input_coverage.py fails the build's tests when an exported function has no row.

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "acl/acl_tdt.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_ffn_worker_scheduler.h"

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace ferry::test {

// What a call answered, as one integer: codes and sizes as they are, a pointer as 0 (NULL) or 1.
template <typename T>
long long answer(T value) {
    if constexpr (std::is_pointer_v<T>) {
        return value != nullptr ? 1 : 0;
    } else {
        return static_cast<long long>(value);
    }
}

struct Row {
    const char* function;
    std::string input;
    std::function<long long()> call;
    long long expected;
};

// A row: the function's name comes from the call itself, so a renamed function cannot keep a
// stale row (and bad_input_coverage.py finds the rows by this macro's name). The call captures
// the World `w` by reference and everything else by value (rows outlive the functions that
// build them).
// clang-format off
#define BAD_INPUT(fn, input, expected, ...)                                                        \
    ::ferry::test::Row{#fn, input,                                                                 \
                       [=, &w]() -> long long { return ::ferry::test::answer(fn(__VA_ARGS__)); }, \
                       static_cast<long long>(expected)}

// A function with no argument to get wrong; the reason is the row's input.
#define NO_BAD_INPUT(fn, why) ::ferry::test::Row{#fn, why, nullptr, 0}
// clang-format on

// Live objects of every kind the C API hands out, plus destroyed ones of every kind (created and
// destroyed before any row runs, and no object is created after them, so no destroyed handle's
// address is reused by a live one). `out_*` are the out-parameters rows pass: a failing call must
// leave them untouched, so they are part of the snapshot.
struct World {
    // runtime
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    aclrtContext context = nullptr; // an explicit context on device 1
    void* device_memory = nullptr;  // 4 KiB, every byte 0x5A
    void* host_memory = nullptr;    // 64 bytes of aclrtMallocHost
    aclTensor* tensor = nullptr;    // 1-D, 16 floats over device_memory
    aclrtStream dead_stream = nullptr;
    aclrtEvent dead_event = nullptr;
    aclrtContext dead_context = nullptr;
    aclrtNotify notify = nullptr; // on device 0, never recorded
    aclrtNotify dead_notify = nullptr;
    aclprofConfig* prof_config = nullptr; // device 0, task time; aclprofInit is never called
    aclprofConfig* dead_prof_config = nullptr;
    void* dead_device_memory = nullptr;
    void* dead_host_memory = nullptr;
    aclTensor* dead_tensor = nullptr;
    int host_func_runs = 0;
    // TDT
    float payload[6] = {1, 2, 3, 4, 5, 6};
    std::int64_t dims[2] = {2, 3};
    acltdtDataItem* item = nullptr;          // 2x3 floats over payload
    acltdtDataset* dataset = nullptr;        // holds `item`
    acltdtDataset* empty = nullptr;          // no items
    acltdtDataset* received = nullptr;       // filled by a receive
    acltdtDataItem* huge_item = nullptr;     // claims SIZE_MAX bytes (nullptr if creation refuses)
    acltdtDataset* huge = nullptr;           // holds `huge_item` when it exists
    acltdtDataItem* odd_items[2] = {};       // tensor types 99 and INT_MIN (accepted at creation)
    acltdtDataset* odd[2] = {};              // one odd item each
    acltdtChannelHandle* queue = nullptr;    // capacity 4, one message queued
    acltdtChannelHandle* sender = nullptr;   // legacy channel "faults-bad"
    acltdtChannelHandle* receiver = nullptr; // its TF_RECEIVE_ side
    acltdtChannelHandle* stopped_full = nullptr;  // capacity 2, two messages, stopped
    acltdtChannelHandle* stopped_empty = nullptr; // capacity 2, stopped
    acltdtDataItem* dead_item = nullptr;
    acltdtDataset* dead_dataset = nullptr;
    acltdtChannelHandle* dead_channel = nullptr;
    // out-parameters (sentinels)
    void* out_ptr = nullptr;
    std::int64_t out_dims[4] = {-7, -7, -7, -7};
    size_t out_size = 777;
    size_t out_size2 = 778;
    std::uint64_t out_u64 = 779;
    aclOpExecutor* out_executor = nullptr;
    float out_ms = -1.0f;
    int out_enum = -7;
    std::int32_t out_i32 = -7;
    std::uint32_t out_u32 = 7;

    World();
    ~World();
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    // Everything a row must not change, observed through the API.
    [[nodiscard]] std::vector<long long> snapshot();
    // A pointer of a different kind than the one a parameter expects (e.g. a dataset as an item).
    template <typename To, typename From>
    static To* as(From* p) {
        return reinterpret_cast<To*>(p);
    }
};

std::vector<Row> runtime_rows(World& w);
std::vector<Row> tdt_rows(World& w);
std::vector<Row> runtime_sync_rows(World& w); // exception info, notifies, profiling

} // namespace ferry::test
