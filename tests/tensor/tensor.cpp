#include <array>
#include <catch2/catch.hpp>
#include <complex>
#include <cstdint>
#include <ferry/tensor/tensor.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <limits>
#include <vector>

using ferry::DataItem;
using ferry::Dataset;
using ferry::DType;
using ferry::Status;
using ferry::Tensor;

// Reading a Tensor<T> as another type does not compile: there is no way to ask.
template <typename Tn, typename U>
concept readable_as = requires(const Tn& t) {
    t.template values<U>();
};
static_assert(!readable_as<Tensor<float>, int>);
static_assert(!readable_as<Tensor<float>, float>); // values() takes no type: it is T's
static_assert(std::is_same_v<decltype(std::declval<const Tensor<float>&>().values()),
                             std::span<const float>>);
// A Tensor<T> only exists for element types, and only builds from T values.
template <typename T>
concept tensor_of = requires {
    typename Tensor<T>;
};
static_assert(!tensor_of<long double>);
static_assert(!tensor_of<void*>);
template <typename T, typename R>
concept buildable_from = requires(const R& r) {
    Tensor<T>::from(r);
};
static_assert(buildable_from<float, std::vector<float>>);
static_assert(!buildable_from<float, std::vector<double>>);
static_assert(!buildable_from<float, std::vector<int>>);
static_assert(std::is_nothrow_move_constructible_v<Tensor<double>>);

namespace {
// Distinct, non-trivial values of T for element i.
template <typename T>
T sample_value(int i) {
    if constexpr (std::is_same_v<T, bool>) {
        return i % 3 == 0;
    } else if constexpr (std::is_same_v<T, ferry::float16> || std::is_same_v<T, ferry::bfloat16>) {
        return T(static_cast<float>(i) * 0.5F - 3.0F);
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
        return T(i, -i);
    } else if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(i) / 3 - 1;
    } else {
        return static_cast<T>(std::numeric_limits<T>::max() - i);
    }
}
} // namespace

TEMPLATE_TEST_CASE("typed round trip through the wire for every element dtype", "[tensor][tensor]",
                   bool, std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t,
                   std::uint32_t, std::int64_t, std::uint64_t, float, double, ferry::float16,
                   ferry::bfloat16, std::complex<float>, std::complex<double>) {
    std::array<TestType, 12> values{}; // not std::vector: vector<bool> is not contiguous
    for (int i = 0; i < 12; ++i) {
        values[static_cast<std::size_t>(i)] = sample_value<TestType>(i);
    }
    auto t = Tensor<TestType>::from(values, {3, 4});
    REQUIRE(t);
    CHECK(t->item().dtype() == ferry::dtype_of<TestType>);
    CHECK(t->size() == 12);

    Dataset ds;
    REQUIRE(ds.add(std::move(*t).into_item()) == Status::ok);
    const auto msg = ferry::serialize(ds);
    REQUIRE(msg);
    for (const auto& back : {ferry::parse(*msg), ferry::parse_view(*msg)}) {
        REQUIRE(back);
        const auto typed = Tensor<TestType>::from_item((*back)[0]);
        REQUIRE(typed);
        CHECK(typed->dims().size() == 2);
        CHECK(typed->dims()[0] == 3);
        CHECK(typed->dims()[1] == 4);
        REQUIRE(typed->values().size() == values.size());
        CHECK(std::equal(values.begin(), values.end(), typed->values().begin()));
    }
}

TEST_CASE("the dtypes without a C++ element type round-trip as bytes", "[tensor][tensor]") {
    for (const DType dtype : ferry::all_dtypes) {
        const std::vector<std::byte> bytes{std::byte{1}, std::byte{2}, std::byte{3}};
        Dataset ds;
        REQUIRE(ds.add(*DataItem::copy_of(ferry::TensorKind::tensor, {3}, dtype, bytes)) ==
                Status::ok);
        const auto back = ferry::parse(*ferry::serialize(ds));
        REQUIRE(back);
        CAPTURE(ferry::name_of(dtype));
        CHECK((*back)[0].dtype() == dtype);
        CHECK(std::ranges::equal((*back)[0].bytes(), bytes));
    }
}

TEST_CASE("from_item checks kind, dtype and shape", "[tensor][tensor]") {
    const auto floats = DataItem::from(std::vector<float>{1, 2});
    REQUIRE(floats);
    CHECK(Tensor<float>::from_item(*floats));
    CHECK(Tensor<double>::from_item(*floats).status() == Status::unsupported_data_type);
    CHECK(Tensor<std::int32_t>::from_item(*floats).status() == Status::unsupported_data_type);
    CHECK(Tensor<float>::from_item(DataItem::end_of_sequence()).status() == Status::invalid_param);
}

TEST_CASE("zeros, values and equality", "[tensor][tensor]") {
    auto z = Tensor<std::int32_t>::zeros({2, 3});
    REQUIRE(z);
    CHECK(z->size() == 6);
    CHECK(std::ranges::all_of(z->values(), [](std::int32_t v) { return v == 0; }));
    z->values()[4] = 9;
    auto copy = *z;
    CHECK(copy == *z);
    copy.values()[0] = 1;
    CHECK_FALSE(copy == *z);
    CHECK(z->values()[0] == 0); // the copy was deep
    CHECK(Tensor<float>::zeros({-1}).status() == Status::invalid_param);
    const auto empty = Tensor<float>::zeros({0});
    REQUIRE(empty);
    CHECK(empty->values().empty());
    const auto scalar = Tensor<double>::from(std::vector<double>{4.0}, {});
    REQUIRE(scalar);
    CHECK(scalar->dims().empty());
    CHECK(scalar->values()[0] == 4.0);
}

TEST_CASE("a moved Tensor keeps its buffer", "[tensor][tensor]") {
    auto t = Tensor<std::uint8_t>::zeros({1024, 1024});
    REQUIRE(t);
    const auto* p = t->values().data();
    Tensor<std::uint8_t> moved = std::move(*t);
    CHECK(moved.values().data() == p);
    const DataItem item = std::move(moved).into_item();
    CHECK(item.data() == p);
}
