/*
 * proc_windows.h - following the processes of runs on Windows: a pid and its descendants, as rows
 * of OBJ_PROCESS named "name:pid" (Process V2's instance names). Private to collectors/windows/.
 *
 * Win32 rather than PDH: wine has no Process V2 counter set, and re-expanding its wildcard every
 * tick is slow on a real machine too. Each collect takes one Toolhelp snapshot (pid, parent pid,
 * executable name), decides with proc_tree.c which processes are followed, and reads each through
 * a handle kept open while it is followed (GetProcessIoCounters, GetProcessTimes). The handle also
 * pins the pid, so a followed pid is never reused under the tracker. Nothing is read while no root
 * is given.
 */
#ifndef PERFLOG_PROC_WINDOWS_H
#define PERFLOG_PROC_WINDOWS_H

#include "collectors/collector.h"
#include "collectors/model/sample.h"

#include <stddef.h>

struct proc_win;

struct proc_win *proc_win_new(void);    /* NULL on out of memory */
void proc_win_free(struct proc_win *t); /* accepts NULL; closes every handle */

/* The roots to follow (see collector_follow); n = 0 forgets every process and closes its handle. */
void proc_win_set_roots(struct proc_win *t, const struct collector_proc_root *roots, size_t n);

/*
 * Append one OBJ_PROCESS row per followed process that could be read to `out`. Returns the number
 * of rows, 0 when nothing is followed (or the snapshot failed: logged once), or -ENOMEM (rows
 * added so far stay). Not thread-safe.
 */
int proc_win_collect(struct proc_win *t, struct raw_object *out);

#endif
