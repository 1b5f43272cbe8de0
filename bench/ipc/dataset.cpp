// Data-set throughput (bytes per second) at 64 KiB and 4 MiB per message:
//   dataset/memcpy/S  one memcpy of S bytes per message, one process, the same source and
//                     destination each time: the least work a copying transport does per
//                     message (a scale for the copying path, no target). Both
//                     buffers start on a page: from malloc's 16-byte-aligned blocks the same
//                     memcpy ran at 1.7 GB/s instead of 40 GB/s at 64 KiB on the bench VM
//                     (glibc's `rep movsb` on that AMD CPU with source and destination 16 bytes
//                     apart modulo 64), a baseline far too easy to beat.
//   dataset/raw_two_copy/S  the copying path's baseline (its >= 0.9x target): what a raw
//                     transport of copies does between the same two processes (harness.hpp) —
//                     the sender memcpys each message into the next of 4 slots of S bytes in a
//                     MAP_SHARED mapping and publishes it by a counter, the peer memcpys it out
//                     into its own page-aligned buffer and frees the slot; both sides spin.
//   dataset/raw_one_copy/S  the same pipeline without the copy out: the peer reads the sequence
//                     number in place and frees the slot — what a zero-copy (loan) transport does
//                     at best (the loan's baseline, its >= 0.9x target). raw_one_copy /
//                     raw_two_copy, in the same run, is the ceiling of ferry_loan / ferry_copy:
//                     both sides copy at once on their own cores, so dropping the second copy
//                     shortens the pipeline only where the copies do not already overlap.
//   dataset/raw_two_copy_again/S  raw_two_copy once more, under its own name, in the same round:
//                     an A/A control. Its ratio to raw_two_copy is what the pairs of this
//                     machine read for two transports that are the same, i.e. how many pairs of
//                     a transport level with its baseline fall under 0.9x by noise alone
//                     (docs/performance/ipc.md, "The copying path at 4 MiB: level with its
//                     baseline").
// k_dataset_bytes per repetition at either size, so each size takes about as long. ferry's rows
// (MessageChannel copying and loan paths) are in dataset_ferry.cpp.
#include "messages.hpp"

#include <atomic>
#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <sys/mman.h>
#include <vector>

namespace {
using ferry::bench::k_dataset_bytes;
using ferry::bench::page_aligned;
using ferry::bench::record;
using ferry::bench::spin_until;
using ferry::bench::transfer_across;

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

// Four slots of S bytes and a Lamport pair of counters, in one anonymous shared mapping.
template <std::size_t S>
struct TwoCopySlots {
    static constexpr std::uint64_t k_slots = 4;
    alignas(64) std::atomic<std::uint64_t> published{0};
    alignas(64) std::atomic<std::uint64_t> freed{0};
    alignas(4096) std::byte slot[k_slots][S];
};

// CopyOut: the peer copies each message out of its slot (two copies) or reads it in place (one).
template <std::size_t S, bool CopyOut>
void dataset_raw_pipeline(benchmark::State& state) {
    using Slots = TwoCopySlots<S>;
    constexpr std::size_t messages = k_dataset_bytes / S;
    for (auto _ : state) {
        void* memory = ::mmap(nullptr, sizeof(Slots), PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED) {
            state.SkipWithError("mmap failed");
            break;
        }
        auto* slots = ::new (memory) Slots();
        std::vector<std::byte> from_storage;
        std::byte* const from = page_aligned(from_storage, S);
        const auto timed = transfer_across(
            messages,
            [slots, from](std::uint64_t i) {
                const std::uint64_t n = slots->published.load(std::memory_order_relaxed);
                spin_until([&] {
                    return n - slots->freed.load(std::memory_order_acquire) < Slots::k_slots;
                });
                std::memcpy(from, &i, sizeof i); // the sequence number, as ferry's rows
                std::memcpy(slots->slot[n % Slots::k_slots], from, S);
                slots->published.store(n + 1, std::memory_order_release);
            },
            [slots] {
                auto to_storage = std::make_shared<std::vector<std::byte>>();
                std::byte* const to = page_aligned(*to_storage, S);
                return [slots, to, to_storage] {
                    const std::uint64_t n = slots->freed.load(std::memory_order_relaxed);
                    spin_until(
                        [&] { return slots->published.load(std::memory_order_acquire) != n; });
                    const std::byte* const in = slots->slot[n % Slots::k_slots];
                    std::uint64_t i = 0;
                    if constexpr (CopyOut) {
                        std::memcpy(to, in, S);
                        std::memcpy(&i, to, sizeof i);
                    } else {
                        std::memcpy(&i, in, sizeof i);
                    }
                    slots->freed.store(n + 1, std::memory_order_release);
                    return i;
                };
            });
        slots->~Slots();
        ::munmap(memory, sizeof(Slots));
        if (!record(state, timed)) {
            break;
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(messages * S) * state.iterations());
}

#define FERRY_IPC_RAW_PIPELINE(side, bytes, label, copy_out)                                       \
    BENCHMARK_TEMPLATE(dataset_raw_pipeline, bytes, copy_out)                                      \
        ->Name("dataset/" side "/" label)                                                          \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

FERRY_IPC_RAW_PIPELINE("raw_two_copy", 64 * 1024, "64KiB", true);
FERRY_IPC_RAW_PIPELINE("raw_two_copy", 4 * 1024 * 1024, "4MiB", true);
FERRY_IPC_RAW_PIPELINE("raw_two_copy_again", 64 * 1024, "64KiB", true);
FERRY_IPC_RAW_PIPELINE("raw_two_copy_again", 4 * 1024 * 1024, "4MiB", true);
FERRY_IPC_RAW_PIPELINE("raw_one_copy", 64 * 1024, "64KiB", false);
FERRY_IPC_RAW_PIPELINE("raw_one_copy", 4 * 1024 * 1024, "4MiB", false);
BENCHMARK_TEMPLATE(dataset_memcpy, 64 * 1024)
    ->Name("dataset/memcpy/64KiB")
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_TEMPLATE(dataset_memcpy, 4 * 1024 * 1024)
    ->Name("dataset/memcpy/4MiB")
    ->UseRealTime()
    ->Iterations(1);
} // namespace
