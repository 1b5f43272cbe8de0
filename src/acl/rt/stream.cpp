// Streams and events: aclrtCreateStream / DestroyStream / SynchronizeStream(WithTimeout) /
// StreamQuery / StreamWaitEvent / LaunchHostFunc and aclrtCreateEvent / DestroyEvent /
// RecordEvent / QueryEvent(Status) / SynchronizeEvent / EventElapsedTime (spec/runtime.md,
// Streams and events). A null aclrtStream is the current context's default stream, as in CANN; a
// null handle where CANN requires one is ACL_ERROR_INVALID_PARAM; a stale or foreign handle is
// the runtime's ACL_ERROR_RT_PARAM_INVALID, never a dereference.

#include "acl/acl_rt.h"
#include "boundary.hpp"

#include <cstdint>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/runtime.hpp>

namespace acl = ferry::acl;
using ferry::Runtime;
using ferry::Status;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream* stream) {
    return acl::guarded("aclrtCreateStream", [&] {
        if (stream == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto created = rt.create_stream();
            if (!created) {
                return created.status();
            }
            *stream = *created;
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream) {
    return acl::guarded("aclrtDestroyStream", [&] {
        if (stream == nullptr) {
            return Status::invalid_param; // the default stream is not destroyed by the caller
        }
        return acl::with_runtime(
            [&](Runtime& rt) { return rt.destroy_stream(acl::to_stream(stream)); });
    });
}

// A task failure since the previous synchronize (e.g. a failed aclnn kernel) is returned here.
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream) {
    return acl::guarded("aclrtSynchronizeStream", [&] {
        return acl::with_runtime(
            [&](Runtime& rt) { return rt.synchronize_stream(acl::to_stream(stream)); });
    });
}

// timeout: -1 waits forever, > 0 milliseconds; anything else is ACL_ERROR_INVALID_PARAM. Expiry
// is ACL_ERROR_RT_STREAM_SYNC_TIMEOUT.
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream,
                                                               int32_t timeout) {
    return acl::guarded("aclrtSynchronizeStreamWithTimeout", [&] {
        const auto wait = ferry::Timeout::from_milliseconds(timeout);
        if (!wait || timeout == 0) {
            return Status::invalid_param;
        }
        return acl::with_runtime(
            [&](Runtime& rt) { return rt.synchronize_stream(acl::to_stream(stream), *wait); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus* status) {
    return acl::guarded("aclrtStreamQuery", [&] {
        if (status == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto idle = rt.query_stream(acl::to_stream(stream));
            if (!idle) {
                return idle.status();
            }
            *status = *idle ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
    return acl::guarded("aclrtStreamWaitEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return rt.stream_wait_event(acl::to_stream(stream), acl::to_event(event));
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc func,
                                                 void* args) {
    return acl::guarded("aclrtLaunchHostFunc", [&] {
        if (func == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return rt.launch_host_task(
                acl::to_stream(stream), [func, args] { func(args); }, "host_func");
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent* event) {
    return acl::guarded("aclrtCreateEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto created = rt.create_event();
            if (!created) {
                return created.status();
            }
            *event = *created;
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event) {
    return acl::guarded("aclrtDestroyEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime(
            [&](Runtime& rt) { return rt.destroy_event(acl::to_event(event)); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
    return acl::guarded("aclrtRecordEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return rt.record_event(acl::to_event(event), acl::to_stream(stream));
        });
    });
}

namespace {
// An event never recorded has nothing pending: it reads as complete (as cudaEventQuery does).
Status query(aclrtEvent event, bool& complete) {
    if (event == nullptr) {
        return Status::invalid_param;
    }
    return acl::with_runtime([&](Runtime& rt) {
        const auto status = rt.query_event(acl::to_event(event));
        if (!status) {
            return status.status();
        }
        complete = *status != ferry::EventStatus::pending;
        return Status::ok;
    });
}
} // namespace

ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus* status) {
    return acl::guarded("aclrtQueryEvent", [&] {
        bool complete = false;
        if (status == nullptr) {
            return Status::invalid_param;
        }
        const Status s = query(event, complete);
        if (ferry::succeeded(s)) {
            *status = complete ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
        }
        return s;
    });
}

ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event,
                                                   aclrtEventRecordedStatus* status) {
    return acl::guarded("aclrtQueryEventStatus", [&] {
        bool complete = false;
        if (status == nullptr) {
            return Status::invalid_param;
        }
        const Status s = query(event, complete);
        if (ferry::succeeded(s)) {
            *status =
                complete ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
        }
        return s;
    });
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event) {
    return acl::guarded("aclrtSynchronizeEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime(
            [&](Runtime& rt) { return rt.synchronize_event(acl::to_event(event)); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent,
                                                   aclrtEvent endEvent) {
    return acl::guarded("aclrtEventElapsedTime", [&] {
        if (ms == nullptr || startEvent == nullptr || endEvent == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto elapsed =
                rt.event_elapsed_time(acl::to_event(startEvent), acl::to_event(endEvent));
            if (!elapsed) {
                return elapsed.status();
            }
            *ms = *elapsed;
            return Status::ok;
        });
    });
}

} // extern "C"
