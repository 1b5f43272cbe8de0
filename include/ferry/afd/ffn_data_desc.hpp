#pragma once
// ferry::afd::FfnDataDesc and the two flag tables of the protocol.
//
// docs/cann-contract/afd.md#descriptors: the FFN token_info buffer is a dense
// [session][micro_batch] array of descriptors {int32 flag, int32 layer_id, int32
// expert_ids[BS][K]}, 8 + 4·BS·K bytes each; the attention token_info buffer is int32 flags
// [micro_batch][BS·K]. CANN reads the flags through `volatile`; ferry uses std::atomic_ref: a
// producer writes the ids and layer_id, then stores flag = 1 with release; a consumer loads the
// flag with acquire before it reads them (and the reverse when the consumer hands the slot back
// with flag = 0).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include <ferry/afd/schedule_context.hpp>
#include <ferry/afd/schedule_context_view.hpp>
#include <ferry/afd/sizes.hpp>
#include <ferry/core/contract.hpp>

namespace ferry::afd {

#pragma pack(push, 1)
// The fixed header; BS·K int32 expert ids follow it (a flexible array upstream).
struct FfnDataDesc {
    std::int32_t flag;
    std::int32_t layer_id;
};
#pragma pack(pop)
static_assert(sizeof(FfnDataDesc) == 8 && offsetof(FfnDataDesc, flag) == 0 &&
              offsetof(FfnDataDesc, layer_id) == 4);
inline constexpr std::size_t k_desc_expert_ids_offset = sizeof(FfnDataDesc);

// Flags are int32 atomics: table bases must be 4-byte aligned (descriptor sizes are multiples of 4).
inline constexpr std::size_t k_flag_alignment = alignof(std::int32_t);

namespace detail {
inline std::int32_t load_i32(const std::byte* p) noexcept {
    std::int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store_i32(std::byte* p, std::int32_t v) noexcept { std::memcpy(p, &v, sizeof v); }
} // namespace detail

// One descriptor (session, micro batch) inside a table.
class FfnDescriptor {
public:
    FfnDescriptor(std::byte* base, std::size_t expert_id_count) noexcept
        : base_(base), count_(expert_id_count) {}

    [[nodiscard]] std::int32_t flag(std::memory_order order = std::memory_order_acquire) const noexcept {
        return detail::atomic_at<std::int32_t>(base_).load(order);
    }
    void set_flag(std::int32_t value, std::memory_order order = std::memory_order_release) const noexcept {
        detail::atomic_at<std::int32_t>(base_).store(value, order);
    }
    [[nodiscard]] bool ready() const noexcept { return flag() == k_valid_flag; } // exactly 1

    [[nodiscard]] std::int32_t layer_id() const noexcept { return detail::load_i32(base_ + 4); }
    void set_layer_id(std::int32_t v) const noexcept { detail::store_i32(base_ + 4, v); }

    [[nodiscard]] std::size_t expert_id_count() const noexcept { return count_; }
    [[nodiscard]] std::span<std::byte> expert_id_bytes() const noexcept {
        return {base_ + k_desc_expert_ids_offset, count_ * sizeof(std::int32_t)};
    }
    // Element (token t, slot k) is index t·K + k.
    [[nodiscard]] std::int32_t expert_id(std::size_t i) const noexcept {
        FERRY_EXPECTS(i < count_);
        return detail::load_i32(base_ + k_desc_expert_ids_offset + 4 * i);
    }
    void set_expert_id(std::size_t i, std::int32_t v) const noexcept {
        FERRY_EXPECTS(i < count_);
        detail::store_i32(base_ + k_desc_expert_ids_offset + 4 * i, v);
    }
    void set_expert_ids(std::span<const std::int32_t> ids) const noexcept {
        FERRY_EXPECTS(ids.size() == count_);
        std::memcpy(base_ + k_desc_expert_ids_offset, ids.data(), ids.size_bytes());
    }

private:
    std::byte* base_;
    std::size_t count_;
};

// The FFN token_info table [A][M] of descriptors.
class FfnDescriptorTable {
public:
    // Preconditions: the geometry's sizes do not overflow and base is 4-byte aligned.
    FfnDescriptorTable(std::byte* base, const Geometry& g) noexcept
        : base_(base), geometry_(g), desc_size_(ffn_desc_size(g).value_or(0)) {
        FERRY_EXPECTS(base != nullptr && detail::is_aligned(base, k_flag_alignment));
        FERRY_EXPECTS(ffn_token_info_size(g).has_value());
    }

    [[nodiscard]] const Geometry& geometry() const noexcept { return geometry_; }
    [[nodiscard]] std::uint64_t descriptor_size() const noexcept { return desc_size_; }
    // The descriptor of (s, mb) starts at base + (s·M + mb)·per_desc.
    [[nodiscard]] FfnDescriptor at(std::uint32_t session, std::uint32_t micro_batch) const noexcept {
        FERRY_EXPECTS(session < geometry_.session_num && micro_batch < geometry_.micro_batch_num);
        const std::uint64_t index =
            std::uint64_t{session} * geometry_.micro_batch_num + micro_batch;
        return {base_ + index * desc_size_, static_cast<std::size_t>(*tokens_times_experts(geometry_))};
    }
    // As torch_npu's ScheduleContextHolder initialises it: flag 0, layer_id 0, every expert id
    // INT32_MAX.
    void initialize() const noexcept;

private:
    std::byte* base_;
    Geometry geometry_;
    std::uint64_t desc_size_;
};

inline void FfnDescriptorTable::initialize() const noexcept {
    for (std::uint32_t s = 0; s < geometry_.session_num; ++s) {
        for (std::uint32_t mb = 0; mb < geometry_.micro_batch_num; ++mb) {
            const FfnDescriptor d = at(s, mb);
            d.set_layer_id(0);
            for (std::size_t i = 0; i < d.expert_id_count(); ++i) {
                d.set_expert_id(i, INT32_MAX);
            }
            d.set_flag(k_invalid_flag);
        }
    }
}

// The attention token_info table: int32 flags [M][BS·K], set to 1 by FFNToAttention per
// returned slot, waited on and zeroed by AttentionWorkerScheduler (see
// docs/cann-contract/afd.md#ffntoattention).
class AttentionFlagTable {
public:
    AttentionFlagTable(std::byte* base, const Geometry& g) noexcept
        : base_(base), per_mb_(static_cast<std::size_t>(tokens_times_experts(g).value_or(0))),
          micro_batches_(g.micro_batch_num) {
        FERRY_EXPECTS(base != nullptr && detail::is_aligned(base, k_flag_alignment));
        FERRY_EXPECTS(attention_token_info_size(g).has_value());
    }
    [[nodiscard]] std::size_t flags_per_micro_batch() const noexcept { return per_mb_; }
    [[nodiscard]] std::atomic_ref<std::int32_t> flag(std::uint32_t mb, std::size_t slot) const noexcept {
        FERRY_EXPECTS(mb < micro_batches_ && slot < per_mb_);
        return detail::atomic_at<std::int32_t>(base_ + 4 * (std::size_t{mb} * per_mb_ + slot));
    }
    // How many of micro batch mb's flags are exactly 1.
    [[nodiscard]] std::size_t count_ready(std::uint32_t mb) const noexcept {
        std::size_t n = 0;
        for (std::size_t i = 0; i < per_mb_; ++i) {
            n += flag(mb, i).load(std::memory_order_acquire) == k_valid_flag ? 1 : 0;
        }
        return n;
    }
    void clear(std::uint32_t mb) const noexcept {
        for (std::size_t i = 0; i < per_mb_; ++i) {
            flag(mb, i).store(0, std::memory_order_relaxed);
        }
    }

private:
    std::byte* base_;
    std::size_t per_mb_;
    std::uint32_t micro_batches_;
};

} // namespace ferry::afd
