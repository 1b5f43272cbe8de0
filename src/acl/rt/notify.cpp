// Notifies: aclrtCreateNotify / DestroyNotify / RecordNotify / WaitAndResetNotify / GetNotifyId
// (docs/c-api.md, Notifies). Handles are tokens like streams' and events' (runtime_handles.hpp); a
// NULL stream is the current context's default stream. A NULL notify or out-pointer is
// ACL_ERROR_INVALID_PARAM; a flag other than ACL_NOTIFY_DEFAULT / ACL_NOTIFY_DEVICE_USE_ONLY, or a
// stale or foreign handle, is ACL_ERROR_RT_PARAM_INVALID (CANN's rtsNotifyCreate rejects the flag
// with RT_ERROR_INVALID_VALUE).

#include "acl/acl_rt.h"
#include "boundary.hpp"
#include "runtime_handles.hpp"

#include <chrono>
#include <cstdint>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/runtime.hpp>

namespace acl = ferry::acl;
using ferry::Runtime;
using ferry::Status;

namespace {

// aclrtWaitAndResetNotify's timeout: 0 waits forever (CANN's documentation), and so does
// UINT32_MAX (CANN's rtsNotifyWaitAndReset); anything else is seconds.
ferry::Timeout wait_timeout(uint32_t seconds) {
    if (seconds == 0 || seconds == UINT32_MAX) {
        return ferry::forever;
    }
    return std::chrono::seconds(seconds);
}

} // namespace

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtCreateNotify(aclrtNotify* notify, uint64_t flag) {
    return acl::guarded("aclrtCreateNotify", [&] {
        if (notify == nullptr) {
            return Status::invalid_param;
        }
        if (flag != ACL_NOTIFY_DEFAULT && flag != ACL_NOTIFY_DEVICE_USE_ONLY) {
            return Status::rt_param_invalid;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto created = rt.create_notify_ref();
            if (!created) {
                return created.status();
            }
            try {
                *notify = acl::to_handle<void>(acl::notifies().add(*created));
            } catch (...) { // no handle for it: it must not stay behind
                (void)rt.destroy_notify(created->get());
                throw;
            }
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyNotify(aclrtNotify notify) {
    return acl::guarded("aclrtDestroyNotify", [&] {
        if (notify == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::notifies().destroy(notify,
                                           [&](ferry::Notify* n) { return rt.destroy_notify(n); });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream) {
    return acl::guarded("aclrtRecordNotify", [&] {
        if (notify == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::notifies().with(notify, [&](ferry::Notify* n) {
                return acl::with_stream(stream,
                                        [&](ferry::Stream* s) { return rt.record_notify(n, s); });
            });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream,
                                                     uint32_t timeout) {
    return acl::guarded("aclrtWaitAndResetNotify", [&] {
        if (notify == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::notifies().with(notify, [&](ferry::Notify* n) {
                return acl::with_stream(stream, [&](ferry::Stream* s) {
                    return rt.wait_and_reset_notify(n, s, wait_timeout(timeout));
                });
            });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t* notifyId) {
    return acl::guarded("aclrtGetNotifyId", [&] {
        if (notify == nullptr || notifyId == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::notifies().with(notify, [&](ferry::Notify* n) {
                const auto id = rt.notify_id(n);
                if (!id) {
                    return id.status();
                }
                *notifyId = *id;
                return Status::ok;
            });
        });
    });
}

} // extern "C"
