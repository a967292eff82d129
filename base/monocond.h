/*
 * monocond.h - condition variables whose timed waits take a CLOCK_MONOTONIC deadline.
 *
 * POSIX says so with pthread_condattr_setclock (monocond_posix.c). winpthreads refuses that
 * attribute and measures every deadline against the wall clock, where a monotonic deadline is
 * always past, so there the wait is turned into a relative one (monocond_windows.c).
 */
#ifndef PERFLOG_MONOCOND_H
#define PERFLOG_MONOCOND_H

#include <pthread.h>
#include <time.h>

/* pthread_cond_init for a condition waited on with monocond_timedwait. Returns 0 or an errno. */
int monocond_init(pthread_cond_t *c);

/* pthread_cond_timedwait until `mono_deadline` (CLOCK_MONOTONIC); returns 0, ETIMEDOUT or another
 * errno, and like it may return early (callers re-check their predicate). */
int monocond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *mono_deadline);

#endif
