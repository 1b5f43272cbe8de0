// Streams and events: aclrtCreateStream / DestroyStream / SynchronizeStream(WithTimeout) /
// StreamQuery / StreamWaitEvent / LaunchHostFunc and aclrtCreateEvent / DestroyEvent /
// RecordEvent / QueryEvent(Status) / SynchronizeEvent / EventElapsedTime
// (docs/cann-contract/runtime.md#streams-and-events). A null aclrtStream is the current context's
// default stream, as in CANN; a null handle where CANN requires one is ACL_ERROR_INVALID_PARAM; a
// stale or foreign handle is ACL_ERROR_RT_PARAM_INVALID, never a dereference — also when a later
// stream or event got the destroyed one's address (runtime_handles.hpp: handles are tokens, never
// reused).

#include "acl/acl_rt.h"
#include "boundary.hpp"
#include "runtime_handles.hpp"

#include <cstdint>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/runtime.hpp>
#include <memory>
#include <type_traits>

namespace acl = ferry::acl;
using ferry::Runtime;
using ferry::Status;

namespace {

// A token for a stream or event the runtime just made; if the token cannot be made (out of
// memory), the object is destroyed again before the exception goes on: nothing is left behind.
template <typename T>
ferry::acl::Token register_or_destroy(Runtime& rt, ferry::acl::RuntimeHandles<T>& handles,
                                      const std::shared_ptr<T>& object) {
    try {
        return handles.add(object);
    } catch (...) {
        if constexpr (std::is_same_v<T, ferry::Stream>) {
            (void)rt.destroy_stream(object.get());
        } else {
            (void)rt.destroy_event(object.get());
        }
        throw;
    }
}

} // namespace

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream* stream) {
    return acl::guarded("aclrtCreateStream", [&] {
        if (stream == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto created = rt.create_stream_ref();
            if (!created) {
                return created.status();
            }
            *stream = acl::to_handle<void>(register_or_destroy(rt, acl::streams(), *created));
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream) {
    return acl::guarded("aclrtDestroyStream", [&] {
        if (stream == nullptr) {
            return Status::invalid_param; // the default stream is not destroyed by the caller
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::streams().destroy(stream,
                                          [&](ferry::Stream* s) { return rt.destroy_stream(s); });
        });
    });
}

// A task failure since the previous synchronize (e.g. a failed aclnn kernel) is returned here.
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream) {
    return acl::guarded("aclrtSynchronizeStream", [&] {
        return acl::with_runtime([&](Runtime& rt) {
            return acl::with_stream(stream,
                                    [&](ferry::Stream* s) { return rt.synchronize_stream(s); });
        });
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
        return acl::with_runtime([&](Runtime& rt) {
            return acl::with_stream(
                stream, [&](ferry::Stream* s) { return rt.synchronize_stream(s, *wait); });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus* status) {
    return acl::guarded("aclrtStreamQuery", [&] {
        if (status == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::with_stream(stream, [&](ferry::Stream* s) {
                const auto idle = rt.query_stream(s);
                if (!idle) {
                    return idle.status();
                }
                *status = *idle ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
                return Status::ok;
            });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
    return acl::guarded("aclrtStreamWaitEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::with_stream(stream, [&](ferry::Stream* s) {
                return acl::events().with(
                    event, [&](ferry::Event* e) { return rt.stream_wait_event(s, e); });
            });
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
            return acl::with_stream(stream, [&](ferry::Stream* s) {
                return rt.launch_host_task(
                    s, [func, args] { func(args); }, "host_func");
            });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent* event) {
    return acl::guarded("aclrtCreateEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto created = rt.create_event_ref();
            if (!created) {
                return created.status();
            }
            *event = acl::to_handle<void>(register_or_destroy(rt, acl::events(), *created));
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event) {
    return acl::guarded("aclrtDestroyEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::events().destroy(event,
                                         [&](ferry::Event* e) { return rt.destroy_event(e); });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
    return acl::guarded("aclrtRecordEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::events().with(event, [&](ferry::Event* e) {
                return acl::with_stream(stream,
                                        [&](ferry::Stream* s) { return rt.record_event(e, s); });
            });
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
        return acl::events().with(event, [&](ferry::Event* e) {
            const auto status = rt.query_event(e);
            if (!status) {
                return status.status();
            }
            complete = *status != ferry::EventStatus::pending;
            return Status::ok;
        });
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
        return acl::with_runtime([&](Runtime& rt) {
            return acl::events().with(event,
                                      [&](ferry::Event* e) { return rt.synchronize_event(e); });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent,
                                                   aclrtEvent endEvent) {
    return acl::guarded("aclrtEventElapsedTime", [&] {
        if (ms == nullptr || startEvent == nullptr || endEvent == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::events().with(startEvent, [&](ferry::Event* start) {
                return acl::events().with(endEvent, [&](ferry::Event* end) {
                    const auto elapsed = rt.event_elapsed_time(start, end);
                    if (!elapsed) {
                        return elapsed.status();
                    }
                    *ms = *elapsed;
                    return Status::ok;
                });
            });
        });
    });
}

} // extern "C"
