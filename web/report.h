/*
 * report.h - the run report of design section 7: what the disks, the wire, the CPUs and the page
 * cache did during a copy run and its settle tail, computed from stored data (so it can always be
 * regenerated), as JSON for programs and as text for people.
 */
#ifndef PERFLOG_REPORT_H
#define PERFLOG_REPORT_H

#include "live.h"
#include "reader.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* What the runs table knows of a run. Unknown numbers are -1, unknown strings NULL. */
struct report_run {
    int64_t id;
    const char *label, *command, *host, *status;
    int64_t start_ms;
    int64_t end_ms;     /* -1 while running */
    int64_t settled_ms; /* -1 until settled: the tail then runs to the newest tick */
    int64_t exit_code;
    int64_t payload_bytes, files;
    const char *tool_output;
    /* The client's own /proc/self/io deltas over the run (they include its reaped children):
     * -1 when not sent. */
    int64_t io_read_bytes, io_write_bytes, storage_read_bytes, storage_write_bytes;
    int64_t pid; /* the process the run followed (its tree is in the Process rows); <= 0: none */
    /* Whether the daemon followed pid's processes: 1 yes, -1 no (not_followed_reason says why,
     * may be NULL), 0 not known (the daemon that knew has stopped). Unused when pid <= 0. */
    int followed;
    const char *not_followed_reason;
    const json_t *edges; /* borrowed; NULL when the run has no edge readings (older runs, Windows
                            without PDH edges) */
};

/*
 * Compute the report of `run` from the raw ticks of [start, end] (the run) and (end, settled]
 * (the tail), read through `rd` and, for the newest ticks, `live` (either may be NULL). Returns a
 * new JSON object with at least the keys of design section 7, or NULL with a message in err.
 */
json_t *report_compute(struct reader *rd, struct live *live, int64_t interval_ms,
                       const struct report_run *run, char *err, size_t errlen);

/* The report as text for people: the few numbers that matter first, details after. malloc'd. */
char *report_text(const json_t *report);

#endif
