#pragma once
// ferry::afd::FfnWorkerBatching — host simulator of FFNWorkerBatching in NORM mode
// (need_schedule = 0, docs/cann-contract/afd.md#ffnworkerbatching): it consumes the FFN scheduler's
// outputs.
//
// gather(ffn_context, expert_num, batch):
//  - takes the out_num·BS·K expert ids of expert_ids_buf, drops masked ones (>= 1,000,000: the
//    scheduler's 0x7F7F7F7F and INT32_MAX; ferry also drops negative ids), sorts the rest by
//    expert id — stably, so equal ids keep their gather order and the result is deterministic;
//  - for each sorted gather index g: a = g / (BS·K), bs = (g % (BS·K)) / K, k = g % K,
//    session = session_ids_buf[a], mb = micro_batch_ids_buf[a], and copies the token slot
//    token_data[session][mb][bs][k] (attn_to_ffn_token_size bytes) into row i of y;
//  - group_list: one (expert_id, count) row per expert that received tokens, in ascending order,
//    then (0, 0) rows up to expert_num rows.
// The context is only read. Unlike the device kernel, ferry checks every id it will index with
// (out_num <= A, session < A, mb < M, expert id < expert_num) and returns invalid_param, leaving
// `batch` empty, instead of reading out of bounds.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include <range/v3/algorithm/stable_sort.hpp>
#include <range/v3/range/conversion.hpp>
#include <range/v3/view/filter.hpp>
#include <range/v3/view/iota.hpp>

#include <ferry/afd/attention_to_ffn.hpp>
#include <ferry/afd/ffn_data_desc.hpp>
#include <ferry/afd/schedule_context_view.hpp>
#include <ferry/afd/sizes.hpp>
#include <ferry/core/status.hpp>

namespace ferry::afd {

// One gathered token: CANN's outputs session_ids, micro_batch_ids, token_ids and expert_offsets
// as one row, with the expert it goes to.
struct GatheredToken {
    std::int32_t expert_id = 0;
    std::int32_t session = 0;
    std::int32_t micro_batch = 0;
    std::int32_t token = 0;         // bs
    std::int32_t expert_offset = 0; // k
    friend bool operator==(const GatheredToken&, const GatheredToken&) = default;
};

struct Batch {
    std::vector<GatheredToken> rows;                    // actual_token_num rows, sorted by expert
    std::vector<std::byte> y;                           // rows.size() × token_size bytes
    std::vector<std::array<std::int64_t, 2>> group_list; // expert_num rows of (expert_id, count)
    std::size_t token_size = 0;

    [[nodiscard]] std::size_t actual_token_num() const noexcept { return rows.size(); }
    [[nodiscard]] std::span<const std::byte> row_data(std::size_t i) const noexcept {
        return {y.data() + i * token_size, token_size};
    }
    void clear() noexcept {
        rows.clear();
        y.clear();
        group_list.clear();
    }
};

class FfnWorkerBatching {
public:
    // expert_num in (0, 8192] (aclnnFfnWorkerBatching's bound).
    [[nodiscard]] static Status gather(ConstScheduleContextView ffn_context, std::uint32_t expert_num, Batch& batch);

private:
    struct Inputs {
        Geometry g;
        std::uint32_t out_num = 0;
        std::uint32_t token_size = 0;
        const std::byte* token_data = nullptr;
        const std::byte* session_ids = nullptr;
        const std::byte* micro_batch_ids = nullptr;
        const std::byte* expert_ids = nullptr;
    };
    static Status read_inputs(ConstScheduleContextView v, std::uint32_t expert_num, Inputs& in) noexcept;
    static std::int32_t id_at(const std::byte* buffer, std::uint64_t index) noexcept {
        return detail::load_i32(buffer + 4 * index);
    }
};

inline Status FfnWorkerBatching::read_inputs(ConstScheduleContextView v, std::uint32_t expert_num,
                                             Inputs& in) noexcept {
    namespace c = fields::common;
    namespace f = fields::ffn;
    const auto ptr = [&](auto field) {
        return reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(v.get(field)));
    };
    in.g = {v.get(c::session_num), v.get(c::micro_batch_num), v.get(c::micro_batch_size),
            v.get(c::selected_expert_num)};
    in.out_num = v.get(f::out_num);
    in.token_size = v.get(c::attn_to_ffn_token_size);
    in.token_data = ptr(f::token_data_buf);
    in.session_ids = ptr(f::session_ids_buf);
    in.micro_batch_ids = ptr(f::micro_batch_ids_buf);
    in.expert_ids = ptr(f::expert_ids_buf);
    const Size data = ffn_token_data_size(in.g, in.token_size);
    const Size rows = checked_mul(in.out_num, tokens_times_experts(in.g));
    const bool ok = expert_num > 0 && expert_num <= 8192 && in.g.session_num > 0 && in.g.micro_batch_num > 0 &&
                    in.g.micro_batch_size > 0 && in.g.selected_expert_num > 0 && in.token_size > 0 && data &&
                    rows && in.out_num <= in.g.session_num && in.token_data != nullptr &&
                    in.session_ids != nullptr && in.micro_batch_ids != nullptr && in.expert_ids != nullptr &&
                    v.get(f::token_data_buf_size) >= *data && v.get(f::session_ids_buf_size) >= 4ull * in.out_num &&
                    v.get(f::micro_batch_ids_buf_size) >= 4ull * in.out_num &&
                    v.get(f::expert_ids_buf_size) >= 4 * *rows;
    return ok ? Status::ok : Status::invalid_param;
}

inline Status FfnWorkerBatching::gather(ConstScheduleContextView v, std::uint32_t expert_num, Batch& batch) {
    batch.clear();
    Inputs in;
    if (const Status s = read_inputs(v, expert_num, in); s != Status::ok) {
        return s;
    }
    const std::uint64_t per_row = *tokens_times_experts(in.g);
    const std::uint64_t total = std::uint64_t{in.out_num} * per_row;
    std::vector<std::uint64_t> order =
        ranges::views::iota(std::uint64_t{0}, total) |
        ranges::views::filter([&](std::uint64_t g) { return !is_masked_expert(id_at(in.expert_ids, g)); }) |
        ranges::to<std::vector>();
    ranges::stable_sort(order, std::less<>{}, [&](std::uint64_t g) { return id_at(in.expert_ids, g); });

    batch.token_size = in.token_size;
    batch.y.resize(order.size() * in.token_size);
    std::vector<std::int64_t> counts(expert_num, 0);
    for (const std::uint64_t g : order) {
        const std::uint64_t a = g / per_row;
        const auto token = static_cast<std::int32_t>((g % per_row) / in.g.selected_expert_num);
        const auto k = static_cast<std::int32_t>(g % in.g.selected_expert_num);
        const GatheredToken row{id_at(in.expert_ids, g), id_at(in.session_ids, a), id_at(in.micro_batch_ids, a),
                                token, k};
        if (row.expert_id >= static_cast<std::int64_t>(expert_num) || row.session < 0 ||
            static_cast<std::uint32_t>(row.session) >= in.g.session_num || row.micro_batch < 0 ||
            static_cast<std::uint32_t>(row.micro_batch) >= in.g.micro_batch_num) {
            batch.clear();
            return Status::invalid_param;
        }
        const std::uint64_t slot =
            ((std::uint64_t(row.session) * in.g.micro_batch_num + std::uint64_t(row.micro_batch)) * per_row) +
            g % per_row;
        std::memcpy(batch.y.data() + batch.rows.size() * in.token_size, in.token_data + slot * in.token_size,
                    in.token_size);
        batch.rows.push_back(row);
        ++counts[static_cast<std::size_t>(row.expert_id)];
    }
    batch.group_list.assign(expert_num, {0, 0});
    std::size_t used = 0;
    for (std::uint32_t e = 0; e < expert_num; ++e) {
        if (counts[e] != 0) {
            batch.group_list[used++] = {std::int64_t{e}, counts[e]};
        }
    }
    return Status::ok;
}

} // namespace ferry::afd
