#pragma once
// 16-bit floating-point *storage* types for ACL_FLOAT16 and ACL_BF16 payloads.
//
// ferry moves tensors, it does not compute on them: these types only carry the 16 bits so that
// dtype_of<float16> and dtype_of<bfloat16> exist at compile time and a Tensor<float16> reads back
// exactly the bytes that were sent. Conversions to and from float are provided for tests and
// examples (round-to-nearest-even), not as an arithmetic type.

#include <bit>
#include <compare>
#include <cstdint>

namespace ferry {

namespace detail {
// IEEE binary16 from binary32, round to nearest even; NaN stays NaN, overflow becomes infinity.
constexpr std::uint16_t float_to_half_bits(float value) noexcept {
    const auto f = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
    const std::uint32_t exponent = (f >> 23) & 0xFFu;
    std::uint32_t mantissa = f & 0x7FFFFFu;
    if (exponent == 0xFF) { // infinity or NaN
        return static_cast<std::uint16_t>(sign | 0x7C00u | (mantissa != 0 ? 0x200u : 0u));
    }
    const int e = static_cast<int>(exponent) - 127 + 15;
    if (e >= 0x1F) {
        return static_cast<std::uint16_t>(sign | 0x7C00u);
    }
    if (e <= 0) { // subnormal half or zero
        if (e < -10) {
            return sign;
        }
        mantissa |= 0x800000u;
        const int shift = 14 - e;
        std::uint32_t half_m = mantissa >> shift;
        const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
        const std::uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half_m & 1u) != 0)) {
            ++half_m;
        }
        return static_cast<std::uint16_t>(sign | half_m);
    }
    std::uint32_t bits = (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
    const std::uint32_t rest = mantissa & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u) != 0)) {
        ++bits; // may carry into the exponent, which correctly yields infinity at the top
    }
    return static_cast<std::uint16_t>(sign | bits);
}

constexpr float half_bits_to_float(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu;
    std::uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0x1F) {
        return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    }
    if (exponent == 0) {
        if (mantissa == 0) {
            return std::bit_cast<float>(sign);
        }
        int e = -1;
        do { // normalise the subnormal
            ++e;
            mantissa <<= 1;
        } while ((mantissa & 0x400u) == 0);
        const std::uint32_t f_exp = static_cast<std::uint32_t>(127 - 15 - e);
        return std::bit_cast<float>(sign | (f_exp << 23) | ((mantissa & 0x3FFu) << 13));
    }
    return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

constexpr std::uint16_t float_to_bf16_bits(float value) noexcept {
    const auto f = std::bit_cast<std::uint32_t>(value);
    if ((f & 0x7FFFFFFFu) > 0x7F800000u) { // NaN: keep it quiet and a NaN
        return static_cast<std::uint16_t>((f >> 16) | 0x40u);
    }
    const std::uint32_t rounding = 0x7FFFu + ((f >> 16) & 1u);
    return static_cast<std::uint16_t>((f + rounding) >> 16);
}
} // namespace detail

// ACL_FLOAT16 storage.
struct float16 {
    std::uint16_t bits = 0;

    constexpr float16() noexcept = default;
    static constexpr float16 from_bits(std::uint16_t b) noexcept {
        float16 h;
        h.bits = b;
        return h;
    }
    constexpr explicit float16(float value) noexcept : bits(detail::float_to_half_bits(value)) {}
    constexpr explicit operator float() const noexcept { return detail::half_bits_to_float(bits); }
    friend constexpr bool operator==(float16, float16) noexcept = default;
};

// ACL_BF16 storage.
struct bfloat16 {
    std::uint16_t bits = 0;

    constexpr bfloat16() noexcept = default;
    static constexpr bfloat16 from_bits(std::uint16_t b) noexcept {
        bfloat16 h;
        h.bits = b;
        return h;
    }
    constexpr explicit bfloat16(float value) noexcept : bits(detail::float_to_bf16_bits(value)) {}
    constexpr explicit operator float() const noexcept {
        return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
    }
    friend constexpr bool operator==(bfloat16, bfloat16) noexcept = default;
};

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2);

} // namespace ferry
