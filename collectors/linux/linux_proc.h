/*
 * linux_proc.h - following the processes of runs: a pid and its descendants, read from
 * /proc/PID/stat and /proc/PID/io each collect. Private to collectors/linux/.
 *
 * Linux (without CONFIG_PROC_CHILDREN, as on Debian's cloud kernels) has no cheap way to list a
 * process's children, so the tracker lists /proc once per collect and reads the stat file of each
 * pid it has not seen before (its parent); pids already known cost nothing. Followed processes keep
 * their stat and io files open and are re-read with pread, so a collect costs two reads per
 * followed process plus one directory listing. Nothing is read while no root is given.
 */
#ifndef PERFLOG_LINUX_PROC_H
#define PERFLOG_LINUX_PROC_H

#include "collectors/collector.h"

#include <stddef.h>

struct proc_tracker;

/* Rows per collect at most: a fork bomb under a run (or a run on pid 1) must not sink the
 * sampler. The rest of the processes are left out, with a warning logged once. */
#define PROC_TRACKER_MAX_ROWS 4096

/* A tracker reading `proc_dir` (e.g. "/proc", or a fixture tree's). NULL on out of memory. */
struct proc_tracker *proc_tracker_new(const char *proc_dir);
void proc_tracker_free(struct proc_tracker *t); /* accepts NULL */

/* The roots to follow (see collector_follow); n = 0 forgets every process and closes its files. */
void proc_tracker_set_roots(struct proc_tracker *t, const struct collector_proc_root *roots,
                            size_t n);

/*
 * Append one OBJ_PROCESS row per followed process that could be read to `out`. `wall_ms` and
 * `boot_ms` are the same instant on the wall clock and CLOCK_BOOTTIME (to place a process's start
 * time against a run's). Returns the number of rows, 0 when nothing is followed, or -ENOMEM (rows
 * added so far stay). Not thread-safe.
 */
int proc_tracker_collect(struct proc_tracker *t, int64_t wall_ms, int64_t boot_ms,
                         struct raw_object *out);

#endif
