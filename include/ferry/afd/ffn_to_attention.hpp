#pragma once
// ferry::afd::FfnToAttention — host simulator of FFNToAttention
// (docs/cann-contract/afd.md#ffntoattention): the FFN returns each processed token slot to the
// attention session it came from.
//
// For each batch row i (session, mb, token, k) it writes result row i (ffn_to_attn_token_size
// bytes) into that session's attention window at (mb·BS·K + token·K + k)·token_size of the data
// area, then stores flag 1 (release) at int32 index mb·BS·K + token·K + k of the session's flag
// table — the flags AttentionWorkerScheduler waits on. One attention context per session, all
// with the same M, BS, K and token size.
//
// Each session's buffers are reached through that session's Window (window.hpp): the attention
// context holds the attention process's addresses, the window maps them here. After a send has
// published every flag of a session, that session's doorbell is rung once, so an attention
// waiter parked in DoorbellPark wakes at once. attach(sessions) alone trusts the addresses.
//
// A session's window may be remote (another node's memory, remote_access.hpp): its context is
// then this process's copy of the attention context (the attention node's addresses), and each
// result goes out as a put, its flag after a fence. A lost attention node answers peer_lost.

#include <cstdint>
#include <cstring>
#include <ferry/afd/ffn_data_desc.hpp>
#include <ferry/afd/ffn_worker_batching.hpp>
#include <ferry/afd/schedule_context_view.hpp>
#include <ferry/afd/sizes.hpp>
#include <ferry/afd/window.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <span>
#include <vector>

namespace ferry::afd {

class FfnToAttention {
public:
    // sessions[s] is session s's attention context (schedule_mode 1), windows[s] its window (each
    // must outlive this object). Checks each context, and that its buffers lie in its window.
    [[nodiscard]] static Result<FfnToAttention>
    attach(std::span<const ScheduleContextView> sessions, std::span<const Window> windows);
    [[nodiscard]] static Result<FfnToAttention>
    attach(std::span<const ScheduleContextView> sessions) {
        const std::vector<Window> trusted(sessions.size(), Window::unbounded());
        return attach(sessions, trusted);
    }

    [[nodiscard]] std::uint32_t token_size() const noexcept { return token_size_; }

    // results: batch.actual_token_num() rows of token_size() bytes, in batch order.
    [[nodiscard]] Status send(const Batch& batch, std::span<const std::byte> results) const {
        if (results.size() != batch.actual_token_num() * std::size_t{token_size_}) {
            return Status::invalid_param;
        }
        for (const GatheredToken& r : batch.rows) {
            if (r.session < 0 || static_cast<std::size_t>(r.session) >= windows_.size() ||
                r.micro_batch < 0 ||
                static_cast<std::uint32_t>(r.micro_batch) >= geometry_.micro_batch_num ||
                r.token < 0 || static_cast<std::uint32_t>(r.token) >= geometry_.micro_batch_size ||
                r.expert_offset < 0 ||
                static_cast<std::uint32_t>(r.expert_offset) >= geometry_.selected_expert_num) {
                return Status::invalid_param;
            }
        }
        std::vector<bool> touched(windows_.size(), false);
        Status status = Status::ok; // attach checked the ranges: only a remote window can fail
        for (std::size_t i = 0; i < batch.rows.size() && status == Status::ok; ++i) {
            const GatheredToken& r = batch.rows[i];
            const Target& w = windows_[static_cast<std::size_t>(r.session)];
            const std::size_t slot =
                std::size_t(r.token) * geometry_.selected_expert_num + std::size_t(r.expert_offset);
            const std::size_t index = std::size_t(r.micro_batch) * flags_per_mb_ + slot;
            status = w.window.write(w.data + index * token_size_,
                                    results.subspan(i * token_size_, token_size_));
            if (status == Status::ok) {
                status = w.window.publish(w.flags + 4 * index, k_valid_flag); // release
            }
            touched[static_cast<std::size_t>(r.session)] = true;
        }
        // Ring every session written to, even after a failure: a flag published to a live
        // session must not wait for its waiter's next bounded park.
        for (std::size_t s = 0; s < windows_.size(); ++s) {
            if (touched[s]) {
                const Status rung = windows_[s].window.ring();
                status = status == Status::ok ? rung : status;
            }
        }
        return status;
    }

private:
    struct Target {
        Window window;
        std::uint64_t flags; // the attention process's addresses
        std::uint64_t data;
    };
    FfnToAttention() = default;

    std::vector<Target> windows_;
    Geometry geometry_;
    std::uint32_t token_size_ = 0;
    std::size_t flags_per_mb_ = 0;
};

inline Result<FfnToAttention> FfnToAttention::attach(std::span<const ScheduleContextView> sessions,
                                                     std::span<const Window> windows) {
    namespace c = fields::common;
    namespace a = fields::attention;
    if (sessions.empty() || windows.size() != sessions.size()) {
        return Status::invalid_param;
    }
    FfnToAttention out;
    const ScheduleContextView first = sessions.front();
    out.geometry_ = {static_cast<std::uint32_t>(sessions.size()), first.get(c::micro_batch_num),
                     first.get(c::micro_batch_size), first.get(c::selected_expert_num)};
    out.token_size_ = first.get(c::ffn_to_attn_token_size);
    const Size info = attention_token_info_size(out.geometry_);
    const Size data = attention_token_data_size(out.geometry_, out.token_size_);
    if (out.geometry_.micro_batch_num == 0 || out.geometry_.micro_batch_size == 0 ||
        out.geometry_.selected_expert_num == 0 || out.token_size_ == 0 || !info || !data) {
        return Status::invalid_param;
    }
    out.flags_per_mb_ = static_cast<std::size_t>(*tokens_times_experts(out.geometry_));
    for (std::size_t i = 0; i < sessions.size(); ++i) {
        const ScheduleContextView& v = sessions[i];
        const bool flags = windows[i].reaches(v.get(a::token_info_buf), *info, k_flag_alignment);
        const bool bytes = windows[i].reaches(v.get(a::token_data_buf), *data);
        const bool same = v.get(c::schedule_mode) == k_schedule_mode_attention &&
                          v.get(c::micro_batch_num) == out.geometry_.micro_batch_num &&
                          v.get(c::micro_batch_size) == out.geometry_.micro_batch_size &&
                          v.get(c::selected_expert_num) == out.geometry_.selected_expert_num &&
                          v.get(c::ffn_to_attn_token_size) == out.token_size_;
        if (!same || !flags || !bytes || v.get(a::token_info_buf_size) < *info ||
            v.get(a::token_data_buf_size) < *data) {
            return Status::invalid_param;
        }
        out.windows_.push_back({windows[i], v.get(a::token_info_buf), v.get(a::token_data_buf)});
    }
    return out;
}

} // namespace ferry::afd
