// aclCreateTensor / aclDestroyTensor and the two-phase aclnnInplaceFfnWorkerScheduler through the
// C API: CANN's codes for every bad input (docs/cann-contract/afd.md#aclnn-two-phase-api,
// #aclnn-unit-tests), stale handles rejected, the results of the configuration of
// docs/cann-contract/afd.md#the-aclnn-example, and a kernel failure reported by
// aclrtSynchronizeStream (docs/cann-contract/afd.md#phase-2-run).

#include "acl/acl.h"
#include "aclnnop/aclnn_ffn_worker_scheduler.h"

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <ferry/afd/schedule_context.hpp>
#include <thread>
#include <vector>

namespace {

using ferry::afd::ScheduleContext;

aclTensor* make_tensor(std::vector<std::int64_t> shape, void* data, aclDataType type = ACL_INT8) {
    std::vector<std::int64_t> strides(shape.size(), 1);
    return aclCreateTensor(shape.data(), shape.size(), type, strides.data(), 0, ACL_FORMAT_ND,
                           shape.data(), shape.size(), data);
}

void* device_alloc(std::size_t bytes) {
    void* p = nullptr;
    REQUIRE(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    return p;
}

template <typename T>
std::vector<T> download(const void* device, std::size_t count) {
    std::vector<T> host(count);
    REQUIRE(aclrtMemcpy(host.data(), count * sizeof(T), device, count * sizeof(T),
                        ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
    return host;
}

// docs/cann-contract/afd.md#the-aclnn-example: A = M = BS = 2, K = 5; every descriptor ready
// (flag 1), layer 55, ids 0..9.
struct FfnFixture {
    static constexpr std::uint32_t a = 2, m = 2, bs = 2, k = 5;
    static constexpr std::uint64_t per_desc = 8 + 4 * bs * k;
    ScheduleContext context{};
    void* context_dev = device_alloc(sizeof(ScheduleContext));
    void* token_info = device_alloc(a * m * per_desc);
    void* token_data = device_alloc(1024);
    void* layer_ids = device_alloc(4 * a);
    void* session_ids = device_alloc(4 * a);
    void* micro_batch_ids = device_alloc(4 * a);
    void* expert_ids = device_alloc(4 * a * bs * k);
    aclTensor* tensor = nullptr;

    explicit FfnFixture(std::uint64_t polling_index = 1, std::int32_t run_flag = 1) {
        std::vector<std::int32_t> descriptors;
        for (std::uint32_t d = 0; d < a * m; ++d) {
            descriptors.push_back(1);  // flag
            descriptors.push_back(55); // layer_id
            for (std::int32_t id = 0; id < static_cast<std::int32_t>(bs * k); ++id) {
                descriptors.push_back(id);
            }
        }
        upload(token_info, descriptors.data(), descriptors.size() * 4);
        context.common = {a, m, bs, k, 8, 512, 512, 0, {}};
        context.control.run_flag = run_flag;
        auto addr = [](void* p) {
            return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
        };
        context.ffn.token_info_buf = addr(token_info);
        context.ffn.token_info_buf_size = a * m * per_desc;
        context.ffn.token_data_buf = addr(token_data);
        context.ffn.token_data_buf_size = 1024;
        context.ffn.polling_index = polling_index;
        context.ffn.layer_ids_buf = addr(layer_ids);
        context.ffn.layer_ids_buf_size = 4 * a;
        context.ffn.session_ids_buf = addr(session_ids);
        context.ffn.session_ids_buf_size = 4 * a;
        context.ffn.micro_batch_ids_buf = addr(micro_batch_ids);
        context.ffn.micro_batch_ids_buf_size = 4 * a;
        context.ffn.expert_ids_buf = addr(expert_ids);
        context.ffn.expert_ids_buf_size = 4 * a * bs * k;
        context.ffn.out_num = 77; // a failed call must leave it alone
        store_context();
        tensor = make_tensor({1024}, context_dev);
        REQUIRE(tensor != nullptr);
    }
    ~FfnFixture() {
        aclDestroyTensor(tensor);
        for (void* p : {context_dev, token_info, token_data, layer_ids, session_ids,
                        micro_batch_ids, expert_ids}) {
            aclrtFree(p);
        }
    }
    FfnFixture(const FfnFixture&) = delete;
    FfnFixture& operator=(const FfnFixture&) = delete;

    static void upload(void* device, const void* host, std::size_t bytes) {
        REQUIRE(aclrtMemcpy(device, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
    }
    void store_context() { upload(context_dev, &context, sizeof context); }
    ScheduleContext load_context() const {
        ScheduleContext out{};
        REQUIRE(aclrtMemcpy(&out, sizeof out, context_dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST) ==
                ACL_SUCCESS);
        return out;
    }

    // Both phases, then the stream synchronize that reports the kernel's outcome.
    aclError run(std::int32_t sync_group_size, aclrtStream stream = nullptr) {
        std::uint64_t workspace_size = 1;
        aclOpExecutor* executor = nullptr;
        REQUIRE(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(
                    tensor, sync_group_size, 0, &workspace_size, &executor) == ACLNN_SUCCESS);
        REQUIRE(workspace_size == 0);
        REQUIRE(aclnnInplaceFfnWorkerScheduler(nullptr, 0, executor, stream) == ACLNN_SUCCESS);
        return aclrtSynchronizeStream(stream);
    }
};

struct Device {
    Device() { REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS); }
    ~Device() { aclrtResetDevice(0); }
};

const std::vector<std::int32_t> k_ids_twice = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                               0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

} // namespace

TEST_CASE("aclCreateTensor rejects malformed descriptions with nullptr", "[compat][aclnn]") {
    const std::int64_t dims[] = {1024};
    const std::int64_t negative[] = {-1};
    const std::int64_t nine[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const std::int64_t strides[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    std::int8_t data[1024] = {};
    CHECK(aclCreateTensor(nullptr, 1, ACL_INT8, strides, 0, ACL_FORMAT_ND, dims, 1, data) ==
          nullptr);
    CHECK(aclCreateTensor(negative, 1, ACL_INT8, strides, 0, ACL_FORMAT_ND, dims, 1, data) ==
          nullptr);
    CHECK(aclCreateTensor(nine, 9, ACL_INT8, strides, 0, ACL_FORMAT_ND, dims, 1, data) == nullptr);
    CHECK(aclCreateTensor(dims, 1, static_cast<aclDataType>(5), strides, 0, ACL_FORMAT_ND, dims, 1,
                          data) == nullptr);
    CHECK(aclCreateTensor(dims, 1, ACL_DT_UNDEFINED, strides, 0, ACL_FORMAT_ND, dims, 1, data) ==
          nullptr);
    CHECK(aclCreateTensor(dims, 1, ACL_INT8, strides, -1, ACL_FORMAT_ND, dims, 1, data) == nullptr);
    CHECK(aclCreateTensor(dims, 1, ACL_INT8, strides, 0, ACL_FORMAT_ND, nullptr, 1, data) ==
          nullptr);
    const std::int64_t huge[] = {INT64_MAX, INT64_MAX};
    CHECK(aclCreateTensor(huge, 2, ACL_INT8, strides, 0, ACL_FORMAT_ND, dims, 1, data) == nullptr);

    aclTensor* scalar =
        aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 0, nullptr);
    CHECK(scalar != nullptr); // rank 0, no data: a valid description
    CHECK(aclDestroyTensor(scalar) == ACLNN_SUCCESS);
}

TEST_CASE("aclDestroyTensor rejects stale and foreign handles", "[compat][aclnn]") {
    std::int8_t data[1024] = {};
    aclTensor* tensor = make_tensor({1024}, data);
    REQUIRE(tensor != nullptr);
    CHECK(aclDestroyTensor(nullptr) == ACLNN_SUCCESS); // like deleting nullptr: nothing to do
    CHECK(aclDestroyTensor(tensor) == ACLNN_SUCCESS);
    CHECK(aclDestroyTensor(tensor) == ACLNN_ERR_PARAM_INVALID);
    CHECK(aclDestroyTensor(reinterpret_cast<const aclTensor*>(data)) == ACLNN_ERR_PARAM_INVALID);
}

TEST_CASE("phase 1 returns CANN's codes for bad arguments", "[compat][aclnn]") {
    std::int8_t data[1024] = {};
    std::uint64_t workspace_size = 99;
    aclOpExecutor* executor = nullptr;
    aclTensor* good = make_tensor({1024}, data);
    aclTensor* matrix = make_tensor({1024, 2}, data);
    aclTensor* empty = make_tensor({0}, data);
    REQUIRE((good != nullptr && matrix != nullptr && empty != nullptr));

    CHECK(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(nullptr, 1, 0, &workspace_size,
                                                         &executor) == ACLNN_ERR_PARAM_NULLPTR);
    CHECK(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(good, 1, 0, nullptr, &executor) ==
          ACLNN_ERR_PARAM_NULLPTR);
    CHECK(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(good, 1, 0, &workspace_size, nullptr) ==
          ACLNN_ERR_PARAM_NULLPTR);
    CHECK(
        aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(matrix, 1, 0, &workspace_size, &executor) ==
        ACLNN_ERR_PARAM_INVALID); // invalid_input_dim
    CHECK(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(empty, 1, 0, &workspace_size, &executor) ==
          ACLNN_ERR_PARAM_INVALID); // case_norm_empty_tensor
    CHECK(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(good, 1, 1, &workspace_size, &executor) ==
          ACLNN_ERR_PARAM_INVALID); // invalid_input_excute_mode
    CHECK(executor == nullptr);
    CHECK(workspace_size == 99); // failures change nothing
    // syncGroupSize is the kernel's to check
    // (docs/cann-contract/afd.md#phase-1-getworkspacesize): phase 1 accepts 0.
    CHECK(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(good, 0, 0, &workspace_size, &executor) ==
          ACLNN_SUCCESS);
    CHECK(executor != nullptr);
    CHECK(workspace_size == 0);

    aclDestroyTensor(matrix);
    CHECK(
        aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(matrix, 1, 0, &workspace_size, &executor) ==
        ACLNN_ERR_PARAM_INVALID); // a destroyed tensor
    aclDestroyTensor(good);
    aclDestroyTensor(empty);
}

TEST_CASE("phase 1 refuses a tensor other than the documented 1-D INT8 ND (1024)",
          "[compat][aclnn]") {
    // docs/afd.md#aclnn-input-checks: one row per departure; each is ACLNN_ERR_PARAM_INVALID
    // before anything runs, and the documented tensor itself is accepted.
    struct Row {
        const char* what;
        std::vector<std::int64_t> view;
        aclDataType type;
        std::vector<std::int64_t> strides;
        std::int64_t offset;
        aclFormat format;
        std::vector<std::int64_t> storage;
        aclnnStatus expected;
    };
    const std::vector<Row> rows = {
        {"the documented tensor", {1024}, ACL_INT8, {1}, 0, ACL_FORMAT_ND, {1024}, ACLNN_SUCCESS},
        {"offset inside a larger storage", {1024}, ACL_INT8, {1}, 8, ACL_FORMAT_ND, {1032},
         ACLNN_SUCCESS},
        {"UINT8", {1024}, ACL_UINT8, {1}, 0, ACL_FORMAT_ND, {1024}, ACLNN_ERR_PARAM_INVALID},
        {"FLOAT", {1024}, ACL_FLOAT, {1}, 0, ACL_FORMAT_ND, {1024}, ACLNN_ERR_PARAM_INVALID},
        {"NCHW", {1024}, ACL_INT8, {1}, 0, ACL_FORMAT_NCHW, {1024}, ACLNN_ERR_PARAM_INVALID},
        {"format UNDEFINED", {1024}, ACL_INT8, {1}, 0, ACL_FORMAT_UNDEFINED, {1024},
         ACLNN_ERR_PARAM_INVALID},
        {"shape (1023)", {1023}, ACL_INT8, {1}, 0, ACL_FORMAT_ND, {1024}, ACLNN_ERR_PARAM_INVALID},
        {"shape (1)", {1}, ACL_INT8, {1}, 0, ACL_FORMAT_ND, {1}, ACLNN_ERR_PARAM_INVALID},
        {"shape (2048)", {2048}, ACL_INT8, {1}, 0, ACL_FORMAT_ND, {2048}, ACLNN_ERR_PARAM_INVALID},
        {"storage below 1024", {1024}, ACL_INT8, {1}, 0, ACL_FORMAT_ND, {512},
         ACLNN_ERR_PARAM_INVALID},
        {"offset past the storage's 1024", {1024}, ACL_INT8, {1}, 1, ACL_FORMAT_ND, {1024},
         ACLNN_ERR_PARAM_INVALID},
        {"no storage", {1024}, ACL_INT8, {1}, 0, ACL_FORMAT_ND, {}, ACLNN_ERR_PARAM_INVALID},
        {"stride 2 (non-contiguous)", {1024}, ACL_INT8, {2}, 0, ACL_FORMAT_ND, {2048},
         ACLNN_ERR_PARAM_INVALID},
        {"stride 0 (broadcast)", {1024}, ACL_INT8, {0}, 0, ACL_FORMAT_ND, {1024},
         ACLNN_ERR_PARAM_INVALID},
        {"stride -1", {1024}, ACL_INT8, {-1}, 0, ACL_FORMAT_ND, {1024}, ACLNN_ERR_PARAM_INVALID},
    };
    std::vector<std::int8_t> data(4096);
    for (const Row& row : rows) {
        INFO(row.what);
        aclTensor* tensor = aclCreateTensor(row.view.data(), row.view.size(), row.type,
                                            row.strides.data(), row.offset, row.format,
                                            row.storage.data(), row.storage.size(), data.data());
        REQUIRE(tensor != nullptr);
        std::uint64_t workspace_size = 99;
        aclOpExecutor* executor = nullptr;
        CHECK(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(tensor, 1, 0, &workspace_size,
                                                             &executor) == row.expected);
        CHECK((executor != nullptr) == (row.expected == ACLNN_SUCCESS));
        CHECK(workspace_size == (row.expected == ACLNN_SUCCESS ? 0U : 99U));
        CHECK(aclDestroyTensor(tensor) == ACLNN_SUCCESS);
    }
}

TEST_CASE("phase 2 checks its arguments and consumes the executor once", "[compat][aclnn]") {
    const Device device;
    FfnFixture f;
    std::uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    REQUIRE(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(f.tensor, 1, 0, &workspace_size,
                                                           &executor) == ACLNN_SUCCESS);
    int not_a_stream = 0;
    CHECK(aclnnInplaceFfnWorkerScheduler(nullptr, 0, nullptr, nullptr) == ACLNN_ERR_PARAM_NULLPTR);
    CHECK(aclnnInplaceFfnWorkerScheduler(nullptr, 64, executor, nullptr) ==
          ACLNN_ERR_PARAM_NULLPTR);
    CHECK(aclnnInplaceFfnWorkerScheduler(nullptr, 0, executor, &not_a_stream) ==
          ACLNN_ERR_RUNTIME_ERROR);
    CHECK(f.load_context().ffn.out_num == 77); // nothing ran
    // The rejected calls left the executor usable; the tensor may go before phase 2.
    REQUIRE(aclDestroyTensor(f.tensor) == ACLNN_SUCCESS);
    f.tensor = nullptr;
    CHECK(aclnnInplaceFfnWorkerScheduler(nullptr, 0, executor, nullptr) == ACLNN_SUCCESS);
    CHECK(aclrtSynchronizeStream(nullptr) == ACL_SUCCESS);
    CHECK(aclnnInplaceFfnWorkerScheduler(nullptr, 0, executor, nullptr) ==
          ACLNN_ERR_PARAM_INVALID); // used
    CHECK(f.load_context().ffn.out_num == 2);
}

TEST_CASE("grouped mode on the aclnn example gives its documented results", "[compat][aclnn]") {
    const Device device;
    aclrtStream stream = nullptr;
    REQUIRE(aclrtCreateStream(&stream) == ACL_SUCCESS);
    FfnFixture f(1);
    REQUIRE(f.run(1, stream) == ACL_SUCCESS);
    const ScheduleContext out = f.load_context();
    CHECK(out.ffn.out_num == 2);
    CHECK(out.ffn.polling_index == 1); // grouped mode does not touch it
    CHECK(download<std::int32_t>(f.layer_ids, 2) == std::vector<std::int32_t>{55, 55});
    CHECK(download<std::int32_t>(f.session_ids, 2) == std::vector<std::int32_t>{0, 1});
    CHECK(download<std::int32_t>(f.micro_batch_ids, 2) == std::vector<std::int32_t>{0, 0});
    CHECK(download<std::int32_t>(f.expert_ids, 20) == k_ids_twice);
    // The micro batch 0 descriptors were reset (flag 0, ids 0x7F7F7F7F, layer kept); mb 1
    // untouched.
    const auto descriptors = download<std::int32_t>(f.token_info, 4 * 12);
    for (std::size_t d = 0; d < 4; ++d) {
        const bool consumed = d % 2 == 0; // (session, mb) = (d / 2, d % 2)
        CHECK(descriptors[d * 12] == (consumed ? 0 : 1));
        CHECK(descriptors[d * 12 + 1] == 55);
        CHECK(descriptors[d * 12 + 2] == (consumed ? 0x7F7F7F7F : 0));
    }
    CHECK(aclrtDestroyStream(stream) == ACL_SUCCESS);
}

TEST_CASE("all-sync mode consumes micro batch polling_index and advances it", "[compat][aclnn]") {
    const Device device;
    FfnFixture f(1);
    REQUIRE(f.run(2) == ACL_SUCCESS); // sgs == A: one group
    const ScheduleContext out = f.load_context();
    CHECK(out.ffn.out_num == 2);
    CHECK(out.ffn.polling_index == 0);
    CHECK(download<std::int32_t>(f.micro_batch_ids, 2) == std::vector<std::int32_t>{1, 1});
    CHECK(download<std::int32_t>(f.expert_ids, 20) == k_ids_twice);
}

TEST_CASE("run_flag 0 returns at once with nothing consumed", "[compat][aclnn]") {
    const Device device;
    FfnFixture f(1, 0);
    REQUIRE(f.run(2) == ACL_SUCCESS);
    CHECK(f.load_context().ffn.out_num == 0);
    CHECK(f.load_context().ffn.polling_index == 1);
}

TEST_CASE("a kernel failure is reported by aclrtSynchronizeStream", "[compat][aclnn]") {
    const Device device;
    SECTION("syncGroupSize that does not divide session_num") {
        FfnFixture f;
        CHECK(f.run(3) == ACL_ERROR_RT_AICPU_INTERNAL_ERROR);
        CHECK(f.load_context().ffn.out_num == 77);             // nothing modified
        CHECK(aclrtSynchronizeStream(nullptr) == ACL_SUCCESS); // reported once
    }
    SECTION("an output buffer outside runtime memory (registry resolver)") {
        FfnFixture f;
        std::vector<std::int32_t> host_ids(20);
        f.context.ffn.expert_ids_buf = reinterpret_cast<std::uintptr_t>(host_ids.data());
        f.store_context();
        CHECK(f.run(1) == ACL_ERROR_RT_AICPU_INTERNAL_ERROR);
        CHECK(host_ids == std::vector<std::int32_t>(20, 0));
        CHECK(f.load_context().ffn.out_num == 77);
    }
    SECTION("an output buffer smaller than its size field claims") {
        FfnFixture f;
        f.context.ffn.expert_ids_buf_size = 4096;
        f.context.ffn.expert_ids_buf = reinterpret_cast<std::uintptr_t>(f.layer_ids); // 8 bytes
        f.store_context();
        CHECK(f.run(1) == ACL_ERROR_RT_AICPU_INTERNAL_ERROR);
    }
    SECTION("the context itself outside runtime memory") {
        std::vector<std::int8_t> host_context(1024);
        aclTensor* tensor = make_tensor({1024}, host_context.data());
        std::uint64_t workspace_size = 0;
        aclOpExecutor* executor = nullptr;
        REQUIRE(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(tensor, 1, 0, &workspace_size,
                                                               &executor) == ACLNN_SUCCESS);
        REQUIRE(aclnnInplaceFfnWorkerScheduler(nullptr, 0, executor, nullptr) == ACLNN_SUCCESS);
        CHECK(aclrtSynchronizeStream(nullptr) == ACL_ERROR_RT_AICPU_INTERNAL_ERROR);
        aclDestroyTensor(tensor);
    }
    SECTION("a context tensor shorter than 1024 bytes is refused before anything runs") {
        FfnFixture f;
        aclTensor* short_tensor = make_tensor({1023}, f.context_dev);
        std::uint64_t workspace_size = 0;
        aclOpExecutor* executor = nullptr;
        CHECK(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(short_tensor, 1, 0, &workspace_size,
                                                             &executor) ==
              ACLNN_ERR_PARAM_INVALID);
        CHECK(executor == nullptr);
        CHECK(aclrtSynchronizeStream(nullptr) == ACL_SUCCESS);
        CHECK(f.load_context().ffn.out_num == 77);
        aclDestroyTensor(short_tensor);
    }
}

// An executor is consumed by its launch: its handle stays rejected even when a later phase 1 gets
// the consumed executor's address from the allocator (docs/c-api.md, Handles).
TEST_CASE("a consumed executor stays rejected while new ones are made", "[compat][aclnn]") {
    const Device device;
    FfnFixture f(1, 0); // run_flag 0: each kernel returns at once
    std::uint64_t workspace_size = 0;
    aclOpExecutor* stale = nullptr;
    REQUIRE(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(f.tensor, 1, 0, &workspace_size,
                                                           &stale) == ACLNN_SUCCESS);
    REQUIRE(aclnnInplaceFfnWorkerScheduler(nullptr, 0, stale, nullptr) == ACLNN_SUCCESS);
    aclOpExecutor* live = nullptr;
    int reused = 0;
    for (int i = 0; i < 500; ++i) {
        REQUIRE(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(f.tensor, 1, 0, &workspace_size,
                                                               &live) == ACLNN_SUCCESS);
        reused += live == stale;
        if (i + 1 < 500) {
            REQUIRE(aclnnInplaceFfnWorkerScheduler(nullptr, 0, live, nullptr) == ACLNN_SUCCESS);
        }
    }
    CHECK(reused == 0);
    CHECK(aclnnInplaceFfnWorkerScheduler(nullptr, 0, stale, nullptr) == ACLNN_ERR_PARAM_INVALID);
    CHECK(aclnnInplaceFfnWorkerScheduler(nullptr, 0, live, nullptr) == ACLNN_SUCCESS);
    CHECK(aclrtSynchronizeStream(nullptr) == ACL_SUCCESS);
}

// CANN executors are single-use: threads launching the same executors at once — each executor is
// queued exactly once, every other launch of it gets ACLNN_ERR_PARAM_INVALID (nothing is freed
// under a launch that is still using it). Several threads walk the same executors in the same
// order, so most launches meet another launch of the same executor.
TEST_CASE("executors launched from several threads at once each run once", "[compat][aclnn]") {
    constexpr std::size_t k_threads = 4;
    constexpr std::size_t k_executors = 64;
    const Device device;
    FfnFixture f(1, 0); // run_flag 0: each kernel returns at once
    aclrtContext context = nullptr;
    REQUIRE(aclrtGetCurrentContext(&context) == ACL_SUCCESS);
    int wrong = 0;
    for (int round = 0; round < 50; ++round) {
        std::array<aclOpExecutor*, k_executors> executors{};
        for (aclOpExecutor*& executor : executors) {
            std::uint64_t workspace_size = 0;
            REQUIRE(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(f.tensor, 1, 0, &workspace_size,
                                                                   &executor) == ACLNN_SUCCESS);
        }
        std::array<std::atomic<int>, k_executors> queued{};
        std::array<std::atomic<int>, k_executors> rejected{};
        std::atomic<std::size_t> ready{0};
        auto launch_all = [&] {
            aclrtSetCurrentContext(context); // the default stream of the test's context
            ready.fetch_add(1);
            while (ready.load() < k_threads) { // start together
            }
            for (std::size_t i = 0; i < k_executors; ++i) {
                const aclnnStatus s =
                    aclnnInplaceFfnWorkerScheduler(nullptr, 0, executors[i], nullptr);
                (s == ACLNN_SUCCESS ? queued : rejected)[i].fetch_add(
                    s == ACLNN_SUCCESS || s == ACLNN_ERR_PARAM_INVALID ? 1 : 100);
            }
        };
        std::vector<std::thread> threads;
        for (std::size_t t = 0; t < k_threads; ++t) {
            threads.emplace_back(launch_all);
        }
        for (std::thread& t : threads) {
            t.join();
        }
        for (std::size_t i = 0; i < k_executors; ++i) {
            wrong += queued[i].load() != 1 || rejected[i].load() != int{k_threads} - 1;
        }
    }
    CHECK(wrong == 0);
    CHECK(aclrtSynchronizeStream(nullptr) == ACL_SUCCESS);
}
