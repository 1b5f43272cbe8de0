#pragma once
// ferry::afd::FfnWorkerBatching — host simulator of FFNWorkerBatching
// (docs/cann-contract/afd.md#ffnworkerbatching), in both of its modes.
//
// NORM mode (need_schedule = 0), gather(ffn_context, expert_num, batch): consumes the FFN
// scheduler's outputs.
//  - takes the out_num·BS·K expert ids of expert_ids_buf, drops masked ones (>= 1,000,000: the
//    scheduler's 0x7F7F7F7F and INT32_MAX; ferry also drops negative ids), sorts the rest by
//    expert id — stably, so equal ids keep their gather order and the result is deterministic;
//  - for each sorted gather index g: a = g / (BS·K), bs = (g % (BS·K)) / K, k = g % K,
//    session = session_ids_buf[a], mb = micro_batch_ids_buf[a], and copies the token slot
//    token_data[session][mb][bs][k] (attn_to_ffn_token_size bytes) into row i of y;
//  - group_list: one (expert_id, count) row per expert that received tokens, in ascending order,
//    then (0, 0) rows up to expert_num rows.
// The context is only read.
//
// RECV mode (need_schedule = 1), receive(ffn_context, expert_num, batch, timeout, wait): the
// batching does the all-sync scan itself, with no FfnWorkerScheduler call before it. It waits
// until the descriptors (a, polling_index) of every session a have flag 1, then gathers as above
// with the ids read from those descriptors, session = a and mb = polling_index; only then (the
// payload is copied) it resets the descriptors — every id INT32_MAX (not the scheduler's
// 0x7F7F7F7F), flag 0 with release, layer_id kept — and stores polling_index = (polling_index +
// 1) % M. The scheduler's output buffers and out_num are neither read nor written. CANN's scan has
// no run_flag exit; ferry's returns Status::stopped when run_flag is 0 and Status::timed_out
// when `timeout` expires, both with nothing consumed, and waits with a policy (DoorbellPark when
// the attention side rings the FFN window).
//
// Unlike the device kernel, ferry checks every id it will index with (out_num <= A, session < A,
// mb < M, expert id < expert_num) and returns invalid_param, leaving `batch` empty (and, in RECV
// mode, the descriptors and polling_index untouched), instead of reading out of bounds.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <ferry/afd/attention_to_ffn.hpp>
#include <ferry/afd/detail/wait_loop.hpp>
#include <ferry/afd/ffn_data_desc.hpp>
#include <ferry/afd/schedule_context_view.hpp>
#include <ferry/afd/sizes.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <range/v3/algorithm/stable_sort.hpp>
#include <range/v3/range/conversion.hpp>
#include <range/v3/view/filter.hpp>
#include <range/v3/view/iota.hpp>
#include <vector>

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
    std::vector<GatheredToken> rows;                     // actual_token_num rows, sorted by expert
    std::vector<std::byte> y;                            // rows.size() × token_size bytes
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
    // NORM mode. expert_num in (0, 8192] (aclnnFfnWorkerBatching's bound).
    [[nodiscard]] static Status gather(ConstScheduleContextView ffn_context,
                                       std::uint32_t expert_num, Batch& batch);

    // RECV mode: Status::ok (one micro batch gathered), stopped, timed_out or invalid_param.
    template <WaitPolicy Wait = SpinThenPark<>>
    [[nodiscard]] static Status receive(ScheduleContextView ffn_context, std::uint32_t expert_num,
                                        Batch& batch, const Timeout& timeout = forever,
                                        Wait wait = {});

private:
    struct Inputs {
        Geometry g;
        std::uint32_t token_size = 0;
        const std::byte* token_data = nullptr;
    };
    struct NormInputs {
        std::uint32_t out_num = 0;
        const std::byte* session_ids = nullptr;
        const std::byte* micro_batch_ids = nullptr;
        const std::byte* expert_ids = nullptr;
    };
    static Status read_inputs(ConstScheduleContextView v, std::uint32_t expert_num,
                              Inputs& in) noexcept;
    static Status read_norm_inputs(ConstScheduleContextView v, const Inputs& in,
                                   NormInputs& norm) noexcept;
    static Status read_recv_inputs(ConstScheduleContextView v, const Inputs& in,
                                   std::byte*& table) noexcept;
    static std::int32_t id_at(const std::byte* buffer, std::uint64_t index) noexcept {
        return detail::load_i32(buffer + 4 * index);
    }
    // The shared gather: `rows` rows of BS·K ids; id_of(g), session_of(a), micro_batch_of(a).
    template <typename Id, typename Session, typename MicroBatch>
    static Status assemble(const Inputs& in, std::uint32_t expert_num, std::uint64_t rows, Id id_of,
                           Session session_of, MicroBatch micro_batch_of, Batch& batch);
};

inline Status FfnWorkerBatching::read_inputs(ConstScheduleContextView v, std::uint32_t expert_num,
                                             Inputs& in) noexcept {
    namespace c = fields::common;
    namespace f = fields::ffn;
    in.g = {v.get(c::session_num), v.get(c::micro_batch_num), v.get(c::micro_batch_size),
            v.get(c::selected_expert_num)};
    in.token_size = v.get(c::attn_to_ffn_token_size);
    in.token_data =
        reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(v.get(f::token_data_buf)));
    const Size data = ffn_token_data_size(in.g, in.token_size);
    const bool ok = expert_num > 0 && expert_num <= 8192 && in.g.session_num > 0 &&
                    in.g.micro_batch_num > 0 && in.g.micro_batch_size > 0 &&
                    in.g.selected_expert_num > 0 && in.token_size > 0 && data &&
                    in.token_data != nullptr && v.get(f::token_data_buf_size) >= *data;
    return ok ? Status::ok : Status::invalid_param;
}

inline Status FfnWorkerBatching::read_norm_inputs(ConstScheduleContextView v, const Inputs& in,
                                                  NormInputs& norm) noexcept {
    namespace f = fields::ffn;
    const auto ptr = [&](auto field) {
        return reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(v.get(field)));
    };
    norm.out_num = v.get(f::out_num);
    norm.session_ids = ptr(f::session_ids_buf);
    norm.micro_batch_ids = ptr(f::micro_batch_ids_buf);
    norm.expert_ids = ptr(f::expert_ids_buf);
    const Size rows = checked_mul(norm.out_num, tokens_times_experts(in.g));
    const bool ok = rows && norm.out_num <= in.g.session_num && norm.session_ids != nullptr &&
                    norm.micro_batch_ids != nullptr && norm.expert_ids != nullptr &&
                    v.get(f::session_ids_buf_size) >= 4ull * norm.out_num &&
                    v.get(f::micro_batch_ids_buf_size) >= 4ull * norm.out_num &&
                    v.get(f::expert_ids_buf_size) >= 4 * *rows;
    return ok ? Status::ok : Status::invalid_param;
}

inline Status FfnWorkerBatching::read_recv_inputs(ConstScheduleContextView v, const Inputs& in,
                                                  std::byte*& table) noexcept {
    namespace f = fields::ffn;
    table = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(v.get(f::token_info_buf)));
    const Size info = ffn_token_info_size(in.g);
    // polling_index is shared with the attention side's view of the context: atomic, so the
    // image must be 8-byte aligned; the device asserts polling_index < M.
    const bool ok = info && table != nullptr && detail::is_aligned(table, k_flag_alignment) &&
                    v.get(f::token_info_buf_size) >= *info && v.atomics_usable() &&
                    v.polling_index() < in.g.micro_batch_num;
    return ok ? Status::ok : Status::invalid_param;
}

template <typename Id, typename Session, typename MicroBatch>
Status FfnWorkerBatching::assemble(const Inputs& in, std::uint32_t expert_num, std::uint64_t rows,
                                   Id id_of, Session session_of, MicroBatch micro_batch_of,
                                   Batch& batch) {
    const std::uint64_t per_row = *tokens_times_experts(in.g);
    std::vector<std::uint64_t> order =
        ranges::views::iota(std::uint64_t{0}, rows * per_row) |
        ranges::views::filter([&](std::uint64_t g) { return !is_masked_expert(id_of(g)); }) |
        ranges::to<std::vector>();
    ranges::stable_sort(order, std::less<>{}, id_of);

    batch.token_size = in.token_size;
    batch.y.resize(order.size() * in.token_size);
    std::vector<std::int64_t> counts(expert_num, 0);
    for (const std::uint64_t g : order) {
        const std::uint64_t a = g / per_row;
        const auto token = static_cast<std::int32_t>((g % per_row) / in.g.selected_expert_num);
        const auto k = static_cast<std::int32_t>(g % in.g.selected_expert_num);
        const GatheredToken row{id_of(g), session_of(a), micro_batch_of(a), token, k};
        if (row.expert_id >= static_cast<std::int64_t>(expert_num) || row.session < 0 ||
            static_cast<std::uint32_t>(row.session) >= in.g.session_num || row.micro_batch < 0 ||
            static_cast<std::uint32_t>(row.micro_batch) >= in.g.micro_batch_num) {
            batch.clear();
            return Status::invalid_param;
        }
        const std::uint64_t slot =
            ((std::uint64_t(row.session) * in.g.micro_batch_num + std::uint64_t(row.micro_batch)) *
             per_row) +
            g % per_row;
        std::memcpy(batch.y.data() + batch.rows.size() * in.token_size,
                    in.token_data + slot * in.token_size, in.token_size);
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

inline Status FfnWorkerBatching::gather(ConstScheduleContextView v, std::uint32_t expert_num,
                                        Batch& batch) {
    batch.clear();
    Inputs in;
    NormInputs norm;
    if (const Status s = read_inputs(v, expert_num, in); s != Status::ok) {
        return s;
    }
    if (const Status s = read_norm_inputs(v, in, norm); s != Status::ok) {
        return s;
    }
    return assemble(
        in, expert_num, norm.out_num, [&](std::uint64_t g) { return id_at(norm.expert_ids, g); },
        [&](std::uint64_t a) { return id_at(norm.session_ids, a); },
        [&](std::uint64_t a) { return id_at(norm.micro_batch_ids, a); }, batch);
}

template <WaitPolicy Wait>
Status FfnWorkerBatching::receive(ScheduleContextView v, std::uint32_t expert_num, Batch& batch,
                                  const Timeout& timeout, Wait wait) {
    batch.clear();
    Inputs in;
    std::byte* base = nullptr;
    if (const Status s = read_inputs(v, expert_num, in); s != Status::ok) {
        return s;
    }
    if (const Status s = read_recv_inputs(v, in, base); s != Status::ok) {
        return s;
    }
    const FfnDescriptorTable table(base, in.g);
    const auto mb = static_cast<std::uint32_t>(v.polling_index());
    const ScheduleExit exit = detail::wait_until_ready(v, wait, timeout, [&] {
        for (std::uint32_t a = 0; a < in.g.session_num; ++a) {
            if (!table.at(a, mb).ready()) { // acquire: the ids and payload below are visible
                return false;
            }
        }
        return true;
    });
    if (exit != ScheduleExit::served) {
        return exit == ScheduleExit::stopped ? Status::stopped : Status::timed_out;
    }
    const auto per_row = static_cast<std::size_t>(*tokens_times_experts(in.g));
    const Status s = assemble(
        in, expert_num, in.g.session_num,
        [&](std::uint64_t g) {
            return table.at(static_cast<std::uint32_t>(g / per_row), mb).expert_id(g % per_row);
        },
        [](std::uint64_t a) { return static_cast<std::int32_t>(a); },
        [&](std::uint64_t) { return static_cast<std::int32_t>(mb); }, batch);
    if (s != Status::ok) {
        return s; // nothing consumed: the descriptors stay ready
    }
    for (std::uint32_t a = 0; a < in.g.session_num; ++a) {
        const FfnDescriptor d = table.at(a, mb);
        for (std::size_t i = 0; i < d.expert_id_count(); ++i) {
            d.set_expert_id(i, INT32_MAX);
        }
        d.set_flag(k_invalid_flag); // release: the payload was copied, the producer may reuse it
    }
    v.set_polling_index((std::uint64_t{mb} + 1) % in.g.micro_batch_num);
    return Status::ok;
}

} // namespace ferry::afd
