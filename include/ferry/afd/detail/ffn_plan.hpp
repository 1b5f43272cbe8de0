#pragma once
// Validation of an FFN ScheduleContext, in CANN's order with CANN's codes
// (docs/cann-contract/afd.md#validation-order), producing the plan the scheduler runs.
//
// Differences from the kernel, each documented in docs/afd.md:
// - products are formed in 64 bits (CANN wraps A·M in uint32,
//   docs/cann-contract/afd.md#known-quirks), and the expert-id overflow
//   check uses BS as the size formula does (CANN's uses M);
// - the context and the descriptor table must be aligned for atomic access;
// - after CANN's checks, a MemoryResolver maps every buffer (the registry resolver refuses one
//   that is not inside a live allocation of the required size).

#include <cstdint>
#include <optional>

#include <ferry/afd/detail/context_checks.hpp>
#include <ferry/afd/ffn_data_desc.hpp>
#include <ferry/afd/memory_resolver.hpp>
#include <ferry/afd/schedule_context_view.hpp>
#include <ferry/afd/schedule_outcome.hpp>
#include <ferry/afd/sizes.hpp>

namespace ferry::afd::detail {

struct FfnPlan {
    Geometry geometry;
    std::uint32_t sync_group_size = 0;
    std::uint32_t group_num = 0;
    std::uint64_t tokens_times_experts = 0; // BS·K
    std::byte* token_info = nullptr;
    std::byte* layer_ids = nullptr;
    std::byte* session_ids = nullptr;
    std::byte* micro_batch_ids = nullptr;
    std::byte* expert_ids = nullptr;
};

inline constexpr KernelStatus k_invalid = KernelStatus::param_invalid;
inline constexpr KernelStatus k_inner = KernelStatus::inner_error;

// Step 4 (InitAndCheckScheduleContextCommon).
inline ScheduleOutcome check_ffn_common(ConstScheduleContextView v, FfnPlan& plan) noexcept {
    namespace c = fields::common;
    if (v.get(c::schedule_mode) != k_schedule_mode_ffn) {
        return ScheduleOutcome::reject(k_invalid, "common.schedule_mode", "is not 0 (FFN)");
    }
    plan.geometry = {v.get(c::session_num), v.get(c::micro_batch_num), v.get(c::micro_batch_size),
                     v.get(c::selected_expert_num)};
    const Geometry& g = plan.geometry;
    if (g.session_num == 0) {
        return ScheduleOutcome::reject(k_invalid, "common.session_num", "is 0");
    }
    if (g.micro_batch_num == 0) {
        return ScheduleOutcome::reject(k_invalid, "common.micro_batch_num", "is 0");
    }
    if (g.micro_batch_size == 0) {
        return ScheduleOutcome::reject(k_invalid, "common.micro_batch_size", "is 0");
    }
    if (g.selected_expert_num == 0) {
        return ScheduleOutcome::reject(k_invalid, "common.selected_expert_num", "is 0");
    }
    return {};
}

// Step 5 (InitAndCheckScheduleContextFfnInput).
inline ScheduleOutcome check_ffn_input(ConstScheduleContextView v, const FfnPlan& plan) noexcept {
    namespace f = fields::ffn;
    const struct {
        std::uint64_t address;
        const char* name;
    } pointers[] = {
        {v.get(f::token_info_buf), "ffn.token_info_buf"},
        {v.get(f::token_data_buf), "ffn.token_data_buf"},
        {v.get(f::layer_ids_buf), "ffn.layer_ids_buf"},
        {v.get(f::session_ids_buf), "ffn.session_ids_buf"},
        {v.get(f::micro_batch_ids_buf), "ffn.micro_batch_ids_buf"},
        {v.get(f::expert_ids_buf), "ffn.expert_ids_buf"},
    };
    for (const auto& p : pointers) {
        if (p.address == 0) {
            return ScheduleOutcome::reject(k_invalid, p.name, "is null");
        }
    }
    if (!ffn_desc_size(plan.geometry)) {
        return ScheduleOutcome::reject(k_inner, "common.micro_batch_size", "* selected_expert_num overflows");
    }
    const Size info = ffn_token_info_size(plan.geometry);
    if (!info) {
        return ScheduleOutcome::reject(k_inner, "common.session_num", "* micro_batch_num * descriptor size overflows");
    }
    if (v.get(f::token_info_buf_size) < *info) {
        return ScheduleOutcome::reject(k_invalid, "ffn.token_info_buf_size", "is below A*M*(8+4*BS*K)");
    }
    return {};
}

// Step 6 (InitAndCheckScheduleContextFfn).
inline ScheduleOutcome check_ffn_outputs(ConstScheduleContextView v, const FfnPlan& plan) noexcept {
    namespace f = fields::ffn;
    const std::uint64_t ids = *id_buffer_size(plan.geometry); // 4·A cannot overflow 64 bits
    if (v.get(f::layer_ids_buf_size) < ids) {
        return ScheduleOutcome::reject(k_invalid, "ffn.layer_ids_buf_size", "is below 4*A");
    }
    if (v.get(f::session_ids_buf_size) < ids) {
        return ScheduleOutcome::reject(k_invalid, "ffn.session_ids_buf_size", "is below 4*A");
    }
    if (v.get(f::micro_batch_ids_buf_size) < ids) {
        return ScheduleOutcome::reject(k_invalid, "ffn.micro_batch_ids_buf_size", "is below 4*A");
    }
    const Size experts = expert_ids_buffer_size(plan.geometry);
    if (!experts) {
        return ScheduleOutcome::reject(k_inner, "common.session_num", "* BS * K * 4 overflows");
    }
    if (v.get(f::expert_ids_buf_size) < *experts) {
        return ScheduleOutcome::reject(k_invalid, "ffn.expert_ids_buf_size", "is below 4*A*BS*K");
    }
    if (v.polling_index(std::memory_order_relaxed) >= plan.geometry.micro_batch_num) {
        return ScheduleOutcome::reject(k_invalid, "ffn.polling_index", "is not below micro_batch_num");
    }
    return {};
}

// Steps 7–8: the attributes. An absent sync_group_size means the operator's registered default,
// 1 (docs/afd.md#differs-sync-group-size-default: CANN's kernel alone would read session_num, but
// every CANN caller gets the framework's 1).
inline ScheduleOutcome check_ffn_attributes(std::optional<std::int32_t> sync_group_size,
                                            std::optional<std::int32_t> execute_mode,
                                            FfnPlan& plan) noexcept {
    const std::uint32_t a = plan.geometry.session_num;
    if (sync_group_size) {
        const std::int64_t sgs = *sync_group_size;
        if (sgs < 1 || sgs > std::int64_t{a} || a % static_cast<std::uint32_t>(sgs) != 0) {
            return ScheduleOutcome::reject(k_invalid, "sync_group_size",
                                           "is not in [1, session_num] or does not divide session_num");
        }
        plan.sync_group_size = static_cast<std::uint32_t>(sgs);
    } else {
        plan.sync_group_size = k_default_sync_group_size;
    }
    plan.group_num = a / plan.sync_group_size;
    if (execute_mode && *execute_mode != k_execute_mode_once) {
        return ScheduleOutcome::reject(k_invalid, "execute_mode", "is not 0 (once)");
    }
    return {};
}

// ferry: map every buffer through the resolver, after CANN's checks have passed.
template <MemoryResolver R>
ScheduleOutcome resolve_ffn_buffers(ConstScheduleContextView v, FfnPlan& plan, R& resolver) {
    namespace f = fields::ffn;
    const Geometry& g = plan.geometry;
    plan.tokens_times_experts = *tokens_times_experts(g);
    const struct {
        BufferRequest request;
        std::byte** slot;
    } buffers[] = {
        {{"ffn.token_info_buf", v.get(f::token_info_buf), *ffn_token_info_size(g)}, &plan.token_info},
        {{"ffn.token_data_buf", v.get(f::token_data_buf), 1}, nullptr}, // never touched: address only
        {{"ffn.layer_ids_buf", v.get(f::layer_ids_buf), *id_buffer_size(g)}, &plan.layer_ids},
        {{"ffn.session_ids_buf", v.get(f::session_ids_buf), *id_buffer_size(g)}, &plan.session_ids},
        {{"ffn.micro_batch_ids_buf", v.get(f::micro_batch_ids_buf), *id_buffer_size(g)},
         &plan.micro_batch_ids},
        {{"ffn.expert_ids_buf", v.get(f::expert_ids_buf), *expert_ids_buffer_size(g)}, &plan.expert_ids},
    };
    for (const auto& b : buffers) {
        const ResolvedBuffer r = resolver.resolve(b.request);
        if (!r.ok()) {
            return ScheduleOutcome::reject(k_invalid, b.request.field, r.error);
        }
        if (b.slot != nullptr) {
            *b.slot = r.data;
        }
    }
    if (!is_aligned(plan.token_info, k_flag_alignment)) {
        return ScheduleOutcome::reject(k_invalid, "ffn.token_info_buf", "is not 4-byte aligned");
    }
    return {};
}

// All checks in order; on success `plan` is complete and nothing has been modified yet.
template <MemoryResolver R>
ScheduleOutcome validate_ffn(const ContextTensor& tensor, std::optional<std::int32_t> sync_group_size,
                             std::optional<std::int32_t> execute_mode, R& resolver, FfnPlan& plan) {
    ScheduleOutcome o = check_context_tensor(tensor);
    if (!o.ok()) {
        return o;
    }
    const ConstScheduleContextView v(tensor.data);
    if (o = check_ffn_common(v, plan); !o.ok()) {
        return o;
    }
    if (o = check_ffn_input(v, plan); !o.ok()) {
        return o;
    }
    if (o = check_ffn_outputs(v, plan); !o.ok()) {
        return o;
    }
    if (o = check_ffn_attributes(sync_group_size, execute_mode, plan); !o.ok()) {
        return o;
    }
    return resolve_ffn_buffers(v, plan, resolver);
}

} // namespace ferry::afd::detail
