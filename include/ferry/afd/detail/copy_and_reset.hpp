#pragma once
// The byte work of emitting one FFN descriptor (docs/cann-contract/afd.md#output-and-reset): copy
// its BS·K expert ids to the output row, then set every id byte to 0x7F (each id becomes
// 0x7F7F7F7F). The observable result is exactly memcpy(out, ids) followed by memset(ids, 0x7F)
// for buffers that do not overlap; how it gets there is chosen for speed
// (docs/performance/afd.md, "Where the time goes"):
//  - with AVX2 (x86-64, detected once at run time) one pass loads 128 bytes, stores them to the
//    output and stores the fill over them while the source lines are still in L1: the source is
//    read once and written once, and no second pass walks it again; all stores are aligned;
//  - when the source sits whole 4-byte words off the output's 32-byte grid (three descriptors in
//    four, from the descriptor stride), the loads are aligned too and the words are shifted
//    into place in registers, so that no load straddles two cache lines;
//  - without AVX2, memcpy then memset per 8 KiB block, so the memset finds the block in L1.
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

// `lo` and `hi` are two consecutive aligned 32-byte source vectors; returns the 32 bytes that
// start `shift` 4-byte words into `lo` (a blend puts hi's first words where the rotation takes
// them from, then one cross-lane permute rotates by `shift` words).
[[gnu::target("avx2")]] inline __m256i words_from(__m256i lo, __m256i hi, __m256i take_hi,
                                                  __m256i rotate) noexcept {
    return _mm256_permutevar8x32_epi32(_mm256_blendv_epi8(lo, hi, take_hi), rotate);
}

// The pass for a source that sits a whole number of 4-byte words (1..7) off the output's 32-byte
// grid, as FFN descriptors' ids do (they are 4-byte expert ids, 8 + 4·BS·K bytes apart): every
// load and every store is aligned, so no access straddles two cache lines. The output vector is
// taken from two aligned source vectors by words_from; each aligned source vector is loaded
// once, and the fill is stored over it in the same step. Loads stay inside [ids, ids + bytes):
// the first `lead` bytes and the tail go through memcpy and memset. Needs bytes >= 8 * 32.
[[gnu::target("avx2")]] inline void copy_and_reset_avx2_words(std::byte* out, std::byte* ids,
                                                              std::size_t bytes) noexcept {
    using V = __m256i;
    constexpr std::size_t w = sizeof(V);
    const auto at_ = [](std::byte* p) { return reinterpret_cast<V*>(p); };
    const std::size_t lead = (w - reinterpret_cast<std::uintptr_t>(out) % w) % w + w;
    std::memcpy(out, ids, lead); // out + lead is aligned and ids + lead - shift is past ids
    const std::size_t shift_bytes = reinterpret_cast<std::uintptr_t>(ids + lead) % w;
    const auto shift = static_cast<int>(shift_bytes / 4);
    const V word = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const V take_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(shift), word); // words < shift
    const V rotate = _mm256_and_si256(_mm256_add_epi32(word, _mm256_set1_epi32(shift)),
                                      _mm256_set1_epi32(7)); // (word + shift) mod 8
    const V fill = _mm256_set1_epi8(static_cast<char>(k_reset_id_byte));
    std::byte* const first_block = ids + lead - shift_bytes;
    std::byte* block = first_block; // the aligned source vector held in `v0`, not yet filled
    V v0 = _mm256_load_si256(at_(block));
    std::size_t at = lead;
    for (; at + 5 * w <= bytes; at += 4 * w, block += 4 * w) { // block + 5w <= ids + bytes
        const V v1 = _mm256_load_si256(at_(block + w));
        const V v2 = _mm256_load_si256(at_(block + 2 * w));
        const V v3 = _mm256_load_si256(at_(block + 3 * w));
        const V v4 = _mm256_load_si256(at_(block + 4 * w));
        _mm256_store_si256(at_(out + at), words_from(v0, v1, take_hi, rotate));
        _mm256_store_si256(at_(out + at + w), words_from(v1, v2, take_hi, rotate));
        _mm256_store_si256(at_(out + at + 2 * w), words_from(v2, v3, take_hi, rotate));
        _mm256_store_si256(at_(out + at + 3 * w), words_from(v3, v4, take_hi, rotate));
        for (std::size_t k = 0; k < 4; ++k) {
            _mm256_store_si256(at_(block + k * w), fill);
        }
        v0 = v4;
    }
    std::memcpy(out + at, ids + at, bytes - at); // ids + at >= block: nothing there is filled yet
    std::memset(block, k_reset_id_byte, static_cast<std::size_t>(ids + bytes - block));
    std::memset(ids, k_reset_id_byte, static_cast<std::size_t>(first_block - ids));
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
        const std::uintptr_t apart =
            reinterpret_cast<std::uintptr_t>(ids) - reinterpret_cast<std::uintptr_t>(out);
        if (bytes >= 8 * 32 && apart % 4 == 0 && apart % 32 != 0) { // whole words off the grid
            copy_and_reset_avx2_words(out, ids, bytes);
        } else {
            copy_and_reset_avx2(out, ids, bytes);
        }
        return;
    }
#endif
    copy_then_reset_blocks(out, ids, bytes);
}

} // namespace ferry::afd::detail
