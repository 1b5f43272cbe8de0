#include <catch2/catch.hpp>
#include <ferry/tensor/tensor_kind.hpp>
#include <string>

using ferry::TensorKind;

// acltdtTensorType's values (docs/cann-contract/tdt.md#tensor-kinds).
static_assert(static_cast<int>(TensorKind::undefined) == -1);
static_assert(static_cast<int>(TensorKind::tensor) == 0);
static_assert(static_cast<int>(TensorKind::end_of_sequence) == 1);
static_assert(static_cast<int>(TensorKind::abnormal) == 2);
static_assert(static_cast<int>(TensorKind::slice_tensor) == 3);
static_assert(static_cast<int>(TensorKind::end_tensor) == 4);
static_assert(ferry::k_max_dims == 128);

TEST_CASE("which kinds can be sent, received, and carry a tensor", "[tensor][kind]") {
    CHECK(ferry::is_sendable(TensorKind::tensor));
    CHECK(ferry::is_sendable(TensorKind::end_of_sequence));
    CHECK(ferry::is_sendable(TensorKind::abnormal));
    CHECK_FALSE(ferry::is_sendable(TensorKind::undefined));
    CHECK_FALSE(ferry::is_sendable(TensorKind::slice_tensor));
    CHECK_FALSE(ferry::is_sendable(TensorKind::end_tensor));
    CHECK_FALSE(ferry::is_sendable(static_cast<TensorKind>(5)));
    CHECK(ferry::is_receivable(TensorKind::end_tensor));
    CHECK(ferry::is_receivable(TensorKind::slice_tensor));
    CHECK_FALSE(ferry::is_receivable(TensorKind::undefined));
    CHECK_FALSE(ferry::is_receivable(static_cast<TensorKind>(5)));
    CHECK(ferry::carries_tensor(TensorKind::slice_tensor));
    CHECK_FALSE(ferry::carries_tensor(TensorKind::abnormal));
}

TEST_CASE("every kind has a name, and so does an out-of-range one", "[tensor][kind]") {
    CHECK(std::string(ferry::name_of(TensorKind::end_of_sequence)) == "END_OF_SEQUENCE");
    CHECK(std::string(ferry::name_of(TensorKind::tensor)) == "TENSOR");
    CHECK(std::string(ferry::name_of(static_cast<TensorKind>(99))) == "INVALID");
}
