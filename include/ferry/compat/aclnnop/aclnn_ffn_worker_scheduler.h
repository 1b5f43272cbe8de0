/*
 * ferry-acl compat header: CANN's aclnnop/aclnn_ffn_worker_scheduler.h — the two-phase
 * aclnnInplaceFfnWorkerScheduler API (docs/cann-contract/afd.md#aclnn-two-phase-api).
 * Compiles as C11 and as C++. Written for ferry; no CANN source is reproduced.
 */
#ifndef OP_API_INC_ACLNN_FFN_WORKER_SCHEDULER_H_
#define OP_API_INC_ACLNN_FFN_WORKER_SCHEDULER_H_

#include <stdint.h>

#include "aclnn/acl_meta.h"

#ifndef ACLNN_API
#define ACLNN_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: checks the arguments (null tensor → 161001; rank ≠ 1, empty tensor, executeMode ≠ 0 →
 * 161002) and makes the executor. syncGroupSize is checked by the kernel at run time
 * (docs/cann-contract/afd.md#phase-1-getworkspacesize). */
ACLNN_API aclnnStatus aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(aclTensor* scheduleContextRef,
                                                                     int32_t syncGroupSize,
                                                                     int32_t executeMode,
                                                                     uint64_t* workspaceSize,
                                                                     aclOpExecutor** executor);

/* Phase 2: queues the scheduler on `stream`; its failure is reported by aclrtSynchronizeStream. */
ACLNN_API aclnnStatus aclnnInplaceFfnWorkerScheduler(void* workspace, uint64_t workspaceSize,
                                                     aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_ACLNN_FFN_WORKER_SCHEDULER_H_ */
