// CANN's way 3 (docs/cann-contract/kernel-args.md#block-length-on-the-kernel-side) — a length slot:
// the data carries no length of its own, so the host appends AppendArg(uint64_t{size}) right after
// the block and the kernel receives the length as one more argument (one more 8-byte slot).
//
// The kernel computes y = x * tileNum + blockNum. A launch whose length slot does not match
// sizeof(MyParams) is rejected by the kernel, which then writes nothing.
#include "kernel_example.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exe_graph/runtime/annotated_args_context.h>
#include <utility>
#include <vector>

namespace {

struct MyParams { // shared by host and kernel
    uint32_t tileNum;
    uint32_t blockNum;
};

constexpr std::size_t k_n = 8;
std::atomic<int> g_rejected{0};

// extern "C" __global__ __aicore__ void my_kernel(GM_ADDR x, GM_ADDR params, uint64_t paramsLen,
//                                                 GM_ADDR y)
void my_kernel(const ferry::KernelContext& ctx) {
    const auto paramsLen = ctx.slot<uint64_t>(2); // by value: no dereference
    if (paramsLen != sizeof(MyParams)) {
        g_rejected.fetch_add(1);
        return;
    }
    const auto params = ferry::block_at(ctx, 1).read<MyParams>();
    const auto* x = ctx.pointer<const uint32_t>(0);
    auto* y = ctx.pointer<uint32_t>(3);
    for (std::size_t i = 0; i < k_n; ++i) {
        y[i] = x[i] * params.tileNum + params.blockNum;
    }
}

// The host side, as in CANN's call example; `length` is what goes into the length slot.
bool add_my_launch(ferry::LaunchPlan& plan, const uint32_t* input, uint32_t* output,
                   uint64_t length) {
    MyParams params{8U, 3U};
    gert::AnnotatedKernelArgs args;
    if (args.AppendArg(gert::InputAddr{0U, input}) != ge::GRAPH_SUCCESS ||
        args.AppendArg(gert::CustomDataBlock{&params, sizeof(params)}) != ge::GRAPH_SUCCESS ||
        args.AppendArg(uint64_t{length}) != ge::GRAPH_SUCCESS || // the length slot
        args.AppendArg(gert::OutputAddr{0U, output}) != ge::GRAPH_SUCCESS) {
        return false;
    }
    // 4 slots: input address, params address, params length, output address.
    return args.slot_count() == 4 && plan.add_launch(example::launch_info("my_kernel"),
                                                     std::move(args)) == ferry::ArgsError::none;
}

std::vector<uint32_t> run(ferry::Runtime& rt, const uint32_t* input, uint64_t length) {
    uint32_t* output = example::device_copy(rt, std::vector<uint32_t>(k_n, 0xFFFFFFFFU));
    ferry::LaunchPlan plan;
    if (!add_my_launch(plan, input, output, length)) {
        example::die("append");
    }
    example::load_and_run(rt, plan);
    return example::host_copy(rt, output, k_n);
}

} // namespace

int main() {
    ferry::Runtime& rt = example::boot();
    example::register_kernel(rt, "my_kernel", my_kernel);
    const std::vector<uint32_t> x{1, 2, 3, 4, 5, 6, 7, 8};
    const uint32_t* input = example::device_copy(rt, x);

    const auto y = run(rt, input, sizeof(MyParams));
    for (std::size_t i = 0; i < k_n; ++i) {
        if (y[i] != x[i] * 8U + 3U) {
            example::die("kernel output");
        }
    }
    if (run(rt, input, sizeof(MyParams) + 1) != std::vector<uint32_t>(k_n, 0xFFFFFFFFU)) {
        example::die("a wrong length slot was not rejected");
    }
    if (g_rejected.load() != 1) {
        example::die("the kernel did not reject the wrong length");
    }
    std::printf("length_slot: y = x * 8 + 3; a wrong length slot was rejected by the kernel\n");
    return 0;
}
