/*
 * testlib.h - a tiny test harness: CHECK macros that count and report, and a closing line
 * "N passed, N failed" that ctest and CI read. A test program exits non-zero when any check failed.
 */
#ifndef PERFLOG_TESTLIB_H
#define PERFLOG_TESTLIB_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int tl_passed, tl_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            tl_passed++;                                                                           \
        } else {                                                                                   \
            tl_failed++;                                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long tl_a = (long long)(a), tl_b = (long long)(b);                                    \
        if (tl_a == tl_b) {                                                                        \
            tl_passed++;                                                                           \
        } else {                                                                                   \
            tl_failed++;                                                                           \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b,  \
                    tl_a, tl_b);                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_DBL(a, b, tol)                                                                       \
    do {                                                                                           \
        double tl_a = (a), tl_b = (b);                                                             \
        if (fabs(tl_a - tl_b) <= (tol)) {                                                          \
            tl_passed++;                                                                           \
        } else {                                                                                   \
            tl_failed++;                                                                           \
            fprintf(stderr, "%s:%d: %s ~= %s failed: %.9g != %.9g\n", __FILE__, __LINE__, #a, #b,  \
                    tl_a, tl_b);                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *tl_a = (a), *tl_b = (b);                                                       \
        if (tl_a && tl_b && strcmp(tl_a, tl_b) == 0) {                                             \
            tl_passed++;                                                                           \
        } else {                                                                                   \
            tl_failed++;                                                                           \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a,  \
                    #b, tl_a ? tl_a : "(null)", tl_b ? tl_b : "(null)");                           \
        }                                                                                          \
    } while (0)

static inline int tl_done(void)
{
    printf("%d passed, %d failed\n", tl_passed, tl_failed);
    return tl_failed ? 1 : 0;
}

#endif
