// The operator guide's FfnWorkerScheduler example, written against ferry-acl exactly as a CANN user
// writes it: only "acl/acl.h" and "aclnnop/aclnn_ffn_worker_scheduler.h", the caller's own copy of
// the 1024-byte ScheduleContext layout, and the two-phase aclnn call on a stream. Configuration:
// session_num = micro_batch_num = micro_batch_size = 2, selected_expert_num = 5, every descriptor
// ready with layer_id 55 and expert ids 0..9, polling_index 1, syncGroupSize 1 (two groups).
// Expected (CANN's recorded device run, docs/cann-contract/afd.md#the-aclnn-example): layer_ids
// [55, 55], session_ids [0, 1], micro_batch_ids [0, 0], expert_ids 0..9 twice; the consumed
// descriptors' flags reset to 0. CI compares the output with expected_output.txt.

#include "acl/acl.h"
#include "aclnnop/aclnn_ffn_worker_scheduler.h"

#include <cstdint>
#include <cstdio>
#include <vector>

#define CHECK_RET(cond, return_expr)                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            return_expr;                                                                           \
        }                                                                                          \
    } while (0)

#define LOG_PRINT(message, ...)                                                                    \
    do {                                                                                           \
        printf(message, ##__VA_ARGS__);                                                            \
    } while (0)

// ---- the ScheduleContext ABI: packed, members in this order ----
// (docs/cann-contract/afd.md#schedulecontext-layout)
#pragma pack(push, 1)
struct CommonArea {
    uint32_t session_num;
    uint32_t micro_batch_num;
    uint32_t micro_batch_size;
    uint32_t selected_expert_num;
    uint32_t expert_num;
    uint32_t attn_to_ffn_token_size;
    uint32_t ffn_to_attn_token_size;
    int32_t schedule_mode;
    int8_t reserve0[96];
};
struct ControlArea {
    int32_t run_flag;
    int8_t reserve2[124];
};
struct AttentionArea {
    uint64_t token_info_buf;
    uint64_t token_info_buf_size;
    uint64_t token_data_buf;
    uint64_t token_data_buf_size;
    uint32_t micro_batch_id;
    int8_t reserve5[92];
};
struct FfnArea {
    uint64_t token_info_buf;
    uint64_t token_info_buf_size;
    uint64_t token_data_buf;
    uint64_t token_data_buf_size;
    uint64_t polling_index;
    int8_t reserve3[88];
    uint64_t layer_ids_buf;
    uint64_t layer_ids_buf_size;
    uint64_t session_ids_buf;
    uint64_t session_ids_buf_size;
    uint64_t micro_batch_ids_buf;
    uint64_t micro_batch_ids_buf_size;
    uint64_t expert_ids_buf;
    uint64_t expert_ids_buf_size;
    uint32_t out_num;
    int8_t reserve4[60];
};
struct ScheduleContext {
    CommonArea common;
    ControlArea control;
    AttentionArea attention;
    FfnArea ffn;
    int8_t reserve6[384];
};
struct FfnDataDesc {
    int32_t flag;
    int32_t layer_id;
    // followed by micro_batch_size * selected_expert_num int32 expert ids
};
#pragma pack(pop)
static_assert(sizeof(ScheduleContext) == 1024, "the context is 1024 bytes");
static_assert(sizeof(FfnDataDesc) == 8, "flag and layer id");

namespace {

constexpr uint64_t kBufAlignSize = 512;
constexpr int32_t kLayerId = 55;

uint64_t AlignUp(uint64_t num, uint64_t align) {
    return (num + align - 1) / align * align;
}

int64_t GetShapeSize(const std::vector<int64_t>& shape) {
    int64_t size = 1;
    for (int64_t dim : shape) {
        size *= dim;
    }
    return size;
}

int Init(int32_t deviceId, aclrtStream* stream) {
    aclError ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSetDevice(deviceId);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
    ret = aclrtCreateStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret);
              return ret);
    return 0;
}

template <typename T>
int CreateAclTensor(const std::vector<T>& hostData, const std::vector<int64_t>& shape,
                    void** deviceAddr, aclDataType dataType, aclTensor** tensor) {
    const auto size = static_cast<size_t>(GetShapeSize(shape)) * sizeof(T);
    aclError ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    std::vector<int64_t> strides(shape.size(), 1); // contiguous
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0,
                              aclFormat::ACL_FORMAT_ND, shape.data(), shape.size(), *deviceAddr);
    return *tensor == nullptr ? ACL_ERROR_FAILURE : ACL_SUCCESS;
}

uint64_t CalcFfnTokenInfoSize(const ScheduleContext& ctx) {
    const uint64_t perDesc =
        sizeof(FfnDataDesc) + sizeof(int32_t) * static_cast<uint64_t>(ctx.common.micro_batch_size) *
                                  ctx.common.selected_expert_num;
    return perDesc * ctx.common.micro_batch_num * ctx.common.session_num;
}

uint64_t DeviceAddress(void* p) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}
void* HostPointer(uint64_t address) {
    return reinterpret_cast<void*>(static_cast<uintptr_t>(address));
}

// Every (session, micro batch) descriptor ready: flag 1, layer 55, expert ids 0, 1, 2, ...
int InitFfnTokenInfoBuf(const ScheduleContext& ctx) {
    const uint64_t idsPerDesc =
        static_cast<uint64_t>(ctx.common.micro_batch_size) * ctx.common.selected_expert_num;
    std::vector<int32_t> host;
    for (uint64_t d = 0;
         d < static_cast<uint64_t>(ctx.common.session_num) * ctx.common.micro_batch_num; ++d) {
        host.push_back(1);
        host.push_back(kLayerId);
        for (uint64_t id = 0; id < idsPerDesc; ++id) {
            host.push_back(static_cast<int32_t>(id));
        }
    }
    return aclrtMemcpy(HostPointer(ctx.ffn.token_info_buf), ctx.ffn.token_info_buf_size,
                       host.data(), host.size() * sizeof(int32_t), ACL_MEMCPY_HOST_TO_DEVICE);
}

int MallocBuffer(uint64_t size, uint64_t* address) {
    void* p = nullptr;
    const aclError ret = aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    *address = DeviceAddress(p);
    return ACL_SUCCESS;
}

int InitFfn(ScheduleContext& ctx) {
    const uint64_t tokenInfoSize = CalcFfnTokenInfoSize(ctx);
    if (tokenInfoSize == 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    const uint64_t a = ctx.common.session_num;
    ctx.ffn.token_info_buf_size = tokenInfoSize;
    ctx.ffn.token_data_buf_size = 1024;
    ctx.ffn.layer_ids_buf_size = a * sizeof(int32_t);
    ctx.ffn.session_ids_buf_size = a * sizeof(int32_t);
    ctx.ffn.micro_batch_ids_buf_size = a * sizeof(int32_t);
    ctx.ffn.expert_ids_buf_size =
        a * ctx.common.micro_batch_size * ctx.common.selected_expert_num * sizeof(int32_t);
    int ret = MallocBuffer(AlignUp(tokenInfoSize, kBufAlignSize), &ctx.ffn.token_info_buf);
    ret = ret != 0 ? ret : MallocBuffer(ctx.ffn.token_data_buf_size, &ctx.ffn.token_data_buf);
    ret = ret != 0 ? ret : MallocBuffer(ctx.ffn.layer_ids_buf_size, &ctx.ffn.layer_ids_buf);
    ret = ret != 0 ? ret : MallocBuffer(ctx.ffn.session_ids_buf_size, &ctx.ffn.session_ids_buf);
    ret = ret != 0 ? ret
                   : MallocBuffer(ctx.ffn.micro_batch_ids_buf_size, &ctx.ffn.micro_batch_ids_buf);
    ret = ret != 0 ? ret : MallocBuffer(ctx.ffn.expert_ids_buf_size, &ctx.ffn.expert_ids_buf);
    return ret != 0 ? ret : InitFfnTokenInfoBuf(ctx);
}

void UninitFfn(const ScheduleContext& ctx) {
    for (uint64_t address :
         {ctx.ffn.token_info_buf, ctx.ffn.token_data_buf, ctx.ffn.layer_ids_buf,
          ctx.ffn.session_ids_buf, ctx.ffn.micro_batch_ids_buf, ctx.ffn.expert_ids_buf}) {
        if (address != 0) {
            aclrtFree(HostPointer(address));
        }
    }
}

int PrintBuffer(const char* name, uint64_t address, uint64_t size) {
    std::vector<int32_t> host(size / sizeof(int32_t), 0);
    const aclError ret =
        aclrtMemcpy(host.data(), size, HostPointer(address), size, ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    for (size_t i = 0; i < host.size(); ++i) {
        LOG_PRINT("%s[%zu] is: %d\n", name, i, host[i]);
    }
    return ACL_SUCCESS;
}

int PrintResults(const ScheduleContext& out) {
    LOG_PRINT("token_info_buf_size = %lu.\n",
              static_cast<unsigned long>(out.ffn.token_info_buf_size));
    LOG_PRINT("token_data_buf_size = %lu.\n",
              static_cast<unsigned long>(out.ffn.token_data_buf_size));
    LOG_PRINT("layer_ids_buf_size = %lu.\n",
              static_cast<unsigned long>(out.ffn.layer_ids_buf_size));
    LOG_PRINT("session_ids_buf_size = %lu.\n",
              static_cast<unsigned long>(out.ffn.session_ids_buf_size));
    LOG_PRINT("micro_batch_ids_buf_size = %lu.\n",
              static_cast<unsigned long>(out.ffn.micro_batch_ids_buf_size));
    LOG_PRINT("expert_ids_buf_size = %lu.\n",
              static_cast<unsigned long>(out.ffn.expert_ids_buf_size));
    LOG_PRINT("out_num = %u.\n", out.ffn.out_num);
    int ret = PrintBuffer("layer_ids", out.ffn.layer_ids_buf, out.ffn.layer_ids_buf_size);
    ret = ret != 0
              ? ret
              : PrintBuffer("session_ids", out.ffn.session_ids_buf, out.ffn.session_ids_buf_size);
    ret = ret != 0 ? ret
                   : PrintBuffer("micro_batch_ids", out.ffn.micro_batch_ids_buf,
                                 out.ffn.micro_batch_ids_buf_size);
    ret = ret != 0 ? ret
                   : PrintBuffer("expert_ids", out.ffn.expert_ids_buf, out.ffn.expert_ids_buf_size);
    if (ret != 0) {
        return ret;
    }
    // The consumed descriptors (micro batch 0 of both sessions) are free again: flag 0.
    const uint64_t perDesc =
        out.ffn.token_info_buf_size / (out.common.session_num * out.common.micro_batch_num);
    for (uint32_t s = 0; s < out.common.session_num; ++s) {
        for (uint32_t mb = 0; mb < out.common.micro_batch_num; ++mb) {
            FfnDataDesc desc{};
            const uint64_t at =
                out.ffn.token_info_buf + (s * out.common.micro_batch_num + mb) * perDesc;
            ret = aclrtMemcpy(&desc, sizeof desc, HostPointer(at), sizeof desc,
                              ACL_MEMCPY_DEVICE_TO_HOST);
            CHECK_RET(ret == ACL_SUCCESS, return ret);
            LOG_PRINT("descriptor (session %u, micro batch %u): flag %d, layer_id %d\n", s, mb,
                      desc.flag, desc.layer_id);
        }
    }
    return ACL_SUCCESS;
}

} // namespace

int main() {
    // 1. device and stream
    int32_t deviceId = 0;
    aclrtStream stream = nullptr;
    int ret = Init(deviceId, &stream);
    CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 2. the ScheduleContext: host image, output buffers, then a 1024-byte INT8 tensor on the
    // device
    ScheduleContext scheduleContext{};
    scheduleContext.common.session_num = 2;
    scheduleContext.common.micro_batch_num = 2;
    scheduleContext.common.micro_batch_size = 2;
    scheduleContext.common.selected_expert_num = 5;
    scheduleContext.common.schedule_mode = 0;
    scheduleContext.control.run_flag = 1;
    scheduleContext.ffn.polling_index = 1;
    ret = InitFfn(scheduleContext);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("InitFfn failed. ERROR: %d\n", ret);
              UninitFfn(scheduleContext); return ret);
    std::vector<int8_t> selfHostData(sizeof(ScheduleContext));
    ret = aclrtMemcpy(selfHostData.data(), selfHostData.size(), &scheduleContext,
                      sizeof(ScheduleContext), ACL_MEMCPY_HOST_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, UninitFfn(scheduleContext); return ret);
    std::vector<int64_t> selfShape = {1024};
    void* selfDeviceAddr = nullptr;
    aclTensor* scheduleContextRef = nullptr;
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_INT8,
                          &scheduleContextRef);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 3. the two-phase call
    int32_t syncGroupSize = 1; // (0, session_num]
    int32_t executeMode = 0;   // only 0
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    ret = aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize(scheduleContextRef, syncGroupSize,
                                                         executeMode, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("GetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void* workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
                  return ret);
    }
    ret = aclnnInplaceFfnWorkerScheduler(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnInplaceFfnWorkerScheduler failed. ERROR: %d\n", ret);
              return ret);

    // 4. wait for the task
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
              return ret);

    // 5. read the context back and print the outputs
    ScheduleContext result{};
    ret = aclrtMemcpy(&result, sizeof result, selfDeviceAddr, sizeof result,
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = PrintResults(result);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 6-7. release everything
    aclDestroyTensor(scheduleContextRef);
    UninitFfn(scheduleContext);
    aclrtFree(selfDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
