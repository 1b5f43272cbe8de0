// aclrtSetExceptionInfoCallback and the aclrtGet*FromExceptionInfo accessors (docs/c-api.md,
// Exception info): the C callback is registered as the runtime's exception callback
// (Runtime::set_exception_callback), so a failing task — a throwing host kernel, a failing host
// function — calls it on the failing stream's thread with the task's description. NULL clears the
// registration. The accessors answer 0xFFFFFFFF for a NULL info, as CANN's do.

#include "acl/acl_rt.h"
#include "boundary.hpp"

#include <cstdint>
#include <ferry/runtime/runtime.hpp>

// The definition behind acl_rt.h's opaque aclrtExceptionInfo; it lives only for the callback.
struct rtExceptionInfo {
    uint32_t task_id;
    uint32_t stream_id;
    uint32_t thread_id;
    uint32_t device_id;
    uint32_t error_code;
};

namespace acl = ferry::acl;
using ferry::Runtime;
using ferry::Status;

namespace {

constexpr uint32_t k_no_info = 0xFFFFFFFFU;

// Ids wider than CANN's 32-bit fields keep their low 32 bits (ferry numbers streams and tasks in
// 64 bits; 2^32 of them do not happen in one process in practice).
rtExceptionInfo describe(const ferry::TaskFailure& failure) {
    return {static_cast<uint32_t>(failure.task_id), static_cast<uint32_t>(failure.stream),
            failure.thread_id, static_cast<uint32_t>(failure.device),
            static_cast<uint32_t>(ferry::to_code(failure.status))};
}

template <typename Field>
uint32_t read(const aclrtExceptionInfo* info, Field field) noexcept {
    return info == nullptr ? k_no_info : info->*field;
}

} // namespace

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback) {
    return acl::guarded("aclrtSetExceptionInfoCallback", [&] {
        return acl::with_runtime([&](Runtime& rt) {
            if (callback == nullptr) {
                rt.set_exception_callback(nullptr);
                return Status::ok;
            }
            rt.set_exception_callback([callback](const ferry::TaskFailure& failure) {
                rtExceptionInfo info = describe(failure);
                callback(&info);
            });
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo* info) {
    return read(info, &rtExceptionInfo::task_id);
}

ACL_FUNC_VISIBILITY uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo* info) {
    return read(info, &rtExceptionInfo::stream_id);
}

ACL_FUNC_VISIBILITY uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo* info) {
    return read(info, &rtExceptionInfo::thread_id);
}

ACL_FUNC_VISIBILITY uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo* info) {
    return read(info, &rtExceptionInfo::device_id);
}

ACL_FUNC_VISIBILITY uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo* info) {
    return read(info, &rtExceptionInfo::error_code);
}

} // extern "C"
