#pragma once
// ferry::afd::GroupSyncScheduler — the FFN worker scheduler (aclnnInplaceFfnWorkerScheduler).
//
// One call = one run of CANN's FfnWorkerScheduler AICPU kernel
// (docs/cann-contract/afd.md#ffnworkerscheduler-kernel): validate the context in CANN's order
// (detail/ffn_plan.hpp), set out_num = 0, then
//  - group_num == 1 (all-sync, docs/cann-contract/afd.md#all-sync-mode): wait until every session's
//    descriptor for micro batch polling_index has flag 1, emit it, advance polling_index =
//    (polling_index + 1) % M;
//  - group_num > 1 (grouped, docs/cann-contract/afd.md#grouped-mode): wait until some group has a
//    ready micro batch, then for each group in ascending order emit the micro batch its
//    SelectionPolicy picks (CANN: the lowest).
// Emitting a session row (docs/cann-contract/afd.md#output-and-reset) writes layer_id, session id,
// micro batch id and BS·K expert ids at row out_num, resets the descriptor's ids to 0x7F7F7F7F and
// its flag to 0 (layer_id kept), and adds the rows to out_num. run_flag == 0, at entry or while
// waiting, returns OK with out_num 0. With the default policies the observable results are CANN's
// exactly; the policies change only how the wait spends CPU (WaitPolicy), which micro batch a group
// takes (SelectionPolicy), who runs the copies (Executor) and how addresses are trusted
// (MemoryResolver).

#include <cstdint>
#include <optional>
#include <utility>

#include <ferry/afd/detail/copy_and_reset.hpp>
#include <ferry/afd/detail/ffn_plan.hpp>
#include <ferry/afd/detail/wait_loop.hpp>
#include <ferry/afd/executor.hpp>
#include <ferry/afd/ffn_data_desc.hpp>
#include <ferry/afd/memory_resolver.hpp>
#include <ferry/afd/schedule_outcome.hpp>
#include <ferry/afd/selection_policy.hpp>
#include <ferry/afd/auto_wait.hpp>
#include <ferry/afd/wait_policy.hpp>
#include <ferry/core/timeout.hpp>

namespace ferry::afd {

template <WaitPolicy Wait = AutoWait, SelectionPolicy Selection = LowestReady,
          Executor Exec = SerialExecutor, MemoryResolver Resolver = TrustingResolver>
class GroupSyncScheduler {
public:
    GroupSyncScheduler() = default;
    explicit GroupSyncScheduler(Wait wait, Selection selection = {}, Exec executor = {},
                                Resolver resolver = {})
        : wait_(std::move(wait)), selection_(std::move(selection)), executor_(std::move(executor)),
          resolver_(std::move(resolver)) {}

    // One kernel run on the tensor's context. sync_group_size / execute_mode: std::nullopt means
    // the attribute is absent: the operator's defaults, 1 (one group per session) and 0 (once). `timeout` is a ferry extension
    // (CANN waits until run_flag is 0): on expiry the call returns OK, exit timed_out, nothing
    // consumed.
    ScheduleOutcome schedule_once(const ContextTensor& tensor, std::optional<std::int32_t> sync_group_size,
                                  std::optional<std::int32_t> execute_mode = std::nullopt,
                                  const Timeout& timeout = forever) {
        detail::FfnPlan plan;
        const ScheduleOutcome checked =
            detail::validate_ffn(tensor, sync_group_size, execute_mode, resolver_, plan);
        if (!checked.ok()) {
            return checked; // nothing modified, out_num kept
        }
        const ScheduleContextView view(tensor.data);
        view.set(fields::ffn::out_num, 0);
        const ScheduleExit exit = plan.group_num == 1 ? run_all_sync(view, plan, timeout)
                                                      : run_grouped(view, plan, timeout);
        return {KernelStatus::ok, exit, view.get(fields::ffn::out_num), "", ""};
    }
    ScheduleOutcome schedule_once(std::byte* context_1024, std::optional<std::int32_t> sync_group_size,
                                  std::optional<std::int32_t> execute_mode = std::nullopt,
                                  const Timeout& timeout = forever) {
        return schedule_once(ContextTensor{context_1024, k_context_size, 1}, sync_group_size,
                             execute_mode, timeout);
    }

    [[nodiscard]] Selection& selection() noexcept { return selection_; }
    [[nodiscard]] Exec& executor() noexcept { return executor_; }
    [[nodiscard]] Resolver& resolver() noexcept { return resolver_; }

private:
    // docs/cann-contract/afd.md#readiness: every session in [first, first + count) has flag exactly
    // 1 for micro batch mb.
    static bool sessions_ready(const FfnDescriptorTable& table, std::uint32_t mb, std::uint32_t first,
                               std::uint32_t count) noexcept {
        for (std::uint32_t s = first; s < first + count; ++s) {
            if (!table.at(s, mb).ready()) {
                return false;
            }
        }
        return true;
    }

    ScheduleExit run_all_sync(ScheduleContextView view, const detail::FfnPlan& plan, const Timeout& timeout) {
        const FfnDescriptorTable table(plan.token_info, plan.geometry);
        const auto mb = static_cast<std::uint32_t>(view.polling_index()); // validated < M
        const std::uint32_t a = plan.geometry.session_num;
        const ScheduleExit exit = detail::wait_until_ready(
            view, wait_, timeout, [&] { return sessions_ready(table, mb, 0, a); });
        if (exit == ScheduleExit::served) {
            emit(view, plan, table, mb, 0, a);
            view.set_polling_index((std::uint64_t{mb} + 1) % plan.geometry.micro_batch_num);
        }
        return exit;
    }

    ScheduleExit run_grouped(ScheduleContextView view, const detail::FfnPlan& plan, const Timeout& timeout) {
        const FfnDescriptorTable table(plan.token_info, plan.geometry);
        const std::uint32_t m = plan.geometry.micro_batch_num;
        const std::uint32_t sgs = plan.sync_group_size;
        const auto any_group_ready = [&] { // CheckHasReadyGroup: groups outer, micro batches inner
            for (std::uint32_t g = 0; g < plan.group_num; ++g) {
                for (std::uint32_t mb = 0; mb < m; ++mb) {
                    if (sessions_ready(table, mb, g * sgs, sgs)) {
                        return true;
                    }
                }
            }
            return false;
        };
        const ScheduleExit exit = detail::wait_until_ready(view, wait_, timeout, any_group_ready);
        if (exit != ScheduleExit::served) {
            return exit;
        }
        for (std::uint32_t g = 0; g < plan.group_num; ++g) { // CheckHandleSessions per group
            const std::optional<std::uint32_t> mb = selection_.select(
                g, m, [&](std::uint32_t candidate) { return sessions_ready(table, candidate, g * sgs, sgs); });
            if (mb) {
                emit(view, plan, table, *mb, g * sgs, sgs);
            }
        }
        return exit;
    }

    // ToOutput + CopyAndResetSessions: rows start at the current out_num.
    void emit(ScheduleContextView view, const detail::FfnPlan& plan, const FfnDescriptorTable& table,
              std::uint32_t mb, std::uint32_t first, std::uint32_t count) {
        const std::uint32_t start_out = view.get(fields::ffn::out_num);
        executor_.for_each_shard(count, [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i) {
                copy_and_reset(plan, table.at(first + static_cast<std::uint32_t>(i), mb),
                               first + static_cast<std::uint32_t>(i), mb, start_out + i);
            }
        });
        view.set(fields::ffn::out_num, start_out + count);
    }

    static void copy_and_reset(const detail::FfnPlan& plan, const FfnDescriptor& desc, std::uint32_t session,
                               std::uint32_t mb, std::size_t row) noexcept {
        detail::store_i32(plan.layer_ids + 4 * row, desc.layer_id());
        detail::store_i32(plan.session_ids + 4 * row, static_cast<std::int32_t>(session));
        detail::store_i32(plan.micro_batch_ids + 4 * row, static_cast<std::int32_t>(mb));
        const std::span<std::byte> ids = desc.expert_id_bytes();
        // every id becomes 0x7F7F7F7F, in the same pass as the copy
        detail::copy_and_reset_ids(plan.expert_ids + row * ids.size(), ids.data(), ids.size());
        desc.set_flag(k_invalid_flag);              // release: the slot is free for the producer
    }

    Wait wait_{};
    Selection selection_{};
    Exec executor_{};
    Resolver resolver_{};
};

// The plain entry point the C shim calls (aclnnInplaceFfnWorkerScheduler): CANN's policies
// (lowest-ready selection, serial copies) with ferry's default wait, over `resolver`. The
// ContextTensor form lets the caller pass the tensor's rank and byte size for checks 1-3.
template <MemoryResolver Resolver>
ScheduleOutcome schedule_once(const ContextTensor& tensor, std::optional<std::int32_t> sync_group_size,
                              std::optional<std::int32_t> execute_mode, Resolver& resolver,
                              const Timeout& timeout = forever) {
    struct Borrowed {
        Resolver* inner;
        ResolvedBuffer resolve(const BufferRequest& r) { return inner->resolve(r); }
    };
    GroupSyncScheduler<SpinThenPark<>, LowestReady, SerialExecutor, Borrowed> scheduler(
        SpinThenPark<>{}, LowestReady{}, SerialExecutor{}, Borrowed{&resolver});
    return scheduler.schedule_once(tensor, sync_group_size, execute_mode, timeout);
}
template <MemoryResolver Resolver>
ScheduleOutcome schedule_once(std::byte* context_1024, std::optional<std::int32_t> sync_group_size,
                              std::optional<std::int32_t> execute_mode, Resolver& resolver,
                              const Timeout& timeout = forever) {
    return schedule_once(ContextTensor{context_1024, k_context_size, 1}, sync_group_size, execute_mode, resolver,
                         timeout);
}

} // namespace ferry::afd
