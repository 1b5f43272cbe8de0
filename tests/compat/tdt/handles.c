/*
 * acltdt* handle identity from C (docs/c-api.md, Handles): a destroyed handle stays rejected even
 * when the next create would get the destroyed object's address from the allocator. Each test
 * destroys a handle, then creates many new ones of the same kind (with a plain allocator the
 * first or one of the next few lands on the freed address; the old shim then handed out the same
 * pointer value), and checks that no new handle equals the stale one, that every use of the stale
 * one is ACL_ERROR_INVALID_PARAM, and that the live object was not touched by those uses.
 */
#include "acl/acl_tdt.h"
#include "check.h"

#include <stdint.h>
#include <string.h>

enum { rounds = 2000 };

static float values[4] = {1.0f, 2.0f, 3.0f, 4.0f};
static const int64_t dims_1x4[2] = {1, 4};

static acltdtDataItem* float_item(void) {
    return acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims_1x4, 2, ACL_FLOAT, values,
                                sizeof values);
}

/* Every accessor and the destroy on a stale item: rejected, nothing written. */
static void check_item_rejected(acltdtDataItem* stale) {
    int64_t dims[2] = {9, 9};
    size_t num = 7, id = 7;
    CHECK_EQ(acltdtGetTensorTypeFromItem(stale), ACL_TENSOR_DATA_UNDEFINED);
    CHECK_EQ(acltdtGetDataTypeFromItem(stale), ACL_DT_UNDEFINED);
    CHECK(acltdtGetDataAddrFromItem(stale) == NULL);
    CHECK_EQ(acltdtGetDataSizeFromItem(stale), 0);
    CHECK_EQ(acltdtGetDimNumFromItem(stale), 0);
    CHECK_EQ(acltdtGetDimsFromItem(stale, dims, 2), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetSliceInfoFromItem(stale, &num, &id), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(dims[0] + num + id, 9 + 7 + 7);
    CHECK_EQ(acltdtDestroyDataItem(stale), ACL_ERROR_INVALID_PARAM);
}

/* create/destroy in a loop, then the stale item: rejected; the live item: intact. */
static void stale_item_rejected(void) {
    acltdtDataItem* stale = float_item();
    REQUIRE(stale != NULL);
    CHECK_EQ(acltdtDestroyDataItem(stale), ACL_SUCCESS);
    acltdtDataItem* live = NULL;
    int reused = 0;
    for (int i = 0; i < rounds; ++i) {
        live = float_item();
        REQUIRE(live != NULL);
        reused += live == stale;
        if (i + 1 < rounds) {
            CHECK_EQ(acltdtDestroyDataItem(live), ACL_SUCCESS);
        }
    }
    CHECK_EQ(reused, 0);
    check_item_rejected(stale);
    CHECK_EQ(acltdtGetDataSizeFromItem(live), sizeof values); /* the live one still works */
    CHECK(acltdtGetDataAddrFromItem(live) == (void*)values);
    CHECK_EQ(acltdtDestroyDataItem(live), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(live), ACL_ERROR_INVALID_PARAM);
}

static void stale_dataset_rejected(void) {
    acltdtDataItem* item = float_item();
    acltdtDataset* stale = acltdtCreateDataset();
    REQUIRE(item != NULL && stale != NULL);
    CHECK_EQ(acltdtDestroyDataset(stale), ACL_SUCCESS);
    acltdtDataset* live = NULL;
    int reused = 0;
    for (int i = 0; i < rounds; ++i) {
        live = acltdtCreateDataset();
        REQUIRE(live != NULL);
        reused += live == stale;
        if (i + 1 < rounds) {
            CHECK_EQ(acltdtDestroyDataset(live), ACL_SUCCESS);
        }
    }
    CHECK_EQ(reused, 0);
    CHECK_EQ(acltdtAddDataItem(live, item), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(stale, item), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetDatasetSize(stale), 0);
    CHECK(acltdtGetDataItem(stale, 0) == NULL);
    CHECK(acltdtGetDatasetName(stale) == NULL);
    CHECK_EQ(acltdtDestroyDataset(stale), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetDatasetSize(live), 1); /* neither the add nor the destroy reached it */
    CHECK(acltdtGetDataItem(live, 0) == item);
    CHECK_EQ(acltdtDestroyDataset(live), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);
}

/* A handle of one kind is never a live handle of another kind. */
static void kinds_do_not_mix(void) {
    acltdtDataItem* item = float_item();
    acltdtDataset* dataset = acltdtCreateDataset();
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "kinds", 2);
    REQUIRE(item != NULL && dataset != NULL && channel != NULL);
    CHECK(acltdtGetDatasetName((const acltdtDataset*)item) == NULL);
    CHECK_EQ(acltdtGetDataSizeFromItem((const acltdtDataItem*)dataset), 0);
    CHECK_EQ(acltdtDestroyDataset((acltdtDataset*)channel), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyChannel((acltdtChannelHandle*)item), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyDataItem((acltdtDataItem*)channel), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(dataset), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);
}

/* A one-item dataset over `item`, sent on `channel` (for a receive to get something). */
static void send_item(acltdtChannelHandle* channel, acltdtDataItem* item) {
    acltdtDataset* dataset = acltdtCreateDataset();
    REQUIRE(dataset != NULL);
    CHECK_EQ(acltdtAddDataItem(dataset, item), ACL_SUCCESS);
    CHECK_EQ(acltdtSendTensor(channel, dataset, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(dataset), ACL_SUCCESS);
}

static void stale_channel_rejected(void) {
    acltdtDataItem* item = float_item();
    acltdtDataset* out = acltdtCreateDataset();
    acltdtChannelHandle* stale = acltdtCreateChannelWithCapacity(0, "stale-channel", 2);
    REQUIRE(item != NULL && out != NULL && stale != NULL);
    CHECK_EQ(acltdtDestroyChannel(stale), ACL_SUCCESS);
    acltdtChannelHandle* live = NULL;
    int reused = 0;
    for (int i = 0; i < rounds; ++i) {
        live = acltdtCreateChannelWithCapacity(0, "stale-channel", 2);
        REQUIRE(live != NULL);
        reused += live == stale;
        if (i + 1 < rounds) {
            CHECK_EQ(acltdtDestroyChannel(live), ACL_SUCCESS);
        }
    }
    CHECK_EQ(reused, 0);
    send_item(live, item);
    size_t size = 77;
    CHECK_EQ(acltdtQueryChannelSize(stale, &size), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtCleanChannel(stale), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtStopChannel(stale), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtReceiveTensor(stale, out, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyChannel(stale), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(size, 77);
    /* The live channel was neither cleaned, stopped, drained nor destroyed. */
    CHECK_EQ(acltdtQueryChannelSize(live, &size), ACL_SUCCESS);
    CHECK_EQ(size, 1);
    send_item(live, item);
    CHECK_EQ(acltdtReceiveTensor(live, out, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtGetDataSizeFromItem(acltdtGetDataItem(out, 0)), sizeof values);
    CHECK_EQ(acltdtDestroyChannel(live), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyChannel(live), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyDataset(out), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);
}

/* The items of a received dataset are handles too: a receive replaces them (the old ones are
 * stale, as CANN frees them), and destroying the dataset makes them stale, whatever is created
 * afterwards. A dataset's item is never the user's to destroy. */
static void received_items_go_stale(void) {
    acltdtDataItem* item = float_item();
    acltdtDataset* in = acltdtCreateDataset();
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "views", 4);
    REQUIRE(item != NULL && in != NULL && channel != NULL);
    send_item(channel, item);
    send_item(channel, item);
    CHECK_EQ(acltdtReceiveTensor(channel, in, 0), ACL_SUCCESS);
    acltdtDataItem* first = acltdtGetDataItem(in, 0);
    CHECK_EQ(acltdtGetDataSizeFromItem(first), sizeof values);
    CHECK_EQ(acltdtDestroyDataItem(first), ACL_ERROR_INVALID_PARAM); /* the dataset's */
    CHECK_EQ(acltdtReceiveTensor(channel, in, 0), ACL_SUCCESS);
    acltdtDataItem* second = acltdtGetDataItem(in, 0);
    CHECK(second != NULL && second != first);
    check_item_rejected(first);
    CHECK_EQ(acltdtGetDataSizeFromItem(second), sizeof values);
    CHECK_EQ(acltdtDestroyDataset(in), ACL_SUCCESS);
    int reused = 0;
    for (int i = 0; i < rounds; ++i) {
        acltdtDataItem* made = float_item();
        REQUIRE(made != NULL);
        reused += made == first || made == second;
        CHECK_EQ(acltdtDestroyDataItem(made), ACL_SUCCESS);
    }
    CHECK_EQ(reused, 0);
    check_item_rejected(second);
    CHECK_EQ(acltdtDestroyChannel(channel), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);
}

int main(void) {
    RUN(stale_item_rejected);
    RUN(stale_dataset_rejected);
    RUN(kinds_do_not_mix);
    RUN(stale_channel_rejected);
    RUN(received_items_go_stale);
    return check_summary();
}
