#pragma once
// ferry::Status — the outcome of every fallible ferry operation.
//
// The numeric values are CANN's aclError codes
// (docs/cann-contract/README.md#status-codes-at-a-glance), so the C shim can return a Status
// unchanged. The few outcomes CANN has no code for (a channel that was stopped, a timed wait that
// expired in C++, a name nobody serves, a layout that does not match) live in ferry's private
// range 900000+, which no CANN header uses. Each value means one thing (docs/core.md, Status).

#include <cstdint>
#include <string>
#include <system_error>
#include <type_traits>

namespace ferry {

enum class Status : std::int32_t {
    ok = 0,

    // ACL_ERROR_* (acl_base_rt.h)
    invalid_param = 100000,
    uninitialized = 100001,
    repeat_initialize = 100002,
    invalid_file = 100003,
    unsupported_data_type = 100026,
    repeat_finalize = 100037,
    prof_already_run = 100042, // ACL_ERROR_PROF_ALREADY_RUN
    prof_not_run = 100043,     // ACL_ERROR_PROF_NOT_RUN
    bad_alloc = 200000,
    api_not_supported = 200001,
    invalid_device = 200002,
    feature_unsupported = 200006,
    internal_error = 500000,
    failure = 500001,
    rt_failure = 500003,
    drv_failure = 500004,

    // ACL_ERROR_RT_* (rt_error_codes.h)
    rt_param_invalid = 107000,
    rt_invalid_device_id = 107001,
    rt_context_null = 107002,
    rt_stream_context = 107003,
    rt_stream_subscribe = 107011, // stream not subscribed, or subscribed twice
    rt_thread_subscribe = 107012, // thread not subscribed
    rt_stream_no_cb_reg = 107015, // callback launched on a stream with no subscribed thread
    rt_wait_timeout = 107019,
    rt_feature_not_supported = 207000,
    rt_memory_allocation = 207001,
    rt_memory_free = 207002,
    rt_no_device = 207004,
    empty = 207013, // ACL_ERROR_RT_QUEUE_EMPTY
    full = 207014,  // ACL_ERROR_RT_QUEUE_FULL
    rt_repeated_init = 207015,
    rt_device_oom = 207018,
    rt_timeout = 207020,
    rt_internal_error = 507000,
    rt_report_timeout = 507012,
    rt_kernel_lookup = 507027,
    rt_kernel_duplicate = 507028,
    rt_program_use_out = 507032,
    rt_dev_setup_error = 507033,
    rt_stream_sync_timeout = 507046,
    rt_aicpu_internal_error = 507900,

    // ferry-only outcomes (no CANN equivalent; the C shim maps them, see docs/c-api.md)
    stopped = 900001,
    timed_out = 900002,
    peer_lost = 900003, // a process sharing the channel or window died (docs/processes.md)
    not_found = 900004, // no segment, served channel or exposed region of that name
    mismatch = 900005,  // the named object exists but holds another type, size or layout
};

[[nodiscard]] constexpr bool succeeded(Status s) noexcept { return s == Status::ok; }
[[nodiscard]] constexpr bool failed(Status s) noexcept { return s != Status::ok; }
[[nodiscard]] constexpr std::int32_t to_code(Status s) noexcept {
    return static_cast<std::int32_t>(s);
}

[[nodiscard]] constexpr const char* name_of(Status s) noexcept {
    switch (s) {
    case Status::ok: return "ok";
    case Status::invalid_param: return "invalid parameter";
    case Status::uninitialized: return "not initialized";
    case Status::repeat_initialize: return "repeated initialization";
    case Status::invalid_file: return "invalid file";
    case Status::unsupported_data_type: return "unsupported data type";
    case Status::repeat_finalize: return "repeated finalization";
    case Status::prof_already_run: return "profiling already running";
    case Status::prof_not_run: return "profiling not running";
    case Status::bad_alloc: return "memory allocation failed";
    case Status::api_not_supported: return "API not supported";
    case Status::invalid_device: return "invalid device";
    case Status::feature_unsupported: return "feature not supported";
    case Status::internal_error: return "internal error";
    case Status::failure: return "failure";
    case Status::rt_failure: return "runtime failure";
    case Status::drv_failure: return "driver failure";
    case Status::rt_param_invalid: return "runtime: invalid parameter";
    case Status::rt_invalid_device_id: return "runtime: invalid device id";
    case Status::rt_context_null: return "runtime: no current context";
    case Status::rt_stream_context: return "runtime: stream not in current context";
    case Status::rt_stream_subscribe: return "runtime: stream subscribed twice or not at all";
    case Status::rt_thread_subscribe: return "runtime: thread not subscribed";
    case Status::rt_stream_no_cb_reg: return "runtime: stream has no callback thread";
    case Status::rt_wait_timeout: return "runtime: wait timed out";
    case Status::rt_feature_not_supported: return "runtime: feature not supported";
    case Status::rt_memory_allocation: return "runtime: memory allocation failed";
    case Status::rt_memory_free: return "runtime: memory free failed";
    case Status::rt_no_device: return "runtime: no device";
    case Status::empty: return "queue empty";
    case Status::full: return "queue full";
    case Status::rt_repeated_init: return "runtime: repeated init";
    case Status::rt_device_oom: return "runtime: device out of memory";
    case Status::rt_timeout: return "runtime: timeout";
    case Status::rt_internal_error: return "runtime: internal error";
    case Status::rt_report_timeout: return "runtime: callback report timed out";
    case Status::rt_kernel_lookup: return "runtime: kernel not found";
    case Status::rt_kernel_duplicate: return "runtime: kernel already registered";
    case Status::rt_program_use_out: return "runtime: program table exhausted";
    case Status::rt_dev_setup_error: return "runtime: device setup failed";
    case Status::rt_stream_sync_timeout: return "runtime: stream synchronize timed out";
    case Status::rt_aicpu_internal_error: return "runtime: AI CPU task failed";
    case Status::stopped: return "stopped";
    case Status::timed_out: return "timed out";
    case Status::peer_lost: return "peer process lost";
    case Status::not_found: return "no such name";
    case Status::mismatch: return "layout mismatch";
    }
    return "unknown status";
}

namespace detail {
class StatusCategory final : public std::error_category {
public:
    const char* name() const noexcept override { return "ferry"; }
    std::string message(int code) const override {
        return name_of(static_cast<Status>(code));
    }
};
} // namespace detail

[[nodiscard]] inline const std::error_category& status_category() noexcept {
    static const detail::StatusCategory category;
    return category;
}

[[nodiscard]] inline std::error_code make_error_code(Status s) noexcept {
    return {static_cast<int>(s), status_category()};
}

} // namespace ferry

template <>
struct std::is_error_code_enum<ferry::Status> : std::true_type {};
