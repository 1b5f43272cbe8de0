#pragma once
// ferry::GraphStatus and ferry::ArgsError — what building kernel args and launches reports.
//
// docs/cann-contract/kernel-args.md#status-codes: every append returns GRAPH_SUCCESS (0) or
// GRAPH_FAILED (0xFFFFFFFF), the two ge::graphStatus values CANN's call examples compare against.
// CANN says nothing more about a failure; ferry also keeps *why* the first failure happened
// (ArgsError), so bad input gets a clear error without changing the status contract.

#include <cstdint>

namespace ferry {

// ge::graphStatus's two values used by the args builder (CANN's call examples).
enum class GraphStatus : std::uint32_t {
    success = 0,          // ge::GRAPH_SUCCESS
    failed = 0xFFFFFFFFu, // ge::GRAPH_FAILED
};

[[nodiscard]] constexpr bool succeeded(GraphStatus s) noexcept {
    return s == GraphStatus::success;
}
[[nodiscard]] constexpr bool failed(GraphStatus s) noexcept {
    return s != GraphStatus::success;
}

// Why an append, an add_launch or a workspace request failed. `none` means it did not. The
// #anchors below are sections of docs/cann-contract/kernel-args.md.
enum class ArgsError : std::uint8_t {
    none,
    moved_from,              // the args object was moved from (or copied from a moved-from one)
    earlier_failure,         // sticky: an earlier append of this object failed
    index_out_of_range,      // an in/out/workspace index above INT32_MAX (#address-descriptors)
    block_size_zero,         // CustomDataBlock::size == 0 (#block-rules)
    block_data_null,         // CustomDataBlock::data == nullptr (#block-rules)
    block_reserved_nonzero,  // a reserved byte is not zero (#block-rules)
    block_too_large,         // one block above the per-block limit (UINT32_MAX)
    launch_blocks_too_large, // the launch's blocks together above the per-launch limit
    too_many_slots,          // more than the slot limit (8192) in one launch
    empty_args,              // a launch without any slot (#extractargsdata)
    kernel_name_missing,     // LaunchInfo::kernel_name null or empty (#addlaunch, check 1)
    kernel_binary_missing,   // LaunchInfo::kernel_bin null or kernel_bin_size 0 (check 2)
    block_dim_zero,          // LaunchInfo::block_dim == 0 (check 3)
    stream_id_invalid,       // LaunchInfo::stream_id == UINT32_MAX (check 4)
    offline_target,          // a block in args lowered for an .omc / OM2 target (#offline-targets)
    unknown_workspace,       // a WorkspaceAddr whose index no malloc_workspace returned
    workspace_size_zero,     // malloc_workspace(0) (#workspaces)
    too_many_workspaces,     // more than UINT32_MAX workspaces (#workspaces)
};

[[nodiscard]] constexpr const char* describe(ArgsError e) noexcept {
    switch (e) {
    case ArgsError::none:
        return "no error";
    case ArgsError::moved_from:
        return "kernel args were moved from";
    case ArgsError::earlier_failure:
        return "an earlier append of these kernel args failed";
    case ArgsError::index_out_of_range:
        return "address index above INT32_MAX";
    case ArgsError::block_size_zero:
        return "CustomDataBlock size is 0";
    case ArgsError::block_data_null:
        return "CustomDataBlock data is null";
    case ArgsError::block_reserved_nonzero:
        return "CustomDataBlock reserved bytes are not zero";
    case ArgsError::block_too_large:
        return "CustomDataBlock larger than UINT32_MAX bytes";
    case ArgsError::launch_blocks_too_large:
        return "the blocks of one launch exceed UINT32_MAX bytes together";
    case ArgsError::too_many_slots:
        return "more than 8192 argument slots in one launch";
    case ArgsError::empty_args:
        return "kernel args without any slot";
    case ArgsError::kernel_name_missing:
        return "launch info: kernel name missing";
    case ArgsError::kernel_binary_missing:
        return "launch info: kernel binary missing";
    case ArgsError::block_dim_zero:
        return "launch info: block_dim is 0";
    case ArgsError::stream_id_invalid:
        return "launch info: stream id is UINT32_MAX";
    case ArgsError::offline_target:
        return "offline-model targets (.omc, OM2) do not support CustomDataBlock";
    case ArgsError::unknown_workspace:
        return "workspace index not returned by malloc_workspace";
    case ArgsError::workspace_size_zero:
        return "workspace size is 0";
    case ArgsError::too_many_workspaces:
        return "more than UINT32_MAX workspaces";
    }
    return "unknown error";
}

} // namespace ferry
