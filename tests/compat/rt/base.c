/* acl_base.h's functions from C11: aclGetRecentErrMsg (per-thread most recent failure text, read
 * once, recorded by both the runtime and the TDT boundary while logging is off — the default) and
 * aclDataTypeSize (docs/c-api.md, Error messages and Data type sizes). */
#define _POSIX_C_SOURCE 200809L

#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static int contains(const char* text, const char* part) {
    return text != NULL && strstr(text, part) != NULL;
}

static void message_of_a_runtime_failure(void) {
    CHECK_TRUE(aclGetRecentErrMsg() == NULL); /* nothing failed on this thread yet */
    CHECK_EQ(aclrtMalloc(NULL, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    const char* text = aclGetRecentErrMsg();
    CHECK_TRUE(contains(text, "aclrtMalloc"));
    CHECK_TRUE(contains(text, "100000"));
    CHECK_TRUE(aclGetRecentErrMsg() == NULL); /* reading cleared it */

    /* a later success keeps the message; a later failure replaces it */
    CHECK_EQ(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    CHECK_EQ(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
    text = aclGetRecentErrMsg();
    CHECK_TRUE(contains(text, "aclrtCreateStream"));
    CHECK_TRUE(!contains(text, "aclrtSetDevice"));
    CHECK_EQ(aclrtResetDevice(0), ACL_SUCCESS);
}

static void returned_text_outlives_later_failures(void) {
    CHECK_EQ(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
    const char* text = aclGetRecentErrMsg();
    CHECK_TRUE(contains(text, "aclrtFree"));
    CHECK_EQ(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM); /* records a new message */
    CHECK_TRUE(contains(text, "aclrtFree"));                 /* the one handed out is unchanged */
    CHECK_TRUE(contains(aclGetRecentErrMsg(), "aclrtGetDevice"));
}

static void message_of_a_tdt_failure(void) {
    CHECK_EQ(acltdtDestroyChannel(NULL), ACL_ERROR_INVALID_PARAM);
    const char* text = aclGetRecentErrMsg();
    CHECK_TRUE(contains(text, "acltdtDestroyChannel"));
    CHECK_TRUE(aclGetRecentErrMsg() == NULL);
}

static void* fail_on_another_thread(void* seen) {
    CHECK_TRUE(aclGetRecentErrMsg() == NULL); /* the main thread's failure is not visible here */
    CHECK_EQ(aclrtMallocHost(NULL, 8), ACL_ERROR_INVALID_PARAM);
    *(int*)seen = contains(aclGetRecentErrMsg(), "aclrtMallocHost");
    CHECK_EQ(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM); /* left unread */
    return NULL;
}

static void messages_are_per_thread(void) {
    int seen = 0;
    pthread_t other;
    CHECK_EQ(aclrtMalloc(NULL, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(pthread_create(&other, NULL, fail_on_another_thread, &seen), 0);
    CHECK_EQ(pthread_join(other, NULL), 0);
    CHECK_TRUE(seen);
    const char* text = aclGetRecentErrMsg(); /* the other thread's unread failure is not ours */
    CHECK_TRUE(contains(text, "aclrtMalloc"));
    CHECK_TRUE(!contains(text, "aclrtFreeHost"));
}

static void data_type_sizes(void) {
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT), 4);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT16), 2);
    CHECK_EQ(aclDataTypeSize(ACL_BF16), 2);
    CHECK_EQ(aclDataTypeSize(ACL_INT8), 1);
    CHECK_EQ(aclDataTypeSize(ACL_UINT8), 1);
    CHECK_EQ(aclDataTypeSize(ACL_BOOL), 1);
    CHECK_EQ(aclDataTypeSize(ACL_INT16), 2);
    CHECK_EQ(aclDataTypeSize(ACL_UINT16), 2);
    CHECK_EQ(aclDataTypeSize(ACL_INT32), 4);
    CHECK_EQ(aclDataTypeSize(ACL_UINT32), 4);
    CHECK_EQ(aclDataTypeSize(ACL_INT64), 8);
    CHECK_EQ(aclDataTypeSize(ACL_UINT64), 8);
    CHECK_EQ(aclDataTypeSize(ACL_DOUBLE), 8);
    CHECK_EQ(aclDataTypeSize(ACL_COMPLEX32), 4);
    CHECK_EQ(aclDataTypeSize(ACL_COMPLEX64), 8);
    CHECK_EQ(aclDataTypeSize(ACL_COMPLEX128), 16);
    CHECK_EQ(aclDataTypeSize(ACL_HIFLOAT8), 1);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT8_E5M2), 1);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT8_E4M3FN), 1);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT8_E8M0), 1);
    /* sub-byte types: the byte one unpacked element occupies */
    CHECK_EQ(aclDataTypeSize(ACL_INT4), 1);
    CHECK_EQ(aclDataTypeSize(ACL_UINT1), 1);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT4_E2M1), 1);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT4_E1M2), 1);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT6_E3M2), 1);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT6_E2M3), 1);
    /* no per-element size */
    CHECK_EQ(aclDataTypeSize(ACL_STRING), 0);
    CHECK_EQ(aclDataTypeSize(ACL_DT_UNDEFINED), 0);
    CHECK_EQ(aclDataTypeSize((aclDataType)5), 0);   /* a gap in the enum */
    CHECK_EQ(aclDataTypeSize((aclDataType)999), 0); /* no such type */
    CHECK_EQ(aclDataTypeSize((aclDataType)-7), 0);
}

int main(void) {
    message_of_a_runtime_failure();
    returned_text_outlives_later_failures();
    message_of_a_tdt_failure();
    messages_are_per_thread();
    data_type_sizes();
    return check_failures;
}
