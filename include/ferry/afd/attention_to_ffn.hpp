#pragma once
// ferry::afd::AttentionToFfn — host simulator of the AttentionToFFN operator for one FFN rank
// (docs/cann-contract/afd.md#attentiontoffn), so the FFN scheduler runs on real traffic.
//
// send(session, mb, layer, expert_ids, tokens) does what the operator does per micro batch:
//  1. back-pressure: wait while descriptor (session, mb) still has flag 1 — the FFN scheduler has
//     not consumed its previous use yet;
//  2. write each token's payload into its slot token_data[s][mb][t][k] (attn_to_ffn_token_size
//     bytes per slot, docs/cann-contract/afd.md#buffer-conventions) for every non-masked expert
//     slot;
//  3. write the expert ids [BS][K] and layer_id into the descriptor, then publish flag = 1 with
//     release semantics (CANN writes the {flag, layer_id} pair last, after SyncAll).
// The operator has no run_flag exit in its back-pressure spin
// (docs/cann-contract/afd.md#attentiontoffn); the simulator stops when the
// FFN context's run_flag is 0 (Status::stopped), its Timeout expires (Status::timed_out) or, with
// the default AutoWait over a shared window, the FFN process died (Status::peer_lost).
// With a single FFN rank the local expert id is the expert id.
//
// Writes go through a Window (window.hpp): the context holds the FFN's own addresses, the window
// maps them into this process (a shared segment when the FFN is another process), and after
// publishing the flag the sender rings the window's doorbell so that an FFN parked in
// DoorbellPark wakes at once. attach(ctx) without a window trusts the addresses as given.
//
// A remote window (another node's memory, remote_access.hpp) cannot be read: `ffn_context` is
// then this process's copy of the FFN's context (the FFN's addresses, its geometry, a run_flag
// the caller may clear), the payload and descriptor go out as puts with a fence before the flag,
// and step 1 is skipped — the caller must know that the descriptor is free (the FFN answered its
// previous use; docs/afd.md, Remote windows). A lost FFN node answers peer_lost.

#include <cstdint>
#include <cstring>
#include <ferry/afd/auto_wait.hpp>
#include <ferry/afd/detail/wait_loop.hpp>
#include <ferry/afd/ffn_data_desc.hpp>
#include <ferry/afd/schedule_context_view.hpp>
#include <ferry/afd/sizes.hpp>
#include <ferry/afd/wait_policy.hpp>
#include <ferry/afd/window.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <span>

namespace ferry::afd {

// FFNWorkerBatching masks expert ids at or above expertStart_ = 1,000,000
// (docs/cann-contract/afd.md#ffnworkerbatching), which covers
// 0x7F7F7F7F and INT32_MAX; ferry also treats negative ids as masked.
inline constexpr std::int32_t k_masked_expert_floor = 1'000'000;
[[nodiscard]] constexpr bool is_masked_expert(std::int32_t id) noexcept {
    return id < 0 || id >= k_masked_expert_floor;
}

class AttentionToFfn {
public:
    // Checks that the FFN context describes a usable window: geometry > 0, token size > 0,
    // non-null aligned buffers at least as large as the geometry needs, and (with a window) both
    // buffers entirely inside `window`, which must outlive the sender. Without a window the
    // addresses are trusted as given.
    [[nodiscard]] static Result<AttentionToFfn> attach(ScheduleContextView ffn_context) noexcept {
        return attach(ffn_context, Window::unbounded());
    }
    [[nodiscard]] static Result<AttentionToFfn> attach(ScheduleContextView ffn_context,
                                                       const Window& window) noexcept;

    [[nodiscard]] const Geometry& geometry() const noexcept { return geometry_; }
    [[nodiscard]] std::uint32_t token_size() const noexcept { return token_size_; }

    // The payload slot of (session, mb, token, k): token_data[s][mb][t][k] (see
    // docs/cann-contract/afd.md#buffer-conventions), here; empty for a remote window.
    [[nodiscard]] std::span<std::byte> slot(std::uint32_t s, std::uint32_t mb, std::uint32_t t,
                                            std::uint32_t k) const noexcept {
        if (token_data_ == nullptr) {
            return {};
        }
        return {token_data_ + slot_index(s, mb, t, k) * token_size_, token_size_};
    }

    // expert_ids: BS·K ids ([t][k]); tokens: BS rows of token_size() bytes. `own_flags`, when
    // given, is the sender's attention flag table: masked slots get flag 1 there at once, since no
    // FFN will answer them (AttentionToFFN SetFlagInAttn,
    // docs/cann-contract/afd.md#attentiontoffn).
    template <WaitPolicy Wait = AutoWait>
    [[nodiscard]] Status send(std::uint32_t session, std::uint32_t mb, std::int32_t layer,
                              std::span<const std::int32_t> expert_ids,
                              std::span<const std::byte> tokens, const Timeout& timeout = forever,
                              const AttentionFlagTable* own_flags = nullptr, Wait wait = {}) const {
        const Geometry& g = geometry_;
        if (session >= g.session_num || mb >= g.micro_batch_num ||
            expert_ids.size() != ids_per_desc() ||
            tokens.size() != std::size_t{g.micro_batch_size} * token_size_ ||
            (own_flags != nullptr && own_flags->flags_per_micro_batch() != ids_per_desc())) {
            return Status::invalid_param;
        }
        // A remote descriptor cannot be read: the caller vouches that it is free (see above).
        const ScheduleExit exit = detail::wait_until_ready(context_, wait, timeout, [&] {
            return token_info_ == nullptr || table().at(session, mb).flag() != k_valid_flag;
        });
        if (exit != ScheduleExit::served) {
            return status_of_unserved(exit);
        }
        if (const Status s = write_descriptor(session, mb, layer, expert_ids, tokens);
            s != Status::ok) {
            return s;
        }
        // After the release store: a parked scheduler wakes and sees everything.
        if (const Status s = window_.ring(); s != Status::ok) {
            return s;
        }
        if (own_flags != nullptr) {
            for (std::size_t i = 0; i < expert_ids.size(); ++i) {
                if (is_masked_expert(expert_ids[i])) {
                    own_flags->flag(mb, i).store(k_valid_flag, std::memory_order_release);
                }
            }
        }
        return Status::ok;
    }

private:
    AttentionToFfn(ScheduleContextView ctx, const Window& window, const Geometry& g,
                   std::uint32_t token_size, std::uint64_t info_address,
                   std::uint64_t data_address) noexcept
        : context_(ctx), window_(window), geometry_(g), token_size_(token_size),
          info_address_(info_address), data_address_(data_address),
          token_info_(window.translate(info_address, 1)),
          token_data_(window.translate(data_address, 1)) {}

    [[nodiscard]] std::size_t ids_per_desc() const noexcept {
        return static_cast<std::size_t>(*tokens_times_experts(geometry_));
    }
    [[nodiscard]] FfnDescriptorTable table() const noexcept { return {token_info_, geometry_}; }
    [[nodiscard]] std::uint64_t slot_index(std::uint32_t s, std::uint32_t mb, std::uint32_t t,
                                           std::uint32_t k) const noexcept {
        const Geometry& g = geometry_;
        return ((std::uint64_t{s} * g.micro_batch_num + mb) * g.micro_batch_size + t) *
                   g.selected_expert_num +
               k;
    }

    // Payload, then ids and layer, then flag = 1 with release (the order CANN publishes in), all
    // through the window; attach checked the ranges, so a refusal here means a broken window,
    // and a remote window's failure (peer_lost) is answered as it is. Stops at the first failure:
    // the flag is never published over a descriptor that was not entirely written.
    [[nodiscard]] Status write_descriptor(std::uint32_t s, std::uint32_t mb, std::int32_t layer,
                                          std::span<const std::int32_t> ids,
                                          std::span<const std::byte> tokens) const noexcept {
        const Geometry& g = geometry_;
        const std::uint32_t k_num = g.selected_expert_num;
        for (std::uint32_t t = 0; t < g.micro_batch_size; ++t) {
            for (std::uint32_t k = 0; k < k_num; ++k) {
                if (is_masked_expert(ids[std::size_t{t} * k_num + k])) {
                    continue;
                }
                const Status st =
                    window_.write(data_address_ + slot_index(s, mb, t, k) * token_size_,
                                  tokens.subspan(std::size_t{t} * token_size_, token_size_));
                if (st != Status::ok) {
                    return st;
                }
            }
        }
        const std::uint64_t desc =
            info_address_ + (std::uint64_t{s} * g.micro_batch_num + mb) * *ffn_desc_size(g);
        const std::span<const std::byte> layer_bytes(reinterpret_cast<const std::byte*>(&layer),
                                                     sizeof layer);
        Status st = window_.write(desc + k_desc_expert_ids_offset, std::as_bytes(ids));
        st = st == Status::ok ? window_.write(desc + 4, layer_bytes) : st;
        return st == Status::ok ? window_.publish(desc, k_valid_flag) : st;
    }

    ScheduleContextView context_;
    Window window_;
    Geometry geometry_;
    std::uint32_t token_size_;
    std::uint64_t info_address_; // the FFN's addresses
    std::uint64_t data_address_;
    std::byte* token_info_; // the same buffers in this process; nullptr for a remote window
    std::byte* token_data_;
};

inline Result<AttentionToFfn> AttentionToFfn::attach(ScheduleContextView ctx,
                                                     const Window& window) noexcept {
    namespace c = fields::common;
    namespace f = fields::ffn;
    if (!ctx.atomics_usable() || ctx.get(c::schedule_mode) != k_schedule_mode_ffn) {
        return Status::invalid_param;
    }
    const Geometry g{ctx.get(c::session_num), ctx.get(c::micro_batch_num),
                     ctx.get(c::micro_batch_size), ctx.get(c::selected_expert_num)};
    const std::uint32_t token_size = ctx.get(c::attn_to_ffn_token_size);
    const Size info = ffn_token_info_size(g);
    const Size data = ffn_token_data_size(g, token_size);
    if (g.session_num == 0 || g.micro_batch_num == 0 || g.micro_batch_size == 0 ||
        g.selected_expert_num == 0 || token_size == 0 || !info || !data ||
        ctx.get(f::token_info_buf_size) < *info || ctx.get(f::token_data_buf_size) < *data) {
        return Status::invalid_param;
    }
    if (!window.reaches(ctx.get(f::token_data_buf), *data) ||
        !window.reaches(ctx.get(f::token_info_buf), *info, k_flag_alignment)) {
        return Status::invalid_param;
    }
    return AttentionToFfn(ctx, window, g, token_size, ctx.get(f::token_info_buf),
                          ctx.get(f::token_data_buf));
}

} // namespace ferry::afd
