// BlockView and block_at: reads inside a block and its zero padding succeed, reads past the
// padded end (or through a slot that holds no block) are caught and reported as task failures.
#include "support.hpp"

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using ferry::ArgsError;
using ferry::BlockAccessError;
using ferry::BlockView;
using ferry::CustomDataBlock;
using ferry::KernelArgs;
using ferry::KernelContext;
using ferry::LaunchPlan;
using ferry::Status;

TEST_CASE("BlockView checks every read against its extent", "[kernel][block_view]") {
    alignas(8) std::array<std::byte, 16> bytes{};
    bytes[8] = std::byte{0x2A};
    const BlockView view(bytes);
    CHECK(view.padded_size() == 16);
    CHECK(view.read<std::uint8_t>(8) == 0x2A);
    CHECK(view.read<std::uint64_t>(8) == 0x2A);
    CHECK_THROWS_AS(view.read<std::uint64_t>(9), BlockAccessError);
    CHECK_THROWS_AS(view.read<std::uint8_t>(16), BlockAccessError);
    CHECK_THROWS_AS(view.read<std::uint8_t>(SIZE_MAX), BlockAccessError);
    CHECK(view.array<std::uint32_t>(4, 3).size() == 3);
    CHECK_THROWS_AS(view.array<std::uint32_t>(4, 4), BlockAccessError);
    CHECK_THROWS_AS(view.array<std::uint32_t>(0, SIZE_MAX / 2), BlockAccessError); // no overflow
    CHECK_THROWS_AS(view.array<std::uint32_t>(2, 1), BlockAccessError);            // misaligned
    CHECK(view.as<std::uint64_t>() == 0);
}

namespace {
const char stub_probe = 0;

struct Probe {
    std::uint64_t slot = 1;   // which slot to read as a block
    std::uint64_t offset = 0; // where to read one byte
};
std::atomic<int> g_byte{-1};
} // namespace

TEST_CASE("a kernel may read its block's zero padding but not past the padded end",
          "[kernel][block_view][concurrency]") {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    const auto quiet = ferry::set_log_sink([](ferry::LogLevel, std::string_view) {});
    // probe(offset slot 0, block slot 1, second block slot 2): reads one byte at the offset.
    kernel_test::register_kernel(rt, &stub_probe, "probe", [](const KernelContext& ctx) {
        const auto offset = ctx.slot<std::uint64_t>(0);
        const auto which = ctx.slot<std::uint64_t>(3);
        g_byte.store(static_cast<int>(ferry::block_at(ctx, which).read<std::uint8_t>(offset)));
    });
    const std::vector<std::uint8_t> first(100, 0xAB);
    const std::vector<std::uint8_t> second(600, 0xCD);
    const auto run = [&](std::uint64_t offset, std::uint64_t which) {
        LaunchPlan plan;
        KernelArgs args(offset, CustomDataBlock{first.data(), first.size()},
                        CustomDataBlock{second.data(), second.size()}, which);
        REQUIRE(plan.add_launch(kernel_test::launch_info("probe"), std::move(args)) ==
                ArgsError::none);
        auto loaded = ferry::load(rt, plan);
        REQUIRE(loaded.has_value());
        g_byte.store(-1);
        REQUIRE(loaded->execute(rt) == Status::ok);
        return rt.synchronize_stream(nullptr);
    };
    CHECK(run(99, 1) == Status::ok);
    CHECK(g_byte.load() == 0xAB);
    CHECK(run(100, 1) == Status::ok); // padding after the block reads as zero
    CHECK(g_byte.load() == 0);
    CHECK(run(511, 1) == Status::ok); // the last padding byte before the next block
    CHECK(g_byte.load() == 0);
    CHECK(run(512, 1) == ferry::k_task_exception_status); // would be the next block: caught
    CHECK(g_byte.load() == -1);
    CHECK(run(1023, 2) == Status::ok); // the last block's padding
    CHECK(g_byte.load() == 0);
    CHECK(run(1024, 2) == ferry::k_task_exception_status); // past the last padding: caught
    CHECK(run(0, 0) == ferry::k_task_exception_status);    // slot 0 holds a value, not a block
    CHECK(run(0, 9) == ferry::k_task_exception_status);    // no slot 9
    ferry::set_log_sink(quiet);
}

TEST_CASE("released plans leave the block directory", "[kernel][block_view][concurrency]") {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    const std::size_t before = ferry::detail::block_directory().size();
    const std::uint32_t value = 1;
    LaunchPlan plan;
    REQUIRE(plan.add_launch(kernel_test::launch_info("k"),
                            KernelArgs(CustomDataBlock{&value, 4}, CustomDataBlock{&value, 4})) ==
            ArgsError::none);
    auto loaded = ferry::load(rt, plan);
    REQUIRE(loaded.has_value());
    CHECK(ferry::detail::block_directory().size() == before + 2);
    const void* address = loaded->block_address(0, 1);
    CHECK(ferry::detail::block_directory().find(address).has_value());
    loaded->release();
    CHECK(ferry::detail::block_directory().size() == before);
    CHECK_FALSE(ferry::detail::block_directory().find(address).has_value());
}
