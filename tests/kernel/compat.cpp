// The compat header <exe_graph/runtime/annotated_args_context.h>: CANN's spellings map onto
// ferry/kernel, and CANN's three call examples
// (docs/cann-contract/kernel-args.md#block-length-on-the-kernel-side) compile unchanged against
// gert::AnnotatedArgsContext: their lowering bodies are copied as written (comments translated),
// the context is built over runtime buffers (docs/kernel-args.md#lowering-context), and kernels
// read their block through the raw slot address exactly as CANN's device code does.
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
// ---- Definitions shared by host and kernel, as in CANN's three examples ----
struct MyTiling {
    uint32_t totalLength; // the data's total length, checked by the kernel
    uint32_t tileNum;
};

constexpr uint32_t kTableMagic = 0x5A5A0000U;
constexpr uint32_t kMaxTableLen = 16U; // the most entries; the host must not exceed it
struct MyTableHeader {
    uint32_t magic;    // lets the kernel check the layout
    uint32_t tableLen; // entries in the variable part
};

struct MyParams { // shared by host and device
    uint32_t tileNum;
    uint32_t blockNum;
};

// ---- CANN's lowering code: each body below is the example's, unchanged ----
// clang-format off

// Example 1: fixed-length data, one struct shared by host and kernel.
ge::graphStatus LowerFixedStruct(gert::AnnotatedArgsContext &ctx,
                                 const gert::AnnotatedKernelLaunchInfo &launch_info) {
const auto *input = ctx.GetInputTensor(0U);
const auto *output = ctx.GetOutputTensor(0U);
if ((input == nullptr) || (output == nullptr)) {
  return ge::GRAPH_FAILED;
}

MyTiling tiling{static_cast<uint32_t>(sizeof(MyTiling)), 8U};
gert::AnnotatedKernelArgs args;
if (args.AppendArg(gert::InputAddr{0U, input->GetAddr()}) != ge::GRAPH_SUCCESS ||
    args.AppendArg(gert::CustomDataBlock{&tiling, sizeof(tiling)}) != ge::GRAPH_SUCCESS ||
    args.AppendArg(gert::OutputAddr{0U, output->GetAddr()}) != ge::GRAPH_SUCCESS) {
  return ge::GRAPH_FAILED;
}
// args take 3 8-byte slots in this order; the 2nd holds the tiling data's device address.
return ctx.AddLaunch(launch_info, std::move(args));
}

// Example 2: variable-length data with a self-describing header.
ge::graphStatus LowerTable(gert::AnnotatedArgsContext &ctx,
                           const gert::AnnotatedKernelLaunchInfo &launch_info) {
const auto *input = ctx.GetInputTensor(0U);
if (input == nullptr) {
  return ge::GRAPH_FAILED;
}

const std::vector<int32_t> table = {1, 2, 3, 4, 5, 6};  // entry count set by the business, fixed at compile time
std::vector<uint8_t> blob(sizeof(MyTableHeader) + table.size() * sizeof(int32_t), 0U);
auto *const header = reinterpret_cast<MyTableHeader *>(blob.data());
header->magic = kTableMagic;
header->tableLen = static_cast<uint32_t>(table.size());
std::copy(table.begin(), table.end(), reinterpret_cast<int32_t *>(header + 1));

gert::AnnotatedKernelArgs args;
if (args.AppendArg(gert::InputAddr{0U, input->GetAddr()}) != ge::GRAPH_SUCCESS ||
    args.AppendArg(gert::CustomDataBlock{blob.data(), blob.size()}) != ge::GRAPH_SUCCESS) {
  return ge::GRAPH_FAILED;
}
return ctx.AddLaunch(launch_info, std::move(args));
}

// Example 3: a uint64_t length slot appended after the block.
ge::graphStatus LowerLengthSlot(gert::AnnotatedArgsContext &ctx,
                                const gert::AnnotatedKernelLaunchInfo &launch_info) {
const auto *input = ctx.GetInputTensor(0U);
const auto *output = ctx.GetOutputTensor(0U);
if ((input == nullptr) || (output == nullptr)) {
  return ge::GRAPH_FAILED;
}

MyParams params{8U, 8U};
gert::AnnotatedKernelArgs args;
if (args.AppendArg(gert::InputAddr{0U, input->GetAddr()}) != ge::GRAPH_SUCCESS ||
    args.AppendArg(gert::CustomDataBlock{&params, sizeof(params)}) != ge::GRAPH_SUCCESS ||
    args.AppendArg(uint64_t{sizeof(params)}) != ge::GRAPH_SUCCESS ||  // length slot
    args.AppendArg(gert::OutputAddr{0U, output->GetAddr()}) != ge::GRAPH_SUCCESS) {
  return ge::GRAPH_FAILED;
}
// 4 slots: input address, params address, params length, output address.
return ctx.AddLaunch(launch_info, std::move(args));
}
// clang-format on

// ---- The kernels: CANN's device code as host kernels, recording what they read ----
struct Seen {
    const void* x = nullptr;
    bool accepted = false;
    std::vector<uint32_t> fields;  // the struct fields the kernel read, in declaration order
    std::vector<int32_t> values;   // example 2: the table the kernel read
    uint64_t params_len = 0;       // example 3: the length slot
};

const char stub_tiling = 0;
const char stub_table = 0;
const char stub_params = 0;

// my_kernel(GM_ADDR x, GM_ADDR tiling, GM_ADDR y)
void tiling_kernel(const ferry::KernelContext& k, Seen& seen) {
    seen.x = k.pointer<const void>(0);
    const auto* const tilingData = k.pointer<const MyTiling>(1);
    if (tilingData->totalLength != static_cast<uint32_t>(sizeof(MyTiling))) {
        return;
    }
    seen.accepted = true;
    seen.fields = {tilingData->totalLength, tilingData->tileNum};
    k.pointer<uint32_t>(2)[0] = tilingData->tileNum;
}

// my_kernel(GM_ADDR x, GM_ADDR table)
void table_kernel(const ferry::KernelContext& k, Seen& seen) {
    seen.x = k.pointer<const void>(0);
    const auto* const header = k.pointer<const MyTableHeader>(1);
    if ((header->magic != kTableMagic) || (header->tableLen > kMaxTableLen)) {
        return;
    }
    seen.accepted = true;
    seen.fields = {header->magic, header->tableLen};
    const auto* const values = reinterpret_cast<const int32_t*>(header + 1);
    seen.values.assign(values, values + header->tableLen);
}

// my_kernel(GM_ADDR x, GM_ADDR params, uint64_t paramsLen, GM_ADDR y)
void params_kernel(const ferry::KernelContext& k, Seen& seen) {
    seen.x = k.pointer<const void>(0);
    const auto* const paramsData = k.pointer<const MyParams>(1);
    seen.params_len = k.slot<uint64_t>(2);
    if (seen.params_len != sizeof(MyParams)) {
        return;
    }
    seen.accepted = true;
    seen.fields = {paramsData->tileNum, paramsData->blockNum};
    k.pointer<uint32_t>(3)[0] = paramsData->tileNum * 100 + paramsData->blockNum;
}

// A booted runtime with the three kernels registered, and an input and an output buffer in
// device memory (y starts as 0xFFFFFFFF).
struct LoweringFixture {
    ferry::Runtime& rt = kernel_test::fresh_runtime();
    Seen seen;
    void* x = rt.malloc(sizeof(uint32_t)).value();
    uint32_t* y = static_cast<uint32_t*>(rt.malloc(sizeof(uint32_t)).value());
    ferry::LaunchPlan plan;
    gert::AnnotatedArgsContext ctx{plan, {{x, sizeof(uint32_t)}}, {{y, sizeof(uint32_t)}}};

    LoweringFixture() {
        REQUIRE(rt.memset(y, sizeof *y, 0xFF, sizeof *y) == ferry::Status::ok);
        const std::pair<const char*, void (*)(const ferry::KernelContext&, Seen&)> kernels[] = {
            {"tiling_kernel", tiling_kernel},
            {"table_kernel", table_kernel},
            {"params_kernel", params_kernel}};
        const char* const stubs[] = {&stub_tiling, &stub_table, &stub_params};
        for (std::size_t i = 0; i < 3; ++i) {
            auto* body = kernels[i].second;
            kernel_test::register_kernel(rt, stubs[i], kernels[i].first,
                                         [this, body](const ferry::KernelContext& k) {
                                             body(k, seen);
                                         });
        }
    }

    // Loads the plan (its one upload), runs it, waits; returns y[0].
    uint32_t run() {
        auto loaded = ferry::load(rt, plan);
        REQUIRE(loaded.has_value());
        REQUIRE(loaded->execute(rt) == ferry::Status::ok);
        REQUIRE(rt.synchronize_stream(nullptr) == ferry::Status::ok);
        uint32_t out = 0;
        REQUIRE(rt.memcpy(&out, sizeof out, y, sizeof out, ferry::MemcpyKind::device_to_host) ==
                ferry::Status::ok);
        return out;
    }
};
} // namespace

TEST_CASE_METHOD(LoweringFixture, "CANN call example 1 (fixed struct) runs unchanged",
                 "[kernel][compat][concurrency]") {
    REQUIRE(LowerFixedStruct(ctx, kernel_test::launch_info("tiling_kernel")) ==
            ge::GRAPH_SUCCESS);
    REQUIRE(plan.launch_count() == 1);
    CHECK(plan.launches()[0].args.slots.size() == 3);
    CHECK(run() == 8U);
    CHECK(seen.x == x);
    CHECK(seen.accepted);
    CHECK(seen.fields == std::vector<uint32_t>{sizeof(MyTiling), 8U});
}

TEST_CASE_METHOD(LoweringFixture, "CANN call example 2 (self-describing header) runs unchanged",
                 "[kernel][compat][concurrency]") {
    REQUIRE(LowerTable(ctx, kernel_test::launch_info("table_kernel")) == ge::GRAPH_SUCCESS);
    REQUIRE(plan.launch_count() == 1);
    CHECK(plan.launches()[0].args.slots.size() == 2);
    CHECK(run() == 0xFFFFFFFFU); // this example has no output
    CHECK(seen.x == x);
    CHECK(seen.accepted);
    CHECK(seen.fields == std::vector<uint32_t>{kTableMagic, 6U});
    CHECK(seen.values == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE_METHOD(LoweringFixture, "CANN call example 3 (length slot) runs unchanged",
                 "[kernel][compat][concurrency]") {
    REQUIRE(LowerLengthSlot(ctx, kernel_test::launch_info("params_kernel")) ==
            ge::GRAPH_SUCCESS);
    REQUIRE(plan.launch_count() == 1);
    CHECK(plan.launches()[0].args.slots.size() == 4);
    CHECK(run() == 808U);
    CHECK(seen.x == x);
    CHECK(seen.params_len == sizeof(MyParams));
    CHECK(seen.accepted);
    CHECK(seen.fields == std::vector<uint32_t>{8U, 8U});
}

TEST_CASE_METHOD(LoweringFixture, "the examples refuse a context without their tensors",
                 "[kernel][compat][concurrency]") {
    ferry::LaunchPlan other;
    gert::AnnotatedArgsContext no_output(other, {{x, sizeof(uint32_t)}}, {});
    CHECK(no_output.GetOutputTensor(0U) == nullptr);
    CHECK(LowerFixedStruct(no_output, kernel_test::launch_info("tiling_kernel")) ==
          ge::GRAPH_FAILED);
    CHECK(LowerLengthSlot(no_output, kernel_test::launch_info("params_kernel")) ==
          ge::GRAPH_FAILED);
    gert::AnnotatedArgsContext empty(other, {}, {});
    CHECK(LowerTable(empty, kernel_test::launch_info("table_kernel")) == ge::GRAPH_FAILED);
    CHECK(other.launch_count() == 0);
}

TEST_CASE_METHOD(LoweringFixture, "AddLaunch, MallocWorkSpace and GetStreamId follow CANN",
                 "[kernel][compat][concurrency]") {
    CHECK(ctx.GetStreamId() == 0U);
    CHECK(ctx.GetInputTensor(0U)->GetAddr() == x);
    CHECK(ctx.GetOutputTensor(0U)->GetSize() == sizeof(uint32_t));
    CHECK(ctx.GetInputTensor(1U) == nullptr);

    const gert::WorkspaceAddr none = ctx.MallocWorkSpace(0);
    CHECK((none.index == 0U && none.addr == nullptr));
    CHECK(ctx.MallocWorkSpace(64).index == 0U);
    CHECK(ctx.MallocWorkSpace(32).index == 1U);
    CHECK(plan.workspaces().size() == 2);

    // A failed check: PARAM_INVALID, nothing recorded, the args untouched.
    gert::AnnotatedKernelArgs args(gert::InputAddr{0U, x});
    gert::AnnotatedKernelLaunchInfo no_blocks = kernel_test::launch_info("tiling_kernel", 0);
    CHECK(ctx.AddLaunch(no_blocks, std::move(args)) == ge::PARAM_INVALID);
    CHECK(plan.launch_count() == 0);
    CHECK(args.slot_count() == 1); // NOLINT(bugprone-use-after-move)
    CHECK(ctx.AddLaunch(kernel_test::launch_info("tiling_kernel"), std::move(args)) ==
          ge::GRAPH_SUCCESS);
    CHECK(plan.launch_count() == 1);
}
