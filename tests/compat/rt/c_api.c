/* ferry-acl's runtime C API from C11: every function's bad inputs (each returns its documented
 * code and changes nothing), the happy paths a legacy TDT or FFN caller walks, and aclInit /
 * aclFinalize reference counting (docs/cann-contract/runtime.md#aclinit-and-aclfinalize). The
 * runtime is configured by the test's environment: FERRY_DEVICE_COUNT=2, FERRY_DEVICE_MEMORY=64M
 * (tests/compat/rt/meson.build).
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */

#include "acl/acl.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void init_and_finalize(void) {
    CHECK_EQ(aclFinalize(), ACL_SUCCESS); /* no prior aclInit: CANN runs the finalize path */
    CHECK_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    CHECK_EQ(aclInit("/nonexistent/ferry/acl.json"), ACL_ERROR_INVALID_FILE);
    CHECK_EQ(aclInit(NULL), ACL_SUCCESS);
    CHECK_EQ(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
    CHECK_EQ(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
    CHECK_EQ(aclFinalize(), ACL_SUCCESS); /* one finalize ends every reference */
    CHECK_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);

    char path[] = "/tmp/ferry-acl-config-XXXXXX";
    FILE* config = fdopen(mkstemp(path), "w");
    CHECK_TRUE(config != NULL);
    if (config != NULL) {
        fputs("{\"dump\": {}}", config);
        fclose(config);
        /* the config must equal the first successful aclInit's (which had none) */
        CHECK_EQ(aclInit(path), ACL_ERROR_INVALID_PARAM);
        remove(path);
    }
    CHECK_EQ(aclInit(NULL), ACL_SUCCESS); /* init -> finalize -> init works */
}

static void devices(void) {
    uint32_t count = 99;
    int32_t device = 42;
    aclrtRunMode mode = ACL_DEVICE;
    CHECK_EQ(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    CHECK_EQ(count, 2);
    CHECK_EQ(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL); /* no device set on this thread */
    CHECK_EQ(device, 42);
    CHECK_EQ(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL);
    CHECK_EQ(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_EQ(aclrtSetDevice(2), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_EQ(aclrtResetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_EQ(aclrtResetDeviceForce(64), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    CHECK_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
    CHECK_EQ(device, 1);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
    CHECK_EQ(device, 0);
    CHECK_EQ(aclrtResetDevice(1), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
    CHECK_EQ(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtGetRunMode(&mode), ACL_SUCCESS);
    CHECK_EQ(mode, ACL_HOST);
}

static void contexts(void) {
    aclrtContext context = NULL;
    aclrtContext current = NULL;
    int32_t device = -1;
    CHECK_EQ(aclrtCreateContext(NULL, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtCreateContext(&context, 7), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_TRUE(context == NULL);
    CHECK_EQ(aclrtCreateContext(&context, 1), ACL_SUCCESS);
    CHECK_EQ(aclrtGetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtGetCurrentContext(&current), ACL_SUCCESS);
    CHECK_TRUE(current == context); /* a created context becomes current */
    CHECK_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
    CHECK_EQ(device, 1);
    CHECK_EQ(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtDestroyContext(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtDestroyContext(context), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyContext(context), ACL_ERROR_RT_PARAM_INVALID); /* stale */
    CHECK_EQ(aclrtSetCurrentContext(context), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtGetCurrentContext(&current), ACL_ERROR_RT_CONTEXT_NULL);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclrtGetCurrentContext(&current), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyContext(current),
             ACL_ERROR_RT_PARAM_INVALID); /* primary: reset, not destroy */
}

static void memory_arguments(void) {
    void* sentinel = (void*)&check_failures;
    void* p = sentinel;
    size_t free_bytes = 0;
    size_t total = 0;
    CHECK_EQ(aclrtMalloc(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMalloc(&p, 16, (aclrtMemMallocPolicy)99), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMalloc(&p, (size_t)65 << 20, ACL_MEM_MALLOC_HUGE_FIRST),
             ACL_ERROR_RT_MEMORY_ALLOCATION);
    CHECK_TRUE(p == sentinel); /* failures leave the out-pointer alone */
    CHECK_EQ(aclrtMallocHost(NULL, 16), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMallocHost(&p, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtFree(sentinel), ACL_ERROR_RT_MEMORY_FREE); /* not an allocation */
    CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &total), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtGetMemInfo((aclrtMemAttr)18, &free_bytes, &total), ACL_ERROR_INVALID_PARAM);
}

static void memory_round_trip(void) {
    unsigned char host[256];
    unsigned char back[256];
    void* dev = NULL;
    void* pinned = NULL;
    size_t free_before = 0;
    size_t free_after = 0;
    size_t total = 0;
    for (int i = 0; i < 256; ++i) {
        host[i] = (unsigned char)i;
    }
    CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_before, &total), ACL_SUCCESS);
    CHECK_EQ(total, (size_t)64 << 20);
    CHECK_EQ(aclrtMalloc(&dev, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_after, &total), ACL_SUCCESS);
    CHECK_EQ(free_before - free_after, (sizeof host + 63) / 32 * 32); /* CANN's rounding */
    CHECK_EQ(aclrtMallocHost(&pinned, 64), ACL_SUCCESS);

    CHECK_EQ(aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS); /* count 0 */
    CHECK_EQ(aclrtMemcpy(NULL, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemcpy(dev, 16, NULL, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemcpy(dev, 16, host, 16, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemcpy(dev, 16, host, 16, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemcpy(dev, 16, host, 16, (aclrtMemcpyKind)-1), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemcpy(dev, 8, host, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtMemcpy(back, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtMemcpy(back, 512, dev, 512, ACL_MEMCPY_DEVICE_TO_HOST),
             ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtMemcpy(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_SUCCESS);
    memset(back, 0, sizeof back);
    CHECK_EQ(aclrtMemcpy(back, sizeof back, dev, sizeof back, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
    CHECK_EQ(memcmp(back, host, sizeof host), 0);

    CHECK_EQ(aclrtMemset(NULL, 16, 0, 16), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemset(dev, 8, 0, 16), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtMemset(dev, 4096, 0, 4096),
             ACL_ERROR_RT_PARAM_INVALID); /* leaves the allocation */
    CHECK_EQ(aclrtMemset(dev, sizeof host, 0xAB, sizeof host), ACL_SUCCESS);
    CHECK_EQ(aclrtMemcpy(back, sizeof back, dev, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST),
             ACL_SUCCESS);
    CHECK_EQ(back[0], 0xAB);
    CHECK_EQ(back[255], 0xAB);

    CHECK_EQ(aclrtFreeHost(dev), ACL_ERROR_RT_MEMORY_FREE);                 /* wrong kind */
    CHECK_EQ(aclrtFree(pinned), ACL_ERROR_RT_MEMORY_FREE);                  /* wrong kind */
    CHECK_EQ(aclrtFree((unsigned char*)dev + 1), ACL_ERROR_RT_MEMORY_FREE); /* interior */
    CHECK_EQ(aclrtFree(dev), ACL_SUCCESS);
    CHECK_EQ(aclrtFree(dev), ACL_ERROR_RT_MEMORY_FREE); /* double free */
    CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
    CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_after, &total), ACL_SUCCESS);
    CHECK_EQ(free_after, free_before);
}

static int host_func_runs = 0;
static void count_run(void* args) {
    host_func_runs += *(const int*)args;
}

static void streams(void) {
    aclrtStream stream = NULL;
    aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
    unsigned char host[64] = {1, 2, 3};
    unsigned char back[64] = {0};
    void* dev = NULL;
    const int increment = 5;
    CHECK_EQ(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtSynchronizeStream(NULL), ACL_SUCCESS); /* the default stream */
    CHECK_EQ(aclrtSynchronizeStreamWithTimeout(stream, -2), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtSynchronizeStreamWithTimeout(stream, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtStreamQuery(stream, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtLaunchHostFunc(stream, NULL, NULL), ACL_ERROR_INVALID_PARAM);

    CHECK_EQ(aclrtMalloc(&dev, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    CHECK_EQ(aclrtMemcpyAsync(dev, 8, host, 16, ACL_MEMCPY_HOST_TO_DEVICE, stream),
             ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(
        aclrtMemcpyAsync(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE, stream),
        ACL_SUCCESS);
    CHECK_EQ(aclrtMemsetAsync(dev, 1, 9, 2, stream), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtMemsetAsync((unsigned char*)dev + 32, 32, 9, 32, stream), ACL_SUCCESS);
    CHECK_EQ(
        aclrtMemcpyAsync(back, sizeof back, dev, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST, stream),
        ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(stream, count_run, (void*)&increment), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStreamWithTimeout(stream, 10000), ACL_SUCCESS);
    CHECK_EQ(back[2], 3);
    CHECK_EQ(back[40], 9);
    CHECK_EQ(host_func_runs, 5);
    CHECK_EQ(aclrtStreamQuery(stream, &status), ACL_SUCCESS);
    CHECK_EQ(status, ACL_STREAM_STATUS_COMPLETE);
    CHECK_EQ(aclrtFree(dev), ACL_SUCCESS);

    CHECK_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(stream), ACL_ERROR_RT_PARAM_INVALID); /* stale */
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtStreamQuery(stream, &status), ACL_ERROR_RT_PARAM_INVALID);
}

static void events(void) {
    aclrtEvent start = NULL;
    aclrtEvent end = NULL;
    aclrtStream stream = NULL;
    aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
    aclrtEventRecordedStatus recorded = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    float ms = -1.0f;
    CHECK_EQ(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtCreateEvent(&start), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateEvent(&end), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    CHECK_EQ(aclrtRecordEvent(NULL, stream), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtQueryEvent(NULL, &status), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtQueryEvent(start, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtQueryEventStatus(start, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtSynchronizeEvent(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtStreamWaitEvent(stream, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtEventElapsedTime(NULL, start, end), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtEventElapsedTime(&ms, NULL, end), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtQueryEvent(start, &status), ACL_SUCCESS); /* never recorded: nothing pending */
    CHECK_EQ(status, ACL_EVENT_STATUS_COMPLETE);
    CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_PARAM_INVALID); /* not recorded */
    CHECK_EQ(aclrtRecordEvent(start, stream), ACL_SUCCESS);
    CHECK_EQ(aclrtStreamWaitEvent(NULL, start), ACL_SUCCESS);
    CHECK_EQ(aclrtRecordEvent(end, NULL), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeEvent(end), ACL_SUCCESS);
    CHECK_EQ(aclrtQueryEventStatus(end, &recorded), ACL_SUCCESS);
    CHECK_EQ(recorded, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    CHECK_TRUE(ms >= 0.0f); /* end was recorded after the default stream waited for start */
    CHECK_EQ(aclrtDestroyEvent(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtDestroyEvent(start), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyEvent(start), ACL_ERROR_RT_PARAM_INVALID); /* stale */
    CHECK_EQ(aclrtRecordEvent(start, stream), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtDestroyEvent(end), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

static void reset_releases(void) {
    void* dev = NULL;
    aclrtStream stream = NULL;
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS); /* a second reference on device 0 */
    CHECK_EQ(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    CHECK_EQ(aclrtResetDevice(0), ACL_SUCCESS); /* one reference left: nothing released */
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK_EQ(aclrtResetDeviceForce(0), ACL_SUCCESS); /* every reference: streams and memory go */
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtFree(dev), ACL_ERROR_RT_MEMORY_FREE);
    CHECK_EQ(aclrtResetDevice(0), ACL_SUCCESS); /* no reference: a no-op */
}

int main(void) {
    init_and_finalize();
    devices();
    contexts();
    memory_arguments();
    memory_round_trip();
    streams();
    events();
    reset_releases();
    CHECK_EQ(aclFinalize(), ACL_SUCCESS);
    CHECK_EQ(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM); /* still answers after finalize */
    if (check_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    }
    return check_failures == 0 ? 0 : 1;
}
