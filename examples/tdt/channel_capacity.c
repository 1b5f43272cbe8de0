/*
 * CANN's TDT sample 1_channel_capacity (docs/cann-contract/tdt.md#sample-1-channel-capacity) in C
 * against ferry-acl: a capacity-2 queue channel, three non-blocking sends. ferry's channel of
 * capacity N holds exactly N, so the second send succeeds and the third answers
 * ACL_ERROR_RT_QUEUE_FULL (207014); CANN's device ring holds N - 1 and would take the other branch
 * at the second send. Expected output: channel_capacity.expected.
 * With a role argument ("send" / "receive", ferry's addition) the sends run in one process and a
 * second process, over a channel FERRY_TDT_SHARED shares, receives what they queued:
 * channel_capacity.{send,receive}.expected.
 */
#include "tdt_sample_utils.h"

static void PrintSliceInfo(const acltdtDataset* dataset) {
    size_t sliceNum = 0;
    size_t sliceId = 0;
    acltdtDataItem* item = acltdtGetDataItem(dataset, 0);
    aclError ret = acltdtGetSliceInfoFromItem(item, &sliceNum, &sliceId);
    const char* name = acltdtGetDatasetName(dataset);
    INFO_LOG("Slice info ret=%d, sliceNum=%zu, sliceId=%zu, tensorType=%d, datasetName=%s", ret,
             sliceNum, sliceId, (int)acltdtGetTensorTypeFromItem(item),
             name != NULL ? name : "<null>");
}

static int FillChannel(acltdtChannelHandle* channel, acltdtDataset* const datasets[3]) {
    size_t channelSize = 0;
    PrintSliceInfo(datasets[0]);
    CHECK_ERROR(acltdtSendTensor(channel, datasets[0], 1000));
    CHECK_ERROR(acltdtQueryChannelSize(channel, &channelSize));
    INFO_LOG("Channel size after first send: %zu", channelSize);

    aclError ret = acltdtSendTensor(channel, datasets[1], 0);
    if (ret == ACL_SUCCESS) {
        CHECK_ERROR(acltdtQueryChannelSize(channel, &channelSize));
        INFO_LOG("Channel size after second send: %zu", channelSize);
        ret = acltdtSendTensor(channel, datasets[2], 0);
        INFO_LOG("Third send ret under capacity pressure: %d", ret);
    } else if (ret == ACL_ERROR_RT_QUEUE_FULL) {
        CHECK_ERROR(acltdtQueryChannelSize(channel, &channelSize));
        INFO_LOG("Second send reached capacity pressure immediately: ret=%d, queried channel "
                 "size=%zu, configured capacity=%zu",
                 ret, channelSize, (size_t)2);
    } else {
        ERROR_LOG("Operation failed: acltdtSendTensor(channel, second, 0) returned error code %d",
                  ret);
        return -1;
    }
    return 0;
}

/* The receiving process: takes the two messages the sender queued. */
static int DrainChannel(acltdtChannelHandle* channel) {
    acltdtDataset* recv = acltdtCreateDataset();
    size_t channelSize = 0;
    if (recv == NULL) {
        return -1;
    }
    WaitForSender();
    int result = 0;
    for (int i = 0; i < 2 && result == 0; ++i) {
        aclError ret = acltdtReceiveTensor(channel, recv, 1000);
        const acltdtDataItem* item = acltdtGetDataItem(recv, 0);
        const float* data = item != NULL ? acltdtGetDataAddrFromItem(item) : NULL;
        if (ret != ACL_SUCCESS || data == NULL) {
            ERROR_LOG("Operation failed: acltdtReceiveTensor returned error code %d", ret);
            result = -1;
        } else {
            INFO_LOG("Received dataset %d: firstValue=%.3f", i + 1, (double)data[0]);
        }
    }
    if (result == 0 && acltdtQueryChannelSize(channel, &channelSize) == ACL_SUCCESS) {
        INFO_LOG("Channel size after receiving: %zu", channelSize);
    }
    DestroyDataset(recv);
    return result;
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
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "capacity_tdt_channel", 2);
    if (channel == NULL) {
        WARN_LOG("acltdtCreateChannelWithCapacity returned nullptr: the current runtime likely "
                 "does not enable capacity-limited TDT channels on this product/build");
    } else {
        float first[2] = {10.0f, 20.0f};
        float second[2] = {30.0f, 40.0f};
        float third[2] = {50.0f, 60.0f};
        acltdtDataset* datasets[3] = {CreateFloatDataset(first, 2), CreateFloatDataset(second, 2),
                                      CreateFloatDataset(third, 2)};
        if (datasets[0] == NULL || datasets[1] == NULL || datasets[2] == NULL) {
            ERROR_LOG("creating the datasets failed");
            result = -1;
        } else if (role == ROLE_RECEIVE) {
            result = DrainChannel(channel);
        } else {
            result = FillChannel(channel, datasets);
        }
        if (CleanupChannel(channel, role) != 0) {
            result = -1;
        }
        for (int i = 0; i < 3; ++i) {
            DestroyDatasetAndItems(datasets[i]);
        }
    }
    CHECK_ERROR(aclrtResetDeviceForce(0));
    CHECK_ERROR(aclFinalize());
    if (result == 0) {
        INFO_LOG("Run the channel_capacity sample successfully.");
    }
    return result == 0 ? 0 : 1;
}
