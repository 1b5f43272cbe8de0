#pragma once
// The per-item header of a ferry/CANN message and the arithmetic of its layout
// (docs/cann-contract/tdt.md#item-header). Internals of wire_format.hpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ferry::detail {

// CANN's acl::ItemInfo, host byte order. Note CANN's naming swap: the field it calls
// `dataType` holds the TDT kind and `tensorType` holds the aclDataType; here they are named by
// what they hold. Every field is naturally aligned, so no packing pragma is needed and the
// static_asserts below prove there is no padding.
struct WireItemHeader {
    std::int32_t version;           // 0 = item; 1 = the dataset-name item
    std::int32_t kind;              // TensorKind (CANN: "dataType")
    std::uint32_t cur_cnt;          // 0-based index of this item in the message
    std::uint32_t cnt;              // number of items in the message
    std::int32_t dtype;             // DType / aclDataType (CANN: "tensorType")
    std::uint32_t dim_num;          // number of int64 dims that follow the header
    std::uint32_t dynamic_bit_size; // dims bytes + padding: header block size − 64
    std::uint16_t slice_num;
    std::uint16_t slice_id;
    std::array<std::uint8_t, 24> reserved; // zero when written
    std::uint64_t data_len;                // payload bytes
};

static_assert(sizeof(WireItemHeader) == 64);
static_assert(std::is_trivially_copyable_v<WireItemHeader>);
static_assert(std::has_unique_object_representations_v<WireItemHeader>); // no padding bytes
static_assert(offsetof(WireItemHeader, version) == 0);
static_assert(offsetof(WireItemHeader, kind) == 4);
static_assert(offsetof(WireItemHeader, cur_cnt) == 8);
static_assert(offsetof(WireItemHeader, cnt) == 12);
static_assert(offsetof(WireItemHeader, dtype) == 16);
static_assert(offsetof(WireItemHeader, dim_num) == 20);
static_assert(offsetof(WireItemHeader, dynamic_bit_size) == 24);
static_assert(offsetof(WireItemHeader, slice_num) == 28);
static_assert(offsetof(WireItemHeader, slice_id) == 30);
static_assert(offsetof(WireItemHeader, reserved) == 32);
static_assert(offsetof(WireItemHeader, data_len) == 56);

inline constexpr std::size_t k_wire_header_size = 64;
inline constexpr std::size_t k_wire_alignment = 64; // TDT_TENSOR_ALIGNE_UNIT
inline constexpr std::int32_t k_wire_version_item = 0;
inline constexpr std::int32_t k_wire_version_name = 1;

[[nodiscard]] constexpr std::size_t align_up(std::size_t n) noexcept {
    return (n + (k_wire_alignment - 1)) & ~(k_wire_alignment - 1);
}

// Where the payload of an item whose header starts at `offset` begins: the header block (header,
// dims, padding) ends on a 64-byte boundary of the message
// (docs/cann-contract/tdt.md#padding). `offset + 64 + 8*128 + 63` is
// checked for overflow by the callers, which bound offset by a real buffer size.
[[nodiscard]] constexpr std::size_t payload_offset(std::size_t offset,
                                                   std::size_t dim_num) noexcept {
    return align_up(offset + k_wire_header_size + dim_num * sizeof(std::int64_t));
}

} // namespace ferry::detail
