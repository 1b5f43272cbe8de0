#pragma once
// ferry::CustomDataBlock — a variable-length, read-only byte block appended to kernel args.
//
// gert::CustomDataBlock (docs/cann-contract/kernel-args.md#customdatablock): `data` points at host
// bytes that are deep-copied when the block is appended (the caller may change or free them as soon
// as the append returns); `size` is in bytes, must be > 0, and is never passed to the kernel;
// `reserved` must be all zero — it is kept for binary compatibility (a future field shrinks the
// array so that sizeof stays fixed) and a non-zero byte is rejected so that stale values cannot
// later be read as meaning something. The kernel sees one 8-byte slot holding the block's device
// address (uploaded at load time).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ferry/kernel/args_status.hpp>
#include <iterator>
#include <limits>
#include <type_traits>

namespace ferry {

struct CustomDataBlock {
    const void* data = nullptr; // host bytes; deep-copied at append
    std::size_t size = 0;       // bytes; > 0; not passed to the kernel
    // Binary-compatibility reserve: all zero in this version.
    std::uint8_t reserved[8] = {0U, 0U, 0U, 0U, 0U, 0U, 0U, 0U};
};

// A later field takes its bytes from `reserved`, so sizeof(CustomDataBlock) never changes
// (docs/cann-contract/kernel-args.md#layout) — the layout is part of the ABI: pointer + size_t + 8
// bytes on the LP64 hosts ferry supports.
static_assert(sizeof(CustomDataBlock) == 24, "CustomDataBlock's size is fixed by CANN's ABI");
static_assert(offsetof(CustomDataBlock, reserved) == 16);
static_assert(std::is_standard_layout_v<CustomDataBlock> && std::is_aggregate_v<CustomDataBlock>);

// docs/cann-contract/kernel-args.md#limits: one block and the blocks of one launch together are at
// most UINT32_MAX bytes.
inline constexpr std::uint64_t k_max_block_size = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::uint64_t k_max_launch_block_bytes = std::numeric_limits<std::uint32_t>::max();

// Checks one block against docs/cann-contract/kernel-args.md#block-rules without touching its
// bytes, so a block near the limit can be checked without a buffer of that size. Order: size, data,
// reserved, then the limit.
[[nodiscard]] constexpr ArgsError validate(const CustomDataBlock& block,
                                           std::uint64_t max_size = k_max_block_size) noexcept {
    if (block.size == 0) {
        return ArgsError::block_size_zero;
    }
    if (block.data == nullptr) {
        return ArgsError::block_data_null;
    }
    if (std::any_of(std::begin(block.reserved), std::end(block.reserved),
                    [](std::uint8_t b) { return b != 0U; })) {
        return ArgsError::block_reserved_nonzero;
    }
    if (block.size > max_size) {
        return ArgsError::block_too_large;
    }
    return ArgsError::none;
}

// Whether `added` more block bytes still fit a launch that already holds `held` (no overflow:
// both operands are below 2^64 - 2^32 whenever they passed validate()).
[[nodiscard]] constexpr bool
fits_launch(std::uint64_t held, std::uint64_t added,
            std::uint64_t max_total = k_max_launch_block_bytes) noexcept {
    return held <= max_total && added <= max_total - held;
}

} // namespace ferry
