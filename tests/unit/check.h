/* Minimal test assertions for tests/unit/test_*.c: each test file is one executable whose
 * exit status is the verdict (ctest reads it). A failed CHECK prints file:line and the
 * expression, counts the failure, and the test goes on; TEST_END returns non-zero if any
 * check failed. REQUIRE stops the test at once. */
#ifndef SF_TEST_CHECK_H
#define SF_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>

static int check_failures;
static int check_count;

#define CHECK(cond) do { \
    check_count++; \
    if (!(cond)) { \
        check_failures++; \
        fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    } \
} while (0)

/* Integer equality, printing both values. */
#define CHECK_EQ(a, b) do { \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
    check_count++; \
    if (check_a_ != check_b_) { \
        check_failures++; \
        fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld != %lld)\n", \
                __FILE__, __LINE__, #a, #b, check_a_, check_b_); \
    } \
} while (0)

#define REQUIRE(cond) do { \
    check_count++; \
    if (!(cond)) { \
        fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
        exit(1); \
    } \
} while (0)

#define TEST_END() do { \
    printf("%d checks, %d failed\n", check_count, check_failures); \
    return check_failures ? 1 : 0; \
} while (0)

#endif
