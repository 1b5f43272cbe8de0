#pragma once
// The checks both kernels run on the context tensor before reading it.

#include <ferry/afd/schedule_context_view.hpp>
#include <ferry/afd/schedule_outcome.hpp>

namespace ferry::afd::detail {

// docs/cann-contract/afd.md#validation-order steps 1–3, shared by both kernels. ferry adds the
// alignment the atomic run_flag / polling_index accesses need (CANN's device buffers are always
// aligned).
inline ScheduleOutcome check_context_tensor(const ContextTensor& t) noexcept {
    if (t.data == nullptr) {
        return ScheduleOutcome::reject(KernelStatus::param_invalid, "context", "is null");
    }
    if (t.rank != 1) {
        return ScheduleOutcome::reject(KernelStatus::param_invalid, "context", "is not one-dimensional");
    }
    if (t.size_bytes < k_context_size) {
        return ScheduleOutcome::reject(KernelStatus::param_invalid, "context", "holds fewer than 1024 bytes");
    }
    if (!is_aligned(t.data, k_context_alignment)) {
        return ScheduleOutcome::reject(KernelStatus::param_invalid, "context", "is not 8-byte aligned");
    }
    return {};
}

} // namespace ferry::afd::detail
