// A small "device" pipeline on ferry's emulated CANN runtime, written the way a CANN program is:
// set a device, allocate device memory, copy the input in, launch a kernel with block_dim 8 on a
// stream, copy the result out, synchronize, verify — with the profiler on, writing a Chrome trace
// (open it at https://ui.perfetto.dev or chrome://tracing).
//
//   device_pipeline [trace.json]      exit status 0 when the result is correct

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ferry/runtime.hpp>
#include <numeric>
#include <string>
#include <vector>

namespace {

constexpr std::uint32_t k_blocks = 8;
constexpr std::size_t k_elements = 1 << 16;

// The "device code": y[i] = a * x[i] + b for this block's slice. Slots: x, y (device addresses),
// element count, a, b (values) — the layout ferry/kernel's KernelArgs would build.
void saxpb(const ferry::KernelContext& k) {
    const float* x = k.pointer<const float>(0);
    float* y = k.pointer<float>(1);
    const auto n = k.slots[2];
    const auto a = k.slot<float>(3);
    const auto b = k.slot<float>(4);
    const std::uint64_t per_block = (n + k.block_dim - 1) / k.block_dim;
    const std::uint64_t begin = k.block_idx * per_block;
    const std::uint64_t end = std::min<std::uint64_t>(n, begin + per_block);
    for (std::uint64_t i = begin; i < end; ++i) {
        y[i] = a * x[i] + b;
    }
}

std::uint64_t float_slot(float value) {
    std::uint64_t slot = 0;
    std::memcpy(&slot, &value, sizeof value);
    return slot;
}

int fail(const char* what, ferry::Status s) {
    std::fprintf(stderr, "device_pipeline: %s failed: %s (%d)\n", what, ferry::name_of(s),
                 ferry::to_code(s));
    return 1;
}

} // namespace

int main(int argc, char** argv) {
    const std::string trace_path = argc > 1 ? argv[1] : "device_pipeline_trace.json";
    using ferry::Status;
    if (const Status s = ferry::initialize(); s != Status::ok) {
        return fail("initialize", s);
    }
    ferry::Runtime& rt = *ferry::Runtime::instance().value();
    if (const Status s = rt.set_device(0); s != Status::ok) {
        return fail("set_device", s);
    }
    (void)ferry::profiler().start();

    std::vector<float> x(k_elements);
    std::iota(x.begin(), x.end(), 0.0F);
    std::vector<float> y(k_elements, -1.0F);
    const std::size_t bytes = k_elements * sizeof(float);

    auto dx = rt.malloc(bytes);
    auto dy = rt.malloc(bytes);
    auto stream = rt.create_stream();
    if (!dx || !dy || !stream) {
        return fail("allocation", !dx ? dx.status() : !dy ? dy.status() : stream.status());
    }
    const std::vector<std::uint64_t> args{reinterpret_cast<std::uintptr_t>(*dx),
                                          reinterpret_cast<std::uintptr_t>(*dy), k_elements,
                                          float_slot(2.0F), float_slot(1.0F)};
    Status s =
        rt.memcpy_async(*dx, bytes, x.data(), bytes, ferry::MemcpyKind::host_to_device, *stream);
    if (s == Status::ok) {
        s = rt.launch(&saxpb, k_blocks, args, *stream, "saxpb");
    }
    if (s == Status::ok) {
        s = rt.memcpy_async(y.data(), bytes, *dy, bytes, ferry::MemcpyKind::device_to_host,
                            *stream);
    }
    if (s == Status::ok) {
        s = rt.synchronize_stream(*stream);
    }
    if (s != Status::ok) {
        return fail("pipeline", s);
    }

    std::size_t wrong = 0;
    for (std::size_t i = 0; i < k_elements; ++i) {
        wrong += y[i] != 2.0F * x[i] + 1.0F;
    }
    (void)ferry::profiler().stop();
    if (const Status w = ferry::profiler().write_chrome_trace(trace_path); w != Status::ok) {
        return fail("writing the trace", w);
    }
    std::printf("y = 2x + 1 over %zu floats in %u blocks: %zu wrong; %zu trace events in %s\n",
                k_elements, k_blocks, wrong, ferry::profiler().events().size(), trace_path.c_str());

    (void)rt.destroy_stream(*stream);
    (void)rt.free(*dx);
    (void)rt.free(*dy);
    (void)rt.reset_device(0);
    (void)ferry::finalize();
    return wrong == 0 ? 0 : 1;
}
