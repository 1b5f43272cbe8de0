/*
 * Helpers of the two TDT channel samples (CANN's example/utils.h and tdt_common_utils.h, as
 * described in docs/cann-contract/tdt.md#samples), written in C for ferry-acl: the log macros print
 * to stdout with CANN's prefixes, CHECK_ERROR reports a failed call and returns -1.
 */
#ifndef FERRY_EXAMPLES_TDT_SAMPLE_UTILS_H
#define FERRY_EXAMPLES_TDT_SAMPLE_UTILS_H

#include <stdio.h>

#include "acl/acl.h"
#include "acl/acl_tdt.h"

/* (prefix, format, args) as three printf calls: ISO C11 has no portable empty __VA_ARGS__. */
#define INFO_LOG(...) (printf("[INFO]  "), printf(__VA_ARGS__), printf("\n"))
#define WARN_LOG(...) (printf("[WARN]  "), printf(__VA_ARGS__), printf("\n"))
#define ERROR_LOG(...) (printf("[ERROR]  "), printf(__VA_ARGS__), printf("\n"))

#define CHECK_ERROR(call)                                                                          \
    do {                                                                                           \
        aclError check_ret_ = (call);                                                              \
        if (check_ret_ != ACL_SUCCESS) {                                                           \
            ERROR_LOG("Operation failed: %s returned error code %d", #call, check_ret_);           \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

/* One TENSOR item of dims {1, count}, ACL_FLOAT, over `values` (borrowed), in a new dataset. */
static inline acltdtDataset* CreateFloatDataset(float* values, size_t count) {
    const int64_t dims[2] = {1, (int64_t)count};
    acltdtDataItem* item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, values,
                                                count * sizeof(float));
    acltdtDataset* dataset = acltdtCreateDataset();
    if (item == NULL || dataset == NULL || acltdtAddDataItem(dataset, item) != ACL_SUCCESS) {
        (void)acltdtDestroyDataItem(item);
        (void)acltdtDestroyDataset(dataset);
        return NULL;
    }
    return dataset;
}

/* A dataset the caller filled: its items are the caller's to destroy, then the dataset. */
static inline void DestroyDatasetAndItems(acltdtDataset* dataset) {
    if (dataset == NULL) {
        return;
    }
    for (size_t i = 0; i < acltdtGetDatasetSize(dataset); ++i) {
        (void)acltdtDestroyDataItem(acltdtGetDataItem(dataset, i));
    }
    (void)acltdtDestroyDataset(dataset);
}

/* A dataset a receive filled owns its items: destroying the dataset frees them. */
static inline void DestroyDataset(acltdtDataset* dataset) {
    if (dataset != NULL) {
        (void)acltdtDestroyDataset(dataset);
    }
}

#endif
