/*
 * CANN's TDT sample 0_simple_channel (docs/cann-contract/tdt.md#sample-0-simple-channel) in C
 * against ferry-acl: one process sends a 1x4 float tensor through a capacity-2 queue channel and
 * receives it back, printing the dataset before and after and the channel size around each step.
 * Expected output: simple_channel.expected (dims (1, 4): the sample README's "(2, 2)" is stale).
 */
#include "tdt_sample_utils.h"

static void DumpDataset(const acltdtDataset* dataset) {
    INFO_LOG("Dataset size: %zu", acltdtGetDatasetSize(dataset));
    acltdtDataItem* item = acltdtGetDataItem(dataset, 0);
    if (item == NULL) {
        return;
    }
    int64_t dims[2] = {0, 0};
    if (acltdtGetDimsFromItem(item, dims, 2) != ACL_SUCCESS) {
        ERROR_LOG("acltdtGetDimsFromItem failed");
        return;
    }
    const float* data = acltdtGetDataAddrFromItem(item);
    INFO_LOG("Tensor type=%d, data type=%d, bytes=%zu, dims=(%lld, %lld), firstValue=%.3f",
             (int)acltdtGetTensorTypeFromItem(item), (int)acltdtGetDataTypeFromItem(item),
             acltdtGetDataSizeFromItem(item), (long long)dims[0], (long long)dims[1],
             data != NULL ? (double)data[0] : 0.0);
}

static int SendAndReceive(acltdtChannelHandle* channel, acltdtDataset* send, acltdtDataset* recv) {
    size_t channelSize = 0;
    DumpDataset(send);
    CHECK_ERROR(acltdtSendTensor(channel, send, 1000));
    CHECK_ERROR(acltdtQueryChannelSize(channel, &channelSize));
    INFO_LOG("Channel size after send: %zu", channelSize);
    CHECK_ERROR(acltdtReceiveTensor(channel, recv, 1000));
    DumpDataset(recv);
    CHECK_ERROR(acltdtQueryChannelSize(channel, &channelSize));
    INFO_LOG("Channel size after receive: %zu", channelSize);
    return 0;
}

static int CleanupChannel(acltdtChannelHandle* channel) {
    int result = 0;
    aclError ret = acltdtCleanChannel(channel);
    if (ret != ACL_SUCCESS) {
        ERROR_LOG("Operation failed: acltdtCleanChannel(channel) returned error code %d", ret);
        result = -1;
    }
    ret = acltdtStopChannel(channel);
    if (ret != ACL_SUCCESS) {
        ERROR_LOG("Operation failed: acltdtStopChannel(channel) returned error code %d", ret);
        result = -1;
    }
    ret = acltdtDestroyChannel(channel);
    if (ret != ACL_SUCCESS) {
        ERROR_LOG("Operation failed: acltdtDestroyChannel(channel) returned error code %d", ret);
        result = -1;
    }
    return result;
}

int main(void) {
    CHECK_ERROR(aclInit(NULL));
    CHECK_ERROR(aclrtSetDevice(0));
    int result = 0;
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "simple_tdt_channel", 2);
    if (channel == NULL) {
        WARN_LOG("acltdtCreateChannelWithCapacity returned nullptr: this sample needs a "
                 "queue-backed TDT channel so it can send and receive within one host process");
    } else {
        float values[4] = {1.0f, 2.0f, 3.0f, 4.0f};
        acltdtDataset* send = CreateFloatDataset(values, 4);
        acltdtDataset* recv = acltdtCreateDataset();
        if (send == NULL || recv == NULL) {
            ERROR_LOG("creating the datasets failed");
            result = -1;
        } else {
            result = SendAndReceive(channel, send, recv);
        }
        if (CleanupChannel(channel) != 0) {
            result = -1;
        }
        DestroyDataset(recv);
        DestroyDatasetAndItems(send);
    }
    CHECK_ERROR(aclrtResetDeviceForce(0));
    CHECK_ERROR(aclFinalize());
    if (result == 0) {
        INFO_LOG("Run the simple_channel sample successfully.");
    }
    return result == 0 ? 0 : 1;
}
