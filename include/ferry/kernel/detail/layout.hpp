#pragma once
// Where each block and workspace of a plan goes in its device image.
//
// Every block's device address is 512-byte aligned and the padding between blocks and after the
// last one is zero (docs/cann-contract/kernel-args.md#upload-and-alignment).
// Blocks of every launch, in launch order then append order, each start on a 512-byte boundary;
// the blocks' region ends on a 512-byte boundary; workspaces follow, each 512-byte aligned. The
// image is zero-filled before the blocks are copied in, so every padding byte is zero.

#include <cstddef>
#include <cstdint>
#include <ferry/kernel/launch_plan.hpp>
#include <span>
#include <vector>

namespace ferry {

// The alignment of every block's device address
// (docs/cann-contract/kernel-args.md#upload-and-alignment).
inline constexpr std::size_t k_block_alignment = 512;

namespace detail {

[[nodiscard]] constexpr std::uint64_t align_up(std::uint64_t n, std::uint64_t alignment) noexcept {
    return (n + alignment - 1) / alignment * alignment;
}

struct ImageLayout {
    std::vector<std::vector<std::uint64_t>> block_offsets; // [launch][block]
    std::vector<std::uint64_t> workspace_offsets;          // [workspace index]
    std::uint64_t blocks_end = 0;                          // end of the blocks' padded region
    std::uint64_t size = 0;                                // the whole image
};

[[nodiscard]] inline ImageLayout plan_layout(std::span<const LaunchRecord> launches,
                                             std::span<const std::size_t> workspaces) {
    ImageLayout layout;
    std::uint64_t cursor = 0;
    layout.block_offsets.reserve(launches.size());
    for (const LaunchRecord& launch : launches) {
        auto& offsets = layout.block_offsets.emplace_back();
        offsets.reserve(launch.args.blocks.size());
        for (const BlockRef& block : launch.args.blocks) {
            cursor = align_up(cursor, k_block_alignment);
            offsets.push_back(cursor);
            cursor += block.size;
        }
    }
    layout.blocks_end = align_up(cursor, k_block_alignment);
    cursor = layout.blocks_end;
    layout.workspace_offsets.reserve(workspaces.size());
    for (const std::size_t size : workspaces) {
        layout.workspace_offsets.push_back(cursor);
        cursor = align_up(cursor + size, k_block_alignment);
    }
    layout.size = cursor;
    return layout;
}

} // namespace detail
} // namespace ferry
