#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/tensor/dims.hpp>
#include <vector>

using ferry::DimsRef;

namespace {
std::size_t count_of(DimsRef d) {
    return d.size();
}
} // namespace

TEST_CASE("DimsRef binds to braced lists, vectors, arrays and spans", "[tensor][dims]") {
    CHECK(count_of({1, 2, 3}) == 3);
    const std::vector<std::int64_t> v{4, 5};
    CHECK(count_of(v) == 2);
    const std::array<std::int64_t, 1> a{6};
    CHECK(count_of(a) == 1);
    CHECK(count_of(std::span<const std::int64_t>(v)) == 2);
    CHECK(DimsRef{}.empty());
    CHECK(DimsRef(v).span().data() == v.data()); // a view, not a copy
}

TEST_CASE("element_count: product, scalar, zero, negative, overflow", "[tensor][dims]") {
    CHECK(ferry::element_count(DimsRef{2, 3, 4}.span()) == 24u);
    CHECK(ferry::element_count(DimsRef{}.span()) == 1u);
    CHECK(ferry::element_count(DimsRef{5, 0}.span()) == 0u);
    CHECK_FALSE(ferry::element_count(DimsRef{-1, 4}.span()));
    CHECK_FALSE(ferry::element_count(DimsRef{INT64_MAX, 3}.span()));
    CHECK(ferry::element_count(DimsRef{INT64_MAX, INT64_MAX, 0}.span()) == 0u);
    CHECK(ferry::element_count(DimsRef{INT64_MAX, 2}.span()) == std::uint64_t{INT64_MAX} * 2);
}
