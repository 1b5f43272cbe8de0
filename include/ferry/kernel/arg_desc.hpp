#pragma once
// The address descriptors an args builder appends, and what each slot records about itself.
//
// docs/cann-contract/kernel-args.md#address-descriptors: InputAddr, OutputAddr and WorkspaceAddr
// are {uint32 index, const void* addr}; for inputs and outputs the index is the flattened
// per-instance index, for a workspace the value malloc_workspace returned.
// docs/cann-contract/kernel-args.md#slots: each append adds one slot and one descriptor; CANN's
// ge::ArgDesc records the kind (INPUT_INSTANCE, OUTPUT_INSTANCE, WORKSPACE, CUSTOM_VALUE); ferry
// adds `data_block` for CustomDataBlock (docs/cann-contract/kernel-args.md#customdatablock).

#include <cstdint>

namespace ferry {

struct InputAddr {
    std::uint32_t index = 0;
    const void* addr = nullptr;
};
struct OutputAddr {
    std::uint32_t index = 0;
    const void* addr = nullptr;
};
struct WorkspaceAddr {
    std::uint32_t index = 0;
    const void* addr = nullptr;
};

enum class ArgKind : std::uint8_t {
    input,        // slot = the input's address
    output,       // slot = the output's address
    workspace,    // slot = the workspace's address (resolved at load)
    custom_value, // slot = the value itself (AppendArg(uint64_t))
    data_block,   // slot = the device address of a CustomDataBlock (resolved at load)
};

struct ArgDesc {
    ArgKind kind = ArgKind::custom_value;
    std::uint32_t index = 0; // input/output/workspace index, or the block's number in its args
    friend bool operator==(const ArgDesc&, const ArgDesc&) noexcept = default;
};

} // namespace ferry
