// CANN's way 1 (docs/cann-contract/kernel-args.md#block-length-on-the-kernel-side) — fixed-length
// data: host and kernel share one struct definition, and the kernel recovers the length as
// sizeof(struct), checking the struct's own totalLength first.
//
// The kernel multiplies 8 inputs by tileNum. A tiling whose totalLength is wrong is rejected by
// the kernel, which then writes nothing: the example runs both cases and checks both outcomes.
#include "kernel_example.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exe_graph/runtime/annotated_args_context.h>
#include <utility>
#include <vector>

namespace {

struct MyTiling {         // shared by host and kernel: same header, same options
    uint32_t totalLength; // the data's total length, checked by the kernel
    uint32_t tileNum;
};

constexpr std::size_t k_n = 8;
std::atomic<int> g_rejected{0};

// extern "C" __global__ __aicore__ void my_kernel(GM_ADDR x, GM_ADDR tiling, GM_ADDR y)
void my_kernel(const ferry::KernelContext& ctx) {
    const auto* x = ctx.pointer<const float>(0);
    const MyTiling& tiling = ferry::block_at(ctx, 1).as<MyTiling>(); // slot 2: the device address
    if (tiling.totalLength != static_cast<uint32_t>(sizeof(MyTiling))) {
        g_rejected.fetch_add(1);
        return; // check the length before reading anything else
    }
    auto* y = ctx.pointer<float>(2);
    for (std::size_t i = 0; i < k_n; ++i) {
        y[i] = x[i] * static_cast<float>(tiling.tileNum);
    }
}

// The host side, as in CANN's call example.
ge::graphStatus add_my_launch(ferry::LaunchPlan& plan, const float* input, float* output,
                              MyTiling tiling) {
    gert::AnnotatedKernelArgs args;
    if (args.AppendArg(gert::InputAddr{0U, input}) != ge::GRAPH_SUCCESS ||
        args.AppendArg(gert::CustomDataBlock{&tiling, sizeof(tiling)}) != ge::GRAPH_SUCCESS ||
        args.AppendArg(gert::OutputAddr{0U, output}) != ge::GRAPH_SUCCESS) {
        return ge::GRAPH_FAILED;
    }
    tiling.tileNum = 0; // the block was deep-copied: this does not reach the kernel
    // args occupy 3 slots; the 2nd holds the tiling's device address.
    return plan.add_launch(example::launch_info("my_kernel"), std::move(args)) ==
                   ferry::ArgsError::none
               ? ge::GRAPH_SUCCESS
               : ge::GRAPH_FAILED;
}

} // namespace

int main() {
    ferry::Runtime& rt = example::boot();
    example::register_kernel(rt, "my_kernel", my_kernel);
    const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
    const float* input = example::device_copy(rt, x);
    float* output = example::device_copy(rt, std::vector<float>(k_n, -1.0F));

    ferry::LaunchPlan good;
    if (add_my_launch(good, input, output, {static_cast<uint32_t>(sizeof(MyTiling)), 8U}) !=
        ge::GRAPH_SUCCESS) {
        example::die("append");
    }
    example::load_and_run(rt, good);
    const auto y = example::host_copy(rt, output, k_n);
    for (std::size_t i = 0; i < k_n; ++i) {
        if (y[i] != x[i] * 8.0F) {
            example::die("kernel output");
        }
    }

    float* untouched = example::device_copy(rt, std::vector<float>(k_n, -1.0F));
    ferry::LaunchPlan bad;
    if (add_my_launch(bad, input, untouched, {static_cast<uint32_t>(sizeof(MyTiling)) + 4U, 8U}) !=
        ge::GRAPH_SUCCESS) {
        example::die("append (bad tiling)");
    }
    example::load_and_run(rt, bad);
    for (const float v : example::host_copy(rt, untouched, k_n)) {
        if (v != -1.0F) {
            example::die("a kernel wrote output for a rejected tiling");
        }
    }
    if (g_rejected.load() != 1) {
        example::die("the kernel did not reject the wrong totalLength");
    }
    std::printf("fixed_struct: y = x * %u; a wrong totalLength was rejected by the kernel\n", 8U);
    return 0;
}
