// ferry::LoweringContext: a caller-built context over runtime buffers that records launches and
// workspaces into a LaunchPlan (docs/kernel-args.md#lowering-context).
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/kernel/lowering_context.hpp>
#include <utility>

TEST_CASE("the context hands out its tensors by index, nullptr past the end", "[kernel]") {
    std::uint64_t in[2] = {};
    std::uint64_t out = 0;
    ferry::LaunchPlan plan;
    const ferry::LoweringContext ctx(plan, {{&in[0], 8}, {&in[1], 8}}, {{&out, sizeof out}}, 3);
    REQUIRE(ctx.input_count() == 2);
    REQUIRE(ctx.output_count() == 1);
    CHECK(ctx.input(1)->addr == &in[1]);
    CHECK(ctx.output(0)->size == sizeof out);
    CHECK(ctx.input(2) == nullptr);
    CHECK(ctx.output(1) == nullptr);
    CHECK(ctx.stream_id() == 3U);
    CHECK(&ctx.plan() == &plan);
}

TEST_CASE("the context records into its plan with the plan's checks", "[kernel]") {
    const std::byte bin[4] = {};
    std::uint64_t in = 0;
    ferry::LaunchPlan plan;
    ferry::LoweringContext ctx(plan, {{&in, sizeof in}}, {});
    ferry::ArgsError why = ferry::ArgsError::none;
    CHECK_FALSE(ctx.malloc_workspace(0, &why).has_value());
    CHECK(why == ferry::ArgsError::workspace_size_zero);
    const auto ws = ctx.malloc_workspace(16);
    REQUIRE(ws.has_value());
    CHECK(ws->index == 0U);

    ferry::KernelArgs args(ferry::InputAddr{0U, ctx.input(0)->addr}, *ws);
    CHECK(ctx.add_launch({"k", bin, sizeof bin, 0, 0}, std::move(args)) ==
          ferry::ArgsError::block_dim_zero);
    CHECK(plan.launch_count() == 0);
    CHECK(ctx.add_launch({"k", bin, sizeof bin, 1, 0}, std::move(args)) == ferry::ArgsError::none);
    REQUIRE(plan.launch_count() == 1);
    CHECK(plan.launches()[0].args.slots[0] == reinterpret_cast<std::uintptr_t>(&in));
    CHECK(plan.workspaces().size() == 1);
}
