/* ASCEND_RT_VISIBLE_DEVICES from C (docs/runtime.md, Visible devices): each case boots the
 * runtime in a child process with its own FERRY_DEVICE_COUNT and visible list, whatever the
 * environment the test runs in; the child's checks report through its exit status. */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include "acl/acl.h"
#include "check.h"

#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Physical devices 1 and 3 of 4 are user devices 0 and 1. */
static int visible_pair(void) {
    uint32_t count = 0;
    int32_t device = -1;
    CHECK_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    CHECK_EQ(count, 2);
    CHECK_EQ(aclrtSetDevice(2), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_EQ(aclrtSetDevice(3), ACL_ERROR_RT_INVALID_DEVICEID); /* a physical id, not visible */
    CHECK_EQ(aclrtResetDevice(3), ACL_ERROR_RT_INVALID_DEVICEID);
    aclrtContext context = NULL;
    CHECK_EQ(aclrtCreateContext(&context, 3), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_TRUE(context == NULL);
    CHECK_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    CHECK_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
    CHECK_EQ(device, 1); /* the user id comes back */
    CHECK_EQ(aclrtResetDevice(1), ACL_SUCCESS);
    CHECK_EQ(aclFinalize(), ACL_SUCCESS);
    return check_failures;
}

/* A list naming a device that does not exist: the boot fails, every call reports it. */
static int bad_list(void) {
    uint32_t count = 77;
    CHECK_EQ(aclrtGetDeviceCount(&count), ACL_ERROR_RT_INTERNAL_ERROR);
    CHECK_EQ(count, 77);
    CHECK_EQ(aclrtSetDevice(0), ACL_ERROR_RT_INTERNAL_ERROR);
    return check_failures;
}

static void in_child(const char* devices, const char* visible, int (*body)(void)) {
    const pid_t pid = fork();
    CHECK_TRUE(pid >= 0);
    if (pid == 0) {
        setenv("FERRY_DEVICE_COUNT", devices, 1);
        setenv("ASCEND_RT_VISIBLE_DEVICES", visible, 1);
        _exit(body() == 0 ? 0 : 1);
    }
    int status = -1;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_TRUE(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void) {
    in_child("4", "1,3", visible_pair);
    in_child("2", "0,2", bad_list);
    in_child("2", "0,,1", bad_list);
    in_child("2", "1,0", bad_list);
    return check_failures;
}
