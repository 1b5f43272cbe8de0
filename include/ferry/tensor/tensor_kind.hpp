#pragma once
// ferry::TensorKind — what a DataItem carries: acltdtTensorType with CANN's numeric values
// (docs/cann-contract/tdt.md#tensor-kinds), plus the dims limit every creation path enforces.

#include <cstddef>
#include <cstdint>

namespace ferry {

enum class TensorKind : std::int32_t {
    undefined = -1,      // ACL_TENSOR_DATA_UNDEFINED
    tensor = 0,          // ACL_TENSOR_DATA_TENSOR: a normal tensor
    end_of_sequence = 1, // ACL_TENSOR_DATA_END_OF_SEQUENCE: "no more data"
    abnormal = 2,        // ACL_TENSOR_DATA_ABNORMAL: the producer failed
    slice_tensor = 3,    // ACL_TENSOR_DATA_SLICE_TENSOR: one slice of a tensor
    end_tensor = 4,      // ACL_TENSOR_DATA_END_TENSOR: the last slice
};

// docs/cann-contract/tdt.md#item-creation rule 3: MAX_DIM_CNT = 128 (128 passes, 129 fails).
inline constexpr std::size_t k_max_dims = 128;

// The kinds a message may carry on the wire (docs/cann-contract/tdt.md#tensor-kinds): a sender
// accepts only TENSOR, END_OF_SEQUENCE and ABNORMAL; a receiver also accepts SLICE_TENSOR and
// END_TENSOR.
[[nodiscard]] constexpr bool is_sendable(TensorKind k) noexcept {
    return k == TensorKind::tensor || k == TensorKind::end_of_sequence || k == TensorKind::abnormal;
}
[[nodiscard]] constexpr bool is_receivable(TensorKind k) noexcept {
    return static_cast<std::int32_t>(k) >= 0 && static_cast<std::int32_t>(k) <= 4;
}
// Kinds that carry dims, a dtype and a payload (docs/cann-contract/tdt.md#tensor-kinds: TENSOR,
// SLICE, END_TENSOR).
[[nodiscard]] constexpr bool carries_tensor(TensorKind k) noexcept {
    return k == TensorKind::tensor || k == TensorKind::slice_tensor || k == TensorKind::end_tensor;
}

[[nodiscard]] constexpr const char* name_of(TensorKind k) noexcept {
    switch (k) {
    case TensorKind::undefined:
        return "UNDEFINED";
    case TensorKind::tensor:
        return "TENSOR";
    case TensorKind::end_of_sequence:
        return "END_OF_SEQUENCE";
    case TensorKind::abnormal:
        return "ABNORMAL";
    case TensorKind::slice_tensor:
        return "SLICE_TENSOR";
    case TensorKind::end_tensor:
        return "END_TENSOR";
    }
    return "INVALID"; // creation does not range-check kinds; printing must not fail
}

} // namespace ferry
