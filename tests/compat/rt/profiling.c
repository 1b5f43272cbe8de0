/* Profiling from C (docs/c-api.md, Profiling): aclprofInit → aclprofCreateConfig(devices, data
 * types) → aclprofStart → work → aclprofStop writes ferry's Chrome trace into the directory
 * aclprofInit named, holding only the configured devices and kinds; the life-cycle errors. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void nothing(void* args) {
    (void)args;
}

/* A copy and a host function on a new stream of `device`. */
static void work_on(int32_t device) {
    aclrtStream stream = NULL;
    void* dev = NULL;
    static char host[64];
    CHECK_EQ(aclrtSetDevice(device), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    CHECK_EQ(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    CHECK_EQ(aclrtMemcpyAsync(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS);
    CHECK_EQ(aclrtLaunchHostFunc(stream, nothing, NULL), ACL_SUCCESS);
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    CHECK_EQ(aclrtFree(dev), ACL_SUCCESS);
}

/* The whole trace file `n` of this process in `dir`, or NULL. */
static char* read_trace(const char* dir, int n) {
    char path[512];
    snprintf(path, sizeof path, "%s/ferry-trace-%ld-%d.json", dir, (long)getpid(), n);
    FILE* f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    static char text[1 << 16];
    const size_t size = fread(text, 1, sizeof text - 1, f);
    text[size] = '\0';
    fclose(f);
    remove(path);
    return text;
}

static int contains(const char* text, const char* what) {
    return text != NULL && strstr(text, what) != NULL;
}

int main(void) {
    char dir[] = "/tmp/ferry-prof-c-XXXXXX";
    CHECK_TRUE(mkdtemp(dir) != NULL);
    uint32_t device1[1] = {1};
    aclprofConfig* config = NULL;

    CHECK_EQ(aclprofStart(NULL), ACL_ERROR_INVALID_PARAM);
    config = aclprofCreateConfig(device1, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME);
    CHECK_TRUE(config != NULL);
    CHECK_EQ(aclprofStart(config), ACL_ERROR_UNINITIALIZE); /* before aclprofInit */
    CHECK_EQ(aclprofFinalize(), ACL_ERROR_UNINITIALIZE);
    CHECK_EQ(aclprofInit(dir, strlen(dir)), ACL_SUCCESS);
    CHECK_EQ(aclprofInit(dir, strlen(dir)), ACL_ERROR_REPEAT_INITIALIZE);
    CHECK_EQ(aclprofStop(config), ACL_ERROR_PROF_NOT_RUN);

    /* device 1, every stream task */
    CHECK_EQ(aclprofStart(config), ACL_SUCCESS);
    CHECK_EQ(aclprofStart(config), ACL_ERROR_PROF_ALREADY_RUN);
    work_on(0);
    work_on(1);
    CHECK_EQ(aclprofStop(config), ACL_SUCCESS);
    const char* trace = read_trace(dir, 1);
    CHECK_TRUE(trace != NULL);
    CHECK_TRUE(contains(trace, "\"cat\":\"memcpy\",\"pid\":1,"));
    CHECK_TRUE(contains(trace, "\"cat\":\"host_task\",\"pid\":1,"));
    CHECK_TRUE(!contains(trace, "\"pid\":0,")); /* device 0 is not in the list */
    CHECK_EQ(aclprofDestroyConfig(config), ACL_SUCCESS);
    CHECK_EQ(aclprofDestroyConfig(config), ACL_ERROR_INVALID_PARAM);

    /* both devices, AI CPU (kernels) only: copies and host functions are filtered out */
    uint32_t both[2] = {0, 1};
    config = aclprofCreateConfig(both, 2, ACL_AICORE_NONE, NULL, ACL_PROF_AICPU);
    CHECK_TRUE(config != NULL);
    CHECK_EQ(aclprofStart(config), ACL_SUCCESS);
    work_on(0);
    CHECK_EQ(aclprofFinalize(), ACL_SUCCESS); /* stops the session, writing its trace */
    trace = read_trace(dir, 2);
    CHECK_TRUE(trace != NULL);
    CHECK_TRUE(!contains(trace, "\"cat\":\"memcpy\""));
    CHECK_TRUE(!contains(trace, "\"cat\":\"host_task\""));
    CHECK_EQ(aclprofStart(config), ACL_ERROR_UNINITIALIZE);
    CHECK_EQ(aclprofDestroyConfig(config), ACL_SUCCESS);

    CHECK_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclrtResetDevice(1), ACL_SUCCESS);
    CHECK_EQ(aclFinalize(), ACL_SUCCESS);
    rmdir(dir);
    return check_failures == 0 ? 0 : 1;
}
