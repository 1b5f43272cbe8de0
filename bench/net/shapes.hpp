#pragma once
// The shapes every bench/net row shares, so that ferry's rows and their baselines move the same
// messages in the same numbers with the same bound on what is in flight.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace ferry::bench::net {

inline constexpr std::uint64_t k_messages = 200'000;       // per repetition, 64-byte rows
inline constexpr std::uint64_t k_stream_bytes = 256 << 20; // per repetition, bandwidth rows
inline constexpr std::uint64_t k_rounds = 2'000;           // per repetition, exchange rows

// A stream of `count` messages of `size` bytes with at most `window` unconsumed: the raw
// baselines' credit window, ferry's channel capacity.
struct StreamShape {
    std::size_t size;
    std::uint64_t count;
    std::uint64_t window;
    bool tag;
    // The raw receiver returns a credit every step() messages consumed.
    [[nodiscard]] std::uint64_t step() const { return window >= 4 ? window / 4 : 1; }
};

// 64-byte messages: 4096 in flight (256 KiB; a window of 256 left raw UCX stalled on credits
// at a fifth of this rate on the bench VM). Bulk: 16 x 64 KiB or 4 x 4 MiB in flight.
inline StreamShape shape_of(std::size_t size, bool tag = false) {
    if (size <= 64) {
        return {size, k_messages, 4096, tag};
    }
    return {size, k_stream_bytes / size, size >= (std::size_t{1} << 20) ? 4U : 16U, tag};
}

// The 1-minute load average now, -1 when unknown. Rows record it after each repetition (counter
// `load_after`; Google Benchmark's context has the load at the start), so that a run on a
// loaded machine says so (tools/bench_net_report.py).
inline double load_1min() noexcept {
    double load[1] = {-1};
    return ::getloadavg(load, 1) == 1 ? load[0] : -1;
}

} // namespace ferry::bench::net
