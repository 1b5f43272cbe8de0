#pragma once
// ferry::afd size calculators: every buffer size the protocol implies, in 64 bits, checked.
//
// docs/cann-contract/afd.md#size-formulas. CANN multiplies session_num·micro_batch_num
// in uint32 before its overflow check (docs/cann-contract/afd.md#known-quirks), so a large A·M
// wraps and a too-small buffer passes; ferry forms every product in uint64 and returns std::nullopt
// when one overflows.

#include <cstdint>
#include <optional>

namespace ferry::afd {

// A, M, BS, K: the four numbers every size depends on (CommonArea).
struct Geometry {
    std::uint32_t session_num = 0;         // A
    std::uint32_t micro_batch_num = 0;     // M
    std::uint32_t micro_batch_size = 0;    // BS
    std::uint32_t selected_expert_num = 0; // K
    friend constexpr bool operator==(const Geometry&, const Geometry&) noexcept = default;
};

using Size = std::optional<std::uint64_t>;

[[nodiscard]] constexpr Size checked_mul(Size a, Size b) noexcept {
    std::uint64_t r = 0;
    if (!a || !b || __builtin_mul_overflow(*a, *b, &r)) {
        return std::nullopt;
    }
    return r;
}
[[nodiscard]] constexpr Size checked_add(Size a, Size b) noexcept {
    std::uint64_t r = 0;
    if (!a || !b || __builtin_add_overflow(*a, *b, &r)) {
        return std::nullopt;
    }
    return r;
}
// The smallest multiple of `alignment` (> 0) not below `n`.
[[nodiscard]] constexpr Size align_up(Size n, std::uint64_t alignment) noexcept {
    if (!n || alignment == 0) {
        return std::nullopt;
    }
    const Size bumped = checked_add(n, alignment - 1);
    return bumped ? Size(*bumped / alignment * alignment) : std::nullopt;
}

// Expert ids per descriptor or per micro batch: BS·K.
[[nodiscard]] constexpr Size tokens_times_experts(const Geometry& g) noexcept {
    return checked_mul(g.micro_batch_size, g.selected_expert_num);
}
// One FfnDataDesc: 8-byte header {flag, layer_id} + 4·BS·K bytes of expert ids.
[[nodiscard]] constexpr Size ffn_desc_size(const Geometry& g) noexcept {
    return checked_add(8, checked_mul(4, tokens_times_experts(g)));
}
// The FFN token_info buffer: A·M descriptors.
[[nodiscard]] constexpr Size ffn_token_info_size(const Geometry& g) noexcept {
    return checked_mul(checked_mul(g.session_num, g.micro_batch_num), ffn_desc_size(g));
}
// layer_ids, session_ids, micro_batch_ids outputs: int32[A] each.
[[nodiscard]] constexpr Size id_buffer_size(const Geometry& g) noexcept {
    return checked_mul(4, g.session_num);
}
// expert_ids output: int32[A][BS][K].
[[nodiscard]] constexpr Size expert_ids_buffer_size(const Geometry& g) noexcept {
    return checked_mul(checked_mul(4, g.session_num), tokens_times_experts(g));
}
// The attention flag table: int32[M][BS·K], no session dimension.
[[nodiscard]] constexpr Size attention_token_info_size(const Geometry& g) noexcept {
    return checked_mul(checked_mul(4, g.micro_batch_num), tokens_times_experts(g));
}
// FFN token data: bytes [A][M][BS][K][token_size].
[[nodiscard]] constexpr Size ffn_token_data_size(const Geometry& g, std::uint64_t token_size) noexcept {
    return checked_mul(checked_mul(checked_mul(g.session_num, g.micro_batch_num), tokens_times_experts(g)),
                       token_size);
}
// Attention token data: bytes [M][BS][K][token_size].
[[nodiscard]] constexpr Size attention_token_data_size(const Geometry& g, std::uint64_t token_size) noexcept {
    return checked_mul(checked_mul(g.micro_batch_num, tokens_times_experts(g)), token_size);
}

// How a window is split into [token_info | pad to 512 | token_data] (torch_npu's
// ScheduleContextHolder and AttentionToFFN agree, docs/cann-contract/afd.md#buffer-conventions).
// info_size is the unaligned size the holder stores in token_info_buf_size.
struct WindowSplit {
    std::uint64_t info_size = 0;
    std::uint64_t data_offset = 0; // AlignUp(info_size, 512)
    std::uint64_t data_size = 0;   // window_size - data_offset
    friend constexpr bool operator==(const WindowSplit&, const WindowSplit&) noexcept = default;
};

// nullopt when a product overflows or the window has no room for data (the holder's CheckParams:
// the window must be larger than the aligned info size).
[[nodiscard]] constexpr std::optional<WindowSplit> split_window(Size info_size,
                                                                std::uint64_t window_size) noexcept {
    const Size offset = align_up(info_size, 512);
    if (!offset || window_size <= *offset) {
        return std::nullopt;
    }
    return WindowSplit{*info_size, *offset, window_size - *offset};
}
[[nodiscard]] constexpr std::optional<WindowSplit> ffn_window_split(const Geometry& g,
                                                                    std::uint64_t window_size) noexcept {
    return split_window(ffn_token_info_size(g), window_size);
}
[[nodiscard]] constexpr std::optional<WindowSplit> attention_window_split(const Geometry& g,
                                                                          std::uint64_t window_size) noexcept {
    return split_window(attention_token_info_size(g), window_size);
}

} // namespace ferry::afd
