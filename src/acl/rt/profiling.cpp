// Profiling: aclprofInit / CreateConfig / DestroyConfig / Start / Stop / Finalize (docs/c-api.md,
// Profiling) over ferry::ProfilingSession, which writes the runtime's Chrome trace. An
// aclprofConfig* is a token (../handle_table.hpp) for a ferry::ProfilerConfig; the shim checks
// the C arguments and the device ids against the visible devices, and nothing else.

#include "../handle_table.hpp"
#include "acl/acl_prof.h"
#include "boundary.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ferry/runtime/profiling_session.hpp>
#include <ferry/runtime/runtime.hpp>
#include <memory>
#include <string>

namespace acl = ferry::acl;
using ferry::ProfilerConfig;
using ferry::Runtime;
using ferry::Status;

namespace {

constexpr std::size_t k_max_path = 4096; // CANN: profilerResultPath at most 4096 bytes

// Both leaked on purpose: usable during process exit.
ferry::ProfilingSession& session() {
    static auto* const instance = new ferry::ProfilingSession;
    return *instance;
}
acl::HandleTable<const ProfilerConfig>& configs() {
    static auto* const table =
        new acl::HandleTable<const ProfilerConfig>(acl::HandleKind::profiler_config);
    return *table;
}

// Takes the argument's address: a C caller may pass any 32-bit value, and loading one outside
// the enumerators as the C++ enum type is undefined behaviour, so its bytes are read as an int.
bool known_metrics(const aclprofAicoreMetrics& metrics) {
    std::int32_t m = 0;
    static_assert(sizeof metrics == sizeof m);
    std::memcpy(&m, &metrics, sizeof m);
    return (m >= ACL_AICORE_ARITHMETIC_UTILIZATION && m <= ACL_AICORE_MEMORY_ACCESS) ||
           m == ACL_AICORE_NONE;
}

// The configuration aclprofCreateConfig describes; nullptr when an argument is bad. No device:
// host-side work only (CANN profiles no device then).
std::shared_ptr<const ProfilerConfig> describe(Runtime& rt, const uint32_t* devices, uint32_t count,
                                               uint64_t data_types) {
    const auto kinds = ferry::cann_trace_kinds(data_types);
    if (!kinds || (count > 0 && devices == nullptr) || count > rt.device_count()) {
        return nullptr;
    }
    ProfilerConfig config{{}, *kinds};
    for (uint32_t i = 0; i < count; ++i) {
        const auto device = static_cast<std::int32_t>(devices[i]);
        if (devices[i] >= rt.device_count() ||
            std::find(config.devices.begin(), config.devices.end(), device) !=
                config.devices.end()) {
            return nullptr;
        }
        config.devices.push_back(device);
    }
    if (count == 0) {
        config.devices.push_back(ferry::k_host_trace_device);
    }
    return std::make_shared<const ProfilerConfig>(std::move(config));
}

// Runs `use(const ProfilerConfig&)` on a live config token; invalid_param otherwise.
template <typename Use>
Status with_config(const aclprofConfig* handle, Use&& use) {
    const auto config = configs().find(handle);
    return config != nullptr ? use(*config) : Status::invalid_param;
}

} // namespace

extern "C" {

MSVP_PROF_API aclError aclprofInit(const char* profilerResultPath, size_t length) {
    return acl::guarded("aclprofInit", [&] {
        if (profilerResultPath == nullptr || length == 0 || length > k_max_path ||
            strnlen(profilerResultPath, length + 1) != length) {
            return Status::invalid_param;
        }
        return session().init(std::string(profilerResultPath, length));
    });
}

MSVP_PROF_API aclError aclprofFinalize(void) {
    return acl::guarded("aclprofFinalize", [] { return session().finalize(); });
}

MSVP_PROF_API aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums,
                                                 aclprofAicoreMetrics aicoreMetrics,
                                                 const aclprofAicoreEvents* aicoreEvents,
                                                 uint64_t dataTypeConfig) {
    aclprofConfig* created = nullptr;
    (void)acl::guarded("aclprofCreateConfig", [&] {
        if (!known_metrics(aicoreMetrics) || aicoreEvents != nullptr) {
            return Status::invalid_param; // CANN reserves aicoreEvents: NULL
        }
        return acl::with_runtime([&](Runtime& rt) {
            auto config = describe(rt, deviceIdList, deviceNums, dataTypeConfig);
            if (config == nullptr) {
                return Status::invalid_param;
            }
            created = acl::to_handle<aclprofConfig>(configs().add(std::move(config)));
            return Status::ok;
        });
    });
    return created;
}

MSVP_PROF_API aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig) {
    return acl::guarded("aclprofDestroyConfig", [&] {
        return configs().take(profilerConfig) != nullptr ? Status::ok : Status::invalid_param;
    });
}

MSVP_PROF_API aclError aclprofStart(const aclprofConfig* profilerConfig) {
    return acl::guarded("aclprofStart", [&] {
        return with_config(profilerConfig,
                           [](const ProfilerConfig& c) { return session().start(c); });
    });
}

MSVP_PROF_API aclError aclprofStop(const aclprofConfig* profilerConfig) {
    return acl::guarded("aclprofStop", [&] {
        return with_config(profilerConfig, [](const ProfilerConfig& c) {
            const auto written = session().stop(c);
            if (written) {
                ferry::log(ferry::LogLevel::info, "aclprofStop: trace written to " + *written);
            }
            return written ? Status::ok : written.status();
        });
    });
}

} // extern "C"
