/*
 * report_proc.h - which followed processes belong to a run: the tree under the run's pid, rebuilt
 * from the stored `Process` rows (their ID Process and Creating Process ID, the parent as first
 * seen) of the run's window, from the database and the ticks still in memory.
 */
#ifndef PERFLOG_REPORT_PROC_H
#define PERFLOG_REPORT_PROC_H

#include "storage/query/live.h"
#include "storage/query/series.h"
#include "storage/reader.h"

#include <stddef.h>
#include <stdint.h>

#define REPORT_PROC_MAX 4096 /* processes of one run, at most */

/*
 * Append to *set one series per counter of `counters` (names of the Process object) for every
 * process of the tree rooted at `root_pid` with rows in from_ms..to_ms; *nproc receives the
 * number of processes. Processes of other runs in the same window are left out. `rd` and `live`
 * may be NULL. Returns 0, -ENOMEM or -EIO.
 */
int report_proc_series(struct reader *rd, struct live *live, int root_pid, int64_t from_ms,
                       int64_t to_ms, const char *const *counters, size_t ncounters,
                       struct series_set *set, size_t *nproc);

/*
 * A run's export: replace the Process series of *set (every process the log knows that the
 * patterns matched) by the same counters of the run's own process tree (root_pid, window
 * from_ms..to_ms). A set without Process series is left alone. Returns 0, -ENOMEM or -EIO.
 */
int report_proc_restrict(struct reader *rd, struct live *live, int root_pid, int64_t from_ms,
                         int64_t to_ms, struct series_set *set);

#endif
