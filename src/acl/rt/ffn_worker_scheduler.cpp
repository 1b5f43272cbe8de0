// aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize / aclnnInplaceFfnWorkerScheduler: CANN's
// two-phase aclnn API over ferry::afd::GroupSyncScheduler
// (docs/cann-contract/afd.md#aclnn-two-phase-api).
//
// Phase 1 checks what CANN's wrapper checks, in its order — null tensor → 161001; rank ≠ 1 or
// executeMode ≠ 0 → 161002; empty tensor → 161002 — then what the operator documents for its
// input and CANN's wrapper leaves unchecked: INT8, ND, shape (1024), contiguous (stride 1), storage
// holding offset + 1024 elements → 161002 (docs/afd.md#aclnn-input-checks). It records the
// context's address and size in a single-use executor; syncGroupSize is left to the kernel
// (docs/cann-contract/afd.md#phase-1-getworkspacesize). The workspace size is 0.
// Phase 2 queues one kernel run on the stream: the context (in runtime memory) is validated and
// scheduled with CANN's policies — lowest-ready selection, serial copies — ferry's default
// spin-then-park wait, and the registry resolver, so every buffer the context names must lie in a
// live runtime allocation. A kernel failure is the stream task's failure: aclrtSynchronizeStream
// returns ACL_ERROR_RT_AICPU_INTERNAL_ERROR and the reason is logged on stderr.

#include "aclnn_tensor.hpp"
#include "aclnnop/aclnn_ffn_worker_scheduler.h"
#include "boundary.hpp"
#include "runtime_handles.hpp"

#include <cstddef>
#include <cstdint>
#include <ferry/afd/group_sync_scheduler.hpp>
#include <ferry/afd/registry_resolver.hpp>
#include <ferry/core/dtype.hpp>
#include <ferry/runtime/log.hpp>
#include <ferry/runtime/runtime.hpp>
#include <memory>
#include <optional>
#include <string>

// One kernel run, as phase 1 saw the tensor: phase 2 does not depend on the tensor handle, which
// the caller may destroy once the executor exists.
struct aclOpExecutor {
    std::byte* context = nullptr;
    std::uint64_t context_bytes = 0;
    std::size_t rank = 0;
    std::int32_t sync_group_size = 0;
    std::int32_t execute_mode = 0;
};

namespace ferry::acl {
namespace {

HandleTable<aclOpExecutor>& executors() {
    // leaked: usable during process exit
    static auto* const table = new HandleTable<aclOpExecutor>(HandleKind::executor);
    return *table;
}

constexpr std::int64_t k_context_elements = 1024; // the documented shape (1024), INT8

// The operator's documented input (docs/afd.md#aclnn-input-checks): a 1-D INT8 ND tensor of shape
// (1024), contiguous, whose storage holds the viewed bytes. The rank was checked before.
bool is_documented_context(const aclTensor& tensor) {
    if (tensor.data_type != ACL_INT8 || tensor.format != ACL_FORMAT_ND ||
        tensor.view_dims[0] != k_context_elements || tensor.strides.size() != 1 ||
        tensor.strides[0] != 1) {
        return false;
    }
    const auto storage = element_count(tensor.storage_dims);
    return storage && *storage >= static_cast<std::uint64_t>(tensor.offset) &&
           *storage - static_cast<std::uint64_t>(tensor.offset) >= k_context_elements;
}

// Fills `run` from the tensor: 161002 for a rank other than 1, an empty tensor
// (docs/cann-contract/afd.md#phase-1-getworkspacesize, steps 4–5) or any other departure from the
// documented input.
aclnnStatus describe_context(const aclTensor& tensor, std::int32_t execute_mode,
                             aclOpExecutor& run) {
    if (tensor.view_dims.size() != 1 || execute_mode != 0) {
        return ACLNN_ERR_PARAM_INVALID;
    }
    const auto elements = element_count(tensor.view_dims);
    if (!elements || *elements == 0 || !is_documented_context(tensor)) {
        return ACLNN_ERR_PARAM_INVALID;
    }
    const std::uint64_t bits = bit_width(static_cast<DType>(tensor.data_type));
    if (bits == 0 || *elements > UINT64_MAX / bits) {
        return ACLNN_ERR_PARAM_INVALID;
    }
    const std::uint64_t offset_bytes = static_cast<std::uint64_t>(tensor.offset) * bits / 8;
    run.context = static_cast<std::byte*>(tensor.data) + offset_bytes;
    run.context_bytes = *elements * bits / 8;
    run.rank = tensor.view_dims.size();
    return ACLNN_SUCCESS;
}

// The stream task: the kernel's checks and one scheduling pass over the context.
Status run_kernel(Runtime& rt, const aclOpExecutor& run) {
    const AllocationRegistry& registry = rt.registry();
    if (!registry.find(run.context, static_cast<std::size_t>(run.context_bytes))) {
        log(LogLevel::error,
            "aclnnInplaceFfnWorkerScheduler: scheduleContextRef's data is not inside a "
            "live runtime allocation of its size");
        return Status::rt_aicpu_internal_error;
    }
    afd::GroupSyncScheduler<afd::SpinThenPark<>, afd::LowestReady, afd::SerialExecutor,
                            afd::RegistryResolver>
        scheduler(afd::SpinThenPark<>{}, afd::LowestReady{}, afd::SerialExecutor{},
                  afd::RegistryResolver(registry));
    const afd::ScheduleOutcome outcome =
        scheduler.schedule_once(afd::ContextTensor{run.context, run.context_bytes, run.rank},
                                run.sync_group_size, run.execute_mode);
    if (!outcome.ok()) {
        log(LogLevel::error,
            "aclnnInplaceFfnWorkerScheduler: kernel failed: " + outcome.describe());
        return Status::rt_aicpu_internal_error;
    }
    return Status::ok;
}

aclnnStatus get_workspace_size(aclTensor* tensor, std::int32_t sync_group_size,
                               std::int32_t execute_mode, std::uint64_t* workspace_size,
                               aclOpExecutor** executor) {
    if (tensor == nullptr || workspace_size == nullptr || executor == nullptr) {
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    auto run = std::make_unique<aclOpExecutor>();
    run->sync_group_size = sync_group_size;
    run->execute_mode = execute_mode;
    const std::shared_ptr<aclTensor> described = tensors().find(tensor);
    if (described == nullptr) {
        return ACLNN_ERR_PARAM_INVALID; // not a live tensor
    }
    if (const aclnnStatus checked = describe_context(*described, execute_mode, *run);
        checked != ACLNN_SUCCESS) {
        return checked;
    }
    *executor = to_handle<aclOpExecutor>(executors().add(std::move(run)));
    *workspace_size = 0;
    return ACLNN_SUCCESS;
}

// Queues the kernel; the executor is consumed only when the task is queued (CANN executors are
// single-use), so a call rejected for its arguments can be retried. Take-or-use is one step: the
// executor leaves its table in the same critical section that queues its task, so of two threads
// launching one executor at once exactly one queues it and the other finds it gone.
aclnnStatus launch(void* workspace, std::uint64_t workspace_size, aclOpExecutor* executor,
                   aclrtStream stream) {
    if (executor == nullptr || (workspace_size != 0 && workspace == nullptr)) {
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    const auto booted = Runtime::instance();
    if (!booted) {
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    Runtime* rt = *booted;
    const Token token = to_token(executor);
    bool live = false;
    const Status queued = with_stream(stream, [&](Stream* s) {
        Status status = Status::ok;
        (void)executors().take_if(token, [&](const aclOpExecutor& run) {
            live = true;
            status = rt->launch_host_task(
                s, [rt, run] { return run_kernel(*rt, run); }, "FfnWorkerScheduler");
            return succeeded(status);
        });
        return status;
    });
    if (!live && executors().find(token) == nullptr) {
        return ACLNN_ERR_PARAM_INVALID; // never made, or already run
    }
    if (failed(queued)) {
        note_failure("aclnnInplaceFfnWorkerScheduler", to_code(queued), name_of(queued));
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    return ACLNN_SUCCESS;
}

} // namespace
} // namespace ferry::acl

extern "C" {

ACLNN_API aclnnStatus aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(aclTensor* scheduleContextRef,
                                                                     int32_t syncGroupSize,
                                                                     int32_t executeMode,
                                                                     uint64_t* workspaceSize,
                                                                     aclOpExecutor** executor) {
    return ferry::acl::guarded(
        "aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize",
        [&] {
            return ferry::acl::get_workspace_size(scheduleContextRef, syncGroupSize, executeMode,
                                                  workspaceSize, executor);
        },
        ACLNN_ERR_INNER_CREATE_EXECUTOR, ACLNN_ERR_INNER);
}

ACLNN_API aclnnStatus aclnnInplaceFfnWorkerScheduler(void* workspace, uint64_t workspaceSize,
                                                     aclOpExecutor* executor, aclrtStream stream) {
    return ferry::acl::guarded(
        "aclnnInplaceFfnWorkerScheduler",
        [&] { return ferry::acl::launch(workspace, workspaceSize, executor, stream); },
        ACLNN_ERR_INNER, ACLNN_ERR_INNER);
}

} // extern "C"
