/*
 * acltdt* channels from several threads (suite 'concurrency', run under ThreadSanitizer in CI):
 * stop waking blocked send and receive, destroy with a blocked receiver (queue and legacy), and
 * send/receive/query/clean/stop racing, with every message accounted for. Worker threads only
 * record what they saw; the main thread checks it after joining (check.h).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl_tdt.h"
#include "check.h"

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A dataset of one int64 tensor over `value` (the caller keeps it alive); NULL on failure.
 * Called from worker threads too, so it checks nothing itself (check.h is main-thread only). */
static acltdtDataset* value_dataset(int64_t* value) {
    const int64_t dims[1] = {1};
    acltdtDataItem* item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_INT64, value,
                                                sizeof *value);
    acltdtDataset* dataset = acltdtCreateDataset();
    if (item == NULL || dataset == NULL || acltdtAddDataItem(dataset, item) != ACL_SUCCESS) {
        acltdtDestroyDataItem(item);
        acltdtDestroyDataset(dataset);
        return NULL;
    }
    return dataset;
}

static void destroy_value_dataset(acltdtDataset* dataset) {
    CHECK_EQ(acltdtDestroyDataItem(acltdtGetDataItem(dataset, 0)), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(dataset), ACL_SUCCESS);
}

struct blocked_call {
    acltdtChannelHandle* channel;
    acltdtDataset* dataset;
    int send; /* 1: send, 0: receive */
    aclError result;
};

static void* blocked_call_main(void* arg) {
    struct blocked_call* call = arg;
    call->result = call->send ? acltdtSendTensor(call->channel, call->dataset, -1)
                              : acltdtReceiveTensor(call->channel, call->dataset, -1);
    return NULL;
}

/* Stop wakes a receiver blocked on an empty channel and a sender blocked on a full one; a woken
 * send answers QUEUE_FULL and a woken receive QUEUE_EMPTY (spec/tdt.md §4). */
static void stop_wakes_blocked_calls(void) {
    int64_t value = 1;
    acltdtDataset* dataset = value_dataset(&value);
    REQUIRE(dataset != NULL);
    acltdtChannelHandle* empty = acltdtCreateChannelWithCapacity(0, "stop-rx", 2);
    acltdtChannelHandle* full = acltdtCreateChannelWithCapacity(0, "stop-tx", 2);
    REQUIRE(empty != NULL && full != NULL);
    CHECK_EQ(acltdtSendTensor(full, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(full, dataset, 0), ACL_SUCCESS);
    acltdtDataset* out = acltdtCreateDataset();
    struct blocked_call rx = {empty, out, 0, -1};
    struct blocked_call tx = {full, dataset, 1, -1};
    pthread_t threads[2];
    REQUIRE(pthread_create(&threads[0], NULL, blocked_call_main, &rx) == 0);
    REQUIRE(pthread_create(&threads[1], NULL, blocked_call_main, &tx) == 0);
    sleep_ms(50); /* let them block; stop is sticky, so an early stop is no different */
    CHECK_EQ(acltdtStopChannel(empty), ACL_SUCCESS);
    CHECK_EQ(acltdtStopChannel(full), ACL_SUCCESS);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    CHECK_EQ(rx.result, ACL_ERROR_RT_QUEUE_EMPTY);
    CHECK_EQ(tx.result, ACL_ERROR_RT_QUEUE_FULL);
    CHECK_EQ(acltdtDestroyChannel(empty), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(full), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    destroy_value_dataset(dataset);
}

/* Destroying a channel while a receiver is blocked on it wakes the receiver (QUEUE_EMPTY, as
 * CANN's queue destroy, tdt_facts.md §2.9) and returns only after it has left. Also for a legacy
 * receive handle whose channel still has another (sending) handle. */
static void destroy_with_blocked_receiver(void) {
    acltdtDataset* out = acltdtCreateDataset();
    acltdtChannelHandle* queue = acltdtCreateChannelWithCapacity(0, "destroy-rx", 4);
    REQUIRE(queue != NULL && out != NULL);
    struct blocked_call rx = {queue, out, 0, -1};
    pthread_t thread;
    REQUIRE(pthread_create(&thread, NULL, blocked_call_main, &rx) == 0);
    sleep_ms(50);
    CHECK_EQ(acltdtDestroyChannel(queue), ACL_SUCCESS);
    pthread_join(thread, NULL);
    CHECK(rx.result == ACL_ERROR_RT_QUEUE_EMPTY || rx.result == ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtReceiveTensor(queue, out, 0), ACL_ERROR_INVALID_PARAM); /* stale now */

    acltdtChannelHandle* tx = acltdtCreateChannel(0, "destroy-legacy");
    acltdtChannelHandle* legacy_rx = acltdtCreateChannel(0, "TF_RECEIVE_destroy-legacy");
    REQUIRE(tx != NULL && legacy_rx != NULL);
    struct blocked_call lrx = {legacy_rx, out, 0, -1};
    REQUIRE(pthread_create(&thread, NULL, blocked_call_main, &lrx) == 0);
    sleep_ms(50);
    CHECK_EQ(acltdtDestroyChannel(legacy_rx), ACL_SUCCESS);
    pthread_join(thread, NULL);
    CHECK(lrx.result == ACL_ERROR_RT_QUEUE_EMPTY || lrx.result == ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyChannel(tx), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
}

/* ---- racing producers, consumers and a meddler ---- */

enum { producers = 2, consumers = 2, per_producer = 2000 };

struct race {
    acltdtChannelHandle* channel;
    int meddle;                      /* 1: a thread cleans, queries and finally stops */
    int64_t* payloads;               /* per producer, read by the senders */
    unsigned char seen[producers][per_producer]; /* written by consumers, one slot each */
    int sent_ok[producers];
    int received[consumers];
    int duplicates[consumers];
    int bad_codes;
    pthread_mutex_t mutex; /* guards seen/duplicates/bad_codes across consumers */
    int producers_done;
};

struct worker {
    struct race* race;
    int index;
};

static void* producer_main(void* arg) {
    struct worker* w = arg;
    struct race* r = w->race;
    int64_t value = 0;
    acltdtDataset* dataset = value_dataset(&value);
    if (dataset == NULL) {
        pthread_mutex_lock(&r->mutex);
        ++r->bad_codes;
        ++r->producers_done;
        pthread_mutex_unlock(&r->mutex);
        return NULL;
    }
    for (int i = 0; i < per_producer; ++i) {
        value = (int64_t)w->index * per_producer + i;
        aclError e = acltdtSendTensor(r->channel, dataset, r->meddle ? 5 : -1);
        if (e == ACL_SUCCESS) {
            ++r->sent_ok[w->index];
        } else if (e != ACL_ERROR_RT_QUEUE_FULL) {
            pthread_mutex_lock(&r->mutex);
            ++r->bad_codes;
            pthread_mutex_unlock(&r->mutex);
        }
    }
    acltdtDestroyDataItem(acltdtGetDataItem(dataset, 0));
    acltdtDestroyDataset(dataset);
    pthread_mutex_lock(&r->mutex);
    ++r->producers_done;
    pthread_mutex_unlock(&r->mutex);
    return NULL;
}

static void* consumer_main(void* arg) {
    struct worker* w = arg;
    struct race* r = w->race;
    acltdtDataset* out = acltdtCreateDataset();
    for (;;) {
        aclError e = acltdtReceiveTensor(r->channel, out, 20);
        if (e == ACL_ERROR_RT_QUEUE_EMPTY) {
            pthread_mutex_lock(&r->mutex);
            int done = r->producers_done == producers;
            pthread_mutex_unlock(&r->mutex);
            size_t size = 1;
            if (done && (acltdtQueryChannelSize(r->channel, &size) != ACL_SUCCESS || size == 0)) {
                break;
            }
            continue;
        }
        pthread_mutex_lock(&r->mutex);
        if (e != ACL_SUCCESS || acltdtGetDatasetSize(out) != 1) {
            ++r->bad_codes;
        } else {
            int64_t v = *(const int64_t*)acltdtGetDataAddrFromItem(acltdtGetDataItem(out, 0));
            unsigned char* slot = &r->seen[v / per_producer][v % per_producer];
            r->duplicates[w->index] += *slot;
            *slot = 1;
            ++r->received[w->index];
        }
        pthread_mutex_unlock(&r->mutex);
    }
    acltdtDestroyDataset(out);
    return NULL;
}

static void* meddler_main(void* arg) {
    struct race* r = arg;
    for (int i = 0; i < 200; ++i) {
        size_t size = 0;
        if (acltdtQueryChannelSize(r->channel, &size) != ACL_SUCCESS || size > 8) {
            pthread_mutex_lock(&r->mutex);
            ++r->bad_codes;
            pthread_mutex_unlock(&r->mutex);
        }
        if (i % 10 == 0) {
            acltdtCleanChannel(r->channel);
        }
        sleep_ms(1);
    }
    acltdtStopChannel(r->channel); /* producers still sending get QUEUE_FULL from here on */
    return NULL;
}

/* Without a meddler every message arrives exactly once; with clean/query/stop racing, nothing is
 * duplicated, nothing arrives that was not sent, and every thread finishes. */
static void race(int meddle) {
    struct race* r = calloc(1, sizeof *r);
    REQUIRE(r != NULL);
    pthread_mutex_init(&r->mutex, NULL);
    r->meddle = meddle;
    r->channel = acltdtCreateChannelWithCapacity(0, "race", 8);
    REQUIRE(r->channel != NULL);
    pthread_t threads[producers + consumers + 1];
    struct worker workers[producers + consumers];
    for (int i = 0; i < producers; ++i) {
        workers[i] = (struct worker){r, i};
        REQUIRE(pthread_create(&threads[i], NULL, producer_main, &workers[i]) == 0);
    }
    for (int i = 0; i < consumers; ++i) {
        workers[producers + i] = (struct worker){r, i};
        REQUIRE(pthread_create(&threads[producers + i], NULL, consumer_main,
                               &workers[producers + i]) == 0);
    }
    if (meddle) {
        REQUIRE(pthread_create(&threads[producers + consumers], NULL, meddler_main, r) == 0);
    }
    for (int i = 0; i < producers + consumers + (meddle ? 1 : 0); ++i) {
        pthread_join(threads[i], NULL);
    }
    int sent = 0, received = 0, duplicates = 0;
    for (int i = 0; i < producers; ++i) {
        sent += r->sent_ok[i];
    }
    for (int i = 0; i < consumers; ++i) {
        received += r->received[i];
        duplicates += r->duplicates[i];
    }
    CHECK_EQ(r->bad_codes, 0);
    CHECK_EQ(duplicates, 0);
    CHECK(received <= sent);
    if (!meddle) {
        CHECK_EQ(sent, producers * per_producer);
        CHECK_EQ(received, sent);
    }
    CHECK_EQ(acltdtDestroyChannel(r->channel), ACL_SUCCESS);
    pthread_mutex_destroy(&r->mutex);
    free(r);
}

static void race_exact(void) { race(0); }
static void race_with_clean_query_stop(void) { race(1); }

int main(void) {
    RUN(stop_wakes_blocked_calls);
    RUN(destroy_with_blocked_receiver);
    RUN(race_exact);
    RUN(race_with_clean_query_stop);
    return check_summary();
}
