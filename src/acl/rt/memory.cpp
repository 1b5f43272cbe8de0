// Memory: aclrtMalloc / Free / MallocHost / FreeHost / Memcpy / MemcpyAsync / Memset /
// MemsetAsync / GetMemInfo (docs/cann-contract/runtime.md#memory). CANN's own argument checks come
// first, in its order (a null out-pointer or size 0 → ACL_ERROR_INVALID_PARAM before any device is
// consulted); the runtime then applies the size rounding, the per-device limit and the "where does
// this pointer really live" checks of every copy.

#include "../c_enum.hpp"
#include "acl/acl_rt.h"
#include "boundary.hpp"
#include "runtime_handles.hpp"

#include <cstdint>
#include <ferry/runtime/memory.hpp>
#include <ferry/runtime/runtime.hpp>

namespace acl = ferry::acl;
using ferry::MemcpyKind;
using ferry::Runtime;
using ferry::Status;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
    return acl::guarded("aclrtMalloc", [&] {
        if (devPtr == nullptr || size == 0) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto p = rt.malloc(size, static_cast<std::uint32_t>(acl::raw_value(policy)));
            if (!p) {
                return p.status();
            }
            *devPtr = *p;
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtFree(void* devPtr) {
    return acl::guarded("aclrtFree", [&] {
        if (devPtr == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) { return rt.free(devPtr); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void** hostPtr, size_t size) {
    return acl::guarded("aclrtMallocHost", [&] {
        if (hostPtr == nullptr || size == 0) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto p = rt.malloc_host(size);
            if (!p) {
                return p.status();
            }
            *hostPtr = *p;
            return Status::ok;
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void* hostPtr) {
    return acl::guarded("aclrtFreeHost", [&] {
        if (hostPtr == nullptr) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) { return rt.free_host(hostPtr); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                                         aclrtMemcpyKind kind) {
    return acl::guarded("aclrtMemcpy", [&] {
        return acl::with_runtime([&](Runtime& rt) {
            return rt.memcpy(dst, destMax, src, count,
                             static_cast<MemcpyKind>(acl::raw_value(kind)));
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src,
                                              size_t count, aclrtMemcpyKind kind,
                                              aclrtStream stream) {
    return acl::guarded("aclrtMemcpyAsync", [&] {
        return acl::with_runtime([&](Runtime& rt) {
            return acl::with_stream(stream, [&](ferry::Stream* s) {
                return rt.memcpy_async(dst, destMax, src, count,
                                       static_cast<MemcpyKind>(acl::raw_value(kind)), s);
            });
        });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value,
                                         size_t count) {
    return acl::guarded("aclrtMemset", [&] {
        return acl::with_runtime(
            [&](Runtime& rt) { return rt.memset(devPtr, maxCount, value, count); });
    });
}

ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value,
                                              size_t count, aclrtStream stream) {
    return acl::guarded("aclrtMemsetAsync", [&] {
        return acl::with_runtime([&](Runtime& rt) {
            return acl::with_stream(stream, [&](ferry::Stream* s) {
                return rt.memset_async(devPtr, maxCount, value, count, s);
            });
        });
    });
}

// Every attribute reads the current device's one memory: total = FERRY_DEVICE_MEMORY, free =
// what its allocations (rounded sizes) leave.
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total) {
    return acl::guarded("aclrtGetMemInfo", [&] {
        const auto raw_attr = acl::raw_value(attr); // any int may arrive: UB to load as the enum
        if (free == nullptr || total == nullptr || raw_attr < ACL_DDR_MEM ||
            raw_attr > ACL_MEM_P2P_HUGE1G) {
            return Status::invalid_param;
        }
        return acl::with_runtime([&](Runtime& rt) {
            const auto device = rt.current_device();
            if (!device) {
                return device.status();
            }
            const std::uint64_t limit = rt.config().device_memory;
            const std::uint64_t used = rt.memory_used(*device);
            *total = static_cast<size_t>(limit);
            *free = static_cast<size_t>(limit - used);
            return Status::ok;
        });
    });
}

} // extern "C"
