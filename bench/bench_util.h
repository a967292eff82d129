/*
 * bench_util.h - the clocks and the sort of the benchmark programs: monotonic wall time, the
 * process's CPU time (user + system), and the int64 comparison for qsort of their samples.
 */
#ifndef PERFLOG_BENCH_UTIL_H
#define PERFLOG_BENCH_UTIL_H

#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

static inline int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t cpu_ns(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static inline int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

#endif
