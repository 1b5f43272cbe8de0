/* Host functions that end their own stream, from C: aclrtLaunchHostFunc callbacks calling
 * aclrtDestroyStream on their own stream and aclrtResetDeviceForce on their own device. The call
 * returns, the callback returns, and the stream's thread finishes without touching freed memory
 * (run under AddressSanitizer in CI); the handle is stale afterwards. */
#include "acl/acl.h"
#include "check.h"

#include <pthread.h>
#include <stdbool.h>

/* A one-shot flag another thread waits for. */
typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    bool open;
} latch;

static void latch_init(latch* l) {
    pthread_mutex_init(&l->mutex, NULL);
    pthread_cond_init(&l->cond, NULL);
    l->open = false;
}

static void latch_destroy(latch* l) {
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->mutex);
}

static void latch_release(void* args) {
    latch* l = (latch*)args;
    pthread_mutex_lock(&l->mutex);
    l->open = true;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->mutex);
}

static void latch_wait(latch* l) {
    pthread_mutex_lock(&l->mutex);
    while (!l->open) {
        pthread_cond_wait(&l->cond, &l->mutex);
    }
    pthread_mutex_unlock(&l->mutex);
}

/* What a self-ending callback needs: the stream, a gate it waits on before ending the stream (so
 * the test can queue more work behind it first) and the code the ending call returned. */
typedef struct {
    aclrtStream stream;
    latch gate;
    aclError result;
} ending;

static void destroy_own_stream(void* args) {
    ending* e = (ending*)args;
    latch_wait(&e->gate);
    e->result = aclrtDestroyStream(e->stream);
}

static void reset_own_device(void* args) {
    ending* e = (ending*)args;
    latch_wait(&e->gate);
    e->result = aclrtResetDeviceForce(0);
}

/* Queues `end` and a tail callback behind it on a new stream, opens the gate and waits for the
 * tail: work queued before the stream ended still runs. */
static void end_stream_from_its_callback(aclrtHostFunc end) {
    ending e = {.stream = NULL, .result = -1};
    latch tail;
    latch_init(&e.gate);
    latch_init(&tail);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&e.stream), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(e.stream, end, &e), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(e.stream, latch_release, &tail), ACL_SUCCESS);
    latch_release(&e.gate);
    latch_wait(&tail);
    CHECK_EQ(e.result, ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(e.stream), ACL_ERROR_RT_PARAM_INVALID); /* stale */
    latch_destroy(&tail);
    latch_destroy(&e.gate);
}

int main(void) {
    end_stream_from_its_callback(destroy_own_stream);
    end_stream_from_its_callback(reset_own_device);
    CHECK_EQ(aclFinalize(), ACL_SUCCESS); /* joins the threads of both streams */
    if (check_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    }
    return check_failures == 0 ? 0 : 1;
}
