// LaunchPlan: add_launch's checks and their order, deep copies, launch order, workspaces and the
// offline-target rule (docs/cann-contract/kernel-args.md#addlaunch, #offline-targets).
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/kernel/launch_plan.hpp>
#include <string>
#include <utility>

using ferry::ArgsError;
using ferry::CustomDataBlock;
using ferry::GraphStatus;
using ferry::KernelArgs;
using ferry::LaunchInfo;
using ferry::LaunchPlan;

namespace {
const std::array<std::byte, 4> binary{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
LaunchInfo valid_info(const char* name = "kernel") {
    return {name, binary.data(), binary.size(), 2, 1};
}
} // namespace

TEST_CASE("launch info is checked in order: name, binary, block_dim, stream id", "[kernel][plan]") {
    LaunchInfo all_bad{nullptr, nullptr, 0, 0, ferry::k_invalid_stream_id};
    CHECK(ferry::check_launch_info(all_bad) == ArgsError::kernel_name_missing);
    all_bad.kernel_name = "";
    CHECK(ferry::check_launch_info(all_bad) == ArgsError::kernel_name_missing);
    all_bad.kernel_name = "k";
    CHECK(ferry::check_launch_info(all_bad) == ArgsError::kernel_binary_missing);
    all_bad.kernel_bin = binary.data(); // size still 0
    CHECK(ferry::check_launch_info(all_bad) == ArgsError::kernel_binary_missing);
    all_bad.kernel_bin_size = binary.size();
    CHECK(ferry::check_launch_info(all_bad) == ArgsError::block_dim_zero);
    all_bad.block_dim = 1;
    CHECK(ferry::check_launch_info(all_bad) == ArgsError::stream_id_invalid);
    all_bad.stream_id = ferry::k_invalid_stream_id - 1;
    CHECK(ferry::check_launch_info(all_bad) == ArgsError::none);
}

TEST_CASE("add_launch checks the info before the args, and a failure records nothing",
          "[kernel][plan]") {
    LaunchPlan plan;
    KernelArgs empty;
    LaunchInfo no_dim = valid_info();
    no_dim.block_dim = 0;
    CHECK(plan.add_launch(no_dim, std::move(empty)) == ArgsError::block_dim_zero);
    CHECK(plan.add_launch(valid_info(), std::move(empty)) == ArgsError::empty_args);

    KernelArgs failed;
    REQUIRE(failed.append(std::uint64_t{1}) == GraphStatus::success);
    REQUIRE(failed.append(CustomDataBlock{nullptr, 4}) == GraphStatus::failed);
    CHECK(plan.add_launch(valid_info(), std::move(failed)) == ArgsError::block_data_null);
    CHECK(failed.valid()); // NOLINT(bugprone-use-after-move): untouched by the failed add_launch
    CHECK(failed.slot_count() == 1);

    KernelArgs good(std::uint64_t{1});
    LaunchInfo no_stream = valid_info();
    no_stream.stream_id = ferry::k_invalid_stream_id;
    CHECK(plan.add_launch(no_stream, std::move(good)) == ArgsError::stream_id_invalid);
    CHECK(good.slot_count() == 1); // NOLINT(bugprone-use-after-move)

    KernelArgs moved(std::uint64_t{1});
    KernelArgs taker = std::move(moved);
    CHECK(plan.add_launch(valid_info(), std::move(moved)) == ArgsError::moved_from);
    CHECK(plan.launch_count() == 0);
}

TEST_CASE("add_launch deep-copies name and binary and keeps launches in order", "[kernel][plan]") {
    LaunchPlan plan;
    std::string name = "first";
    std::array<std::byte, 3> bin{std::byte{9}, std::byte{8}, std::byte{7}};
    const std::uint16_t block = 0xABCD;
    KernelArgs a(ferry::InputAddr{0, nullptr}, CustomDataBlock{&block, sizeof block});
    REQUIRE(plan.add_launch({name.c_str(), bin.data(), bin.size(), 4, 2}, std::move(a)) ==
            ArgsError::none);
    CHECK_FALSE(a.valid()); // NOLINT(bugprone-use-after-move): the plan took the content
    name = "XXXXX";
    bin[0] = std::byte{0};
    REQUIRE(plan.add_launch(valid_info("second"), KernelArgs(std::uint64_t{5})) == ArgsError::none);
    REQUIRE(plan.launch_count() == 2);
    const auto& first = plan.launches()[0];
    CHECK(first.kernel_name == "first");
    CHECK(first.kernel_bin == std::vector<std::byte>{std::byte{9}, std::byte{8}, std::byte{7}});
    CHECK(first.block_dim == 4);
    CHECK(first.stream_id == 2);
    CHECK(first.args.slots.size() == 2);
    CHECK(first.args.blocks.size() == 1);
    CHECK(plan.launches()[1].kernel_name == "second");
    CHECK(plan.launches()[1].args.slots == std::vector<std::uint64_t>{5});
}

TEST_CASE("malloc_workspace: size 0 fails, indices count from 0", "[kernel][plan][workspace]") {
    LaunchPlan plan;
    ArgsError why = ArgsError::none;
    CHECK(plan.malloc_workspace(0, &why).status() == ferry::Status::invalid_param);
    CHECK(why == ArgsError::workspace_size_zero);
    const auto w0 = plan.malloc_workspace(100, &why);
    CHECK(why == ArgsError::none);
    const auto w1 = plan.malloc_workspace(7);
    REQUIRE(w0.has_value());
    REQUIRE(w1.has_value());
    CHECK(w0->index == 0);
    CHECK(w1->index == 1);
    CHECK(plan.workspaces().size() == 2);
    CHECK(plan.workspaces()[0] == 100);
    CHECK(plan.workspaces()[1] == 7);

    CHECK(plan.add_launch(valid_info(), KernelArgs(*w1)) == ArgsError::none);
    CHECK(plan.add_launch(valid_info(), KernelArgs(ferry::WorkspaceAddr{2, nullptr})) ==
          ArgsError::unknown_workspace);
    CHECK(plan.launch_count() == 1);
}

TEST_CASE("a plan for an offline target rejects args carrying a block", "[kernel][plan]") {
    for (const auto target : {ferry::ModelTarget::omc, ferry::ModelTarget::om2}) {
        LaunchPlan plan(target);
        CHECK(plan.target() == target);
        const std::uint8_t byte = 1;
        KernelArgs with_block(CustomDataBlock{&byte, 1});
        CHECK(plan.add_launch(valid_info(), std::move(with_block)) == ArgsError::offline_target);
        CHECK(with_block.block_count() == 1); // NOLINT(bugprone-use-after-move): untouched
        CHECK(plan.add_launch(valid_info(), KernelArgs(std::uint64_t{1})) == ArgsError::none);
        CHECK(plan.launch_count() == 1);
    }
    // With the target as the traits parameter the block cannot even be appended (kernel_args.cpp);
    // the plan's args type follows the traits.
    STATIC_REQUIRE(std::is_same_v<ferry::BasicLaunchPlan<ferry::OmcModel>::args_type,
                                  ferry::BasicKernelArgs<ferry::OmcModel>>);
    ferry::BasicLaunchPlan<ferry::OmcModel> omc;
    CHECK(omc.target() == ferry::ModelTarget::omc);
    CHECK(omc.add_launch(valid_info(), ferry::BasicKernelArgs<ferry::OmcModel>(1)) ==
          ArgsError::none);
}
