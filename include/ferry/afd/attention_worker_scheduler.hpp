#pragma once
// ferry::afd::AttentionWorkerScheduler — the attention side's wait for FFN results
// (aclnnInplaceAttentionWorkerScheduler, docs/cann-contract/afd.md#attentionworkerscheduler).
//
// One call: validate (same tensor checks as the FFN kernel, then schedule_mode == 1, M, BS, K > 0,
// both attention buffers non-null, token_info_buf_size >= 4·M·BS·K, micro_batch_id < M; overflow
// is INNER_ERROR), then wait while run_flag != 0 until all BS·K flags of micro batch
// t = (micro_batch_id + 1) % M are exactly 1; zero them and store micro_batch_id = t. session_num
// is not checked (as in CANN). run_flag == 0 returns OK with nothing changed. torch_npu's
// ScheduleContextHolder starts micro_batch_id at M - 1 so that the first call waits on micro
// batch 0 (docs/cann-contract/afd.md#buffer-conventions).

#include <cstdint>
#include <utility>

#include <ferry/afd/detail/context_checks.hpp>
#include <ferry/afd/detail/wait_loop.hpp>
#include <ferry/afd/ffn_data_desc.hpp>
#include <ferry/afd/memory_resolver.hpp>
#include <ferry/afd/schedule_outcome.hpp>
#include <ferry/afd/sizes.hpp>
#include <ferry/afd/auto_wait.hpp>
#include <ferry/afd/wait_policy.hpp>
#include <ferry/core/timeout.hpp>

namespace ferry::afd {

namespace detail {
struct AttentionPlan {
    Geometry geometry;
    std::uint32_t target = 0; // the micro batch this call waits on
    std::byte* flags = nullptr;
};

inline ScheduleOutcome check_attention_context(ConstScheduleContextView v, AttentionPlan& plan) noexcept {
    namespace c = fields::common;
    namespace a = fields::attention;
    const KernelStatus invalid = KernelStatus::param_invalid;
    if (v.get(c::schedule_mode) != k_schedule_mode_attention) {
        return ScheduleOutcome::reject(invalid, "common.schedule_mode", "is not 1 (attention)");
    }
    plan.geometry = {v.get(c::session_num), v.get(c::micro_batch_num), v.get(c::micro_batch_size),
                     v.get(c::selected_expert_num)};
    const Geometry& g = plan.geometry;
    if (g.micro_batch_num == 0) {
        return ScheduleOutcome::reject(invalid, "common.micro_batch_num", "is 0");
    }
    if (g.micro_batch_size == 0) {
        return ScheduleOutcome::reject(invalid, "common.micro_batch_size", "is 0");
    }
    if (g.selected_expert_num == 0) {
        return ScheduleOutcome::reject(invalid, "common.selected_expert_num", "is 0");
    }
    if (v.get(a::token_info_buf) == 0) {
        return ScheduleOutcome::reject(invalid, "attention.token_info_buf", "is null");
    }
    if (v.get(a::token_data_buf) == 0) {
        return ScheduleOutcome::reject(invalid, "attention.token_data_buf", "is null");
    }
    const Size needed = attention_token_info_size(g);
    if (!needed) {
        return ScheduleOutcome::reject(KernelStatus::inner_error, "common.micro_batch_num", "* BS * K * 4 overflows");
    }
    if (v.get(a::token_info_buf_size) < *needed) {
        return ScheduleOutcome::reject(invalid, "attention.token_info_buf_size", "is below 4*M*BS*K");
    }
    const std::uint32_t last = v.get(a::micro_batch_id);
    if (last >= g.micro_batch_num) {
        return ScheduleOutcome::reject(invalid, "attention.micro_batch_id", "is not below micro_batch_num");
    }
    plan.target = static_cast<std::uint32_t>((std::uint64_t{last} + 1) % g.micro_batch_num);
    return {};
}

template <MemoryResolver R>
ScheduleOutcome resolve_attention_buffers(ConstScheduleContextView v, AttentionPlan& plan, R& resolver) {
    namespace a = fields::attention;
    const ResolvedBuffer flags = resolver.resolve(
        {"attention.token_info_buf", v.get(a::token_info_buf), *attention_token_info_size(plan.geometry)});
    if (!flags.ok()) {
        return ScheduleOutcome::reject(KernelStatus::param_invalid, "attention.token_info_buf", flags.error);
    }
    const ResolvedBuffer data = resolver.resolve({"attention.token_data_buf", v.get(a::token_data_buf), 1});
    if (!data.ok()) {
        return ScheduleOutcome::reject(KernelStatus::param_invalid, "attention.token_data_buf", data.error);
    }
    if (!is_aligned(flags.data, k_flag_alignment)) {
        return ScheduleOutcome::reject(KernelStatus::param_invalid, "attention.token_info_buf", "is not 4-byte aligned");
    }
    plan.flags = flags.data;
    return {};
}
} // namespace detail

template <WaitPolicy Wait = AutoWait, MemoryResolver Resolver = TrustingResolver>
class AttentionWorkerScheduler {
public:
    AttentionWorkerScheduler() = default;
    explicit AttentionWorkerScheduler(Wait wait, Resolver resolver = {})
        : wait_(std::move(wait)), resolver_(std::move(resolver)) {}

    ScheduleOutcome schedule_once(const ContextTensor& tensor, const Timeout& timeout = forever) {
        detail::AttentionPlan plan;
        ScheduleOutcome o = detail::check_context_tensor(tensor);
        if (!o.ok()) {
            return o;
        }
        const ScheduleContextView view(tensor.data);
        if (o = detail::check_attention_context(view, plan); !o.ok()) {
            return o;
        }
        if (o = detail::resolve_attention_buffers(view, plan, resolver_); !o.ok()) {
            return o;
        }
        const AttentionFlagTable table(plan.flags, plan.geometry);
        const ScheduleExit exit = detail::wait_until_ready(view, wait_, timeout, [&] {
            return table.count_ready(plan.target) == table.flags_per_micro_batch();
        });
        if (exit == ScheduleExit::served) {
            table.clear(plan.target);
            view.set(fields::attention::micro_batch_id, plan.target);
        }
        return {KernelStatus::ok, exit, 0, "", ""};
    }
    ScheduleOutcome schedule_once(std::byte* context_1024, const Timeout& timeout = forever) {
        return schedule_once(ContextTensor{context_1024, k_context_size, 1}, timeout);
    }

private:
    Wait wait_{};
    Resolver resolver_{};
};

} // namespace ferry::afd
