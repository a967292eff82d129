/*
 * monocond_posix.c - monotonic condition variables with pthread_condattr_setclock.
 */
#include "base/monocond.h"

int monocond_init(pthread_cond_t *c)
{
    pthread_condattr_t ca;
    int rc;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    rc = pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
    return rc;
}

int monocond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *mono_deadline)
{
    return pthread_cond_timedwait(c, m, mono_deadline);
}
