/*
 * A minimal C11 test harness for the acltdt* tests: these tests are C on purpose (they prove the
 * compat headers and the shim work from C, docs/c-api.md#headers), so Catch2 is not available here.
 * CHECK records a failure and carries on; a test program's exit status is the failure count.
 * Checks run on the main thread only: worker threads record what they saw, main checks it.
 */
#ifndef FERRY_TESTS_COMPAT_TDT_CHECK_H
#define FERRY_TESTS_COMPAT_TDT_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        ++check_count;                                                                             \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);               \
            ++check_failures;                                                                      \
        }                                                                                          \
    } while (0)

/* Integer equality with both values printed on failure (aclError codes, sizes). */
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long check_a_ = (long long)(a);                                                       \
        long long check_b_ = (long long)(b);                                                       \
        ++check_count;                                                                             \
        if (check_a_ != check_b_) {                                                                \
            fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: %lld != %lld\n", __FILE__, __LINE__,  \
                    #a, #b, check_a_, check_b_);                                                   \
            ++check_failures;                                                                      \
        }                                                                                          \
    } while (0)

/* A check that cannot continue (e.g. a null handle the rest of the test needs); `cond` is
 * evaluated once. */
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        ++check_count;                                                                             \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: REQUIRE(%s) failed (fatal)\n", __FILE__, __LINE__, #cond);    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define RUN(test)                                                                                  \
    do {                                                                                           \
        int check_before_ = check_failures;                                                        \
        test();                                                                                    \
        fprintf(stderr, "%s %s\n", check_failures == check_before_ ? "ok  " : "FAIL", #test);      \
    } while (0)

/* Exit status of a test program: 0 only when every check passed and some check ran. */
static inline int check_summary(void) {
    fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
    return check_failures == 0 && check_count > 0 ? 0 : 1;
}

/* Monotonic milliseconds, for "never returns before its deadline" checks. */
static inline double check_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
