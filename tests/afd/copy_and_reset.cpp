// detail::copy_and_reset_ids: every path (the portable blocks, AVX2 where the CPU has it, the
// aligned-word AVX2 pass, the dispatching entry) gives memcpy-then-memset's bytes exactly, for
// every length up to a few vectors, every source alignment, across the portable path's block
// boundaries, and touches no byte outside the two ranges.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <ferry/afd/detail/copy_and_reset.hpp>

namespace {
using Copy = void (*)(std::byte*, std::byte*, std::size_t) noexcept;

constexpr std::size_t k_guard = 64;
constexpr std::byte k_guard_byte{0xA5};

// Never 0x7F: a byte the copy forgot to reset cannot look reset.
std::byte pattern(std::size_t i) {
    return static_cast<std::byte>(0x80 | (i % 0x7F));
}

// Runs `copy` on `bytes` bytes, the source `src_offset` and the output `out_offset` bytes past a
// 64-byte boundary; returns what went wrong ("" when all is right).
std::string check_one(Copy copy, std::size_t bytes, std::size_t src_offset,
                      std::size_t out_offset) {
    struct alignas(64) Line {
        std::byte b[64];
    };
    const std::size_t span = bytes + 2 * k_guard + 64;
    std::vector<Line> src_lines(span / 64 + 1), out_lines(span / 64 + 1);
    std::byte* const src_base = src_lines.front().b;
    std::byte* const out_base = out_lines.front().b;
    std::fill(src_base, src_base + span, k_guard_byte);
    std::fill(out_base, out_base + span, k_guard_byte);
    std::byte* const src = src_base + k_guard + src_offset;
    std::byte* const out = out_base + k_guard + out_offset;
    for (std::size_t i = 0; i < bytes; ++i) {
        src[i] = pattern(i);
    }
    copy(out, src, bytes);
    for (std::size_t i = 0; i < span; ++i) {
        const bool in_src = src_base + i >= src && src_base + i < src + bytes;
        const bool in_out = out_base + i >= out && out_base + i < out + bytes;
        const std::byte want_src = in_src ? std::byte{0x7F} : k_guard_byte;
        const std::byte want_out =
            in_out ? pattern(static_cast<std::size_t>(out_base + i - out)) : k_guard_byte;
        if (src_base[i] != want_src || out_base[i] != want_out) {
            return "bytes " + std::to_string(bytes) + ", source offset " +
                   std::to_string(src_offset) + ", output offset " + std::to_string(out_offset) +
                   ": wrong byte at " + std::to_string(i) + (in_src ? " (source)" : "") +
                   (in_out ? " (output)" : "");
        }
    }
    return "";
}

void check_path(Copy copy) {
    std::vector<std::size_t> lengths;
    for (std::size_t n = 0; n <= 300; ++n) { // head, 4-vector loop, single vectors, tail
        lengths.push_back(n);
    }
    for (const std::size_t around : {std::size_t{8192}, std::size_t{9216}, std::size_t{3 * 8192}}) {
        for (std::size_t n = around - 40; n <= around + 40; n += 4) { // the blocks' boundaries
            lengths.push_back(n);
        }
    }
    for (const std::size_t n : lengths) {
        for (std::size_t src_offset = 0; src_offset < 36; ++src_offset) {
            const std::size_t out_offset = (n + 5 * src_offset) % 32; // every residue occurs
            const std::string problem = check_one(copy, n, src_offset, out_offset);
            if (!problem.empty()) {
                FAIL(problem);
            }
        }
    }
    SUCCEED();
}
} // namespace

TEST_CASE("the portable path is memcpy then memset, byte for byte", "[afd][copy_and_reset]") {
    check_path(&ferry::afd::detail::copy_then_reset_blocks);
}

TEST_CASE("the dispatching entry is memcpy then memset, byte for byte", "[afd][copy_and_reset]") {
    check_path(&ferry::afd::detail::copy_and_reset_ids);
}

#if FERRY_AFD_FUSED_AVX2
TEST_CASE("the AVX2 pass is memcpy then memset, byte for byte", "[afd][copy_and_reset]") {
    if (!ferry::afd::detail::cpu_has_avx2()) {
        WARN("this CPU has no AVX2: the fused pass is not run here");
        return;
    }
    check_path(&ferry::afd::detail::copy_and_reset_avx2);
}

TEST_CASE("the aligned-word pass is memcpy then memset, byte for byte, for every word shift",
          "[afd][copy_and_reset]") {
    if (!ferry::afd::detail::cpu_has_avx2()) {
        WARN("this CPU has no AVX2: the aligned-word pass is not run here");
        return;
    }
    std::vector<std::size_t> lengths;
    for (std::size_t n = 8 * 32; n <= 8 * 32 + 300; ++n) { // its shortest input, loop, tail
        lengths.push_back(n);
    }
    for (std::size_t n = 9216 - 40; n <= 9216 + 40; n += 4) { // a descriptor's ids, BS 256, K 9
        lengths.push_back(n);
    }
    for (const std::size_t n : lengths) {
        for (const std::size_t out_offset : {0, 1, 5, 12, 31}) {
            for (std::size_t shift = 1; shift < 8; ++shift) { // the source `shift` words off
                const std::size_t src_offset = (out_offset + 4 * shift) % 64;
                const std::string problem = check_one(
                    &ferry::afd::detail::copy_and_reset_avx2_words, n, src_offset, out_offset);
                if (!problem.empty()) {
                    FAIL(problem);
                }
            }
        }
    }
    SUCCEED();
}
#endif
