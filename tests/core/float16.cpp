#include <ferry/core/float16.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using ferry::bfloat16;
using ferry::float16;

static_assert(float16(1.0f).bits == 0x3C00);
static_assert(float16(-2.0f).bits == 0xC000);
static_assert(bfloat16(1.0f).bits == 0x3F80);

TEST_CASE("float16 converts exactly representable values both ways", "[core][float16]") {
    for (float v : {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 65504.0f, 1.0f / 1024.0f, 6.103515625e-05f}) {
        CHECK(static_cast<float>(float16(v)) == v);
    }
    CHECK(float16(0.0f).bits == 0x0000);
    CHECK(float16(-0.0f).bits == 0x8000);
    CHECK(float16(65504.0f).bits == 0x7BFF);
    CHECK(float16::from_bits(0x0001) == float16(5.960464477539063e-08f)); // smallest subnormal
}

TEST_CASE("float16 rounds to nearest even and saturates to infinity", "[core][float16]") {
    CHECK(float16(1.0f + 1.0f / 2048.0f).bits == 0x3C00); // halfway, even stays
    CHECK(float16(1.0f + 3.0f / 2048.0f).bits == 0x3C02); // halfway, odd rounds up
    CHECK(float16(1.0e6f).bits == 0x7C00);
    CHECK(float16(-std::numeric_limits<float>::infinity()).bits == 0xFC00);
    CHECK(std::isnan(static_cast<float>(float16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("bfloat16 keeps the float exponent", "[core][float16]") {
    CHECK(static_cast<float>(bfloat16(3.0f)) == 3.0f);
    CHECK(static_cast<float>(bfloat16(1.0e30f)) == Approx(1.0e30f).epsilon(0.01));
    CHECK(std::isnan(static_cast<float>(bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}
