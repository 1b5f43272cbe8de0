// load() and execute(): one upload per load, 512-byte aligned blocks with zero padding, resolved
// block and workspace slots, kernels reading the bytes, streams, and release.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <utility>
#include <vector>

using ferry::ArgsError;
using ferry::CustomDataBlock;
using ferry::GraphStatus;
using ferry::KernelArgs;
using ferry::KernelContext;
using ferry::LaunchPlan;
using ferry::Status;
using kernel_test::launch_info;

namespace {
const char stub_copy = 0;
const char stub_count = 0;

std::vector<std::byte> pattern(std::size_t size, unsigned seed) {
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i) {
        bytes[i] = static_cast<std::byte>((i * 31 + seed) % 251 + 1); // never zero
    }
    return bytes;
}

// copy(block slot 0, length slot 1, output slot 2): copies the block's bytes to the output.
void copy_kernel(const KernelContext& ctx) {
    const auto length = ctx.slot<std::uint64_t>(1);
    const auto bytes = ferry::block_at(ctx, 0).array<std::byte>(0, length);
    std::memcpy(ctx.pointer<std::byte>(2), bytes.data(), bytes.size());
}
} // namespace

TEST_CASE("every block lands 512-byte aligned and every padding byte is zero",
          "[kernel][upload][concurrency]") {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    const std::vector<std::vector<std::size_t>> sizes{{1, 511, 512}, {513, 37}, {}, {1024, 3}};
    LaunchPlan plan;
    std::vector<std::vector<std::vector<std::byte>>> expected;
    unsigned seed = 0;
    for (const auto& launch : sizes) {
        KernelArgs args(std::uint64_t{99});
        auto& blocks = expected.emplace_back();
        for (const std::size_t size : launch) {
            blocks.push_back(pattern(size, ++seed));
            REQUIRE(args.append(CustomDataBlock{blocks.back().data(), size}) ==
                    GraphStatus::success);
        }
        REQUIRE(plan.add_launch(launch_info("copy"), std::move(args)) == ArgsError::none);
    }
    auto loaded = ferry::load(rt, plan);
    REQUIRE(loaded.has_value());
    REQUIRE(loaded->image_size() % ferry::k_block_alignment == 0);
    const std::vector<std::byte> image =
        kernel_test::read_device(rt, loaded->device_image(), loaded->image_size());
    std::vector<bool> covered(image.size(), false);
    const auto* base = static_cast<const std::byte*>(loaded->device_image());
    for (std::size_t l = 0; l < sizes.size(); ++l) {
        const auto slots = loaded->args(l).slots();
        REQUIRE(slots.size() == 1 + sizes[l].size());
        CHECK(slots[0] == 99);
        for (std::size_t b = 0; b < sizes[l].size(); ++b) {
            const auto* address = static_cast<const std::byte*>(loaded->block_address(l, b));
            INFO("launch " << l << " block " << b);
            CHECK(reinterpret_cast<std::uintptr_t>(address) % 512 == 0);
            CHECK(slots[1 + b] == reinterpret_cast<std::uintptr_t>(address));
            const auto offset = static_cast<std::size_t>(address - base);
            REQUIRE(offset + sizes[l][b] <= image.size());
            CHECK(std::equal(expected[l][b].begin(), expected[l][b].end(),
                             image.begin() + static_cast<std::ptrdiff_t>(offset)));
            std::fill_n(covered.begin() + static_cast<std::ptrdiff_t>(offset), sizes[l][b], true);
        }
    }
    std::size_t nonzero_padding = 0;
    for (std::size_t i = 0; i < image.size(); ++i) {
        nonzero_padding += !covered[i] && image[i] != std::byte{0};
    }
    CHECK(nonzero_padding == 0);
    // Padding exists after the last block: 1024 + 3 bytes end inside a 512-byte granule.
    CHECK(std::count(covered.begin(), covered.end(), false) > 0);
}

TEST_CASE("blocks are uploaded once per load, however often the plan runs",
          "[kernel][upload][concurrency]") {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    std::atomic<int> runs{0};
    kernel_test::register_kernel(rt, &stub_count, "count", [&](const KernelContext& ctx) {
        if (ferry::block_at(ctx, 0).read<std::uint32_t>() == 0xC0FFEEu) {
            runs.fetch_add(1);
        }
    });
    const std::uint32_t magic = 0xC0FFEE;
    LaunchPlan plan;
    for (int i = 0; i < 3; ++i) {
        REQUIRE(plan.add_launch(launch_info("count", 2),
                                KernelArgs(CustomDataBlock{&magic, sizeof magic})) ==
                ArgsError::none);
    }
    const std::size_t allocations_before = rt.registry().size();
    REQUIRE(ferry::profiler().start() == Status::ok);
    auto loaded = ferry::load(rt, plan);
    REQUIRE(loaded.has_value());
    CHECK(rt.registry().size() == allocations_before + 1); // one allocation per load
    constexpr int executions = 5;
    for (int i = 0; i < executions; ++i) {
        REQUIRE(loaded->execute(rt) == Status::ok);
    }
    REQUIRE(rt.synchronize_stream(nullptr) == Status::ok);
    REQUIRE(ferry::profiler().stop() == Status::ok);
    const auto events = ferry::profiler().events();
    const auto count = [&](const char* category) {
        return std::count_if(events.begin(), events.end(),
                             [&](const ferry::TraceEvent& e) { return e.category == category; });
    };
    CHECK(count("memcpy") == 1);              // the one host-to-device upload
    CHECK(count("kernel_args") == 1);         // load's own trace event
    CHECK(count("kernel") == 3 * executions); // every launch ran
    CHECK(runs.load() == 3 * executions * 2); // every block of every launch saw the bytes
    CHECK(rt.registry().size() == allocations_before + 1);

    // A second load uploads again (once).
    REQUIRE(ferry::profiler().start() == Status::ok);
    auto again = ferry::load(rt, plan);
    REQUIRE(again.has_value());
    REQUIRE(ferry::profiler().stop() == Status::ok);
    const auto second = ferry::profiler().events();
    CHECK(std::count_if(second.begin(), second.end(),
                        [](const ferry::TraceEvent& e) { return e.category == "memcpy"; }) == 1);
}

TEST_CASE("the kernel sees the original bytes after the caller freed its buffer",
          "[kernel][upload][concurrency]") {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    kernel_test::register_kernel(rt, &stub_copy, "copy", copy_kernel);
    constexpr std::size_t size = 777;
    auto* output = static_cast<std::byte*>(rt.malloc(size).value());
    LaunchPlan plan;
    auto buffer = std::make_unique<std::vector<std::byte>>(pattern(size, 5));
    const std::vector<std::byte> original = *buffer;
    KernelArgs args;
    REQUIRE(args.append(CustomDataBlock{buffer->data(), size}) == GraphStatus::success);
    std::fill(buffer->begin(), buffer->end(), std::byte{0xEE}); // overwritten ...
    buffer.reset();                                             // ... and freed
    REQUIRE(args.append(std::uint64_t{size}) == GraphStatus::success);
    REQUIRE(args.append(ferry::OutputAddr{0, output}) == GraphStatus::success);
    REQUIRE(plan.add_launch(launch_info("copy"), std::move(args)) == ArgsError::none);
    auto loaded = ferry::load(rt, plan);
    REQUIRE(loaded.has_value());
    REQUIRE(loaded->execute(rt) == Status::ok);
    REQUIRE(rt.synchronize_stream(nullptr) == Status::ok);
    CHECK(kernel_test::read_device(rt, output, size) == original);
}

TEST_CASE("workspaces are zeroed, aligned, writable device memory resolved by index",
          "[kernel][upload][workspace][concurrency]") {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    static const char stub_fill = 0;
    static const char stub_sum = 0;
    // fill(workspace): ws[i] = i + 1 ; sum(workspace, output): output = sum of ws[0..8)
    kernel_test::register_kernel(rt, &stub_fill, "fill", [](const KernelContext& ctx) {
        auto* ws = ctx.pointer<std::uint32_t>(0);
        for (std::uint32_t i = 0; i < 8; ++i) {
            ws[i] += i + 1; // += : the workspace starts zeroed
        }
    });
    kernel_test::register_kernel(rt, &stub_sum, "sum", [](const KernelContext& ctx) {
        const auto* ws = ctx.pointer<const std::uint32_t>(0);
        *ctx.pointer<std::uint32_t>(1) = std::accumulate(ws, ws + 8, 0U);
    });
    auto* output = static_cast<std::uint32_t*>(rt.malloc(sizeof(std::uint32_t)).value());
    LaunchPlan plan;
    REQUIRE(plan.malloc_workspace(5).has_value()); // index 0, unused
    const auto ws = plan.malloc_workspace(8 * sizeof(std::uint32_t));
    REQUIRE(ws.has_value());
    REQUIRE(plan.add_launch(launch_info("fill"), KernelArgs(*ws)) == ArgsError::none);
    REQUIRE(plan.add_launch(launch_info("sum"), KernelArgs(*ws, ferry::OutputAddr{0, output})) ==
            ArgsError::none);
    auto loaded = ferry::load(rt, plan);
    REQUIRE(loaded.has_value());
    CHECK(reinterpret_cast<std::uintptr_t>(loaded->workspace_address(1)) % 512 == 0);
    CHECK(loaded->args(0).slots()[0] ==
          reinterpret_cast<std::uintptr_t>(loaded->workspace_address(1)));
    REQUIRE(loaded->execute(rt) == Status::ok);
    REQUIRE(rt.synchronize_stream(nullptr) == Status::ok);
    std::uint32_t sum = 0;
    REQUIRE(rt.memcpy(&sum, sizeof sum, output, sizeof sum, ferry::MemcpyKind::device_to_host) ==
            Status::ok);
    CHECK(sum == 36);
}

TEST_CASE("execute maps stream ids to streams and checks everything before queueing",
          "[kernel][upload][concurrency]") {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    std::mutex mutex;
    std::vector<std::uint64_t> seen_streams;
    kernel_test::register_kernel(rt, &stub_count, "where", [&](const KernelContext& ctx) {
        std::lock_guard lock(mutex);
        seen_streams.push_back(ctx.stream->id());
    });
    ferry::Stream* s0 = rt.create_stream().value();
    ferry::Stream* s1 = rt.create_stream().value();
    LaunchPlan plan;
    REQUIRE(plan.add_launch(launch_info("where", 1, 1), KernelArgs(1)) == ArgsError::none);
    REQUIRE(plan.add_launch(launch_info("where", 1, 0), KernelArgs(2)) == ArgsError::none);
    auto loaded = ferry::load(rt, plan);
    REQUIRE(loaded.has_value());
    CHECK(loaded->device_image() == nullptr); // no blocks, no workspaces: nothing allocated
    const std::array<ferry::Stream*, 1> too_few{s0};
    CHECK(loaded->execute(rt, too_few) == Status::rt_param_invalid);
    const std::array<ferry::Stream*, 2> streams{s0, s1};
    REQUIRE(loaded->execute(rt, streams) == Status::ok);
    REQUIRE(rt.synchronize_stream(s0) == Status::ok);
    REQUIRE(rt.synchronize_stream(s1) == Status::ok);
    {
        std::lock_guard lock(mutex);
        std::sort(seen_streams.begin(), seen_streams.end());
        CHECK(seen_streams == std::vector<std::uint64_t>{std::min(s0->id(), s1->id()),
                                                         std::max(s0->id(), s1->id())});
    }
    LaunchPlan unknown;
    REQUIRE(unknown.add_launch(launch_info("where"), KernelArgs(1)) == ArgsError::none);
    REQUIRE(unknown.add_launch(launch_info("nowhere"), KernelArgs(1)) == ArgsError::none);
    auto bad = ferry::load(rt, unknown);
    REQUIRE(bad.has_value());
    CHECK(bad->execute(rt, streams) == Status::rt_kernel_lookup);
    REQUIRE(rt.synchronize_stream(s0) == Status::ok);
    std::lock_guard lock(mutex);
    CHECK(seen_streams.size() == 2); // the known launch was not queued either
}

TEST_CASE("releasing a loaded plan frees its device memory; load needs a device",
          "[kernel][upload][concurrency]") {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    const std::uint64_t used_before = rt.memory_used(0);
    const std::vector<std::byte> bytes(5000, std::byte{1});
    LaunchPlan plan;
    REQUIRE(plan.add_launch(launch_info("k"), KernelArgs(CustomDataBlock{bytes.data(), 5000})) ==
            ArgsError::none);
    {
        auto loaded = ferry::load(rt, plan);
        REQUIRE(loaded.has_value());
        CHECK(rt.memory_used(0) > used_before);
        ferry::LoadedPlan moved = std::move(*loaded);
        CHECK(moved.loaded());
        CHECK_FALSE(loaded->loaded()); // NOLINT(bugprone-use-after-move)
    }
    CHECK(rt.memory_used(0) == used_before);

    ferry::Runtime::shutdown();
    ::setenv("FERRY_DEVICE_MEMORY", "4K", 1);
    ferry::Runtime& small = *ferry::Runtime::instance().value();
    ::unsetenv("FERRY_DEVICE_MEMORY");
    CHECK(ferry::load(small, plan).status() == Status::rt_context_null); // no current device
    REQUIRE(small.set_device(0) == Status::ok);
    CHECK(ferry::load(small, plan).status() == Status::rt_memory_allocation); // 5000 B > 4 KiB
    CHECK(small.registry().size() == 0);
}

TEST_CASE("a plan released after a runtime shutdown touches nothing of the next runtime",
          "[kernel][upload][concurrency]") {
    ferry::Runtime& first = kernel_test::fresh_runtime();
    const std::vector<std::byte> bytes(64, std::byte{3});
    LaunchPlan plan;
    REQUIRE(plan.add_launch(launch_info("k"), KernelArgs(CustomDataBlock{bytes.data(), 64})) ==
            ArgsError::none);
    auto old_plan = ferry::load(first, plan);
    REQUIRE(old_plan.has_value());
    ferry::Runtime& second = kernel_test::fresh_runtime(); // shuts `first` down
    auto new_plan = ferry::load(second, plan);
    REQUIRE(new_plan.has_value());
    const std::size_t allocations = second.registry().size();
    old_plan->release(); // its memory went with the first runtime: nothing to free here
    CHECK(second.registry().size() == allocations);
    CHECK(ferry::detail::block_directory().find(new_plan->block_address(0, 0)).has_value());
    CHECK(second.memory_used(0) > 0);
}
