/*
 * CANN's TDT sample 0_simple_channel (docs/cann-contract/tdt.md#sample-0-simple-channel) in C
 * against ferry-acl: one process sends a 1x4 float tensor through a capacity-2 queue channel and
 * receives it back, printing the dataset before and after and the channel size around each step.
 * Expected output: simple_channel.expected (dims (1, 4): the sample README's "(2, 2)" is stale).
 * With a role argument ("send" / "receive", ferry's addition) each half runs in its own process
 * over a channel FERRY_TDT_SHARED shares: simple_channel.{send,receive}.expected.
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

static int SendHalf(acltdtChannelHandle* channel, acltdtDataset* send) {
    size_t channelSize = 0;
    DumpDataset(send);
    CHECK_ERROR(acltdtSendTensor(channel, send, 1000));
    CHECK_ERROR(acltdtQueryChannelSize(channel, &channelSize));
    INFO_LOG("Channel size after send: %zu", channelSize);
    return 0;
}

static int ReceiveHalf(acltdtChannelHandle* channel, acltdtDataset* recv) {
    size_t channelSize = 0;
    CHECK_ERROR(acltdtReceiveTensor(channel, recv, 1000));
    DumpDataset(recv);
    CHECK_ERROR(acltdtQueryChannelSize(channel, &channelSize));
    INFO_LOG("Channel size after receive: %zu", channelSize);
    return 0;
}

static int RunRole(SampleRole role, acltdtChannelHandle* channel, acltdtDataset* send,
                   acltdtDataset* recv) {
    if (role == ROLE_SEND) {
        return SendHalf(channel, send);
    }
    if (role == ROLE_RECEIVE) {
        WaitForSender();
        return ReceiveHalf(channel, recv);
    }
    return SendHalf(channel, send) == 0 ? ReceiveHalf(channel, recv) : -1;
}

static int CleanupChannel(acltdtChannelHandle* channel, SampleRole role) {
    int result = 0;
    if (role == ROLE_SEND) { /* a clean would drop what the receiving process has yet to take */
        return acltdtDestroyChannel(channel) == ACL_SUCCESS ? 0 : -1;
    }
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

int main(int argc, char** argv) {
    const SampleRole role = ParseRole(argc, argv);
    if (role == ROLE_UNKNOWN) {
        return 2;
    }
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
            result = RunRole(role, channel, send, recv);
        }
        if (CleanupChannel(channel, role) != 0) {
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
