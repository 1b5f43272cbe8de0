/* Minimal checks for the C tests of ferry-acl: each failed check prints where and why and counts;
 * main returns the count (0 = pass). C has no Catch2; these tests are single-threaded. */
#ifndef FERRY_TESTS_COMPAT_RT_CHECK_H
#define FERRY_TESTS_COMPAT_RT_CHECK_H

#include <stdio.h>

static int check_failures = 0;

#define CHECK_EQ(actual, expected)                                                                 \
    do {                                                                                           \
        const long long check_a_ = (long long)(actual);                                            \
        const long long check_e_ = (long long)(expected);                                          \
        if (check_a_ != check_e_) {                                                                \
            fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: %lld != %lld\n", __FILE__, __LINE__,  \
                    #actual, #expected, check_a_, check_e_);                                       \
            ++check_failures;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_TRUE(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK_TRUE(%s) failed\n", __FILE__, __LINE__, #cond);          \
            ++check_failures;                                                                      \
        }                                                                                          \
    } while (0)

#endif
