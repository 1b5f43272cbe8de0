#pragma once
// ferry::afd::KernelStatus — the result codes of CANN's AICPU kernels (FfnWorkerScheduler,
// AttentionWorkerScheduler), a separate domain from aclError.
//
// docs/cann-contract/afd.md#kernelstatus: the kernels return AICPU KernelStatus values,
// KERNEL_STATUS_OK = 0, KERNEL_STATUS_PARAM_INVALID = 1, KERNEL_STATUS_INNER_ERROR = 2.
// Only where a ferry::Status is needed (the runtime, the C shim) are they mapped with to_status.

#include <cstdint>

#include <ferry/core/status.hpp>

namespace ferry::afd {

enum class KernelStatus : std::uint32_t {
    ok = 0,            // KERNEL_STATUS_OK
    param_invalid = 1, // KERNEL_STATUS_PARAM_INVALID
    inner_error = 2,   // KERNEL_STATUS_INNER_ERROR
};

[[nodiscard]] constexpr const char* name_of(KernelStatus s) noexcept {
    switch (s) {
    case KernelStatus::ok: return "KERNEL_STATUS_OK";
    case KernelStatus::param_invalid: return "KERNEL_STATUS_PARAM_INVALID";
    case KernelStatus::inner_error: return "KERNEL_STATUS_INNER_ERROR";
    }
    return "unknown kernel status";
}

// A kernel failure seen through the runtime: bad parameters become invalid_param, an inner
// error (arithmetic overflow, a failed copy) becomes internal_error.
[[nodiscard]] constexpr Status to_status(KernelStatus s) noexcept {
    switch (s) {
    case KernelStatus::ok: return Status::ok;
    case KernelStatus::param_invalid: return Status::invalid_param;
    case KernelStatus::inner_error: return Status::internal_error;
    }
    return Status::internal_error;
}

} // namespace ferry::afd
