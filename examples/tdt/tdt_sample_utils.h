/*
 * Helpers of the two TDT channel samples (CANN's example/utils.h and tdt_common_utils.h, as
 * described in docs/cann-contract/tdt.md#samples), written in C for ferry-acl: the log macros print
 * to stdout with CANN's prefixes, CHECK_ERROR reports a failed call and returns -1.
 */
#ifndef FERRY_EXAMPLES_TDT_SAMPLE_UTILS_H
#define FERRY_EXAMPLES_TDT_SAMPLE_UTILS_H

#include "acl/acl.h"
#include "acl/acl_tdt.h"

#include <stdio.h>
#include <string.h>

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

/* The optional role argument (ferry's addition): no argument runs CANN's single-process sample;
 * "send" / "receive" run its two halves as two processes, over a channel that FERRY_TDT_SHARED
 * shares (docs/c-api.md#channels-shared-between-processes; tools/tdt_two_processes.py runs both).
 */
typedef enum { ROLE_BOTH, ROLE_SEND, ROLE_RECEIVE, ROLE_UNKNOWN } SampleRole;

static inline SampleRole ParseRole(int argc, char** argv) {
    if (argc < 2) {
        return ROLE_BOTH;
    }
    if (argc == 2 && strcmp(argv[1], "send") == 0) {
        return ROLE_SEND;
    }
    if (argc == 2 && strcmp(argv[1], "receive") == 0) {
        return ROLE_RECEIVE;
    }
    fprintf(stderr, "usage: %s [send | receive]\n", argv[0]);
    return ROLE_UNKNOWN;
}

/* The receiving process: says it holds its channel handle, then waits for a line on stdin — the
 * sender has finished — so that what the sender printed about the channel (its size after each
 * send) cannot depend on how fast this process receives. */
static inline void WaitForSender(void) {
    INFO_LOG("Receiver ready");
    fflush(stdout);
    for (int c = getchar(); c != EOF && c != '\n'; c = getchar()) {
    }
}

/* A dataset a receive filled owns its items: destroying the dataset frees them. */
static inline void DestroyDataset(acltdtDataset* dataset) {
    if (dataset != NULL) {
        (void)acltdtDestroyDataset(dataset);
    }
}

#endif
