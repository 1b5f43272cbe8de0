// Devices and contexts: aclrtSetDevice / ResetDevice / ResetDeviceForce / GetDevice /
// GetDeviceCount / GetRunMode / SynchronizeDevice and aclrtCreateContext / DestroyContext /
// SetCurrentContext / GetCurrentContext (docs/cann-contract/runtime.md#devices-and-contexts).
// Out-pointers are checked first and written only on success (bad input changes nothing). Context
// handles are tokens (runtime_handles.hpp): one per context, never reused, so a destroyed or reset
// context's handle stays rejected.

#include "acl/acl_rt.h"
#include "boundary.hpp"
#include "runtime_handles.hpp"

#include <ferry/runtime/runtime.hpp>

namespace acl = ferry::acl;
using ferry::Runtime;
using ferry::Status;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId) {
    return acl::guarded("aclrtSetDevice", [&] {
        return acl::with_runtime([&](Runtime& rt) { return rt.set_device(deviceId); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId) {
    return acl::guarded("aclrtResetDevice", [&] {
        return acl::with_runtime([&](Runtime& rt) { return rt.reset_device(deviceId); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId) {
    return acl::guarded("aclrtResetDeviceForce", [&] {
        return acl::with_runtime([&](Runtime& rt) { return rt.reset_device_force(deviceId); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t* deviceId) {
    return acl::guarded("aclrtGetDevice", [&] {
        if (deviceId == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto device = rt.current_device();
            if (!device) {
                return device.status(); // no current context: ACL_ERROR_RT_CONTEXT_NULL
            }
            *deviceId = *device;
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t* count) {
    return acl::guarded("aclrtGetDeviceCount", [&] {
        if (count == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            *count = rt.device_count();
            return Status::ok;
        });
    });
}

// ferry's devices are emulated next to the calling program, as a host with an attached card.
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode* runMode) {
    return acl::guarded("aclrtGetRunMode", [&] {
        if (runMode == nullptr) {
            return Status::invalid_param;
        }
        *runMode = ACL_HOST;
        return Status::ok;
    });
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void) {
    return acl::guarded("aclrtSynchronizeDevice", [] {
        return acl::with_runtime([](Runtime& rt) { return rt.synchronize_device(); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
    return acl::guarded("aclrtCreateContext", [&] {
        if (context == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto created = rt.create_context_ref(deviceId);
            if (!created) {
                return created.status();
            }
            try {
                *context = acl::to_handle<void>(acl::contexts().token_for(*created));
            } catch (...) { // no handle for it: it must not stay behind
                (void)rt.destroy_context(created->get());
                throw;
            }
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context) {
    return acl::guarded("aclrtDestroyContext", [&] {
        if (context == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::contexts().destroy(
                context, [&](const ferry::Context* c) { return rt.destroy_context(c); });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context) {
    return acl::guarded("aclrtSetCurrentContext", [&] {
        if (context == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            return acl::contexts().with(
                context, [&](const ferry::Context* c) { return rt.set_current_context(c); });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext* context) {
    return acl::guarded("aclrtGetCurrentContext", [&] {
        if (context == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto current = rt.current_context_ref();
            if (!current) {
                return current.status();
            }
            *context = acl::to_handle<void>(acl::contexts().token_for(*current));
            return Status::ok;
        });
    });
}

} // extern "C"
