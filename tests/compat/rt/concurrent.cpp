// ferry-acl from several threads (suite 'concurrency', run under ThreadSanitizer in CI):
// - MultiThreadConcurrentAclInit (docs/cann-contract/runtime.md#aclinit-and-aclfinalize): 10
//   threads call aclInit at once; one gets ACL_SUCCESS, nine ACL_ERROR_REPEAT_INITIALIZE, and the
//   count is 10;
// - threads that each set a device and stream copies through their own stream;
// - the aclnn scheduler running as a stream task while another thread publishes the flags it waits
//   for, and one stopped by run_flag = 0 written from another thread.
// Worker threads record outcomes; Catch2 checks them on the main thread after joining.

#include "acl/acl.h"
#include "aclnnop/aclnn_ffn_worker_scheduler.h"

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <ferry/afd/schedule_context.hpp>
#include <ferry/runtime/init.hpp>
#include <thread>
#include <vector>

TEST_CASE("concurrent aclInit: one success, the rest count", "[compat][concurrency]") {
    constexpr int k_threads = 10;
    std::array<aclError, k_threads> results{};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < k_threads; ++i) {
        threads.emplace_back([&, i] {
            while (!go.load()) {
                std::this_thread::yield();
            }
            results[static_cast<std::size_t>(i)] = aclInit(nullptr);
        });
    }
    go.store(true);
    for (auto& t : threads) {
        t.join();
    }
    int successes = 0;
    int repeats = 0;
    for (const aclError r : results) {
        successes += r == ACL_SUCCESS ? 1 : 0;
        repeats += r == ACL_ERROR_REPEAT_INITIALIZE ? 1 : 0;
    }
    CHECK(successes == 1);
    CHECK(repeats == k_threads - 1);
    CHECK(ferry::initialize_count() == k_threads);
    CHECK(aclFinalize() == ACL_SUCCESS);
    CHECK(ferry::initialize_count() == 0);
}

TEST_CASE("threads use their own devices and streams at once", "[compat][concurrency]") {
    constexpr int k_threads = 4;
    constexpr int k_rounds = 20;
    std::array<int, k_threads> failures{};
    std::vector<std::thread> threads;
    for (int i = 0; i < k_threads; ++i) {
        threads.emplace_back([&failures, i] {
            int& failed = failures[static_cast<std::size_t>(i)];
            aclrtStream stream = nullptr;
            void* dev = nullptr;
            failed += aclrtSetDevice(i % 2) != ACL_SUCCESS;
            failed += aclrtCreateStream(&stream) != ACL_SUCCESS;
            failed += aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS;
            std::vector<std::uint8_t> in(4096), out(4096);
            for (int round = 0; round < k_rounds && failed == 0; ++round) {
                for (std::size_t b = 0; b < in.size(); ++b) {
                    in[b] = static_cast<std::uint8_t>(b * 7 + static_cast<std::size_t>(round + i));
                }
                failed += aclrtMemcpyAsync(dev, 4096, in.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE,
                                           stream) != 0;
                failed += aclrtMemcpyAsync(out.data(), 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST,
                                           stream) != 0;
                failed += aclrtSynchronizeStream(stream) != ACL_SUCCESS;
                failed += out != in;
            }
            failed += aclrtFree(dev) != ACL_SUCCESS;
            failed += aclrtDestroyStream(stream) != ACL_SUCCESS;
            failed += aclrtResetDevice(i % 2) != ACL_SUCCESS;
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    CHECK(failures == std::array<int, k_threads>{});
}

namespace {

// A = 2, M = 1, BS = 1, K = 2 context in runtime memory with every descriptor *not* ready.
struct WaitingContext {
    ferry::afd::ScheduleContext context{};
    std::array<void*, 7> buffers{}; // context, token info, token data, 4 outputs
    aclTensor* tensor = nullptr;

    WaitingContext() {
        const std::array<std::size_t, 7> sizes = {1024, 2 * 16, 64, 8, 8, 8, 16};
        for (std::size_t i = 0; i < buffers.size(); ++i) {
            REQUIRE(aclrtMalloc(&buffers[i], sizes[i], ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
            REQUIRE(aclrtMemset(buffers[i], sizes[i], 0, sizes[i]) == ACL_SUCCESS);
        }
        auto addr = [](void* p) {
            return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
        };
        context.common = {2, 1, 1, 2, 2, 512, 512, 0, {}};
        context.control.run_flag = 1;
        context.ffn.token_info_buf = addr(buffers[1]);
        context.ffn.token_info_buf_size = 2 * 16;
        context.ffn.token_data_buf = addr(buffers[2]);
        context.ffn.token_data_buf_size = 64;
        context.ffn.layer_ids_buf = addr(buffers[3]);
        context.ffn.layer_ids_buf_size = 8;
        context.ffn.session_ids_buf = addr(buffers[4]);
        context.ffn.session_ids_buf_size = 8;
        context.ffn.micro_batch_ids_buf = addr(buffers[5]);
        context.ffn.micro_batch_ids_buf_size = 8;
        context.ffn.expert_ids_buf = addr(buffers[6]);
        context.ffn.expert_ids_buf_size = 16;
        REQUIRE(aclrtMemcpy(buffers[0], 1024, &context, 1024, ACL_MEMCPY_HOST_TO_DEVICE) ==
                ACL_SUCCESS);
        const std::int64_t shape[] = {1024};
        const std::int64_t stride[] = {1};
        tensor =
            aclCreateTensor(shape, 1, ACL_INT8, stride, 0, ACL_FORMAT_ND, shape, 1, buffers[0]);
        REQUIRE(tensor != nullptr);
    }
    ~WaitingContext() {
        aclDestroyTensor(tensor);
        for (void* p : buffers) {
            aclrtFree(p);
        }
    }
    WaitingContext(const WaitingContext&) = delete;
    WaitingContext& operator=(const WaitingContext&) = delete;

    aclnnStatus launch(aclrtStream stream, std::int32_t sync_group_size) {
        std::uint64_t workspace_size = 0;
        aclOpExecutor* executor = nullptr;
        const aclnnStatus s = aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(
            tensor, sync_group_size, 0, &workspace_size, &executor);
        return s != ACLNN_SUCCESS ? s
                                  : aclnnInplaceFfnWorkerScheduler(nullptr, 0, executor, stream);
    }
    ferry::afd::ScheduleContext read() const {
        ferry::afd::ScheduleContext out{};
        REQUIRE(aclrtMemcpy(&out, 1024, buffers[0], 1024, ACL_MEMCPY_DEVICE_TO_HOST) ==
                ACL_SUCCESS);
        return out;
    }
};

} // namespace

TEST_CASE("the scheduler waits on the stream for flags another thread publishes",
          "[compat][concurrency]") {
    REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS);
    aclrtStream stream = nullptr;
    REQUIRE(aclrtCreateStream(&stream) == ACL_SUCCESS);
    WaitingContext w;
    REQUIRE(w.launch(stream, 2) == ACLNN_SUCCESS); // all-sync: waits for both sessions
    aclError producer_result = ACL_SUCCESS;
    std::thread producer([&] {
        // AttentionToFFN's part for each session: the expert ids, then {flag 1, layer 7} with the
        // flag stored last with release semantics (ferry's device memory is host memory; the
        // scheduler reads flags with acquire loads).
        aclError r = ACL_SUCCESS;
        for (std::int32_t s = 0; s < 2 && r == ACL_SUCCESS; ++s) {
            const std::int32_t ids[2] = {s * 10, s * 10 + 1};
            auto* desc = static_cast<std::int32_t*>(w.buffers[1]) + 4 * s;
            r = aclrtMemcpy(desc + 2, 8, ids, 8, ACL_MEMCPY_HOST_TO_DEVICE);
            std::atomic_ref<std::int32_t>(desc[1]).store(7, std::memory_order_relaxed);
            std::atomic_ref<std::int32_t>(desc[0]).store(1, std::memory_order_release);
        }
        producer_result = r;
    });
    const aclError synchronized = aclrtSynchronizeStream(stream);
    producer.join();
    CHECK(producer_result == ACL_SUCCESS);
    CHECK(synchronized == ACL_SUCCESS);
    const auto out = w.read();
    CHECK(out.ffn.out_num == 2);
    std::array<std::int32_t, 4> ids{};
    REQUIRE(aclrtMemcpy(ids.data(), 16, w.buffers[6], 16, ACL_MEMCPY_DEVICE_TO_HOST) ==
            ACL_SUCCESS);
    CHECK(ids == std::array<std::int32_t, 4>{0, 1, 10, 11});
    CHECK(aclrtDestroyStream(stream) == ACL_SUCCESS);
    CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
}

TEST_CASE("run_flag = 0 from another thread ends a waiting scheduler", "[compat][concurrency]") {
    REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS);
    WaitingContext w;
    REQUIRE(w.launch(nullptr, 1) == ACLNN_SUCCESS); // grouped: waits for any group
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5)); // either order is correct
        auto* run_flag = static_cast<std::int32_t*>(w.buffers[0]) + 128 / 4;
        std::atomic_ref<std::int32_t>(*run_flag).store(0, std::memory_order_release);
    });
    const aclError synchronized = aclrtSynchronizeStream(nullptr);
    stopper.join();
    CHECK(synchronized == ACL_SUCCESS);
    CHECK(w.read().ffn.out_num == 0);
    CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
}
