/* Notifies from C (docs/c-api.md, Notifies): a record on one stream releases a wait-and-reset on
 * another, in stream order; one record releases one wait; a wait with a timeout fails when it
 * expires; destroying a notify releases its waiter with ACL_ERROR_RT_PARAM_INVALID; resetting
 * the device that made it does the same. Held streams wait on a gate the main thread opens. */
#include "acl/acl.h"
#include "check.h"
#include "gate.h"

#include <stdint.h>

static void hold(void* args) {
    gate_wait((gate_t*)args, 1);
}

static void count(void* args) {
    gate_add((gate_t*)args, 1);
}

static void record_then_wait(void) {
    aclrtNotify notify = NULL;
    aclrtStream producer = NULL;
    aclrtStream consumer = NULL;
    gate_t gate;
    gate_t done;
    gate_init(&gate);
    gate_init(&done);
    CHECK_EQ(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&producer), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&consumer), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(producer, hold, &gate), ACL_SUCCESS);
    CHECK_EQ(aclrtRecordNotify(notify, producer), ACL_SUCCESS);
    CHECK_EQ(aclrtWaitAndResetNotify(notify, consumer, 0), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(consumer, count, &done), ACL_SUCCESS);
    /* the producer is held, so the consumer cannot pass its wait */
    CHECK_EQ(aclrtSynchronizeStreamWithTimeout(consumer, 5), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    CHECK_EQ(gate_count(&done), 0);
    gate_add(&gate, 1);
    CHECK_EQ(aclrtSynchronizeStream(consumer), ACL_SUCCESS);
    CHECK_EQ(gate_count(&done), 1);

    /* the record was consumed: a second wait (1 s timeout) expires and fails its stream */
    CHECK_EQ(aclrtWaitAndResetNotify(notify, consumer, 1), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(consumer), ACL_ERROR_RT_WAIT_TIMEOUT);

    CHECK_EQ(aclrtDestroyNotify(notify), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyNotify(notify), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtDestroyStream(producer), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(consumer), ACL_SUCCESS);
    gate_destroy(&done);
    gate_destroy(&gate);
}

static void destroy_while_waited(void) {
    aclrtNotify notify = NULL;
    aclrtStream waiter = NULL;
    gate_t after;
    gate_init(&after);
    CHECK_EQ(aclrtCreateNotify(&notify, ACL_NOTIFY_DEVICE_USE_ONLY), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&waiter), ACL_SUCCESS);
    CHECK_EQ(aclrtWaitAndResetNotify(notify, waiter, 0), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(waiter, count, &after), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyNotify(notify), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(waiter), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(gate_count(&after), 0); /* skipped behind the failed wait */
    CHECK_EQ(aclrtRecordNotify(notify, waiter), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtDestroyStream(waiter), ACL_SUCCESS);
    gate_destroy(&after);
}

static void device_reset(void) {
    aclrtNotify notify = NULL;
    aclrtStream waiter = NULL;
    uint32_t first = 0;
    uint32_t second = 0;
    aclrtNotify other = NULL;
    CHECK_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateNotify(&other, ACL_NOTIFY_DEFAULT), ACL_SUCCESS);
    CHECK_EQ(aclrtGetNotifyId(notify, &first), ACL_SUCCESS);
    CHECK_EQ(aclrtGetNotifyId(other, &second), ACL_SUCCESS);
    CHECK_TRUE(first != second);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&waiter), ACL_SUCCESS); /* on device 0 */
    CHECK_EQ(aclrtWaitAndResetNotify(notify, waiter, 0), ACL_SUCCESS);
    CHECK_EQ(aclrtResetDevice(1), ACL_SUCCESS); /* the notifies of device 1 go */
    CHECK_EQ(aclrtSynchronizeStream(waiter), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtGetNotifyId(notify, &first), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtDestroyNotify(other), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtDestroyStream(waiter), ACL_SUCCESS);
}

int main(void) {
    aclrtNotify notify = NULL;
    CHECK_EQ(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT), ACL_ERROR_RT_CONTEXT_NULL);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    record_then_wait();
    destroy_while_waited();
    device_reset();
    CHECK_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclFinalize(), ACL_SUCCESS);
    return check_failures == 0 ? 0 : 1;
}
