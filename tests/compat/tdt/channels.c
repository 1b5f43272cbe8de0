/*
 * acltdt* channels from C, single-threaded: bad inputs of every channel function, queue
 * semantics (capacity exactly N, codes for full/empty, clean, query, stop), timeouts that never
 * return early, the legacy TF_RECEIVE_ rendezvous, receive validating before it dequeues, stale
 * and double-destroyed handles, a 64 MiB round trip, and the upstream channel unit tests of
 * docs/cann-contract/tdt.md#upstream-unit-tests ported in spirit (ferry's decisions marked
 * "ferry:").
 */
#include "acl/acl_tdt.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A one-item float dataset over `values` (the caller keeps values alive). */
static acltdtDataset* float_dataset(float* values, size_t count) {
    const int64_t dims[2] = {1, (int64_t)count};
    acltdtDataItem* item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, values,
                                                count * sizeof(float));
    acltdtDataset* dataset = acltdtCreateDataset();
    REQUIRE(item != NULL && dataset != NULL);
    REQUIRE(acltdtAddDataItem(dataset, item) == ACL_SUCCESS);
    return dataset;
}

static void destroy_with_items(acltdtDataset* dataset) {
    size_t n = acltdtGetDatasetSize(dataset);
    for (size_t i = 0; i < n; ++i) {
        acltdtDataItem* item = acltdtGetDataItem(dataset, i);
        if (i == 0 || item != acltdtGetDataItem(dataset, i - 1)) {
            CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);
        }
    }
    CHECK_EQ(acltdtDestroyDataset(dataset), ACL_SUCCESS);
}

static size_t channel_size(const acltdtChannelHandle* channel) {
    size_t size = 999;
    CHECK_EQ(acltdtQueryChannelSize(channel, &size), ACL_SUCCESS);
    return size;
}

/* acltdtCreateChannelWithCapacityTest and the NULL cases of
 * docs/cann-contract/tdt.md#channel-creation. */
static void create_rejects(void) {
    char long_name[200];
    memset(long_name, 'q', sizeof long_name);
    long_name[128] = '\0'; /* 128 characters: one too many */
    CHECK(acltdtCreateChannelWithCapacity(0, NULL, 2) == NULL);
    CHECK(acltdtCreateChannelWithCapacity(0, long_name, 2) == NULL);
    long_name[129] = '\0';
    long_name[128] = 'q'; /* 129 characters, as the upstream test */
    CHECK(acltdtCreateChannelWithCapacity(0, long_name, 2) == NULL);
    CHECK(acltdtCreateChannelWithCapacity(0, "c", 0) == NULL);
    CHECK(acltdtCreateChannelWithCapacity(0, "c", 1) == NULL);
    CHECK(acltdtCreateChannelWithCapacity(0, "c", 8193) == NULL);
    CHECK(acltdtCreateChannelWithCapacity(0, "c", (size_t)1 << 33) == NULL); /* no truncation */
    CHECK(acltdtCreateChannelWithCapacity(4096, "c", 2) == NULL);            /* no such device */
    CHECK(acltdtCreateChannel(0, NULL) == NULL);
    CHECK(acltdtCreateChannel(4096, "c") == NULL);

    long_name[127] = '\0'; /* 127 characters: the longest accepted */
    acltdtChannelHandle* ok = acltdtCreateChannelWithCapacity(0, long_name, 8192);
    CHECK(ok != NULL);
    CHECK_EQ(acltdtDestroyChannel(ok), ACL_SUCCESS);
    acltdtChannelHandle* small = acltdtCreateChannelWithCapacity(0, "c", 2);
    CHECK(small != NULL);
    CHECK_EQ(acltdtDestroyChannel(small), ACL_SUCCESS);
    acltdtChannelHandle* unnamed = acltdtCreateChannel(0, ""); /* TestAclTdtChannel03 */
    CHECK(unnamed != NULL);
    CHECK_EQ(acltdtStopChannel(unnamed), ACL_SUCCESS); /* TestAclTdtChannel02 */
    CHECK_EQ(acltdtDestroyChannel(unnamed), ACL_SUCCESS);
}

/* Every channel function with NULL, destroyed and wrong-kind handles: INVALID_PARAM, no crash. */
static void bad_handles(void) {
    float v[2] = {1, 2};
    acltdtDataset* dataset = float_dataset(v, 2);
    acltdtDataset* out = acltdtCreateDataset();
    acltdtChannelHandle* stale = acltdtCreateChannelWithCapacity(0, "stale", 4);
    REQUIRE(stale != NULL);
    CHECK_EQ(acltdtDestroyChannel(stale), ACL_SUCCESS);
    acltdtChannelHandle* wrong = (acltdtChannelHandle*)dataset;
    acltdtChannelHandle* bad[3] = {NULL, stale, wrong};
    size_t size = 77;
    for (int i = 0; i < 3; ++i) {
        CHECK_EQ(acltdtSendTensor(bad[i], dataset, 0), ACL_ERROR_INVALID_PARAM);
        CHECK_EQ(acltdtReceiveTensor(bad[i], out, 0), ACL_ERROR_INVALID_PARAM);
        CHECK_EQ(acltdtQueryChannelSize(bad[i], &size), ACL_ERROR_INVALID_PARAM);
        CHECK_EQ(acltdtCleanChannel(bad[i]), ACL_ERROR_INVALID_PARAM);
        CHECK_EQ(acltdtStopChannel(bad[i]), ACL_ERROR_INVALID_PARAM);
        CHECK_EQ(acltdtDestroyChannel(bad[i]), ACL_ERROR_INVALID_PARAM); /* double destroy too */
    }
    CHECK_EQ(size, 77);

    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "bad-args", 4);
    REQUIRE(channel != NULL);
    CHECK_EQ(acltdtQueryChannelSize(channel, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtSendTensor(channel, NULL, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtReceiveTensor(channel, NULL, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtSendTensor(channel, (acltdtDataset*)channel, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(channel, out, 0), ACL_ERROR_INVALID_PARAM); /* stale dataset */
    CHECK_EQ(acltdtReceiveTensor(channel, out, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(channel_size(channel), 0); /* nothing was queued by any of it */
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    destroy_with_items(dataset);
}

/* Capacity exactly N (ferry differs: CANN's driver ring holds N - 1), full and empty codes. */
static void capacity_exactly_n(void) {
    const size_t capacities[3] = {2, 3, 64};
    float v[1] = {5};
    acltdtDataset* dataset = float_dataset(v, 1);
    for (int c = 0; c < 3; ++c) {
        acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "cap", capacities[c]);
        REQUIRE(channel != NULL);
        for (size_t i = 0; i < capacities[c]; ++i) {
            CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_SUCCESS);
            CHECK_EQ(channel_size(channel), i + 1);
        }
        CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_ERROR_RT_QUEUE_FULL);
        CHECK_EQ(acltdtSendTensor(channel, dataset, 1), ACL_ERROR_RT_QUEUE_FULL);
        CHECK_EQ(channel_size(channel), capacities[c]);
        acltdtDataset* out = acltdtCreateDataset();
        for (size_t i = 0; i < capacities[c]; ++i) {
            CHECK_EQ(acltdtReceiveTensor(channel, out, 0), ACL_SUCCESS);
        }
        CHECK_EQ(acltdtReceiveTensor(channel, out, 0), ACL_ERROR_RT_QUEUE_EMPTY);
        CHECK_EQ(acltdtReceiveTensor(channel, out, 1), ACL_ERROR_RT_QUEUE_EMPTY);
        CHECK_EQ(channel_size(channel), 0);
        CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
        CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    }
    destroy_with_items(dataset);
}

/* A timed send/receive never returns before its timeout
 * (docs/cann-contract/tdt.md#blocking-timeouts-and-wake-up). Only the lower bound is checked: an
 * upper bound would be a timing assertion on a shared machine. */
static void timeouts_never_early(void) {
    const int32_t waits[3] = {1, 20, 50};
    float v[1] = {1};
    acltdtDataset* dataset = float_dataset(v, 1);
    acltdtDataset* out = acltdtCreateDataset();
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "timeouts", 2);
    REQUIRE(channel != NULL);
    for (int i = 0; i < 3; ++i) {
        double start = check_now_ms();
        CHECK_EQ(acltdtReceiveTensor(channel, out, waits[i]), ACL_ERROR_RT_QUEUE_EMPTY);
        CHECK(check_now_ms() - start >= (double)waits[i]);
    }
    CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        double start = check_now_ms();
        CHECK_EQ(acltdtSendTensor(channel, dataset, waits[i]), ACL_ERROR_RT_QUEUE_FULL);
        CHECK(check_now_ms() - start >= (double)waits[i]);
    }
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    destroy_with_items(dataset);
}

/* Round trip of several items: kinds, dtypes, dims (incl. a scalar), payloads, markers. */
static void round_trip(void) {
    float f[4] = {1.5f, 2.5f, 3.5f, 4.5f};
    int32_t n[3] = {7, 8, 9};
    const int64_t d3[3] = {3, 1, 1};
    acltdtDataset* dataset = float_dataset(f, 4);
    acltdtDataItem* ints =
        acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, d3, 3, ACL_INT32, n, sizeof n);
    acltdtDataItem* scalar = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 0, ACL_INT32, n, 4);
    acltdtDataItem* eos =
        acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, NULL, 0, ACL_DT_UNDEFINED, NULL, 0);
    CHECK_EQ(acltdtAddDataItem(dataset, ints), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(dataset, scalar), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(dataset, eos), ACL_SUCCESS);
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "round-trip", 2);
    acltdtDataset* out = acltdtCreateDataset();
    REQUIRE(channel != NULL && out != NULL);
    CHECK_EQ(acltdtSendTensor(channel, dataset, -1), ACL_SUCCESS);
    f[0] = 100.0f; /* the send copied: a later change of the source is not seen */
    CHECK_EQ(acltdtReceiveTensor(channel, out, -1), ACL_SUCCESS);
    REQUIRE(acltdtGetDatasetSize(out) == 4);
    acltdtDataItem* r0 = acltdtGetDataItem(out, 0);
    acltdtDataItem* r1 = acltdtGetDataItem(out, 1);
    acltdtDataItem* r2 = acltdtGetDataItem(out, 2);
    acltdtDataItem* r3 = acltdtGetDataItem(out, 3);
    CHECK(acltdtGetDataItem(out, 4) == NULL);
    CHECK_EQ(acltdtGetDataTypeFromItem(r0), ACL_FLOAT);
    CHECK_EQ(acltdtGetDataSizeFromItem(r0), 16);
    CHECK(((float*)acltdtGetDataAddrFromItem(r0))[0] == 1.5f);
    CHECK(((float*)acltdtGetDataAddrFromItem(r0))[3] == 4.5f);
    int64_t dims[3] = {0, 0, 0};
    CHECK_EQ(acltdtGetDimsFromItem(r1, dims, 3), ACL_SUCCESS);
    CHECK(dims[0] == 3 && dims[1] == 1 && dims[2] == 1);
    CHECK(memcmp(acltdtGetDataAddrFromItem(r1), n, sizeof n) == 0);
    CHECK_EQ(acltdtGetDimNumFromItem(r2), 0);
    CHECK_EQ(acltdtGetDataSizeFromItem(r2), 4);
    CHECK_EQ(acltdtGetTensorTypeFromItem(r3), ACL_TENSOR_DATA_END_OF_SEQUENCE);
    CHECK_EQ(acltdtGetDataTypeFromItem(r3), ACL_DT_UNDEFINED);
    CHECK(strcmp(acltdtGetDatasetName(out), "") == 0);

    /* Received items belong to the dataset: not destroyable, nothing can be added (CANN's
     * FEATURE_UNSUPPORTED, TestTdtAddDataItem). */
    CHECK_EQ(acltdtDestroyDataItem(r0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtAddDataItem(out, ints), ACL_ERROR_FEATURE_UNSUPPORTED);
    CHECK_EQ(acltdtGetDatasetSize(out), 4);

    /* A second receive replaces the items; a handle past the new count is stale. */
    float g[2] = {9, 10};
    acltdtDataset* small = float_dataset(g, 2);
    CHECK_EQ(acltdtSendTensor(channel, small, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(channel, out, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtGetDatasetSize(out), 1);
    CHECK(((float*)acltdtGetDataAddrFromItem(acltdtGetDataItem(out, 0)))[1] == 10.0f);
    CHECK_EQ(acltdtGetTensorTypeFromItem(r3), ACL_TENSOR_DATA_UNDEFINED);
    CHECK(acltdtGetDataAddrFromItem(r3) == NULL);
    CHECK_EQ(acltdtAddDataItem(small, r3), ACL_ERROR_INVALID_PARAM);

    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS); /* frees the received items */
    CHECK_EQ(acltdtGetDataSizeFromItem(r0), 0);       /* stale now */
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    destroy_with_items(small);
    destroy_with_items(dataset);
}

/* `item` is a float tensor {1, count} holding `values` (dims, type, size and bytes agree). */
static void check_describes(const acltdtDataItem* item, const float* values, size_t count) {
    int64_t dims[2] = {0, 0};
    CHECK_EQ(acltdtGetTensorTypeFromItem(item), ACL_TENSOR_DATA_TENSOR);
    CHECK_EQ(acltdtGetDataTypeFromItem(item), ACL_FLOAT);
    CHECK_EQ(acltdtGetDimsFromItem(item, dims, 2), ACL_SUCCESS);
    CHECK(dims[0] == 1 && dims[1] == (int64_t)count);
    CHECK_EQ(acltdtGetDataSizeFromItem(item), count * sizeof(float));
    const void* data = acltdtGetDataAddrFromItem(item);
    CHECK(data != NULL && data != values && memcmp(data, values, count * sizeof(float)) == 0);
}

/* A received item added to another dataset (forwarding) keeps its bytes after the dataset it
 * came from receives again and is destroyed (ferry: the payload is copied at add; in CANN the
 * pointer dangles). Found by fuzz/acl. */
static void forwarded_item_outlives_its_dataset(void) {
    float f[3] = {1.0f, 2.0f, 3.0f};
    float g[5] = {7, 7, 7, 7, 7};
    acltdtDataset* first = float_dataset(f, 3);
    acltdtDataset* second = float_dataset(g, 5);
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "forward", 4);
    acltdtDataset* in = acltdtCreateDataset();
    acltdtDataset* forward = acltdtCreateDataset();
    REQUIRE(channel != NULL && in != NULL && forward != NULL);
    CHECK_EQ(acltdtSendTensor(channel, first, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(channel, in, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(forward, acltdtGetDataItem(in, 0)), ACL_SUCCESS);
    check_describes(acltdtGetDataItem(forward, 0), f, 3);
    CHECK_EQ(acltdtSendTensor(channel, second, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(channel, in, 0), ACL_SUCCESS); /* reuses in's buffer */
    check_describes(acltdtGetDataItem(forward, 0), f, 3);       /* not what `in` holds now */
    CHECK_EQ(acltdtDestroyDataset(in), ACL_SUCCESS);
    check_describes(acltdtGetDataItem(forward, 0), f, 3); /* nor freed with `in` */
    /* The forwarding dataset owns that item: not the user's to destroy (docs/c-api.md). */
    CHECK_EQ(acltdtDestroyDataItem(acltdtGetDataItem(forward, 0)), ACL_ERROR_INVALID_PARAM);
    /* A larger message takes the first buffer back from the channel's pool and outgrows it. */
    CHECK_EQ(acltdtSendTensor(channel, second, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(channel, forward, 0), ACL_SUCCESS);
    acltdtDataset* out = acltdtCreateDataset();
    REQUIRE(out != NULL);
    CHECK_EQ(acltdtReceiveTensor(channel, out, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtGetDataSizeFromItem(acltdtGetDataItem(out, 0)), sizeof g);
    CHECK_EQ(acltdtReceiveTensor(channel, out, 0), ACL_SUCCESS);
    REQUIRE(acltdtGetDatasetSize(out) == 1);
    acltdtDataItem* item = acltdtGetDataItem(out, 0);
    CHECK_EQ(acltdtGetDataSizeFromItem(item), sizeof f);
    CHECK(memcmp(acltdtGetDataAddrFromItem(item), f, sizeof f) == 0);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(forward), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    destroy_with_items(second);
    destroy_with_items(first);
}

/* Send rejects what cannot be sent before anything is queued (acltdtSendTensorV2,
 * docs/cann-contract/tdt.md#send). */
static void send_rejects(void) {
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "send-rejects", 4);
    acltdtDataset* empty = acltdtCreateDataset();
    acltdtDataset* slices = acltdtCreateDataset();
    acltdtDataItem* undefined =
        acltdtCreateDataItem(ACL_TENSOR_DATA_UNDEFINED, NULL, 0, ACL_FLOAT, NULL, 0);
    acltdtDataItem* slice =
        acltdtCreateDataItem(ACL_TENSOR_DATA_SLICE_TENSOR, NULL, 0, ACL_FLOAT, NULL, 0);
    acltdtDataItem* no_data =
        acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 0, ACL_FLOAT, NULL, 8);
    REQUIRE(channel != NULL && empty != NULL && slices != NULL);
    CHECK_EQ(acltdtSendTensor(channel, empty, 0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_EQ(acltdtAddDataItem(slices, slice), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(channel, slices, 0), ACL_ERROR_INVALID_PARAM);
    acltdtDataset* undef = acltdtCreateDataset();
    CHECK_EQ(acltdtAddDataItem(undef, undefined), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(channel, undef, 0), ACL_ERROR_INVALID_PARAM);
    acltdtDataset* sized = acltdtCreateDataset();
    CHECK_EQ(acltdtAddDataItem(sized, no_data), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(channel, sized, 0), ACL_ERROR_INVALID_PARAM); /* size, no data */
    CHECK_EQ(channel_size(channel), 0);
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(empty), ACL_SUCCESS);
    destroy_with_items(slices);
    destroy_with_items(undef);
    destroy_with_items(sized);
}

/* Receive validates the destination before it dequeues (ferry differs: CANN loses the message,
 * docs/cann-contract/tdt.md#receive). TensorDatasetDeserializesV2: a dataset with user items →
 * INVALID_PARAM. */
static void receive_validates_first(void) {
    float v[2] = {3, 4};
    acltdtDataset* dataset = float_dataset(v, 2);
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "validate", 2);
    REQUIRE(channel != NULL);
    CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(channel, dataset, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(channel_size(channel), 1); /* the message is still there */
    CHECK_EQ(acltdtGetDatasetSize(dataset), 1);
    acltdtDataset* out = acltdtCreateDataset();
    CHECK_EQ(acltdtReceiveTensor(channel, out, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    destroy_with_items(dataset);
}

/* Clean drops everything (acltdtCleanChannel_succ_without_tdt); Stop: sends are QUEUE_FULL,
 * receives drain then answer QUEUE_EMPTY (docs/cann-contract/tdt.md#stop). */
static void clean_and_stop(void) {
    float v[1] = {1};
    acltdtDataset* dataset = float_dataset(v, 1);
    acltdtDataset* out = acltdtCreateDataset();
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "clean-stop", 4);
    REQUIRE(channel != NULL);
    CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtCleanChannel(channel), ACL_SUCCESS);
    CHECK_EQ(channel_size(channel), 0);
    CHECK_EQ(acltdtCleanChannel(channel), ACL_SUCCESS); /* cleaning an empty channel is fine */
    CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtStopChannel(channel), ACL_SUCCESS);
    CHECK_EQ(acltdtStopChannel(channel), ACL_SUCCESS); /* idempotent */
    CHECK_EQ(acltdtSendTensor(channel, dataset, -1), ACL_ERROR_RT_QUEUE_FULL);
    CHECK_EQ(acltdtReceiveTensor(channel, out, -1), ACL_SUCCESS); /* drains */
    CHECK_EQ(acltdtReceiveTensor(channel, out, -1), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(channel, out, -1), ACL_ERROR_RT_QUEUE_EMPTY); /* never blocks */
    CHECK_EQ(channel_size(channel), 0);
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    destroy_with_items(dataset);
}

/* The legacy "TDT process" channel: a named rendezvous; TF_RECEIVE_<name> receives what <name>
 * sends; timeout must be -1; clean and query are FEATURE_UNSUPPORTED (size untouched). */
static void legacy_rendezvous(void) {
    float v[4] = {1, 2, 3, 4};
    acltdtDataset* dataset = float_dataset(v, 4);
    acltdtDataset* out = acltdtCreateDataset();
    acltdtChannelHandle* sender = acltdtCreateChannel(0, "legacy");
    acltdtChannelHandle* receiver = acltdtCreateChannel(0, "TF_RECEIVE_legacy");
    acltdtChannelHandle* other = acltdtCreateChannel(0, "TF_RECEIVE_other");
    REQUIRE(sender != NULL && receiver != NULL && other != NULL);
    /* TestAclTdtSendTensor01 / TestAclTdtReceiveTensor01: only -1 is a valid timeout. */
    CHECK_EQ(acltdtSendTensor(sender, dataset, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtSendTensor(sender, dataset, 1000), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtReceiveTensor(receiver, out, 0), ACL_ERROR_INVALID_PARAM);
    /* TestAcltdtReceiveTensor01: receive needs a TF_RECEIVE_ handle. */
    CHECK_EQ(acltdtReceiveTensor(sender, out, -1), ACL_ERROR_INVALID_PARAM);
    /* acltdtQueryChannelSize / acltdtCleanChannel_succ_with_tdt / _succ_receive. */
    size_t size = 999;
    CHECK_EQ(acltdtQueryChannelSize(sender, &size), ACL_ERROR_FEATURE_UNSUPPORTED);
    CHECK_EQ(acltdtQueryChannelSize(receiver, &size), ACL_ERROR_FEATURE_UNSUPPORTED);
    CHECK_EQ(size, 999);
    CHECK_EQ(acltdtCleanChannel(sender), ACL_ERROR_FEATURE_UNSUPPORTED);
    CHECK_EQ(acltdtCleanChannel(receiver), ACL_ERROR_FEATURE_UNSUPPORTED);

    CHECK_EQ(acltdtSendTensor(sender, dataset, -1), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(receiver, out, -1), ACL_SUCCESS);
    REQUIRE(acltdtGetDatasetSize(out) == 1);
    CHECK(((float*)acltdtGetDataAddrFromItem(acltdtGetDataItem(out, 0)))[2] == 3.0f);

    /* A second handle on the same name shares the queue. */
    acltdtChannelHandle* sender2 = acltdtCreateChannel(0, "legacy");
    REQUIRE(sender2 != NULL);
    CHECK(sender2 != sender);
    CHECK_EQ(acltdtSendTensor(sender2, dataset, -1), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(sender2), ACL_SUCCESS); /* the others keep the channel */
    CHECK_EQ(acltdtReceiveTensor(receiver, out, -1), ACL_SUCCESS);

    /* Stop wakes and ends it for every handle: the receiver gets QUEUE_EMPTY, never blocks. */
    CHECK_EQ(acltdtStopChannel(receiver), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(receiver, out, -1), ACL_ERROR_RT_QUEUE_EMPTY);
    CHECK_EQ(acltdtSendTensor(sender, dataset, -1), ACL_ERROR_RT_QUEUE_FULL);
    CHECK_EQ(acltdtDestroyChannel(sender), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(receiver), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(other), ACL_SUCCESS);

    /* Once every handle is gone the name starts afresh. */
    acltdtChannelHandle* fresh = acltdtCreateChannel(0, "legacy");
    acltdtChannelHandle* fresh_rx = acltdtCreateChannel(0, "TF_RECEIVE_legacy");
    REQUIRE(fresh != NULL && fresh_rx != NULL);
    CHECK_EQ(acltdtSendTensor(fresh, dataset, -1), ACL_SUCCESS);
    CHECK_EQ(acltdtReceiveTensor(fresh_rx, out, -1), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(fresh), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(fresh_rx), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    destroy_with_items(dataset);
}

/* Queue channels with the same name are distinct queues (each create is a new queue). */
static void queue_names_are_labels(void) {
    float v[1] = {1};
    acltdtDataset* dataset = float_dataset(v, 1);
    acltdtChannelHandle* a = acltdtCreateChannelWithCapacity(0, "TF_RECEIVE_same", 2);
    acltdtChannelHandle* b = acltdtCreateChannelWithCapacity(0, "TF_RECEIVE_same", 2);
    REQUIRE(a != NULL && b != NULL);
    CHECK_EQ(acltdtSendTensor(a, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(channel_size(a), 1);
    CHECK_EQ(channel_size(b), 0);
    acltdtDataset* out = acltdtCreateDataset();
    CHECK_EQ(acltdtReceiveTensor(a, out, 0), ACL_SUCCESS); /* the prefix means nothing here */
    CHECK_EQ(acltdtDestroyChannel(a), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(b), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    destroy_with_items(dataset);
}

/* A 64 MiB payload survives the trip byte for byte. */
static void large_payload(void) {
    const size_t bytes = (size_t)64 << 20;
    uint8_t* payload = malloc(bytes);
    REQUIRE(payload != NULL);
    for (size_t i = 0; i < bytes; ++i) {
        payload[i] = (uint8_t)(i * 2654435761u >> 13);
    }
    const int64_t dims[1] = {(int64_t)bytes};
    acltdtDataItem* item =
        acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_UINT8, payload, bytes);
    acltdtDataset* dataset = acltdtCreateDataset();
    acltdtDataset* out = acltdtCreateDataset();
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "big", 2);
    REQUIRE(item != NULL && dataset != NULL && out != NULL && channel != NULL);
    CHECK_EQ(acltdtAddDataItem(dataset, item), ACL_SUCCESS);
    for (int round = 0; round < 2; ++round) { /* the second one reuses the pooled buffers */
        CHECK_EQ(acltdtSendTensor(channel, dataset, -1), ACL_SUCCESS);
        CHECK_EQ(acltdtReceiveTensor(channel, out, -1), ACL_SUCCESS);
        acltdtDataItem* got = acltdtGetDataItem(out, 0);
        CHECK_EQ(acltdtGetDataSizeFromItem(got), bytes);
        const uint8_t* data = acltdtGetDataAddrFromItem(got);
        CHECK(data != NULL && data != payload && memcmp(data, payload, bytes) == 0);
    }
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    destroy_with_items(dataset);
    free(payload);
}

int main(void) {
    RUN(create_rejects);
    RUN(bad_handles);
    RUN(capacity_exactly_n);
    RUN(timeouts_never_early);
    RUN(round_trip);
    RUN(forwarded_item_outlives_its_dataset);
    RUN(send_rejects);
    RUN(receive_validates_first);
    RUN(clean_and_stop);
    RUN(legacy_rendezvous);
    RUN(queue_names_are_labels);
    RUN(large_payload);
    return check_summary();
}
