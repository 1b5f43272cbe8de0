/* A C program outside ferry's build that links the installed C shim (ferry-acl) and calls
 * CANN's C API: a device, a tensor channel, one dataset sent and received. */
#include "acl/acl.h"
#include "acl/acl_tdt.h"

#include <stdio.h>

static int round_trip(acltdtChannelHandle* channel) {
    float values[4] = {1, 2, 3, 4};
    int64_t dims[2] = {1, 4};
    acltdtDataItem* item =
        acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, values, sizeof values);
    acltdtDataset* out = acltdtCreateDataset();
    acltdtDataset* in = acltdtCreateDataset();
    aclError rc = acltdtAddDataItem(out, item);
    if (rc == ACL_SUCCESS) {
        rc = acltdtSendTensor(channel, out, 1000);
    }
    if (rc == ACL_SUCCESS) {
        rc = acltdtReceiveTensor(channel, in, 1000);
    }
    if (rc == ACL_SUCCESS && acltdtGetDatasetSize(in) != 1) {
        rc = ACL_ERROR_FAILURE;
    }
    acltdtDestroyDataset(in);
    acltdtDestroyDataset(out);
    acltdtDestroyDataItem(item);
    return rc == ACL_SUCCESS ? 0 : 1;
}

int main(void) {
    uint32_t devices = 0;
    if (aclInit(NULL) != ACL_SUCCESS || aclrtGetDeviceCount(&devices) != ACL_SUCCESS ||
        aclrtSetDevice(0) != ACL_SUCCESS) {
        puts("ferry consumer (C): no device");
        return 1;
    }
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "consumer", 2);
    int failed = channel == NULL || round_trip(channel) != 0;
    if (channel != NULL) {
        acltdtStopChannel(channel);
        acltdtDestroyChannel(channel);
    }
    failed |= aclrtResetDevice(0) != ACL_SUCCESS;
    failed |= aclFinalize() != ACL_SUCCESS;
    puts(failed ? "ferry consumer (C): the C API did not answer as expected"
                : "ferry consumer (C): ok");
    return failed;
}
