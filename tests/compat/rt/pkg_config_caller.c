/* A legacy C caller built with nothing but `cc $(pkg-config --cflags --libs ferry-acl)`. */
#include "acl/acl.h"
#include "aclnnop/aclnn_ffn_worker_scheduler.h"

#include <stdio.h>

int main(void) {
    uint32_t count = 0;
    void* p = NULL;
    if (aclInit(NULL) != ACL_SUCCESS || aclrtGetDeviceCount(&count) != ACL_SUCCESS ||
        aclrtSetDevice(0) != ACL_SUCCESS ||
        aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtFree(p) != ACL_SUCCESS ||
        aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(NULL, 1, 0, NULL, NULL) !=
            ACLNN_ERR_PARAM_NULLPTR ||
        aclrtResetDevice(0) != ACL_SUCCESS || aclFinalize() != ACL_SUCCESS) {
        fprintf(stderr, "the C API did not answer as expected\n");
        return 1;
    }
    printf("devices: %u\n", count);
    return 0;
}
