#pragma once
// The byte work of emitting one FFN descriptor (docs/cann-contract/afd.md#output-and-reset): copy
// its BS·K expert ids to the output row, then set every id byte to 0x7F (each id becomes
// 0x7F7F7F7F). The observable result is exactly memcpy(out, ids) followed by memset(ids, 0x7F)
// for buffers that do not overlap; how it gets there is chosen for speed
// (docs/performance/afd.md, "Where the time goes"):
//  - with AVX2 (x86-64, detected once at run time) one pass loads 128 bytes, stores them to the
//    output and stores the fill over them while the source lines are still in L1: the source is
//    read once and written once, and no second pass walks it again; all stores are aligned;
//  - otherwise memcpy then memset per 8 KiB block, so the memset finds the block in L1.
// Non-temporal stores were measured and left out: they send the output past the caches, which
// the next reader of the output (and the bandwidth figure) pays for.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FERRY_AFD_FUSED_AVX2 1
#else
#define FERRY_AFD_FUSED_AVX2 0
#endif

namespace ferry::afd::detail {

inline constexpr unsigned char k_reset_id_byte = 0x7F;

// The portable path: per block, memcpy then memset (the block is still in L1 for the memset).
inline void copy_then_reset_blocks(std::byte* out, std::byte* ids, std::size_t bytes) noexcept {
    constexpr std::size_t block = 8192;
    for (std::size_t at = 0; at < bytes; at += block) {
        const std::size_t n = std::min(block, bytes - at);
        std::memcpy(out + at, ids + at, n);
        std::memset(ids + at, k_reset_id_byte, n);
    }
}

#if FERRY_AFD_FUSED_AVX2
// One pass in 128-byte steps: four 32-byte vectors are loaded from the ids, stored to `out`, and
// the fill is stored over ids the pass has already loaded. Every store is aligned, only the
// loads are not: `out` is aligned by copying its first bytes (up to a 32-byte boundary) with
// memcpy, and the fill runs on the ids' own 32-byte grid, one step behind the loads at most
// (descriptors are 8 + 4·BS·K bytes apart, so neither side is usually aligned, and stores that
// straddle two cache lines were the measurable cost, docs/performance/afd.md). The ends, and
// inputs shorter than one step, go through memcpy and memset.
[[gnu::target("avx2")]] inline void copy_and_reset_avx2(std::byte* out, std::byte* ids,
                                                        std::size_t bytes) noexcept {
    using V = __m256i;
    constexpr std::size_t w = sizeof(V);
    if (bytes < 4 * w) {
        std::memcpy(out, ids, bytes);
        std::memset(ids, k_reset_id_byte, bytes);
        return;
    }
    const V fill = _mm256_set1_epi8(static_cast<char>(k_reset_id_byte));
    const auto misalign = [](const std::byte* p) {
        return reinterpret_cast<std::uintptr_t>(p) % w;
    };
    const std::size_t head = (w - misalign(out)) % w; // copied first, so that `out + at` is aligned
    std::memcpy(out, ids, head);
    std::byte* const fill_from = ids + (w - misalign(ids)) % w; // the fill's aligned grid
    std::byte* filled = fill_from;
    std::size_t at = head;
    for (; at + 4 * w <= bytes; at += 4 * w) {
        const V a = _mm256_loadu_si256(reinterpret_cast<const V*>(ids + at));
        const V b = _mm256_loadu_si256(reinterpret_cast<const V*>(ids + at + w));
        const V c = _mm256_loadu_si256(reinterpret_cast<const V*>(ids + at + 2 * w));
        const V d = _mm256_loadu_si256(reinterpret_cast<const V*>(ids + at + 3 * w));
        _mm256_store_si256(reinterpret_cast<V*>(out + at), a);
        _mm256_store_si256(reinterpret_cast<V*>(out + at + w), b);
        _mm256_store_si256(reinterpret_cast<V*>(out + at + 2 * w), c);
        _mm256_store_si256(reinterpret_cast<V*>(out + at + 3 * w), d);
        if (filled <= ids + at) { // [filled, filled + 4w) has been loaded: fill it
            for (std::size_t k = 0; k < 4; ++k) {
                _mm256_store_si256(reinterpret_cast<V*>(filled + k * w), fill);
            }
            filled += 4 * w;
        }
    }
    std::memcpy(out + at, ids + at, bytes - at);
    std::memset(filled, k_reset_id_byte, static_cast<std::size_t>(ids + bytes - filled));
    std::memset(ids, k_reset_id_byte, static_cast<std::size_t>(fill_from - ids));
}

inline bool cpu_has_avx2() noexcept {
    static const bool has = __builtin_cpu_supports("avx2") != 0;
    return has;
}
#endif

// memcpy(out, ids, bytes) then memset(ids, 0x7F, bytes); `out` and `ids` must not overlap.
inline void copy_and_reset_ids(std::byte* out, std::byte* ids, std::size_t bytes) noexcept {
#if FERRY_AFD_FUSED_AVX2
    if (cpu_has_avx2()) {
        copy_and_reset_avx2(out, ids, bytes);
        return;
    }
#endif
    copy_then_reset_blocks(out, ids, bytes);
}

} // namespace ferry::afd::detail
