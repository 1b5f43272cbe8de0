#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <ferry/tensor/data_item.hpp>
#include <vector>

using ferry::DataItem;
using ferry::DType;
using ferry::Status;
using ferry::TensorKind;

namespace {
std::array<std::int64_t, 129> many_dims() {
    std::array<std::int64_t, 129> d{};
    d.fill(1);
    return d;
}
} // namespace

// docs/cann-contract/tdt.md#item-creation, one test per failing case.
TEST_CASE("creation rule 1: dims null with dim_num != 0 fails", "[tensor][data_item]") {
    float data[4] = {};
    const auto item = DataItem::borrow(TensorKind::tensor, nullptr, 2, DType::float32, data, 16);
    CHECK(item.status() == Status::invalid_param);
    // Rule 1 comes before rule 3: a null dims pointer is reported even with 200 dims.
    CHECK(DataItem::borrow(TensorKind::tensor, nullptr, 200, DType::float32, data, 16).status() ==
          Status::invalid_param);
}

TEST_CASE("creation rule 2: dims non-null with dim_num 0 fails", "[tensor][data_item]") {
    const std::int64_t dims[1] = {4};
    float data[4] = {};
    CHECK(DataItem::borrow(TensorKind::tensor, dims, 0, DType::float32, data, 16).status() ==
          Status::invalid_param);
    // Also for a marker: rule 2 is checked before the kind is looked at.
    CHECK(DataItem::borrow(TensorKind::end_of_sequence, dims, 0, DType::undefined, nullptr, 0)
              .status() == Status::invalid_param);
}

TEST_CASE("creation rule 3: 128 dims pass, 129 fail", "[tensor][data_item]") {
    const auto dims = many_dims();
    std::byte one[1] = {};
    const auto ok = DataItem::borrow(TensorKind::tensor, dims.data(), 128, DType::uint8, one, 1);
    REQUIRE(ok);
    CHECK(ok->dim_num() == 128);
    CHECK(DataItem::borrow(TensorKind::tensor, dims.data(), 129, DType::uint8, one, 1).status() ==
          Status::invalid_param);
    CHECK(DataItem::copy_of(TensorKind::tensor, dims, DType::uint8, one).status() ==
          Status::invalid_param);
    CHECK(DataItem::from(std::vector<std::uint8_t>{1}, dims).status() == Status::invalid_param);
}

TEST_CASE("creation rule 4: a non-TENSOR kind with dims fails", "[tensor][data_item]") {
    const std::int64_t dims[2] = {1, 4};
    for (const auto kind :
         {TensorKind::undefined, TensorKind::end_of_sequence, TensorKind::abnormal,
          TensorKind::slice_tensor, TensorKind::end_tensor, static_cast<TensorKind>(42)}) {
        CAPTURE(static_cast<int>(kind));
        CHECK(DataItem::borrow(kind, dims, 2, DType::float32, nullptr, 0).status() ==
              Status::invalid_param);
    }
    CHECK(DataItem::copy_of(TensorKind::abnormal, {1}, DType::float32, {}).status() ==
          Status::invalid_param);
}

TEST_CASE("a non-TENSOR item carries no dims, no dtype, no data, size 0", "[tensor][data_item]") {
    float data[4] = {1, 2, 3, 4};
    for (const auto kind :
         {TensorKind::undefined, TensorKind::end_of_sequence, TensorKind::abnormal,
          TensorKind::slice_tensor, TensorKind::end_tensor}) {
        const auto item = DataItem::borrow(kind, nullptr, 0, DType::float32, data, 16);
        REQUIRE(item);
        CHECK(item->kind() == kind);
        CHECK(item->dtype() == DType::undefined);
        CHECK(item->dim_num() == 0);
        CHECK(item->data() == nullptr);
        CHECK(item->size() == 0);
    }
    CHECK(DataItem::end_of_sequence().kind() == TensorKind::end_of_sequence);
    CHECK(DataItem::abnormal().kind() == TensorKind::abnormal);
    CHECK(DataItem::abnormal().size() == 0);
}

TEST_CASE("creation does not range-check the kind", "[tensor][data_item]") {
    const auto item =
        DataItem::borrow(static_cast<TensorKind>(42), nullptr, 0, DType::float32, nullptr, 0);
    REQUIRE(item);
    CHECK(static_cast<int>(item->kind()) == 42);
}

TEST_CASE("a TENSOR item borrows its data, accepts null data and any dtype",
          "[tensor][data_item]") {
    float data[4] = {1, 2, 3, 4};
    const std::int64_t dims[2] = {1, 4};
    const auto item = DataItem::borrow(TensorKind::tensor, dims, 2, DType::float32, data, 16);
    REQUIRE(item);
    CHECK(item->data() == data); // not copied
    CHECK_FALSE(item->is_owning());
    CHECK(item->size() == 16);
    CHECK(item->dims()[0] == 1);
    CHECK(item->dims()[1] == 4);
    CHECK(item->slice() == ferry::SliceInfo{0, 0});

    const auto no_data = DataItem::borrow(TensorKind::tensor, dims, 2, DType::float32, nullptr, 8);
    REQUIRE(no_data);
    CHECK(no_data->size() == 8);
    CHECK_FALSE(no_data->has_data());
    CHECK(no_data->bytes().empty());

    const auto odd =
        DataItem::borrow(TensorKind::tensor, nullptr, 0, static_cast<DType>(99), nullptr, 0);
    REQUIRE(odd);
    CHECK(static_cast<int>(odd->dtype()) == 99);
}

TEST_CASE("dims 0 (a scalar) and items with no data", "[tensor][data_item]") {
    const auto scalar = DataItem::from(std::array<double, 1>{2.5}, {});
    REQUIRE(scalar);
    CHECK(scalar->dim_num() == 0);
    CHECK((*scalar->values<double>())[0] == 2.5);

    const auto empty = DataItem::from(std::vector<float>{}, {0, 3});
    REQUIRE(empty);
    CHECK(empty->size() == 0);
    CHECK_FALSE(empty->has_data());
    CHECK(empty->values<float>()->empty());
}

TEST_CASE("typed creation checks element count against dims", "[tensor][data_item]") {
    const std::vector<float> v{1, 2, 3, 4, 5, 6};
    CHECK(DataItem::from(v, {2, 3}));
    CHECK(DataItem::from(v, {3, 2}));
    CHECK(DataItem::from(v, {2, 2}).status() == Status::invalid_param);
    CHECK(DataItem::from(v, {-1, 6}).status() == Status::invalid_param);
    CHECK(DataItem::from(v, {}).status() == Status::invalid_param); // a scalar holds 1 value
    CHECK(DataItem::from(v, {INT64_MAX, INT64_MAX}).status() == Status::invalid_param);
    const auto flat = DataItem::from(v);
    REQUIRE(flat);
    CHECK(flat->dim_num() == 1);
    CHECK(flat->dims()[0] == 6);
    CHECK(flat->dtype() == DType::float32);
    CHECK(flat->is_owning());
    CHECK(flat->data() != v.data());
}

TEST_CASE("typed read-back is checked at run time", "[tensor][data_item]") {
    const std::vector<std::int32_t> v{1, 2, 3};
    const auto item = DataItem::from(v);
    REQUIRE(item);
    CHECK(item->values<std::int32_t>());
    CHECK(item->values<float>().status() == Status::unsupported_data_type);
    CHECK(item->values<std::uint32_t>().status() == Status::unsupported_data_type);

    // Bytes that are not whole elements, or that disagree with the dims.
    std::int32_t raw[3] = {1, 2, 3};
    const std::int64_t dims[1] = {3};
    const auto short_item = DataItem::borrow(TensorKind::tensor, dims, 1, DType::int32, raw, 10);
    REQUIRE(short_item);
    CHECK(short_item->values<std::int32_t>().status() == Status::invalid_param);
    const auto wrong_dims = DataItem::borrow(TensorKind::tensor, dims, 1, DType::int32, raw, 8);
    REQUIRE(wrong_dims);
    CHECK(wrong_dims->values<std::int32_t>().status() == Status::invalid_param);
    const auto null_data = DataItem::borrow(TensorKind::tensor, dims, 1, DType::int32, nullptr, 12);
    REQUIRE(null_data);
    CHECK(null_data->values<std::int32_t>().status() == Status::invalid_param);
    // Misaligned payload.
    alignas(8) std::byte buf[16] = {};
    const auto misaligned =
        DataItem::borrow(TensorKind::tensor, nullptr, 0, DType::int32, buf + 1, 4);
    REQUIRE(misaligned);
    CHECK(misaligned->values<std::int32_t>().status() == Status::invalid_param);
}

TEST_CASE("a bool payload reads back only when every byte is 0 or 1", "[tensor][data_item]") {
    std::uint8_t raw[3] = {0, 1, 1};
    const std::int64_t dims[1] = {3};
    const auto item = DataItem::borrow(TensorKind::tensor, dims, 1, DType::boolean, raw, 3);
    REQUIRE(item);
    REQUIRE(item->values<bool>());
    CHECK((*item->values<bool>())[1]);
    raw[2] = 141; // a received byte that is no bool: reading it as bool would be UB
    CHECK(item->values<bool>().status() == Status::invalid_param);
}

TEST_CASE("a borrowing view sees the caller's values", "[tensor][data_item]") {
    std::vector<std::int16_t> v{1, 2, 3, 4};
    const auto item = DataItem::view(v, {2, 2});
    REQUIRE(item);
    CHECK_FALSE(item->is_owning());
    v[3] = 40;
    CHECK((*item->values<std::int16_t>())[3] == 40);
    CHECK(DataItem::view(v, {3}).status() == Status::invalid_param);
}

TEST_CASE("copying: owning items deep-copy, borrowing items copy the reference",
          "[tensor][data_item]") {
    const auto owned = DataItem::from(std::vector<std::uint8_t>{1, 2, 3});
    REQUIRE(owned);
    DataItem copy = *owned;
    CHECK(copy == *owned);
    CHECK(copy.data() != owned->data());
    CHECK(copy.is_owning());

    std::uint8_t raw[3] = {4, 5, 6};
    const auto view = DataItem::view(std::span(raw), {3});
    REQUIRE(view);
    DataItem view_copy = *view;
    CHECK(view_copy.data() == raw);
    const auto deep = view->to_owning();
    REQUIRE(deep);
    CHECK(deep->is_owning());
    CHECK(deep->data() != raw);
    CHECK(*deep == *view);

    DataItem assigned;
    assigned = *owned;
    CHECK(assigned == *owned);
    const DataItem& alias = assigned;
    assigned = alias; // self-assignment keeps the value
    CHECK(assigned == *owned);
}

TEST_CASE("moving a 64 MiB owning item is O(1): the buffer changes hands", "[tensor][data_item]") {
    std::vector<std::uint8_t> big(64u << 20, 7);
    auto item = DataItem::from(big);
    REQUIRE(item);
    big.clear();
    big.shrink_to_fit();
    const void* payload = item->data();
    DataItem moved = std::move(*item);
    CHECK(moved.data() == payload); // the same bytes: nothing was copied
    CHECK(moved.size() == (64u << 20));
    CHECK(item->data() == nullptr); // NOLINT: the moved-from item is empty, not dangling
    CHECK(item->size() == 0);
    DataItem assigned;
    assigned = std::move(moved);
    CHECK(assigned.data() == payload);
}

TEST_CASE("equality compares content, not ownership", "[tensor][data_item]") {
    std::vector<float> v{1, 2};
    const auto owned = DataItem::from(v, {2});
    const auto view = DataItem::view(v, {2});
    REQUIRE(owned);
    REQUIRE(view);
    CHECK(*owned == *view);
    v[0] = 9;
    CHECK_FALSE(*owned == *view);
    CHECK_FALSE(*owned == *DataItem::from(std::vector<float>{1, 2}, {1, 2}));
    CHECK_FALSE(*owned == DataItem::end_of_sequence());
    CHECK(DataItem::end_of_sequence() == DataItem::end_of_sequence());
}
