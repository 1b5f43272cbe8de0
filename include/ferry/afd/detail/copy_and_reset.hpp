#pragma once
// The byte work of emitting one FFN descriptor (docs/cann-contract/afd.md#output-and-reset): copy
// its BS·K expert ids to the output row, then set every id byte to 0x7F (each id becomes
// 0x7F7F7F7F). The observable result is exactly memcpy(out, ids) followed by memset(ids, 0x7F)
// for buffers that do not overlap; how it gets there is chosen for speed
// (docs/performance/afd.md, "Where the time goes"):
//  - with AVX2 (x86-64, detected once at run time) one pass loads 128 bytes, stores them to the
//    output and stores the fill over them while the source lines are still in L1: the source is
//    read once and written once, and no second pass walks it again; the source side is aligned;
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
// One pass: each 32-byte vector is loaded, stored to `out`, and overwritten with the fill. Any
// alignment, but the source is read and written, so its first bytes (up to its next 32-byte
// boundary) go through memcpy and memset and the vectors then never straddle a source cache
// line (descriptors are 8 + 4·BS·K bytes apart, so their ids rarely start aligned); the last
// bytes (fewer than 32) go through memcpy and memset too.
[[gnu::target("avx2")]] inline void copy_and_reset_avx2(std::byte* out, std::byte* ids,
                                                         std::size_t bytes) noexcept {
    using V = __m256i;
    const std::size_t head =
        std::min(bytes, (sizeof(V) - reinterpret_cast<std::uintptr_t>(ids) % sizeof(V)) % sizeof(V));
    std::memcpy(out, ids, head);
    std::memset(ids, k_reset_id_byte, head);
    out += head;
    ids += head;
    bytes -= head;
    const V fill = _mm256_set1_epi8(static_cast<char>(k_reset_id_byte));
    auto* const to = reinterpret_cast<V*>(out); // unaligned: the _loadu/_storeu forms below
    auto* const from = reinterpret_cast<V*>(ids);
    const std::size_t vectors = bytes / sizeof(V);
    std::size_t v = 0;
    for (; v + 4 <= vectors; v += 4) { // four vectors in flight: the loads first, then the stores
        const V a = _mm256_loadu_si256(from + v), b = _mm256_loadu_si256(from + v + 1);
        const V c = _mm256_loadu_si256(from + v + 2), d = _mm256_loadu_si256(from + v + 3);
        _mm256_storeu_si256(to + v, a);
        _mm256_storeu_si256(to + v + 1, b);
        _mm256_storeu_si256(to + v + 2, c);
        _mm256_storeu_si256(to + v + 3, d);
        for (std::size_t k = 0; k < 4; ++k) {
            _mm256_storeu_si256(from + v + k, fill);
        }
    }
    for (; v < vectors; ++v) {
        _mm256_storeu_si256(to + v, _mm256_loadu_si256(from + v));
        _mm256_storeu_si256(from + v, fill);
    }
    const std::size_t done = vectors * sizeof(V);
    std::memcpy(out + done, ids + done, bytes - done);
    std::memset(ids + done, k_reset_id_byte, bytes - done);
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
