/* aclrtResetEvent from C11 (docs/c-api.md, Events): bad handles are refused; the reset takes effect
 * when the stream reaches it, not when it is called; afterwards the event reads as never recorded
 * (no timestamp) until it is recorded again. */
#define _POSIX_C_SOURCE 200809L

#include "acl/acl.h"
#include "check.h"
#include "gate.h"

#include <stdint.h>

static gate_t release; /* a held stream goes on when the count reaches its host task's target */

static void hold_stream(void* target) {
    gate_wait(&release, (int)(intptr_t)target);
}

static void bad_handles(aclrtStream stream) {
    aclrtEvent stale = NULL;
    CHECK_EQ(aclrtResetEvent(NULL, stream), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtCreateEvent(&stale), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyEvent(stale), ACL_SUCCESS);
    CHECK_EQ(aclrtResetEvent(stale, stream), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS); /* nothing was queued */
}

static void reset_runs_in_stream_order(aclrtStream stream) {
    aclrtEvent start = NULL;
    aclrtEvent end = NULL;
    float ms = -1.0f;
    aclrtEventRecordedStatus recorded = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    CHECK_EQ(aclrtCreateEvent(&start), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateEvent(&end), ACL_SUCCESS);
    CHECK_EQ(aclrtRecordEvent(start, stream), ACL_SUCCESS);
    CHECK_EQ(aclrtRecordEvent(end, stream), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    CHECK_TRUE(ms >= 0.0f);

    /* queued behind a task that holds the stream: the event keeps its record meanwhile */
    CHECK_EQ(aclrtLaunchHostFunc(stream, hold_stream, (void*)(intptr_t)1), ACL_SUCCESS);
    CHECK_EQ(aclrtResetEvent(end, stream), ACL_SUCCESS);
    CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    CHECK_EQ(aclrtQueryEventStatus(end, &recorded), ACL_SUCCESS);
    CHECK_EQ(recorded, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    gate_add(&release, 1);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);

    /* reached: never recorded again — no timestamp, nothing to wait for */
    CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtSynchronizeEvent(end), ACL_SUCCESS);
    CHECK_EQ(aclrtStreamWaitEvent(stream, end), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);

    /* and usable again */
    CHECK_EQ(aclrtRecordEvent(end, stream), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeEvent(end), ACL_SUCCESS);
    CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyEvent(start), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyEvent(end), ACL_SUCCESS);
}

/* A reset on one stream does not undo a record that a blocked other stream has not reached yet:
 * that record completes afterwards as usual. */
static void pending_record_survives_a_reset(aclrtStream stream) {
    aclrtStream other = NULL;
    aclrtEvent event = NULL;
    float ms = -1.0f;
    CHECK_EQ(aclrtCreateStream(&other), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateEvent(&event), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(other, hold_stream, (void*)(intptr_t)2), ACL_SUCCESS);
    CHECK_EQ(aclrtRecordEvent(event, other), ACL_SUCCESS);
    CHECK_EQ(aclrtResetEvent(event, stream), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS); /* the reset ran first */
    gate_add(&release, 1);
    CHECK_EQ(aclrtSynchronizeEvent(event), ACL_SUCCESS);
    CHECK_EQ(aclrtEventElapsedTime(&ms, event, event), ACL_SUCCESS); /* it has a timestamp */
    CHECK_EQ(aclrtDestroyEvent(event), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(other), ACL_SUCCESS);
}

int main(void) {
    aclrtStream stream = NULL;
    gate_init(&release);
    CHECK_EQ(aclInit(NULL), ACL_SUCCESS);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    bad_handles(stream);
    reset_runs_in_stream_order(stream);
    pending_record_survives_a_reset(stream);
    CHECK_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    CHECK_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclFinalize(), ACL_SUCCESS);
    gate_destroy(&release);
    return check_failures;
}
