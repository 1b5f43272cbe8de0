#pragma once
// ferry::DType — aclDataType with CANN's numeric values (docs/cann-contract/tdt.md#data-types), and
// the compile-time mapping from C++ element types to it (dtype_of<T>).

#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <ferry/core/float16.hpp>

namespace ferry {

enum class DType : std::int32_t {
    undefined = -1,  // ACL_DT_UNDEFINED
    float32 = 0,     // ACL_FLOAT
    float16 = 1,     // ACL_FLOAT16
    int8 = 2,        // ACL_INT8
    int32 = 3,       // ACL_INT32
    uint8 = 4,       // ACL_UINT8
    int16 = 6,       // ACL_INT16 (5 is unused)
    uint16 = 7,      // ACL_UINT16
    uint32 = 8,      // ACL_UINT32
    int64 = 9,       // ACL_INT64
    uint64 = 10,     // ACL_UINT64
    float64 = 11,    // ACL_DOUBLE
    boolean = 12,    // ACL_BOOL
    string = 13,     // ACL_STRING
    complex64 = 16,  // ACL_COMPLEX64
    complex128 = 17, // ACL_COMPLEX128
    bfloat16 = 27,   // ACL_BF16
    int4 = 29,       // ACL_INT4
    uint1 = 30,      // ACL_UINT1
    complex32 = 33,  // ACL_COMPLEX32
    hifloat8 = 34,   // ACL_HIFLOAT8
    float8_e5m2 = 35,
    float8_e4m3fn = 36,
    float8_e8m0 = 37,
    float6_e3m2 = 38,
    float6_e2m3 = 39,
    float4_e2m1 = 40,
    float4_e1m2 = 41,
};

// Every DType value CANN defines, in numeric order (for tests and property generators).
inline constexpr DType all_dtypes[] = {
    DType::undefined,   DType::float32,     DType::float16,       DType::int8,
    DType::int32,       DType::uint8,       DType::int16,         DType::uint16,
    DType::uint32,      DType::int64,       DType::uint64,        DType::float64,
    DType::boolean,     DType::string,      DType::complex64,     DType::complex128,
    DType::bfloat16,    DType::int4,        DType::uint1,         DType::complex32,
    DType::hifloat8,    DType::float8_e5m2, DType::float8_e4m3fn, DType::float8_e8m0,
    DType::float6_e3m2, DType::float6_e2m3, DType::float4_e2m1,   DType::float4_e1m2,
};

// Bits per element; 0 for undefined and string (variable length).
[[nodiscard]] constexpr std::size_t bit_width(DType t) noexcept {
    switch (t) {
    case DType::undefined:
    case DType::string: return 0;
    case DType::uint1: return 1;
    case DType::int4:
    case DType::float4_e2m1:
    case DType::float4_e1m2: return 4;
    case DType::float6_e3m2:
    case DType::float6_e2m3: return 6;
    case DType::int8:
    case DType::uint8:
    case DType::boolean:
    case DType::hifloat8:
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
    case DType::float8_e8m0: return 8;
    case DType::float16:
    case DType::bfloat16:
    case DType::int16:
    case DType::uint16: return 16;
    case DType::float32:
    case DType::int32:
    case DType::uint32:
    case DType::complex32: return 32;
    case DType::float64:
    case DType::int64:
    case DType::uint64:
    case DType::complex64: return 64;
    case DType::complex128: return 128;
    }
    return 0;
}

// Bytes per element for whole-byte types; 0 for sub-byte types, string and undefined, whose
// byte size is not a per-element product.
[[nodiscard]] constexpr std::size_t element_size(DType t) noexcept {
    const std::size_t bits = bit_width(t);
    return bits % 8 == 0 ? bits / 8 : 0;
}

[[nodiscard]] constexpr bool is_known(DType t) noexcept {
    for (DType d : all_dtypes) {
        if (d == t) {
            return true;
        }
    }
    return false;
}

[[nodiscard]] constexpr const char* name_of(DType t) noexcept {
    switch (t) {
    case DType::undefined: return "undefined";
    case DType::float32: return "float32";
    case DType::float16: return "float16";
    case DType::int8: return "int8";
    case DType::int32: return "int32";
    case DType::uint8: return "uint8";
    case DType::int16: return "int16";
    case DType::uint16: return "uint16";
    case DType::uint32: return "uint32";
    case DType::int64: return "int64";
    case DType::uint64: return "uint64";
    case DType::float64: return "float64";
    case DType::boolean: return "bool";
    case DType::string: return "string";
    case DType::complex64: return "complex64";
    case DType::complex128: return "complex128";
    case DType::bfloat16: return "bfloat16";
    case DType::int4: return "int4";
    case DType::uint1: return "uint1";
    case DType::complex32: return "complex32";
    case DType::hifloat8: return "hifloat8";
    case DType::float8_e5m2: return "float8_e5m2";
    case DType::float8_e4m3fn: return "float8_e4m3fn";
    case DType::float8_e8m0: return "float8_e8m0";
    case DType::float6_e3m2: return "float6_e3m2";
    case DType::float6_e2m3: return "float6_e2m3";
    case DType::float4_e2m1: return "float4_e2m1";
    case DType::float4_e1m2: return "float4_e1m2";
    }
    return "unknown";
}

namespace detail {
template <typename T>
struct dtype_map {}; // no mapping: dtype_of<T> is ill-formed and Element<T> is false

template <std::integral T>
    requires(!std::same_as<T, bool>)
struct dtype_map<T> {
    static constexpr DType value = [] {
        if constexpr (sizeof(T) == 1) {
            return std::is_signed_v<T> ? DType::int8 : DType::uint8;
        } else if constexpr (sizeof(T) == 2) {
            return std::is_signed_v<T> ? DType::int16 : DType::uint16;
        } else if constexpr (sizeof(T) == 4) {
            return std::is_signed_v<T> ? DType::int32 : DType::uint32;
        } else {
            static_assert(sizeof(T) == 8, "no aclDataType for integers wider than 64 bits");
            return std::is_signed_v<T> ? DType::int64 : DType::uint64;
        }
    }();
};

template <> struct dtype_map<bool> { static constexpr DType value = DType::boolean; };
template <> struct dtype_map<float> { static constexpr DType value = DType::float32; };
template <> struct dtype_map<double> { static constexpr DType value = DType::float64; };
template <> struct dtype_map<float16> { static constexpr DType value = DType::float16; };
template <> struct dtype_map<bfloat16> { static constexpr DType value = DType::bfloat16; };
template <> struct dtype_map<std::complex<float>> { static constexpr DType value = DType::complex64; };
template <> struct dtype_map<std::complex<double>> { static constexpr DType value = DType::complex128; };
} // namespace detail

// A C++ type that ferry can carry as tensor elements: it maps to exactly one aclDataType and its
// size is that dtype's element size.
template <typename T>
concept Element = requires { detail::dtype_map<std::remove_cv_t<T>>::value; } &&
                  std::is_trivially_copyable_v<T> &&
                  sizeof(T) == element_size(detail::dtype_map<std::remove_cv_t<T>>::value);

template <Element T>
inline constexpr DType dtype_of = detail::dtype_map<std::remove_cv_t<T>>::value;

} // namespace ferry
