#include <catch2/catch.hpp>
#include <ferry/tensor/print.hpp>
#include <sstream>
#include <string>
#include <vector>

using ferry::DataItem;

namespace {
template <typename T>
std::string str(const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
}
} // namespace

TEST_CASE("items print kind, dtype, dims, size and leading values", "[tensor][print]") {
    CHECK(str(*DataItem::from(std::vector<float>{1, 2, 3, 4}, {1, 4})) ==
          "TENSOR float32 dims=(1, 4) bytes=16 values=[1, 2, 3, 4]");
    CHECK(str(*DataItem::from(std::vector<std::int8_t>{-1, 2})) ==
          "TENSOR int8 dims=(2) bytes=2 values=[-1, 2]");
    CHECK(str(*DataItem::from(std::vector<int>(10, 7))) ==
          "TENSOR int32 dims=(10) bytes=40 values=[7, 7, 7, 7, 7, 7, 7, 7, ...]");
    CHECK(str(DataItem::end_of_sequence()) == "END_OF_SEQUENCE");
    const std::vector<std::byte> raw{std::byte{1}};
    CHECK(str(*DataItem::copy_of(ferry::TensorKind::tensor, {1}, ferry::DType::int4, raw)) ==
          "TENSOR int4 dims=(1) bytes=1");
}

TEST_CASE("datasets print their name and one line per item", "[tensor][print]") {
    ferry::Dataset ds;
    REQUIRE(ds.set_name("d") == ferry::Status::ok);
    REQUIRE(ds.add(DataItem::abnormal()) == ferry::Status::ok);
    CHECK(str(ds) == "Dataset \"d\" (1 item)\n  [0] ABNORMAL");
}
