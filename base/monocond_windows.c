/*
 * monocond_windows.c - monotonic condition variables on winpthreads, which only knows wall-clock
 * deadlines: the wait is made relative to now with pthread_cond_timedwait_relative_np.
 */
#include "base/monocond.h"

#include <errno.h>
#include <stdint.h>

int monocond_init(pthread_cond_t *c)
{
    return pthread_cond_init(c, NULL);
}

int monocond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *mono_deadline)
{
    struct timespec now, rel;
    int64_t left_ns;

    clock_gettime(CLOCK_MONOTONIC, &now);
    left_ns = ((int64_t)mono_deadline->tv_sec - now.tv_sec) * 1000000000LL +
              (mono_deadline->tv_nsec - now.tv_nsec);
    if (left_ns <= 0)
        return ETIMEDOUT;
    rel.tv_sec = (time_t)(left_ns / 1000000000LL);
    rel.tv_nsec = (long)(left_ns % 1000000000LL);
    return pthread_cond_timedwait_relative_np(c, m, &rel);
}
