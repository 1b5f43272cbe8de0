// The compat header <exe_graph/runtime/annotated_args_context.h>: CANN's spellings map onto
// ferry/kernel, and CANN's three call examples
// (docs/cann-contract/kernel-args.md#block-length-on-the-kernel-side) work as written, with kernels
// that read their block through the raw slot address exactly as CANN's device code does.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <exe_graph/runtime/annotated_args_context.h>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

namespace {
template <typename T>
concept HasGetStatus = requires(T t) {
    t.GetStatus();
};
template <typename T>
concept HasGetImpl = requires(T t) {
    t.GetImpl();
};
} // namespace

TEST_CASE("compat names map onto ferry's types", "[kernel][compat]") {
    STATIC_REQUIRE(ge::GRAPH_SUCCESS == 0U);
    STATIC_REQUIRE(ge::GRAPH_FAILED == 0xFFFFFFFFU);
    STATIC_REQUIRE(std::is_same_v<ge::graphStatus, std::uint32_t>);
    STATIC_REQUIRE(std::is_same_v<gert::CustomDataBlock, ferry::CustomDataBlock>);
    STATIC_REQUIRE(sizeof(gert::CustomDataBlock) == 24);
    STATIC_REQUIRE(std::is_same_v<gert::InputAddr, ferry::InputAddr>);
    STATIC_REQUIRE(std::is_same_v<gert::AnnotatedKernelLaunchInfo, ferry::LaunchInfo>);
    STATIC_REQUIRE(std::is_base_of_v<ferry::KernelArgs, gert::AnnotatedKernelArgs>);
    // docs/cann-contract/kernel-args.md#append-rules: CANN's tests assert the class exposes neither
    // GetStatus() nor GetImpl().
    STATIC_REQUIRE_FALSE(HasGetStatus<gert::AnnotatedKernelArgs>);
    STATIC_REQUIRE_FALSE(HasGetImpl<gert::AnnotatedKernelArgs>);
}

TEST_CASE("AppendArg returns GRAPH_SUCCESS / GRAPH_FAILED under ferry's rules",
          "[kernel][compat]") {
    const std::uint64_t data = 1;
    gert::AnnotatedKernelArgs args;
    CHECK(args.AppendArg(gert::InputAddr{0U, &data}) == ge::GRAPH_SUCCESS);
    CHECK(args.AppendArg(gert::OutputAddr{0x80000000U, &data}) == ge::GRAPH_FAILED);
    CHECK(args.AppendArg(std::uint64_t{3}) == ge::GRAPH_FAILED); // sticky, no CANN quirk
    gert::AnnotatedKernelArgs blocks;
    CHECK(blocks.AppendArg(gert::CustomDataBlock{&data, 0}) == ge::GRAPH_FAILED);
    CHECK(blocks.slot_count() == 0);
    gert::AnnotatedKernelArgs variadic(gert::WorkspaceAddr{1U, nullptr}, std::uint64_t{2},
                                       gert::CustomDataBlock{&data, sizeof data});
    CHECK(variadic.status() == ferry::GraphStatus::success);
    gert::AnnotatedKernelArgs copy = variadic;
    gert::AnnotatedKernelArgs moved = std::move(copy);
    CHECK(moved.slot_count() == 3);
    CHECK(copy.AppendArg(std::uint64_t{1}) == ge::GRAPH_FAILED); // NOLINT(bugprone-use-after-move)
}

namespace {
// ---- CANN's three shapes, host and kernel sharing these definitions ----
struct MyTiling {
    uint32_t totalLength;
    uint32_t tileNum;
};
constexpr uint32_t kTableMagic = 0x5A5A0000U;
constexpr uint32_t kMaxTableLen = 16U;
struct MyTableHeader {
    uint32_t magic;
    uint32_t tableLen;
};
struct MyParams {
    uint32_t tileNum;
    uint32_t blockNum;
};
const char stub_tiling = 0;
const char stub_table = 0;
const char stub_params = 0;

// Each kernel writes what it read to y[0] (and nothing when it rejects its block).
void register_example_kernels(ferry::Runtime& rt) {
    kernel_test::register_kernel(
        rt, &stub_tiling, "tiling_kernel", [](const ferry::KernelContext& k) {
            const auto* tilingData = k.pointer<const MyTiling>(1);
            if (tilingData->totalLength != static_cast<uint32_t>(sizeof(MyTiling))) {
                return;
            }
            k.pointer<uint32_t>(2)[0] = tilingData->tileNum;
        });
    kernel_test::register_kernel(
        rt, &stub_table, "table_kernel", [](const ferry::KernelContext& k) {
            const auto* header = k.pointer<const MyTableHeader>(1);
            if ((header->magic != kTableMagic) || (header->tableLen > kMaxTableLen)) {
                return;
            }
            const auto* values = reinterpret_cast<const int32_t*>(header + 1);
            k.pointer<int32_t>(2)[0] = std::accumulate(values, values + header->tableLen, 0);
        });
    kernel_test::register_kernel(
        rt, &stub_params, "params_kernel", [](const ferry::KernelContext& k) {
            const auto* paramsData = k.pointer<const MyParams>(1);
            if (k.slot<uint64_t>(2) != sizeof(MyParams)) {
                return;
            }
            k.pointer<uint32_t>(3)[0] = paramsData->tileNum * 100 + paramsData->blockNum;
        });
}

// Loads the plan (its one upload), runs it and waits for it.
void run(ferry::Runtime& rt, const ferry::LaunchPlan& plan) {
    auto loaded = ferry::load(rt, plan);
    REQUIRE(loaded.has_value());
    REQUIRE(loaded->execute(rt) == ferry::Status::ok);
    REQUIRE(rt.synchronize_stream(nullptr) == ferry::Status::ok);
}
// Launches `name` once with `args` and returns y[0], which starts as 0xFFFFFFFF (untouched).
uint32_t launch_once(ferry::Runtime& rt, uint32_t* y, const char* name,
                     gert::AnnotatedKernelArgs&& args) {
    REQUIRE(rt.memset(y, sizeof *y, 0xFF, sizeof *y) == ferry::Status::ok);
    ferry::LaunchPlan plan;
    REQUIRE(plan.add_launch(kernel_test::launch_info(name), std::move(args)) ==
            ferry::ArgsError::none);
    run(rt, plan);
    uint32_t out = 0;
    REQUIRE(rt.memcpy(&out, sizeof out, y, sizeof out, ferry::MemcpyKind::device_to_host) ==
            ferry::Status::ok);
    return out;
}

struct ExampleFixture {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    uint32_t* y = static_cast<uint32_t*>(rt.malloc(sizeof(uint32_t)).value());
    const uint32_t x = 0;
    ExampleFixture() { register_example_kernels(rt); }
};
} // namespace

TEST_CASE_METHOD(ExampleFixture, "CANN call example 1: fixed struct",
                 "[kernel][compat][concurrency]") {
    for (const uint32_t length : {uint32_t{sizeof(MyTiling)}, uint32_t{sizeof(MyTiling) + 1}}) {
        MyTiling tiling{length, 8U};
        gert::AnnotatedKernelArgs args;
        REQUIRE(
            (args.AppendArg(gert::InputAddr{0U, &x}) == ge::GRAPH_SUCCESS &&
             args.AppendArg(gert::CustomDataBlock{&tiling, sizeof(tiling)}) == ge::GRAPH_SUCCESS &&
             args.AppendArg(gert::OutputAddr{0U, y}) == ge::GRAPH_SUCCESS));
        CHECK(launch_once(rt, y, "tiling_kernel", std::move(args)) ==
              (length == sizeof(MyTiling) ? 8U : 0xFFFFFFFFU));
    }
}

TEST_CASE_METHOD(ExampleFixture, "CANN call example 2: self-describing header",
                 "[kernel][compat][concurrency]") {
    const std::vector<int32_t> table = {1, 2, 3, 4, 5, 6};
    for (const uint32_t magic : {kTableMagic, kTableMagic + 1}) {
        std::vector<uint8_t> blob(sizeof(MyTableHeader) + table.size() * sizeof(int32_t), 0U);
        auto* const header = reinterpret_cast<MyTableHeader*>(blob.data());
        header->magic = magic;
        header->tableLen = static_cast<uint32_t>(table.size());
        std::copy(table.begin(), table.end(), reinterpret_cast<int32_t*>(header + 1));
        gert::AnnotatedKernelArgs args;
        REQUIRE(
            (args.AppendArg(gert::InputAddr{0U, &x}) == ge::GRAPH_SUCCESS &&
             args.AppendArg(gert::CustomDataBlock{blob.data(), blob.size()}) == ge::GRAPH_SUCCESS &&
             args.AppendArg(gert::OutputAddr{0U, y}) == ge::GRAPH_SUCCESS));
        CHECK(launch_once(rt, y, "table_kernel", std::move(args)) ==
              (magic == kTableMagic ? 21U : 0xFFFFFFFFU));
    }
}

TEST_CASE_METHOD(ExampleFixture, "CANN call example 3: length slot",
                 "[kernel][compat][concurrency]") {
    for (const uint64_t length : {uint64_t{sizeof(MyParams)}, uint64_t{sizeof(MyParams) - 1}}) {
        MyParams params{8U, 8U};
        gert::AnnotatedKernelArgs args;
        REQUIRE(
            (args.AppendArg(gert::InputAddr{0U, &x}) == ge::GRAPH_SUCCESS &&
             args.AppendArg(gert::CustomDataBlock{&params, sizeof(params)}) == ge::GRAPH_SUCCESS &&
             args.AppendArg(uint64_t{length}) == ge::GRAPH_SUCCESS &&
             args.AppendArg(gert::OutputAddr{0U, y}) == ge::GRAPH_SUCCESS));
        CHECK(args.slot_count() == 4);
        CHECK(launch_once(rt, y, "params_kernel", std::move(args)) ==
              (length == sizeof(MyParams) ? 808U : 0xFFFFFFFFU));
    }
}
