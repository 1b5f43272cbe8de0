// aclrtResetEvent (docs/c-api.md, Event reset): queues a reset of the event on the stream. When the
// stream reaches it, the event's completed records are forgotten and it reads as never recorded
// again (no timestamp, so aclrtEventElapsedTime refuses it) until the next aclrtRecordEvent; a
// record still pending on another stream completes normally. A null stream is the current
// context's default stream; a null event is ACL_ERROR_INVALID_PARAM; a stale or foreign handle is
// ACL_ERROR_RT_PARAM_INVALID.

#include "acl/acl_rt.h"
#include "boundary.hpp"
#include "runtime_handles.hpp"

#include <ferry/runtime/runtime.hpp>

namespace acl = ferry::acl;
using ferry::Runtime;
using ferry::Status;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
    return acl::guarded("aclrtResetEvent", [&] {
        if (event == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::events().with(event, [&](ferry::Event* e) {
                return acl::with_stream(stream,
                                        [&](ferry::Stream* s) { return rt.reset_event(e, s); });
            });
        });
    });
}

} // extern "C"
