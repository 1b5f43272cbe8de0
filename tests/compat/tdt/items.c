/*
 * acltdt* items and datasets from C: every function's bad inputs, and the upstream unit tests of
 * docs/cann-contract/tdt.md#upstream-unit-tests that concern items and datasets, ported in spirit
 * (ferry has no driver, so no mocks are needed; ferry's decisions are marked "ferry:").
 */
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "check.h"

static float values[4] = {1.0f, 2.0f, 3.0f, 4.0f};
static const int64_t dims_1x4[2] = {1, 4};

static acltdtDataItem* float_item(void) {
    return acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims_1x4, 2, ACL_FLOAT, values,
                                sizeof values);
}

/* TestGetTensorTypeFromItem, TestGetTensorInfo: accessors on a good item and on NULL. */
static void accessors(void) {
    acltdtDataItem* item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims_1x4, 2, ACL_INT64,
                                                values, sizeof values);
    REQUIRE(item != NULL);
    CHECK_EQ(acltdtGetTensorTypeFromItem(item), ACL_TENSOR_DATA_TENSOR);
    CHECK_EQ(acltdtGetDataTypeFromItem(item), ACL_INT64);
    CHECK(acltdtGetDataAddrFromItem(item) == (void*)values); /* borrowed, not copied */
    CHECK_EQ(acltdtGetDataSizeFromItem(item), sizeof values);
    CHECK_EQ(acltdtGetDimNumFromItem(item), 2);

    CHECK_EQ(acltdtGetTensorTypeFromItem(NULL), ACL_TENSOR_DATA_UNDEFINED);
    CHECK_EQ(acltdtGetDataTypeFromItem(NULL), ACL_DT_UNDEFINED);
    CHECK(acltdtGetDataAddrFromItem(NULL) == NULL);
    CHECK_EQ(acltdtGetDataSizeFromItem(NULL), 0);
    CHECK_EQ(acltdtGetDimNumFromItem(NULL), 0);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);
}

/* acltdtGetDimsFromItem: CANN's checks in order (docs/cann-contract/tdt.md#item-accessors). */
static void get_dims(void) {
    int64_t four[4] = {9, 9, 9, 9};
    int64_t five[5] = {9, 9, 9, 9, 9};
    const int64_t d4[4] = {2, 3, 4, 5};
    acltdtDataItem* item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, d4, 4, ACL_FLOAT, NULL, 0);
    REQUIRE(item != NULL);
    CHECK_EQ(acltdtGetDimsFromItem(NULL, four, 4), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetDimsFromItem(item, NULL, 10), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetDimsFromItem(item, four, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetDimsFromItem(item, four, 1), ACL_ERROR_INVALID_PARAM); /* 1 < 4 */
    CHECK_EQ(four[0], 9);                                                    /* untouched */
    CHECK_EQ(acltdtGetDimsFromItem(item, four, 4), ACL_SUCCESS);
    CHECK(memcmp(four, d4, sizeof d4) == 0);
    CHECK_EQ(acltdtGetDimsFromItem(item, five, 5), ACL_SUCCESS); /* larger is fine */
    CHECK_EQ(five[3], 5);
    CHECK_EQ(five[4], 9); /* only the item's dims are written */
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);

    acltdtDataItem* scalar = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 0, ACL_FLOAT,
                                                  values, 4);
    REQUIRE(scalar != NULL);
    CHECK_EQ(acltdtGetDimsFromItem(scalar, NULL, 0), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(scalar), ACL_SUCCESS);
}

/* acltdtGetSliceInfoFromItem: 0/0 on a new item; every null argument rejected. */
static void slice_info(void) {
    size_t num = 7, id = 7;
    acltdtDataItem* item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 0, ACL_FLOAT, NULL, 0);
    REQUIRE(item != NULL);
    CHECK_EQ(acltdtGetSliceInfoFromItem(item, &num, &id), ACL_SUCCESS);
    CHECK_EQ(num, 0);
    CHECK_EQ(id, 0);
    num = id = 7;
    CHECK_EQ(acltdtGetSliceInfoFromItem(NULL, &num, &id), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetSliceInfoFromItem(item, NULL, &id), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetSliceInfoFromItem(item, &num, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(num, 7);
    CHECK_EQ(id, 7);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);
}

/* acltdtCreateDataItem: CANN's creation rules, in CANN's order
 * (docs/cann-contract/tdt.md#item-creation). */
static void create_item_rules(void) {
    int64_t many[129];
    for (int i = 0; i < 129; ++i) {
        many[i] = 1;
    }
    CHECK(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 2, ACL_FLOAT, values, 16) == NULL);
    CHECK(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims_1x4, 0, ACL_FLOAT, values, 16) == NULL);
    CHECK(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, many, 129, ACL_FLOAT, values, 4) == NULL);
    CHECK(acltdtCreateDataItem(ACL_TENSOR_DATA_UNDEFINED, dims_1x4, 2, ACL_FLOAT, values, 16) ==
          NULL);
    CHECK(acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, dims_1x4, 2, ACL_FLOAT, NULL, 0) ==
          NULL);

    acltdtDataItem* max_dims = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, many, 128, ACL_FLOAT,
                                                    values, 4);
    CHECK(max_dims != NULL); /* 128 passes */
    CHECK_EQ(acltdtGetDimNumFromItem(max_dims), 128);
    CHECK_EQ(acltdtDestroyDataItem(max_dims), ACL_SUCCESS);

    /* A marker keeps nothing: no dims, no dtype, no data, size 0, whatever was passed. */
    acltdtDataItem* eos = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, NULL, 0, ACL_INT32,
                                               values, sizeof values);
    REQUIRE(eos != NULL);
    CHECK_EQ(acltdtGetTensorTypeFromItem(eos), ACL_TENSOR_DATA_END_OF_SEQUENCE);
    CHECK_EQ(acltdtGetDataTypeFromItem(eos), ACL_DT_UNDEFINED);
    CHECK(acltdtGetDataAddrFromItem(eos) == NULL);
    CHECK_EQ(acltdtGetDataSizeFromItem(eos), 0);
    CHECK_EQ(acltdtDestroyDataItem(eos), ACL_SUCCESS);

    /* No range check of the kind at creation; data NULL with a size is accepted (as CANN). */
    acltdtDataItem* odd = acltdtCreateDataItem((acltdtTensorType)42, NULL, 0, ACL_FLOAT, NULL, 0);
    CHECK(odd != NULL);
    CHECK_EQ(acltdtDestroyDataItem(odd), ACL_SUCCESS);
    acltdtDataItem* sized = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 0, ACL_FLOAT, NULL, 8);
    CHECK(sized != NULL);
    CHECK_EQ(acltdtDestroyDataItem(sized), ACL_SUCCESS);
}

/* Destroy: NULL, double destroy and a pointer that never was an item are INVALID_PARAM. */
static void destroy_item(void) {
    acltdtDataItem* item = float_item();
    REQUIRE(item != NULL);
    CHECK_EQ(acltdtDestroyDataItem(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_ERROR_INVALID_PARAM); /* ferry: no double free */
    CHECK_EQ(acltdtGetTensorTypeFromItem(item), ACL_TENSOR_DATA_UNDEFINED); /* stale: no read */
    CHECK_EQ(acltdtGetDataSizeFromItem(item), 0);

    acltdtDataset* dataset = acltdtCreateDataset();
    REQUIRE(dataset != NULL);
    /* A dataset is not an item, and an item is not a dataset: wrong kind → INVALID_PARAM. */
    CHECK_EQ(acltdtDestroyDataItem((acltdtDataItem*)dataset), ACL_ERROR_INVALID_PARAM);
    acltdtDataItem* other = float_item();
    CHECK_EQ(acltdtDestroyDataset((acltdtDataset*)other), ACL_ERROR_INVALID_PARAM);
    int not_a_handle = 0;
    CHECK_EQ(acltdtDestroyDataItem((acltdtDataItem*)&not_a_handle), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyDataset(dataset), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(dataset), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyDataset(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtDestroyDataItem(other), ACL_SUCCESS);
}

/* Dataset functions: TestGetTensorInfo, acltdtGetDataItem_IndexOutOfRange, acltdtGetDatasetName,
 * acltdtAddDataItem{HostHost,...}Ptr (no duplicate check), TestTdtAddDataItem (ok case). */
static void datasets(void) {
    acltdtDataset* dataset = acltdtCreateDataset();
    REQUIRE(dataset != NULL);
    acltdtDataItem* item = float_item();
    REQUIRE(item != NULL);
    CHECK_EQ(acltdtGetDatasetSize(dataset), 0);
    CHECK_EQ(acltdtGetDatasetSize(NULL), 0);
    CHECK(acltdtGetDataItem(NULL, 0) == NULL);
    CHECK(acltdtGetDataItem(dataset, 0) == NULL);
    CHECK(acltdtGetDataItem(dataset, 100) == NULL);
    CHECK(acltdtGetDatasetName(NULL) == NULL);
    REQUIRE(acltdtGetDatasetName(dataset) != NULL);
    CHECK(strcmp(acltdtGetDatasetName(dataset), "") == 0);

    CHECK_EQ(acltdtAddDataItem(dataset, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtAddDataItem(NULL, item), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtAddDataItem((acltdtDataset*)item, item), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetDatasetSize(dataset), 0); /* bad input changes nothing */

    CHECK_EQ(acltdtAddDataItem(dataset, item), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(dataset, item), ACL_SUCCESS); /* the same item twice: allowed */
    CHECK_EQ(acltdtGetDatasetSize(dataset), 2);
    CHECK(acltdtGetDataItem(dataset, 0) == item); /* the very pointer that was added */
    CHECK(acltdtGetDataItem(dataset, 1) == item);
    CHECK(acltdtGetDataItem(dataset, 2) == NULL);
    CHECK(acltdtGetDataItem(dataset, 999) == NULL);

    /* Destroying the dataset does not free items the user added (CANN's freeSelf rule). */
    CHECK_EQ(acltdtDestroyDataset(dataset), ACL_SUCCESS);
    CHECK_EQ(acltdtGetDataSizeFromItem(item), sizeof values);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);

    /* A destroyed item handed to AddDataItem is rejected. */
    acltdtDataset* again = acltdtCreateDataset();
    CHECK_EQ(acltdtAddDataItem(again, item), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetDatasetSize(again), 0);
    CHECK_EQ(acltdtDestroyDataset(again), ACL_SUCCESS);
    /* Stale dataset pointers read as "not a dataset". */
    CHECK_EQ(acltdtGetDatasetSize(again), 0);
    CHECK(acltdtGetDatasetName(again) == NULL);
    CHECK(acltdtGetDataItem(again, 0) == NULL);
}

/* Items without data are always accepted and fix no memory kind (acltdtAddDataItemNull*Ptr). */
static void markers_in_datasets(void) {
    acltdtDataset* dataset = acltdtCreateDataset();
    acltdtDataItem* eos = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, NULL, 0,
                                               ACL_DT_UNDEFINED, NULL, 0);
    acltdtDataItem* item = float_item();
    REQUIRE(dataset != NULL && eos != NULL && item != NULL);
    CHECK_EQ(acltdtAddDataItem(dataset, eos), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(dataset, item), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(dataset, eos), ACL_SUCCESS);
    CHECK_EQ(acltdtGetDatasetSize(dataset), 3);
    CHECK_EQ(acltdtDestroyDataset(dataset), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(eos), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(item), ACL_SUCCESS);
}

/* acltdtAddDataItem{HostHost,DeviceDevice,DeviceHost,HostDevice,...}Ptr: the first item with data
 * fixes the dataset's memory kind (aclrtMalloc memory is device memory); a payload of the other
 * kind is INVALID_PARAM and changes nothing. */
static void memory_kinds(void) {
    void* device = NULL;
    REQUIRE(aclrtSetDevice(0) == ACL_SUCCESS);
    REQUIRE(aclrtMalloc(&device, 64, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    acltdtDataItem* on_device = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 0, ACL_FLOAT,
                                                     device, 4);
    acltdtDataItem* on_host = float_item();
    acltdtDataItem* empty = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 0, ACL_FLOAT, NULL, 0);
    REQUIRE(on_device != NULL && on_host != NULL && empty != NULL);

    acltdtDataset* host_first = acltdtCreateDataset();
    CHECK_EQ(acltdtAddDataItem(host_first, empty), ACL_SUCCESS); /* fixes nothing */
    CHECK_EQ(acltdtAddDataItem(host_first, on_host), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(host_first, on_host), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(host_first, on_device), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetDatasetSize(host_first), 3);

    acltdtDataset* device_first = acltdtCreateDataset();
    CHECK_EQ(acltdtAddDataItem(device_first, on_device), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(device_first, on_device), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(device_first, empty), ACL_SUCCESS);
    CHECK_EQ(acltdtAddDataItem(device_first, on_host), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(acltdtGetDatasetSize(device_first), 3);

    CHECK_EQ(acltdtDestroyDataset(host_first), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataset(device_first), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(on_device), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(on_host), ACL_SUCCESS);
    CHECK_EQ(acltdtDestroyDataItem(empty), ACL_SUCCESS);
    CHECK_EQ(aclrtFree(device), ACL_SUCCESS);
    CHECK_EQ(aclrtResetDeviceForce(0), ACL_SUCCESS);
}

int main(void) {
    RUN(accessors);
    RUN(get_dims);
    RUN(slice_info);
    RUN(create_item_rules);
    RUN(destroy_item);
    RUN(datasets);
    RUN(markers_in_datasets);
    RUN(memory_kinds);
    return check_summary();
}
