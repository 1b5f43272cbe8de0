// CANN's way 2 (docs/cann-contract/kernel-args.md#block-length-on-the-kernel-side; recommended for
// variable-length data) — a self-describing header: the block starts with a magic and an entry
// count, the kernel checks both before it reads the variable part.
//
// The kernel adds table[i % tableLen] to each of 8 inputs. Blocks with a wrong magic or with more
// entries than kMaxTableLen are rejected by the kernel, which then writes nothing.
#include "kernel_example.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exe_graph/runtime/annotated_args_context.h>
#include <utility>
#include <vector>

namespace {

constexpr uint32_t kTableMagic = 0x5A5A0000U;
constexpr uint32_t kMaxTableLen = 16U; // the host must not build more entries than this
struct MyTableHeader {
    uint32_t magic;    // lets the kernel check the layout
    uint32_t tableLen; // entries in the variable part
};

constexpr std::size_t k_n = 8;
std::atomic<int> g_rejected{0};

// extern "C" __global__ __aicore__ void my_kernel(GM_ADDR x, GM_ADDR table, GM_ADDR y)
void my_kernel(const ferry::KernelContext& ctx) {
    const ferry::BlockView table = ferry::block_at(ctx, 1);
    const auto& header = table.as<MyTableHeader>();
    if (header.magic != kTableMagic || header.tableLen > kMaxTableLen || header.tableLen == 0) {
        g_rejected.fetch_add(1);
        return;
    }
    // values[0 .. tableLen) follow the header; the view checks the range against the block.
    const auto values = table.array<int32_t>(sizeof(MyTableHeader), header.tableLen);
    const auto* x = ctx.pointer<const int32_t>(0);
    auto* y = ctx.pointer<int32_t>(2);
    for (std::size_t i = 0; i < k_n; ++i) {
        y[i] = x[i] + values[i % header.tableLen];
    }
}

// The host side, as in CANN's call example (plus the output address).
std::vector<uint8_t> make_blob(uint32_t magic, const std::vector<int32_t>& table) {
    std::vector<uint8_t> blob(sizeof(MyTableHeader) + table.size() * sizeof(int32_t), 0U);
    auto* const header = reinterpret_cast<MyTableHeader*>(blob.data());
    header->magic = magic;
    header->tableLen = static_cast<uint32_t>(table.size());
    std::copy(table.begin(), table.end(), reinterpret_cast<int32_t*>(header + 1));
    return blob;
}

bool add_my_launch(ferry::LaunchPlan& plan, const int32_t* input, int32_t* output,
                   std::vector<uint8_t> blob) {
    gert::AnnotatedKernelArgs args;
    if (args.AppendArg(gert::InputAddr{0U, input}) != ge::GRAPH_SUCCESS ||
        args.AppendArg(gert::CustomDataBlock{blob.data(), blob.size()}) != ge::GRAPH_SUCCESS ||
        args.AppendArg(gert::OutputAddr{0U, output}) != ge::GRAPH_SUCCESS) {
        return false;
    }
    blob.clear();
    blob.shrink_to_fit(); // freed right after the append: the plan holds its own copy
    return plan.add_launch(example::launch_info("my_kernel"), std::move(args)) ==
           ferry::ArgsError::none;
}

// Runs one launch into a fresh output filled with -1 and returns the output.
std::vector<int32_t> run(ferry::Runtime& rt, const int32_t* input, std::vector<uint8_t> blob) {
    int32_t* output = example::device_copy(rt, std::vector<int32_t>(k_n, -1));
    ferry::LaunchPlan plan;
    if (!add_my_launch(plan, input, output, std::move(blob))) {
        example::die("append");
    }
    example::load_and_run(rt, plan);
    return example::host_copy(rt, output, k_n);
}

} // namespace

int main() {
    ferry::Runtime& rt = example::boot();
    example::register_kernel(rt, "my_kernel", my_kernel);
    const std::vector<int32_t> x{10, 20, 30, 40, 50, 60, 70, 80};
    const int32_t* input = example::device_copy(rt, x);
    const std::vector<int32_t> table = {1, 2, 3, 4, 5, 6}; // fixed at compile time

    const auto y = run(rt, input, make_blob(kTableMagic, table));
    for (std::size_t i = 0; i < k_n; ++i) {
        if (y[i] != x[i] + table[i % table.size()]) {
            example::die("kernel output");
        }
    }
    const std::vector<int32_t> untouched(k_n, -1);
    if (run(rt, input, make_blob(kTableMagic ^ 1U, table)) != untouched) {
        example::die("a wrong magic was not rejected");
    }
    if (run(rt, input, make_blob(kTableMagic, std::vector<int32_t>(kMaxTableLen + 1, 7))) !=
        untouched) {
        example::die("an oversized table was not rejected");
    }
    if (g_rejected.load() != 2) {
        example::die("the kernel did not reject exactly the two bad headers");
    }
    std::printf("self_describing_header: y = x + table; wrong magic and oversized table "
                "rejected by the kernel\n");
    return 0;
}
