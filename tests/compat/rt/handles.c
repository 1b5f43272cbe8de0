/* aclrt* and aclnn handle identity from C (docs/c-api.md, Handles): a destroyed stream, event,
 * context or tensor stays rejected even when the next create would get the destroyed object's
 * address from the allocator — also when the runtime destroyed it (a device reset). Each test
 * destroys a handle, creates many new ones of the same kind, and checks that none equals the stale
 * one, that the stale one is rejected everywhere, and that the live object was not touched.
 */
#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "check.h"

#include <stdint.h>

enum { rounds = 2000 };

static int runs = 0;
static void count_run(void* args) {
    (void)args;
    ++runs;
}

/* Creates `rounds` streams after `stale` was destroyed; returns the last, destroys the others. */
static aclrtStream streams_after(aclrtStream stale) {
    aclrtStream live = NULL;
    int reused = 0;
    for (int i = 0; i < rounds; ++i) {
        CHECK_EQ(aclrtCreateStream(&live), ACL_SUCCESS);
        reused += live == stale;
        if (i + 1 < rounds) {
            CHECK_EQ(aclrtDestroyStream(live), ACL_SUCCESS);
        }
    }
    CHECK_EQ(reused, 0);
    return live;
}

/* Every use of a stale stream is rejected and runs nothing; the live stream still works. */
static void check_stream_rejected(aclrtStream stale, aclrtStream live) {
    aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
    runs = 0;
    CHECK_EQ(aclrtLaunchHostFunc(stale, count_run, NULL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtSynchronizeStream(stale), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtStreamQuery(stale, &status), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtDestroyStream(stale), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(status, ACL_STREAM_STATUS_RESERVED);
    CHECK_EQ(aclrtLaunchHostFunc(live, count_run, NULL), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(live), ACL_SUCCESS);
    CHECK_EQ(runs, 1);
    CHECK_EQ(aclrtDestroyStream(live), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(live), ACL_ERROR_RT_PARAM_INVALID);
}

static void stale_stream(void) {
    aclrtStream stale = NULL;
    CHECK_EQ(aclrtCreateStream(&stale), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(stale), ACL_SUCCESS);
    check_stream_rejected(stale, streams_after(stale));
}

static void stale_event(void) {
    aclrtEvent stale = NULL;
    aclrtEvent live = NULL;
    aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
    float ms = -1.0f;
    int reused = 0;
    CHECK_EQ(aclrtCreateEvent(&stale), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyEvent(stale), ACL_SUCCESS);
    for (int i = 0; i < rounds; ++i) {
        CHECK_EQ(aclrtCreateEvent(&live), ACL_SUCCESS);
        reused += live == stale;
        if (i + 1 < rounds) {
            CHECK_EQ(aclrtDestroyEvent(live), ACL_SUCCESS);
        }
    }
    CHECK_EQ(reused, 0);
    CHECK_EQ(aclrtRecordEvent(live, NULL), ACL_SUCCESS);
    CHECK_EQ(aclrtRecordEvent(stale, NULL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtQueryEvent(stale, &status), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtSynchronizeEvent(stale), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtStreamWaitEvent(NULL, stale), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtEventElapsedTime(&ms, live, stale), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtDestroyEvent(stale), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(status, ACL_EVENT_STATUS_RESERVED);
    CHECK_EQ(aclrtSynchronizeEvent(live), ACL_SUCCESS);
    CHECK_EQ(aclrtEventElapsedTime(&ms, live, live), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyEvent(live), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyEvent(live), ACL_ERROR_RT_PARAM_INVALID);
}

static void stale_context(void) {
    aclrtContext stale = NULL;
    aclrtContext live = NULL;
    aclrtContext current = NULL;
    int reused = 0;
    CHECK_EQ(aclrtCreateContext(&stale, 0), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyContext(stale), ACL_SUCCESS);
    for (int i = 0; i < rounds; ++i) {
        CHECK_EQ(aclrtCreateContext(&live, 0), ACL_SUCCESS);
        reused += live == stale;
        if (i + 1 < rounds) {
            CHECK_EQ(aclrtDestroyContext(live), ACL_SUCCESS);
        }
    }
    CHECK_EQ(reused, 0);
    CHECK_EQ(aclrtSetCurrentContext(stale), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtDestroyContext(stale), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtGetCurrentContext(&current), ACL_SUCCESS); /* still the live one, still there */
    CHECK_TRUE(current == live);
    CHECK_EQ(aclrtDestroyContext(live), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyContext(live), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS); /* a current context again for the next tests */
}

/* A device reset destroys the device's streams and its primary context behind the caller's back:
 * their handles stay rejected, whatever the next creates get from the allocator. */
static void stale_after_reset(void) {
    aclrtStream stream = NULL;
    aclrtContext primary = NULL;
    aclrtContext again = NULL;
    CHECK_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    CHECK_EQ(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    CHECK_EQ(aclrtResetDeviceForce(1), ACL_SUCCESS);
    CHECK_EQ(aclrtSetDevice(1), ACL_SUCCESS); /* a new primary context */
    CHECK_EQ(aclrtGetCurrentContext(&again), ACL_SUCCESS);
    CHECK_TRUE(again != primary);
    check_stream_rejected(stream, streams_after(stream));
    CHECK_EQ(aclrtSetCurrentContext(primary), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtGetCurrentContext(&again), ACL_SUCCESS); /* the same handle each time */
    aclrtContext twice = NULL;
    CHECK_EQ(aclrtGetCurrentContext(&twice), ACL_SUCCESS);
    CHECK_TRUE(twice == again);
    CHECK_EQ(aclrtResetDeviceForce(1), ACL_SUCCESS);
    CHECK_EQ(aclrtSetCurrentContext(again), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
}

static aclTensor* vector_tensor(void* data) {
    const int64_t dims[1] = {16};
    return aclCreateTensor(dims, 1, ACL_INT8, NULL, 0, ACL_FORMAT_ND, dims, 1, data);
}

static void stale_tensor(void) {
    static int8_t bytes[16];
    aclTensor* stale = vector_tensor(bytes);
    aclTensor* live = NULL;
    int reused = 0;
    CHECK_TRUE(stale != NULL);
    CHECK_EQ(aclDestroyTensor(stale), ACLNN_SUCCESS);
    for (int i = 0; i < rounds; ++i) {
        live = vector_tensor(bytes);
        CHECK_TRUE(live != NULL);
        reused += live == stale;
        if (i + 1 < rounds) {
            CHECK_EQ(aclDestroyTensor(live), ACLNN_SUCCESS);
        }
    }
    CHECK_EQ(reused, 0);
    CHECK_EQ(aclDestroyTensor(stale), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclDestroyTensor(live), ACLNN_SUCCESS); /* still live: the stale destroy missed it */
    CHECK_EQ(aclDestroyTensor(live), ACLNN_ERR_PARAM_INVALID);
}

int main(void) {
    CHECK_EQ(aclInit(NULL), ACL_SUCCESS);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    stale_stream();
    stale_event();
    stale_context();
    stale_after_reset();
    stale_tensor();
    CHECK_EQ(aclFinalize(), ACL_SUCCESS);
    if (check_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    }
    return check_failures == 0 ? 0 : 1;
}
