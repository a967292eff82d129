/*
 * follow.h - the processes the sampler follows: one root pid per open run.
 *
 * The API's threads add a run's pid when it starts and remove it when it ends or is deleted; the
 * sampler takes a snapshot before every collect. The sampler never waits for a lock here (design
 * rule: nothing the HTTP side does may delay a tick): writers serialise among themselves with a
 * mutex, and publish each slot through atomics that the sampler reads without one. A snapshot
 * taken while a slot changes sees it before or after the change, never a mix of two runs' pids.
 */
#ifndef PERFLOG_FOLLOW_H
#define PERFLOG_FOLLOW_H

#include "collectors/model/collector_config.h"

#include <stddef.h>
#include <stdint.h>

struct follow_set;

struct follow_set *follow_set_new(void);    /* NULL on out of memory */
void follow_set_free(struct follow_set *f); /* accepts NULL */

/*
 * Follow `pid` (> 0) for run `run_id`, with its descendants started after `since_wall_ms`
 * counted from zero. Returns 0, or -ENOSPC when COLLECTOR_MAX_ROOTS runs are followed already.
 * Thread-safe.
 */
int follow_add(struct follow_set *f, int64_t run_id, int pid, int64_t since_wall_ms);

/* Stop following run `run_id` (no-op if it is not followed). Thread-safe. */
void follow_remove(struct follow_set *f, int64_t run_id);

/* Copy the roots followed now into out (at most cap); returns how many. Lock-free. */
size_t follow_snapshot(struct follow_set *f, struct collector_proc_root *out, size_t cap);

#endif
