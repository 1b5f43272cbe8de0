#include <ferry/core/dtype.hpp>

#include <catch2/catch.hpp>

#include <complex>
#include <cstdint>
#include <set>
#include <string>

using ferry::DType;

// The mapping is a compile-time fact: these fail the build, not the run.
static_assert(ferry::dtype_of<float> == DType::float32);
static_assert(ferry::dtype_of<double> == DType::float64);
static_assert(ferry::dtype_of<bool> == DType::boolean);
static_assert(ferry::dtype_of<std::int8_t> == DType::int8);
static_assert(ferry::dtype_of<std::uint8_t> == DType::uint8);
static_assert(ferry::dtype_of<std::int16_t> == DType::int16);
static_assert(ferry::dtype_of<std::uint16_t> == DType::uint16);
static_assert(ferry::dtype_of<std::int32_t> == DType::int32);
static_assert(ferry::dtype_of<std::uint32_t> == DType::uint32);
static_assert(ferry::dtype_of<std::int64_t> == DType::int64);
static_assert(ferry::dtype_of<long long> == DType::int64);
static_assert(ferry::dtype_of<unsigned long long> == DType::uint64);
static_assert(ferry::dtype_of<const float> == DType::float32);
static_assert(ferry::dtype_of<ferry::float16> == DType::float16);
static_assert(ferry::dtype_of<ferry::bfloat16> == DType::bfloat16);
static_assert(ferry::dtype_of<std::complex<float>> == DType::complex64);
static_assert(ferry::dtype_of<std::complex<double>> == DType::complex128);
static_assert(!ferry::Element<long double>);
static_assert(!ferry::Element<void*>);
static_assert(!ferry::Element<std::string>);

TEST_CASE("DType values are aclDataType's", "[core][dtype]") {
    CHECK(static_cast<int>(DType::undefined) == -1);
    CHECK(static_cast<int>(DType::float32) == 0);
    CHECK(static_cast<int>(DType::float16) == 1);
    CHECK(static_cast<int>(DType::int16) == 6);
    CHECK(static_cast<int>(DType::boolean) == 12);
    CHECK(static_cast<int>(DType::string) == 13);
    CHECK(static_cast<int>(DType::complex64) == 16);
    CHECK(static_cast<int>(DType::bfloat16) == 27);
    CHECK(static_cast<int>(DType::float4_e1m2) == 41);
}

TEST_CASE("element sizes and bit widths", "[core][dtype]") {
    CHECK(ferry::element_size(DType::float32) == 4);
    CHECK(ferry::element_size(DType::float16) == 2);
    CHECK(ferry::element_size(DType::bfloat16) == 2);
    CHECK(ferry::element_size(DType::boolean) == 1);
    CHECK(ferry::element_size(DType::complex128) == 16);
    CHECK(ferry::element_size(DType::int4) == 0);
    CHECK(ferry::bit_width(DType::int4) == 4);
    CHECK(ferry::bit_width(DType::uint1) == 1);
    CHECK(ferry::element_size(DType::string) == 0);
    CHECK(ferry::element_size(DType::undefined) == 0);
}

TEST_CASE("every dtype is known, named uniquely; gaps are unknown", "[core][dtype]") {
    std::set<std::string> names;
    for (DType t : ferry::all_dtypes) {
        CHECK(ferry::is_known(t));
        names.insert(ferry::name_of(t));
    }
    CHECK(names.size() == std::size(ferry::all_dtypes));
    CHECK_FALSE(ferry::is_known(static_cast<DType>(5)));
    CHECK_FALSE(ferry::is_known(static_cast<DType>(42)));
    CHECK(std::string(ferry::name_of(static_cast<DType>(5))) == "unknown");
}
