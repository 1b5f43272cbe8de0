// The bad-input rows of aclInit/aclFinalize, aclrt* and aclnn* (codes: docs/c-api.md, runtime
// and aclnn). A destroyed or wrong-kind stream, event or context is ACL_ERROR_RT_PARAM_INVALID;
// memory that is not a live allocation of the right kind is ACL_ERROR_RT_MEMORY_FREE to free and
// ACL_ERROR_RT_PARAM_INVALID to copy into.

#include "bad_inputs.hpp"

#include <climits>
#include <cstdint>

namespace ferry::test {
namespace {

void never_called(void* runs) {
    ++*static_cast<int*>(runs);
}

constexpr aclError kIP = ACL_ERROR_INVALID_PARAM;
constexpr aclError kRPI = ACL_ERROR_RT_PARAM_INVALID;
constexpr aclError kDev = ACL_ERROR_RT_INVALID_DEVICEID;
constexpr aclError kFree = ACL_ERROR_RT_MEMORY_FREE;

std::vector<Row> device_and_context_rows(World& w) {
    const aclrtContext as_context = w.stream; // wrong kind
    return {
        BAD_INPUT(aclInit, "an unreadable file", ACL_ERROR_INVALID_FILE, "/nonexistent/acl.json"),
        BAD_INPUT(aclInit, "a directory", ACL_ERROR_INVALID_FILE, "/"),
        NO_BAD_INPUT(aclFinalize, "takes no argument"),
        BAD_INPUT(aclrtSetDevice, "-1", kDev, -1),
        BAD_INPUT(aclrtSetDevice, "device count (2)", kDev, 2),
        BAD_INPUT(aclrtSetDevice, "INT32_MAX", kDev, INT32_MAX),
        BAD_INPUT(aclrtSetDevice, "INT32_MIN", kDev, INT32_MIN),
        BAD_INPUT(aclrtResetDevice, "-1", kDev, -1),
        BAD_INPUT(aclrtResetDevice, "INT32_MAX", kDev, INT32_MAX),
        BAD_INPUT(aclrtResetDeviceForce, "INT32_MIN", kDev, INT32_MIN),
        BAD_INPUT(aclrtResetDeviceForce, "64", kDev, 64),
        BAD_INPUT(aclrtGetDevice, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtGetDeviceCount, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtGetRunMode, "NULL", kIP, nullptr),
        NO_BAD_INPUT(aclrtSynchronizeDevice, "takes no argument"),
        BAD_INPUT(aclrtCreateContext, "NULL out", kIP, nullptr, 0),
        BAD_INPUT(aclrtCreateContext, "device -1", kDev, &w.out_ptr, -1),
        BAD_INPUT(aclrtCreateContext, "device INT32_MAX", kDev, &w.out_ptr, INT32_MAX),
        BAD_INPUT(aclrtDestroyContext, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtDestroyContext, "destroyed", kRPI, w.dead_context),
        BAD_INPUT(aclrtDestroyContext, "a stream", kRPI, as_context),
        BAD_INPUT(aclrtSetCurrentContext, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtSetCurrentContext, "destroyed", kRPI, w.dead_context),
        BAD_INPUT(aclrtSetCurrentContext, "an event", kRPI, w.event),
        BAD_INPUT(aclrtGetCurrentContext, "NULL", kIP, nullptr),
    };
}

std::vector<Row> stream_and_event_rows(World& w) {
    const aclrtStream stream = w.stream;
    const aclrtEvent event = w.event;
    auto* status = reinterpret_cast<aclrtStreamStatus*>(&w.out_enum);
    auto* event_status = reinterpret_cast<aclrtEventStatus*>(&w.out_enum);
    auto* recorded = reinterpret_cast<aclrtEventRecordedStatus*>(&w.out_enum);
    return {
        BAD_INPUT(aclrtCreateStream, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtDestroyStream, "NULL (the default stream)", kIP, nullptr),
        BAD_INPUT(aclrtDestroyStream, "destroyed", kRPI, w.dead_stream),
        BAD_INPUT(aclrtDestroyStream, "an event", kRPI, event),
        BAD_INPUT(aclrtDestroyStream, "a context", kRPI, w.context),
        BAD_INPUT(aclrtSynchronizeStream, "destroyed", kRPI, w.dead_stream),
        BAD_INPUT(aclrtSynchronizeStream, "an event", kRPI, event),
        BAD_INPUT(aclrtSynchronizeStreamWithTimeout, "timeout 0", kIP, stream, 0),
        BAD_INPUT(aclrtSynchronizeStreamWithTimeout, "timeout -2", kIP, stream, -2),
        BAD_INPUT(aclrtSynchronizeStreamWithTimeout, "timeout INT32_MIN", kIP, stream, INT32_MIN),
        BAD_INPUT(aclrtSynchronizeStreamWithTimeout, "timeout INT32_MAX, idle stream (no overflow)",
                  ACL_SUCCESS, stream, INT32_MAX),
        BAD_INPUT(aclrtSynchronizeStreamWithTimeout, "destroyed", kRPI, w.dead_stream, 100),
        BAD_INPUT(aclrtStreamQuery, "NULL status", kIP, stream, nullptr),
        BAD_INPUT(aclrtStreamQuery, "destroyed", kRPI, w.dead_stream, status),
        BAD_INPUT(aclrtStreamQuery, "an event", kRPI, event, status),
        BAD_INPUT(aclrtStreamWaitEvent, "NULL event", kIP, stream, nullptr),
        BAD_INPUT(aclrtStreamWaitEvent, "destroyed event", kRPI, stream, w.dead_event),
        BAD_INPUT(aclrtStreamWaitEvent, "destroyed stream", kRPI, w.dead_stream, event),
        BAD_INPUT(aclrtStreamWaitEvent, "a stream as the event", kRPI, stream, stream),
        BAD_INPUT(aclrtLaunchHostFunc, "NULL function", kIP, stream, nullptr, nullptr),
        BAD_INPUT(aclrtLaunchHostFunc, "destroyed stream", kRPI, w.dead_stream, never_called,
                  &w.host_func_runs),
        BAD_INPUT(aclrtLaunchHostFunc, "an event as the stream", kRPI, event, never_called,
                  &w.host_func_runs),
        BAD_INPUT(aclrtCreateEvent, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtDestroyEvent, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtDestroyEvent, "destroyed", kRPI, w.dead_event),
        BAD_INPUT(aclrtDestroyEvent, "a stream", kRPI, stream),
        BAD_INPUT(aclrtRecordEvent, "NULL event", kIP, nullptr, stream),
        BAD_INPUT(aclrtRecordEvent, "destroyed event", kRPI, w.dead_event, stream),
        BAD_INPUT(aclrtRecordEvent, "destroyed stream", kRPI, event, w.dead_stream),
        BAD_INPUT(aclrtRecordEvent, "a stream as the event", kRPI, stream, stream),
        BAD_INPUT(aclrtQueryEvent, "NULL event", kIP, nullptr, event_status),
        BAD_INPUT(aclrtQueryEvent, "NULL status", kIP, event, nullptr),
        BAD_INPUT(aclrtQueryEvent, "destroyed", kRPI, w.dead_event, event_status),
        BAD_INPUT(aclrtQueryEvent, "a stream", kRPI, stream, event_status),
        BAD_INPUT(aclrtQueryEventStatus, "NULL event", kIP, nullptr, recorded),
        BAD_INPUT(aclrtQueryEventStatus, "NULL status", kIP, event, nullptr),
        BAD_INPUT(aclrtQueryEventStatus, "destroyed", kRPI, w.dead_event, recorded),
        BAD_INPUT(aclrtQueryEventStatus, "a context", kRPI, w.context, recorded),
        BAD_INPUT(aclrtSynchronizeEvent, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtSynchronizeEvent, "destroyed", kRPI, w.dead_event),
        BAD_INPUT(aclrtSynchronizeEvent, "a stream", kRPI, stream),
        BAD_INPUT(aclrtEventElapsedTime, "NULL ms", kIP, nullptr, event, event),
        BAD_INPUT(aclrtEventElapsedTime, "NULL start", kIP, &w.out_ms, nullptr, event),
        BAD_INPUT(aclrtEventElapsedTime, "NULL end", kIP, &w.out_ms, event, nullptr),
        BAD_INPUT(aclrtEventElapsedTime, "destroyed start", kRPI, &w.out_ms, w.dead_event, event),
        BAD_INPUT(aclrtEventElapsedTime, "a stream as the end", kRPI, &w.out_ms, event, stream),
    };
}

std::vector<Row> memory_rows(World& w) {
    void* dev = w.device_memory;
    void* host = w.host_memory;
    static unsigned char buffer[4096];
    void* const interior = static_cast<unsigned char*>(dev) + 1;
    const auto policy = [](int v) { return static_cast<aclrtMemMallocPolicy>(v); };
    const auto kind = [](int v) { return static_cast<aclrtMemcpyKind>(v); };
    constexpr aclrtMemcpyKind h2d = ACL_MEMCPY_HOST_TO_DEVICE;
    return {
        BAD_INPUT(aclrtMalloc, "NULL out", kIP, nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST),
        BAD_INPUT(aclrtMalloc, "size 0", kIP, &w.out_ptr, 0, ACL_MEM_MALLOC_HUGE_FIRST),
        BAD_INPUT(aclrtMalloc, "policy 99", kIP, &w.out_ptr, 16, policy(99)),
        BAD_INPUT(aclrtMalloc, "policy -1", kIP, &w.out_ptr, 16, policy(-1)),
        BAD_INPUT(aclrtMalloc, "size SIZE_MAX", kIP, &w.out_ptr, SIZE_MAX,
                  ACL_MEM_MALLOC_HUGE_FIRST),
        BAD_INPUT(aclrtMalloc, "beyond the device limit", ACL_ERROR_RT_MEMORY_ALLOCATION,
                  &w.out_ptr, size_t{65} << 20, ACL_MEM_MALLOC_NORMAL_ONLY),
        BAD_INPUT(aclrtFree, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtFree, "freed", kFree, w.dead_device_memory),
        BAD_INPUT(aclrtFree, "host memory (wrong kind)", kFree, host),
        BAD_INPUT(aclrtFree, "interior pointer", kFree, interior),
        BAD_INPUT(aclrtFree, "not an allocation", kFree, buffer),
        BAD_INPUT(aclrtMallocHost, "NULL out", kIP, nullptr, 16),
        BAD_INPUT(aclrtMallocHost, "size 0", kIP, &w.out_ptr, 0),
        BAD_INPUT(aclrtMallocHost, "size SIZE_MAX", ACL_ERROR_RT_MEMORY_ALLOCATION, &w.out_ptr,
                  SIZE_MAX),
        BAD_INPUT(aclrtFreeHost, "NULL", kIP, nullptr),
        BAD_INPUT(aclrtFreeHost, "freed", kFree, w.dead_host_memory),
        BAD_INPUT(aclrtFreeHost, "device memory (wrong kind)", kFree, dev),
        BAD_INPUT(aclrtMemcpy, "NULL dst", kIP, nullptr, 16, buffer, 16, h2d),
        BAD_INPUT(aclrtMemcpy, "NULL src", kIP, dev, 16, nullptr, 16, h2d),
        BAD_INPUT(aclrtMemcpy, "kind -1", kIP, dev, 16, buffer, 16, kind(-1)),
        BAD_INPUT(aclrtMemcpy, "kind 99", kIP, dev, 16, buffer, 16, kind(99)),
        BAD_INPUT(aclrtMemcpy, "kind INNER_DEVICE_TO_DEVICE", kIP, dev, 16, buffer, 16,
                  ACL_MEMCPY_INNER_DEVICE_TO_DEVICE),
        BAD_INPUT(aclrtMemcpy, "count > destMax", kRPI, dev, 8, buffer, 16, h2d),
        BAD_INPUT(aclrtMemcpy, "count SIZE_MAX", kRPI, dev, SIZE_MAX, buffer, SIZE_MAX, h2d),
        BAD_INPUT(aclrtMemcpy, "past the allocation's end", kRPI, dev, 8192, buffer, 4097, h2d),
        BAD_INPUT(aclrtMemcpy, "freed device memory", kRPI, w.dead_device_memory, 16, buffer, 16,
                  h2d),
        BAD_INPUT(aclrtMemcpyAsync, "NULL dst", kIP, nullptr, 16, buffer, 16, h2d, w.stream),
        BAD_INPUT(aclrtMemcpyAsync, "kind 99", kIP, dev, 16, buffer, 16, kind(99), w.stream),
        BAD_INPUT(aclrtMemcpyAsync, "count SIZE_MAX", kRPI, dev, SIZE_MAX, buffer, SIZE_MAX, h2d,
                  w.stream),
        BAD_INPUT(aclrtMemcpyAsync, "destroyed stream", kRPI, dev, 16, buffer, 16, h2d,
                  w.dead_stream),
        BAD_INPUT(aclrtMemcpyAsync, "an event as the stream", kRPI, dev, 16, buffer, 16, h2d,
                  w.event),
        BAD_INPUT(aclrtMemset, "NULL", kIP, nullptr, 16, 0, 16),
        BAD_INPUT(aclrtMemset, "count > maxCount", kRPI, dev, 8, 0, 16),
        BAD_INPUT(aclrtMemset, "count SIZE_MAX", kRPI, dev, SIZE_MAX, 0, SIZE_MAX),
        BAD_INPUT(aclrtMemset, "interior, past the end", kRPI, interior, 4096, 0, 4096),
        BAD_INPUT(aclrtMemsetAsync, "NULL", kIP, nullptr, 16, 0, 16, w.stream),
        BAD_INPUT(aclrtMemsetAsync, "count SIZE_MAX", kRPI, dev, SIZE_MAX, 0, SIZE_MAX, w.stream),
        BAD_INPUT(aclrtMemsetAsync, "destroyed stream", kRPI, dev, 16, 0, 16, w.dead_stream),
        BAD_INPUT(aclrtGetMemInfo, "NULL free", kIP, ACL_HBM_MEM, nullptr, &w.out_size),
        BAD_INPUT(aclrtGetMemInfo, "NULL total", kIP, ACL_HBM_MEM, &w.out_size, nullptr),
        BAD_INPUT(aclrtGetMemInfo, "attr -1", kIP, static_cast<aclrtMemAttr>(-1), &w.out_size,
                  &w.out_size2),
        BAD_INPUT(aclrtGetMemInfo, "attr 18", kIP, static_cast<aclrtMemAttr>(18), &w.out_size,
                  &w.out_size2),
    };
}

// Event reset, the report-callback family, error messages and data type sizes. No row subscribes
// a stream, so the test thread serves none: aclrtProcessReport answers at once whatever the
// timeout, and a launch finds no subscriber.
std::vector<Row> callback_and_misc_rows(World& w) {
    const aclrtStream stream = w.stream;
    const aclrtEvent event = w.event;
    const auto as_stream = [](void* p) { return static_cast<aclrtStream>(p); };
    const auto block = [](int v) { return static_cast<aclrtCallbackBlockType>(v); };
    const auto dtype = [](int v) { return static_cast<aclDataType>(v); };
    constexpr std::uint64_t thread = 12345; // a thread id that subscribed nothing
    constexpr aclError kNoSub = ACL_ERROR_RT_STREAM_SUBSCRIBE;
    constexpr aclError kNoThread = ACL_ERROR_RT_THREAD_SUBSCRIBE;
    return {
        BAD_INPUT(aclrtResetEvent, "NULL event", kIP, nullptr, stream),
        BAD_INPUT(aclrtResetEvent, "NULL event, destroyed stream", kIP, nullptr, w.dead_stream),
        BAD_INPUT(aclrtResetEvent, "destroyed event", kRPI, w.dead_event, stream),
        BAD_INPUT(aclrtResetEvent, "a stream as the event", kRPI, stream, stream),
        BAD_INPUT(aclrtResetEvent, "a context as the event", kRPI, w.context, stream),
        BAD_INPUT(aclrtResetEvent, "destroyed stream", kRPI, event, w.dead_stream),
        BAD_INPUT(aclrtResetEvent, "an event as the stream", kRPI, event, as_stream(event)),
        BAD_INPUT(aclrtSubscribeReport, "destroyed stream", kRPI, thread, w.dead_stream),
        BAD_INPUT(aclrtSubscribeReport, "an event as the stream", kRPI, thread, as_stream(event)),
        BAD_INPUT(aclrtSubscribeReport, "a context as the stream", kRPI, 0, w.context),
        BAD_INPUT(aclrtLaunchCallback, "NULL function", kIP, nullptr, &w.host_func_runs,
                  ACL_CALLBACK_BLOCK, stream),
        BAD_INPUT(aclrtLaunchCallback, "blockType 2", kIP, never_called, &w.host_func_runs,
                  block(2), stream),
        BAD_INPUT(aclrtLaunchCallback, "blockType -1", kIP, never_called, &w.host_func_runs,
                  block(-1), stream),
        BAD_INPUT(aclrtLaunchCallback, "blockType INT32_MIN", kIP, never_called, &w.host_func_runs,
                  block(INT32_MIN), stream),
        BAD_INPUT(aclrtLaunchCallback, "blockType INT32_MAX, destroyed stream", kIP, never_called,
                  &w.host_func_runs, block(INT32_MAX), w.dead_stream),
        BAD_INPUT(aclrtLaunchCallback, "destroyed stream", kRPI, never_called, &w.host_func_runs,
                  ACL_CALLBACK_NO_BLOCK, w.dead_stream),
        BAD_INPUT(aclrtLaunchCallback, "an event as the stream", kRPI, never_called,
                  &w.host_func_runs, ACL_CALLBACK_BLOCK, as_stream(event)),
        BAD_INPUT(aclrtLaunchCallback, "a stream nobody subscribed", ACL_ERROR_RT_STREAM_NO_CB_REG,
                  never_called, &w.host_func_runs, ACL_CALLBACK_BLOCK, stream),
        BAD_INPUT(aclrtLaunchCallback, "the default stream, nobody subscribed",
                  ACL_ERROR_RT_STREAM_NO_CB_REG, never_called, &w.host_func_runs,
                  ACL_CALLBACK_NO_BLOCK, nullptr),
        BAD_INPUT(aclrtProcessReport, "timeout 0", kIP, 0),
        BAD_INPUT(aclrtProcessReport, "timeout -2", kIP, -2),
        BAD_INPUT(aclrtProcessReport, "timeout INT32_MIN", kIP, INT32_MIN),
        BAD_INPUT(aclrtProcessReport, "timeout -1, a thread serving no stream", kNoThread, -1),
        BAD_INPUT(aclrtProcessReport, "timeout 1, a thread serving no stream", kNoThread, 1),
        BAD_INPUT(aclrtProcessReport, "timeout INT32_MAX, a thread serving no stream", kNoThread,
                  INT32_MAX),
        BAD_INPUT(aclrtUnSubscribeReport, "a stream nobody subscribed", kNoSub, thread, stream),
        BAD_INPUT(aclrtUnSubscribeReport, "the default stream, nobody subscribed", kNoSub, 0,
                  nullptr),
        BAD_INPUT(aclrtUnSubscribeReport, "destroyed stream", kRPI, thread, w.dead_stream),
        BAD_INPUT(aclrtUnSubscribeReport, "an event as the stream", kRPI, thread, as_stream(event)),
        NO_BAD_INPUT(aclGetRecentErrMsg, "takes no argument"),
        BAD_INPUT(aclDataTypeSize, "ACL_DT_UNDEFINED", 0, ACL_DT_UNDEFINED),
        BAD_INPUT(aclDataTypeSize, "ACL_STRING (variable length)", 0, ACL_STRING),
        BAD_INPUT(aclDataTypeSize, "9999", 0, dtype(9999)),
        BAD_INPUT(aclDataTypeSize, "-2", 0, dtype(-2)),
        BAD_INPUT(aclDataTypeSize, "INT32_MIN", 0, dtype(INT32_MIN)),
        BAD_INPUT(aclDataTypeSize, "INT32_MAX", 0, dtype(INT32_MAX)),
    };
}

std::vector<Row> aclnn_rows(World& w) {
    static const std::int64_t negative[1] = {-1};
    static const std::int64_t overflowing[2] = {INT64_MAX, INT64_MAX};
    static const std::int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const auto dtype = [](int v) { return static_cast<aclDataType>(v); };
    aclTensor* as_tensor = World::as<aclTensor>(w.dataset);
    aclOpExecutor* as_executor = World::as<aclOpExecutor>(w.tensor);
    constexpr aclnnStatus kNull = ACLNN_ERR_PARAM_NULLPTR;
    constexpr aclnnStatus kInvalid = ACLNN_ERR_PARAM_INVALID;
    return {
        BAD_INPUT(aclCreateTensor, "NULL dims, 2 of them", 0, nullptr, 2, ACL_FLOAT, nullptr, 0,
                  ACL_FORMAT_ND, nine, 1, nullptr),
        BAD_INPUT(aclCreateTensor, "9 dims", 0, nine, 9, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nine,
                  1, nullptr),
        BAD_INPUT(aclCreateTensor, "UINT64_MAX dims", 0, nine, UINT64_MAX, ACL_FLOAT, nullptr, 0,
                  ACL_FORMAT_ND, nine, 1, nullptr),
        BAD_INPUT(aclCreateTensor, "a negative dim", 0, negative, 1, ACL_FLOAT, nullptr, 0,
                  ACL_FORMAT_ND, nine, 1, nullptr),
        BAD_INPUT(aclCreateTensor, "INT64_MAX x INT64_MAX elements", 0, overflowing, 2, ACL_FLOAT,
                  nullptr, 0, ACL_FORMAT_ND, nine, 1, nullptr),
        BAD_INPUT(aclCreateTensor, "data type 9999", 0, nine, 1, dtype(9999), nullptr, 0,
                  ACL_FORMAT_ND, nine, 1, nullptr),
        BAD_INPUT(aclCreateTensor, "data type UNDEFINED", 0, nine, 1, ACL_DT_UNDEFINED, nullptr, 0,
                  ACL_FORMAT_ND, nine, 1, nullptr),
        BAD_INPUT(aclCreateTensor, "offset -1", 0, nine, 1, ACL_FLOAT, nullptr, -1, ACL_FORMAT_ND,
                  nine, 1, nullptr),
        BAD_INPUT(aclCreateTensor, "NULL storage dims, 2 of them", 0, nine, 1, ACL_FLOAT, nullptr,
                  0, ACL_FORMAT_ND, nullptr, 2, nullptr),
        BAD_INPUT(aclDestroyTensor, "NULL (a no-op)", ACLNN_SUCCESS, nullptr),
        BAD_INPUT(aclDestroyTensor, "destroyed", kInvalid, w.dead_tensor),
        BAD_INPUT(aclDestroyTensor, "a dataset", kInvalid, as_tensor),
        BAD_INPUT(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize, "NULL tensor", kNull, nullptr, 1,
                  0, &w.out_u64, &w.out_executor),
        BAD_INPUT(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize, "NULL workspaceSize", kNull,
                  w.tensor, 1, 0, nullptr, &w.out_executor),
        BAD_INPUT(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize, "NULL executor", kNull, w.tensor,
                  1, 0, &w.out_u64, nullptr),
        BAD_INPUT(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize, "destroyed tensor", kInvalid,
                  w.dead_tensor, 1, 0, &w.out_u64, &w.out_executor),
        BAD_INPUT(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize, "a dataset as the tensor",
                  kInvalid, as_tensor, 1, 0, &w.out_u64, &w.out_executor),
        BAD_INPUT(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize,
                  "a FLOAT (16) tensor, not INT8 ND (1024)", kInvalid, w.tensor, 1, 0, &w.out_u64,
                  &w.out_executor),
        BAD_INPUT(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize, "executeMode 1", kInvalid,
                  w.tensor, 1, 1, &w.out_u64, &w.out_executor),
        BAD_INPUT(aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize, "executeMode INT32_MIN", kInvalid,
                  w.tensor, 1, INT32_MIN, &w.out_u64, &w.out_executor),
        BAD_INPUT(aclnnInplaceFfnWorkerScheduler, "NULL executor", kNull, nullptr, 0, nullptr,
                  w.stream),
        BAD_INPUT(aclnnInplaceFfnWorkerScheduler, "a tensor as the executor", kInvalid, nullptr, 0,
                  as_executor, w.stream),
        BAD_INPUT(aclnnInplaceFfnWorkerScheduler, "a tensor as the executor, destroyed stream",
                  kInvalid, nullptr, 0, as_executor, w.dead_stream),
    };
}

} // namespace

std::vector<Row> runtime_rows(World& w) {
    std::vector<Row> rows;
    for (auto* part : {device_and_context_rows, stream_and_event_rows, memory_rows,
                       callback_and_misc_rows, aclnn_rows}) {
        for (Row& r : part(w)) {
            rows.push_back(std::move(r));
        }
    }
    return rows;
}

} // namespace ferry::test
