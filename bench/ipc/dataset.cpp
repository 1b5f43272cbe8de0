// Data-set throughput (bytes per second) at 64 KiB and 4 MiB per message:
//   dataset/memcpy/S  one memcpy of S bytes per message, one process, the same source and
//                     destination each time: the least work a copying transport does per
//                     message (the baseline of the copying path's ≥ 0.8x target). Both
//                     buffers start on a page: from malloc's 16-byte-aligned blocks the same
//                     memcpy ran at 1.7 GB/s instead of 40 GB/s at 64 KiB on the bench VM
//                     (glibc's `rep movsb` on that AMD CPU with source and destination 16 bytes
//                     apart modulo 64), a baseline far too easy to beat.
// k_dataset_bytes per repetition at either size, so each size takes about as long. ferry's rows
// (MessageChannel copying and loan paths) are in dataset_ferry.cpp.
#include "messages.hpp"

#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {
using ferry::bench::k_dataset_bytes;
using ferry::bench::page_aligned;

template <std::size_t S>
void dataset_memcpy(benchmark::State& state) {
    std::vector<std::byte> from_storage;
    std::vector<std::byte> to_storage;
    std::byte* const from = page_aligned(from_storage, S);
    std::byte* const to = page_aligned(to_storage, S);
    constexpr std::size_t messages = k_dataset_bytes / S;
    for (auto _ : state) {
        for (std::size_t i = 0; i < messages; ++i) {
            from[i % S] = static_cast<std::byte>(i); // a different message each time
            std::memcpy(to, from, S);
            benchmark::ClobberMemory();
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(messages * S) * state.iterations());
}

BENCHMARK_TEMPLATE(dataset_memcpy, 64 * 1024)
    ->Name("dataset/memcpy/64KiB")
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(dataset_memcpy, 4 * 1024 * 1024)
    ->Name("dataset/memcpy/4MiB")
    ->UseRealTime()
    ->Iterations(1);
} // namespace
