// Shared scaffolding of the three CustomDataBlock examples (CANN's call examples,
// docs/cann-contract/kernel-args.md#block-length-on-the-kernel-side): boot the emulated runtime,
// register a host kernel under a name, build the plan, load it (blocks are uploaded here, once),
// execute it and read the output back.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <ferry/kernel.hpp>
#include <ferry/runtime.hpp>
#include <optional>
#include <utility>
#include <vector>

namespace example {

// Stands in for the kernel's device binary (any registered magic carries host kernels).
inline constexpr std::array<std::byte, 16> k_binary{};

[[noreturn]] inline void die(const char* what) {
    std::fprintf(stderr, "example failed: %s\n", what);
    std::exit(1);
}

inline ferry::Runtime& boot() {
    auto rt = ferry::Runtime::instance();
    if (!rt || failed((*rt)->set_device(0))) {
        die("runtime boot");
    }
    return **rt;
}

inline void register_kernel(ferry::Runtime& rt, const char* name, ferry::HostKernel body) {
    static const char stub = 0; // one program and one stub per example process
    const auto program =
        rt.register_program({ferry::k_magic_elf, 0, k_binary.data(), k_binary.size()});
    if (!program ||
        failed(rt.register_kernel(*program, {&stub, name, std::nullopt, std::move(body)}))) {
        die("kernel registration");
    }
}

inline ferry::LaunchInfo launch_info(const char* name) {
    return {name, k_binary.data(), k_binary.size(), 1U, 0U};
}

// Device buffers for the kernel's input and output.
template <typename T>
T* device_copy(ferry::Runtime& rt, const std::vector<T>& host) {
    const std::size_t bytes = host.size() * sizeof(T);
    auto p = rt.malloc(bytes);
    if (!p || failed(rt.memcpy(*p, bytes, host.data(), bytes, ferry::MemcpyKind::host_to_device))) {
        die("device buffer");
    }
    return static_cast<T*>(*p);
}

template <typename T>
std::vector<T> host_copy(ferry::Runtime& rt, const T* device, std::size_t n) {
    std::vector<T> host(n);
    if (failed(rt.memcpy(host.data(), n * sizeof(T), device, n * sizeof(T),
                         ferry::MemcpyKind::device_to_host))) {
        die("read back");
    }
    return host;
}

// Loads the plan (the one upload of its blocks), runs it once and waits for it.
inline void load_and_run(ferry::Runtime& rt, const ferry::LaunchPlan& plan) {
    auto loaded = ferry::load(rt, plan);
    if (!loaded || failed(loaded->execute(rt)) || failed(rt.synchronize_stream(nullptr))) {
        die("load/execute");
    }
}

} // namespace example
