#pragma once
// Channel capacities: a compile-time constant in [2, 8192], or ferry::dynamic_capacity for a
// capacity chosen at construction (the C API's acltdtCreateChannelWithCapacity needs that).
//
// A constant capacity is checked by static_assert(2 <= Capacity && Capacity <= 8192)
// (docs/cann-contract/tdt.md#typed-channels); the range is CANN's documented [2, 8192]
// (docs/cann-contract/tdt.md#channel-capacity). A channel of capacity N holds exactly N items
// (CANN's driver ring holds N - 1: see docs/channel.md).

#include <cstddef>
#include <limits>

namespace ferry {

inline constexpr std::size_t k_min_channel_capacity = 2;
inline constexpr std::size_t k_max_channel_capacity = 8192;

// The Capacity argument that defers the capacity to the constructor (checked at run time).
inline constexpr std::size_t dynamic_capacity = std::numeric_limits<std::size_t>::max();

[[nodiscard]] constexpr bool is_valid_channel_capacity(std::size_t capacity) noexcept {
    return k_min_channel_capacity <= capacity && capacity <= k_max_channel_capacity;
}

// A Capacity template argument that Channel accepts: dynamic_capacity or a value in [2, 8192].
template <std::size_t Capacity>
concept ChannelCapacity = Capacity == dynamic_capacity || is_valid_channel_capacity(Capacity);

} // namespace ferry
