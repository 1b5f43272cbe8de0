// The bad-input rows of the runtime's synchronisation and diagnostics calls: exception info,
// notifies and profiling (codes: docs/c-api.md).

#include "bad_inputs.hpp"

#include <cstdint>

namespace ferry::test {
namespace {

constexpr std::uint32_t kNoInfo = 0xFFFFFFFFU;

std::vector<Row> exception_info_rows(World& w) {
    return {
        BAD_INPUT(aclrtSetExceptionInfoCallback, "NULL (unregisters; nothing was registered)",
                  ACL_SUCCESS, nullptr),
        BAD_INPUT(aclrtGetTaskIdFromExceptionInfo, "NULL", kNoInfo, nullptr),
        BAD_INPUT(aclrtGetStreamIdFromExceptionInfo, "NULL", kNoInfo, nullptr),
        BAD_INPUT(aclrtGetThreadIdFromExceptionInfo, "NULL", kNoInfo, nullptr),
        BAD_INPUT(aclrtGetDeviceIdFromExceptionInfo, "NULL", kNoInfo, nullptr),
        BAD_INPUT(aclrtGetErrorCodeFromExceptionInfo, "NULL", kNoInfo, nullptr),
    };
}

// No row records the live notify or waits on it: a wait would hold the World's stream.
std::vector<Row> notify_rows(World& w) {
    const aclrtNotify notify = w.notify;
    const aclrtStream stream = w.stream;
    constexpr aclError kIP = ACL_ERROR_INVALID_PARAM;
    constexpr aclError kRPI = ACL_ERROR_RT_PARAM_INVALID;
    return {
        BAD_INPUT(aclrtCreateNotify, "NULL out", kIP, nullptr, ACL_NOTIFY_DEFAULT),
        BAD_INPUT(aclrtCreateNotify, "flag 2", kRPI, &w.out_ptr, 2),
        BAD_INPUT(aclrtCreateNotify, "flag UINT64_MAX", kRPI, &w.out_ptr, UINT64_MAX),
        BAD_INPUT(aclrtDestroyNotify, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtDestroyNotify, "destroyed", kRPI, w.dead_notify),
        BAD_INPUT(aclrtDestroyNotify, "a stream", kRPI, stream),
        BAD_INPUT(aclrtDestroyNotify, "an event", kRPI, w.event),
        BAD_INPUT(aclrtRecordNotify, "NULL notify", kIP, nullptr, stream),
        BAD_INPUT(aclrtRecordNotify, "destroyed notify", kRPI, w.dead_notify, stream),
        BAD_INPUT(aclrtRecordNotify, "an event as the notify", kRPI, w.event, stream),
        BAD_INPUT(aclrtRecordNotify, "destroyed stream", kRPI, notify, w.dead_stream),
        BAD_INPUT(aclrtRecordNotify, "a notify as the stream", kRPI, notify, notify),
        BAD_INPUT(aclrtWaitAndResetNotify, "NULL notify", kIP, nullptr, stream, 0),
        BAD_INPUT(aclrtWaitAndResetNotify, "destroyed notify", kRPI, w.dead_notify, stream, 0),
        BAD_INPUT(aclrtWaitAndResetNotify, "a context as the notify", kRPI, w.context, stream,
                  UINT32_MAX),
        BAD_INPUT(aclrtWaitAndResetNotify, "destroyed stream", kRPI, notify, w.dead_stream, 1),
        BAD_INPUT(aclrtWaitAndResetNotify, "an event as the stream", kRPI, notify, w.event, 0),
        BAD_INPUT(aclrtGetNotifyId, "NULL notify", kIP, nullptr, &w.out_u32),
        BAD_INPUT(aclrtGetNotifyId, "NULL id", kIP, notify, nullptr),
        BAD_INPUT(aclrtGetNotifyId, "destroyed", kRPI, w.dead_notify, &w.out_u32),
        BAD_INPUT(aclrtGetNotifyId, "a stream", kRPI, stream, &w.out_u32),
    };
}

// aclprofInit is never called successfully here, so a valid config meets "not initialised".
std::vector<Row> profiling_rows(World& w) {
    static std::uint32_t device2[1] = {2};
    static std::uint32_t twice[2] = {1, 1};
    static std::uint32_t three[3] = {0, 1, 0};
    static const char* const dir = "/tmp";
    const auto metrics = [](int v) { return static_cast<aclprofAicoreMetrics>(v); };
    const auto* events = reinterpret_cast<const aclprofAicoreEvents*>(&w.out_u64);
    auto* as_config = World::as<aclprofConfig>(w.stream);
    constexpr aclError kIP = ACL_ERROR_INVALID_PARAM;
    constexpr aclError kUninit = ACL_ERROR_UNINITIALIZE;
    constexpr std::uint64_t task = ACL_PROF_TASK_TIME;
    return {
        BAD_INPUT(aclprofInit, "NULL path", kIP, nullptr, 4),
        BAD_INPUT(aclprofInit, "length 0", kIP, dir, 0),
        BAD_INPUT(aclprofInit, "length past the string", kIP, dir, 64),
        BAD_INPUT(aclprofInit, "length 4097", kIP, dir, 4097),
        BAD_INPUT(aclprofInit, "not a directory", kIP, "/nonexistent/ferry", 18),
        BAD_INPUT(aclprofFinalize, "before aclprofInit", kUninit),
        BAD_INPUT(aclprofCreateConfig, "NULL list, 1 device", 0, nullptr, 1, ACL_AICORE_NONE,
                  nullptr, task),
        BAD_INPUT(aclprofCreateConfig, "device 2 of 2", 0, device2, 1, ACL_AICORE_NONE, nullptr,
                  task),
        BAD_INPUT(aclprofCreateConfig, "a device twice", 0, twice, 2, ACL_AICORE_NONE, nullptr,
                  task),
        BAD_INPUT(aclprofCreateConfig, "3 devices of 2", 0, three, 3, ACL_AICORE_NONE, nullptr,
                  task),
        BAD_INPUT(aclprofCreateConfig, "UINT32_MAX devices", 0, three, UINT32_MAX, ACL_AICORE_NONE,
                  nullptr, task),
        BAD_INPUT(aclprofCreateConfig, "metrics 9", 0, nullptr, 0, metrics(9), nullptr, task),
        BAD_INPUT(aclprofCreateConfig, "metrics -1", 0, nullptr, 0, metrics(-1), nullptr, task),
        BAD_INPUT(aclprofCreateConfig, "aicoreEvents not NULL", 0, nullptr, 0, ACL_AICORE_NONE,
                  events, task),
        BAD_INPUT(aclprofCreateConfig, "data type 0x400 (undefined)", 0, nullptr, 0,
                  ACL_AICORE_NONE, nullptr, 0x400),
        BAD_INPUT(aclprofCreateConfig, "data type bit 63", 0, nullptr, 0, ACL_AICORE_NONE, nullptr,
                  std::uint64_t{1} << 63),
        BAD_INPUT(aclprofDestroyConfig, "NULL", kIP, nullptr),
        BAD_INPUT(aclprofDestroyConfig, "destroyed", kIP, w.dead_prof_config),
        BAD_INPUT(aclprofDestroyConfig, "a stream", kIP, as_config),
        BAD_INPUT(aclprofStart, "NULL", kIP, nullptr),
        BAD_INPUT(aclprofStart, "destroyed", kIP, w.dead_prof_config),
        BAD_INPUT(aclprofStart, "a stream", kIP, as_config),
        BAD_INPUT(aclprofStart, "before aclprofInit", kUninit, w.prof_config),
        BAD_INPUT(aclprofStop, "NULL", kIP, nullptr),
        BAD_INPUT(aclprofStop, "destroyed", kIP, w.dead_prof_config),
        BAD_INPUT(aclprofStop, "before aclprofInit", kUninit, w.prof_config),
    };
}

} // namespace

std::vector<Row> runtime_sync_rows(World& w) {
    std::vector<Row> rows;
    for (auto* part : {exception_info_rows, notify_rows, profiling_rows}) {
        for (Row& r : part(w)) {
            rows.push_back(std::move(r));
        }
    }
    return rows;
}

} // namespace ferry::test
