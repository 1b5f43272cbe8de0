/* The report-callback family from C11 (docs/c-api.md, Callbacks): aclrtSubscribeReport,
 * aclrtLaunchCallback, aclrtProcessReport, aclrtUnSubscribeReport. Callbacks run on the subscribed
 * thread, in stream order; ACL_CALLBACK_BLOCK holds the stream until the callback has run,
 * ACL_CALLBACK_NO_BLOCK does not. Threads hand over through gates, never by sleeping. */
#define _POSIX_C_SOURCE 200809L

#include "acl/acl.h"
#include "check.h"
#include "gate.h"

#include <pthread.h>
#include <stdint.h>

enum { k_capacity = 512 };

/* What ran, in order (callbacks on the processing thread, host tasks on the stream's). */
static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static int ran[k_capacity];
static int ran_count = 0;
static pthread_t expected_thread;
static int wrong_thread = 0; /* callbacks that ran elsewhere than expected_thread */
static gate_t noted;         /* counts every entry of ran[] */

static void note(int value) {
    pthread_mutex_lock(&log_mutex);
    if (ran_count < k_capacity) {
        ran[ran_count++] = value;
    }
    pthread_mutex_unlock(&log_mutex);
    gate_add(&noted, 1);
}

static void callback(void* value) {
    pthread_mutex_lock(&log_mutex);
    wrong_thread += !pthread_equal(pthread_self(), expected_thread);
    pthread_mutex_unlock(&log_mutex);
    note((int)(intptr_t)value);
}

static void host_task(void* value) {
    note((int)(intptr_t)value);
}

/* Empties the log; returns how many entries it held and copies up to n of them. */
static int take_log(int* out, int n) {
    pthread_mutex_lock(&log_mutex);
    const int count = ran_count;
    for (int i = 0; i < count && i < n; ++i) {
        out[i] = ran[i];
    }
    ran_count = 0;
    wrong_thread = 0;
    pthread_mutex_unlock(&log_mutex);
    return count;
}

static void expect_thread(pthread_t thread) {
    pthread_mutex_lock(&log_mutex);
    expected_thread = thread;
    pthread_mutex_unlock(&log_mutex);
}

static int wrong_thread_count(void) {
    pthread_mutex_lock(&log_mutex);
    const int wrong = wrong_thread;
    pthread_mutex_unlock(&log_mutex);
    return wrong;
}

static uint64_t thread_id(pthread_t thread) {
    return (uint64_t)thread; /* what CANN samples pass: the pthread_t */
}

static void bad_arguments(aclrtStream stream) {
    const uint64_t self = thread_id(pthread_self());
    aclrtStream stale = NULL;
    CHECK_EQ(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtProcessReport(1), ACL_ERROR_RT_THREAD_SUBSCRIBE); /* serves no stream */
    CHECK_EQ(aclrtLaunchCallback(NULL, NULL, ACL_CALLBACK_BLOCK, stream), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtLaunchCallback(callback, NULL, (aclrtCallbackBlockType)2, stream),
             ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtLaunchCallback(callback, NULL, ACL_CALLBACK_BLOCK, stream),
             ACL_ERROR_RT_STREAM_NO_CB_REG);
    CHECK_EQ(aclrtUnSubscribeReport(self, stream), ACL_ERROR_RT_STREAM_SUBSCRIBE);

    CHECK_EQ(aclrtCreateStream(&stale), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(stale), ACL_SUCCESS);
    CHECK_EQ(aclrtSubscribeReport(self, stale), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtLaunchCallback(callback, NULL, ACL_CALLBACK_NO_BLOCK, stale),
             ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(aclrtUnSubscribeReport(self, stale), ACL_ERROR_RT_PARAM_INVALID);

    CHECK_EQ(aclrtSubscribeReport(self, stream), ACL_SUCCESS);
    CHECK_EQ(aclrtSubscribeReport(self, stream), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    CHECK_EQ(aclrtSubscribeReport(self + 1, stream), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    CHECK_EQ(aclrtUnSubscribeReport(self + 1, stream), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    CHECK_EQ(aclrtProcessReport(1), ACL_ERROR_RT_REPORT_TIMEOUT); /* subscribed, nothing came */
    CHECK_EQ(aclrtUnSubscribeReport(self, stream), ACL_SUCCESS);
    CHECK_EQ(aclrtUnSubscribeReport(self, stream), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    CHECK_EQ(aclrtProcessReport(1), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS); /* nothing was queued */
}

/* The processing thread of a CANN sample: loops aclrtProcessReport(-1) once it is subscribed,
 * until its last stream is unsubscribed. */
typedef struct {
    pthread_t thread;
    gate_t subscribed;
    int processed;
    int failures; /* returns other than success and the final ACL_ERROR_RT_THREAD_SUBSCRIBE */
} processor_t;

static void* process_reports(void* arg) {
    processor_t* p = (processor_t*)arg;
    gate_wait(&p->subscribed, 1);
    for (;;) {
        const aclError rc = aclrtProcessReport(-1);
        if (rc == ACL_ERROR_RT_THREAD_SUBSCRIBE) {
            return NULL;
        }
        if (rc == ACL_SUCCESS) {
            ++p->processed;
        } else {
            ++p->failures;
        }
    }
}

static void start_processor(processor_t* p) {
    gate_init(&p->subscribed);
    p->processed = 0;
    p->failures = 0;
    CHECK_EQ(pthread_create(&p->thread, NULL, process_reports, p), 0);
    expect_thread(p->thread);
}

static void join_processor(processor_t* p, int processed) {
    CHECK_EQ(pthread_join(p->thread, NULL), 0);
    CHECK_EQ(p->processed, processed);
    CHECK_EQ(p->failures, 0);
    gate_destroy(&p->subscribed);
}

static void blocking_callbacks_run_on_the_subscribed_thread_in_stream_order(aclrtStream stream) {
    processor_t p;
    int log[8];
    start_processor(&p);
    CHECK_EQ(aclrtSubscribeReport(thread_id(p.thread), stream), ACL_SUCCESS);
    gate_add(&p.subscribed, 1);
    CHECK_EQ(aclrtLaunchCallback(callback, (void*)(intptr_t)1, ACL_CALLBACK_BLOCK, stream),
             ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(stream, host_task, (void*)(intptr_t)2), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchCallback(callback, (void*)(intptr_t)3, ACL_CALLBACK_BLOCK, stream),
             ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(stream, host_task, (void*)(intptr_t)4), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK_EQ(wrong_thread_count(), 0);
    CHECK_EQ(take_log(log, 8), 4);
    for (int i = 0; i < 4; ++i) {
        CHECK_EQ(log[i], i + 1);
    }
    CHECK_EQ(aclrtUnSubscribeReport(thread_id(p.thread), stream), ACL_SUCCESS);
    join_processor(&p, 2);
}

/* Nobody processes yet: a blocking callback holds the stream (later tasks wait), and the
 * subscribed thread — here the launching one — releases it by processing the report. */
static void blocking_callback_holds_the_stream(aclrtStream stream) {
    int log[4];
    const int before = gate_count(&noted);
    expect_thread(pthread_self());
    CHECK_EQ(aclrtSubscribeReport(thread_id(pthread_self()), stream), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchCallback(callback, (void*)(intptr_t)10, ACL_CALLBACK_BLOCK, stream),
             ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(stream, host_task, (void*)(intptr_t)11), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStreamWithTimeout(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    CHECK_EQ(gate_count(&noted), before); /* neither the callback nor the task behind it ran */
    CHECK_EQ(aclrtProcessReport(-1), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK_EQ(wrong_thread_count(), 0);
    CHECK_EQ(take_log(log, 4), 2);
    CHECK_EQ(log[0], 10);
    CHECK_EQ(log[1], 11);
    CHECK_EQ(aclrtUnSubscribeReport(thread_id(pthread_self()), stream), ACL_SUCCESS);
}

/* A non-blocking callback lets the stream go on: the default stream (NULL) finishes while its
 * report is still waiting for the subscribed thread. */
static void non_blocking_callback_does_not_hold_the_stream(void) {
    int log[4];
    const int before = gate_count(&noted);
    expect_thread(pthread_self());
    CHECK_EQ(aclrtSubscribeReport(thread_id(pthread_self()), NULL), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchCallback(callback, (void*)(intptr_t)20, ACL_CALLBACK_NO_BLOCK, NULL),
             ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(NULL, host_task, (void*)(intptr_t)21), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    CHECK_EQ(gate_count(&noted), before + 1); /* the host task only */
    CHECK_EQ(aclrtProcessReport(-1), ACL_SUCCESS);
    CHECK_EQ(take_log(log, 4), 2);
    CHECK_EQ(log[0], 21);
    CHECK_EQ(log[1], 20);
    CHECK_EQ(aclrtUnSubscribeReport(thread_id(pthread_self()), NULL), ACL_SUCCESS);
}

/* Unsubscribing takes undelivered reports back: the blocked stream is released with
 * ACL_ERROR_RT_STREAM_NO_CB_REG at its next synchronize instead of hanging. */
static void unsubscribe_releases_a_blocked_stream(aclrtStream stream) {
    int log[4];
    const int before = gate_count(&noted);
    CHECK_EQ(aclrtSubscribeReport(thread_id(pthread_self()), stream), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchCallback(callback, (void*)(intptr_t)30, ACL_CALLBACK_BLOCK, stream),
             ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(stream, host_task, (void*)(intptr_t)31), ACL_SUCCESS);
    CHECK_EQ(aclrtUnSubscribeReport(thread_id(pthread_self()), stream), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_STREAM_NO_CB_REG);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS); /* the error was reported once */
    CHECK_EQ(gate_count(&noted), before);                  /* the callback never ran */
    CHECK_EQ(take_log(log, 4), 0);
    CHECK_EQ(aclrtProcessReport(1), ACL_ERROR_RT_THREAD_SUBSCRIBE);
}

/* One thread serving two streams; many non-blocking callbacks, each stream's in its order. */
static void one_thread_serves_two_streams(aclrtStream stream) {
    enum { k_each = 100 };
    processor_t p;
    aclrtStream second = NULL;
    static int log[k_capacity];
    int next[2] = {0, 1000};
    const int before = gate_count(&noted);
    CHECK_EQ(aclrtCreateStream(&second), ACL_SUCCESS);
    start_processor(&p);
    CHECK_EQ(aclrtSubscribeReport(thread_id(p.thread), stream), ACL_SUCCESS);
    CHECK_EQ(aclrtSubscribeReport(thread_id(p.thread), second), ACL_SUCCESS);
    gate_add(&p.subscribed, 1);
    for (int i = 0; i < k_each; ++i) {
        CHECK_EQ(aclrtLaunchCallback(callback, (void*)(intptr_t)i, ACL_CALLBACK_NO_BLOCK, stream),
                 ACL_SUCCESS);
        CHECK_EQ(aclrtLaunchCallback(callback, (void*)(intptr_t)(1000 + i), ACL_CALLBACK_NO_BLOCK,
                                     second),
                 ACL_SUCCESS);
    }
    gate_wait(&noted, before + 2 * k_each);
    CHECK_EQ(wrong_thread_count(), 0);
    CHECK_EQ(take_log(log, k_capacity), 2 * k_each);
    for (int i = 0; i < 2 * k_each; ++i) {
        const int which = log[i] >= 1000;
        CHECK_EQ(log[i], next[which]);
        ++next[which];
    }
    /* still serving the second stream after the first is unsubscribed */
    CHECK_EQ(aclrtUnSubscribeReport(thread_id(p.thread), stream), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchCallback(callback, (void*)(intptr_t)7, ACL_CALLBACK_BLOCK, second),
             ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(second), ACL_SUCCESS);
    CHECK_EQ(take_log(log, 1), 1);
    CHECK_EQ(log[0], 7);
    CHECK_EQ(aclrtUnSubscribeReport(thread_id(p.thread), second), ACL_SUCCESS);
    join_processor(&p, 2 * k_each + 1);
    CHECK_EQ(aclrtDestroyStream(second), ACL_SUCCESS);
}

int main(void) {
    aclrtStream stream = NULL;
    gate_init(&noted);
    CHECK_EQ(aclInit(NULL), ACL_SUCCESS);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    bad_arguments(stream);
    blocking_callback_holds_the_stream(stream);
    non_blocking_callback_does_not_hold_the_stream();
    unsubscribe_releases_a_blocked_stream(stream);
    blocking_callbacks_run_on_the_subscribed_thread_in_stream_order(stream);
    one_thread_serves_two_streams(stream);
    CHECK_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    CHECK_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclFinalize(), ACL_SUCCESS);
    gate_destroy(&noted);
    return check_failures;
}
