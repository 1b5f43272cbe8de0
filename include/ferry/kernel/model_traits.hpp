#pragma once
// Model targets and the limits of one launch's args, as one traits policy.
//
// Blocks are not supported by device-side offline models (.omc) nor OM2 models, and CANN asks for
// an explicit compile-time error (docs/cann-contract/kernel-args.md#offline-targets) — so an args
// builder whose traits say `supports_data_blocks = false` has no CustomDataBlock append at all (a
// compile error naming the constraint). The limits (UINT32_MAX per block and per launch, 8192
// slots) are traits members too, so tests can exercise the cumulative limit end to end with small
// numbers instead of gigabytes of memory.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ferry/kernel/custom_data_block.hpp>

namespace ferry {

enum class ModelTarget : std::uint8_t {
    online, // a model loaded by the runtime (host-side lowering, blocks uploaded at load)
    omc,    // device-side offline model (.omc): no blocks
    om2,    // OM2 model: no blocks
};

[[nodiscard]] constexpr bool supports_data_blocks(ModelTarget target) noexcept {
    return target == ModelTarget::online;
}

// At most 8192 slots in one launch (docs/cann-contract/kernel-args.md#limits).
inline constexpr std::size_t k_max_launch_slots = 8192;

// The default traits: an online model with CANN's limits.
struct OnlineModel {
    static constexpr ModelTarget target = ModelTarget::online;
    static constexpr bool supports_data_blocks = true;
    static constexpr std::uint64_t max_block_size = k_max_block_size;
    static constexpr std::uint64_t max_launch_block_bytes = k_max_launch_block_bytes;
    static constexpr std::size_t max_slots = k_max_launch_slots;
};

struct OmcModel : OnlineModel {
    static constexpr ModelTarget target = ModelTarget::omc;
    static constexpr bool supports_data_blocks = false;
};

struct Om2Model : OnlineModel {
    static constexpr ModelTarget target = ModelTarget::om2;
    static constexpr bool supports_data_blocks = false;
};

template <typename T>
concept ArgsTraits = requires {
    { T::target } -> std::convertible_to<ModelTarget>;
    { T::supports_data_blocks } -> std::convertible_to<bool>;
    { T::max_block_size } -> std::convertible_to<std::uint64_t>;
    { T::max_launch_block_bytes } -> std::convertible_to<std::uint64_t>;
    { T::max_slots } -> std::convertible_to<std::size_t>;
}
&&(T::supports_data_blocks == supports_data_blocks(T::target)) &&
    (T::max_block_size <= k_max_block_size) &&
    (T::max_launch_block_bytes <= k_max_launch_block_bytes) && (T::max_slots <= k_max_launch_slots);

} // namespace ferry
