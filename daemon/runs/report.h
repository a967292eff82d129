/*
 * report.h - the run report of docs/design.md §7: what the disks, the wire, the CPUs and the page
 * cache did during a copy run and its settle tail, computed from stored data (so it can always be
 * regenerated), as JSON; the client renders it as text for people (cli/report_fmt.c).
 */
#ifndef PERFLOG_REPORT_H
#define PERFLOG_REPORT_H

#include "storage/query/live.h"
#include "storage/reader.h"

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
 * (the tail), read through `rd` and, for the newest ticks, `live` (either may be NULL), and from
 * run->edges when it has them. Returns a new JSON object with the keys docs/report.md defines, or
 * NULL with a message in err.
 */
json_t *report_compute(struct reader *rd, struct live *live, int64_t interval_ms,
                       const struct report_run *run, char *err, size_t errlen);

/* ---- the pure figures (report_figures.c), apart so the tests drive them on fixture series ----
 * None keeps state or allocates; all are thread-safe. */

/* One moment of the run and its tail: a tick, or an edge reading (write rate NAN, iv_s 0). */
struct report_point {
    int64_t t_ms;             /* UTC ms */
    double excess_bytes;      /* dirty + writeback minus their level at the start; NAN: unknown */
    double write_bytes_per_s; /* the devices' write rate over the tick's interval; NAN: unknown */
    double iv_s;              /* the tick's interval (it covers (t - iv, t]); 0 for an edge */
};

/* How far above the start level still counts as "back to the start level": 8 MiB, or 5 % of
 * the peak excess when that is larger (the daemon's settle rule). */
double report_level_slack(double peak_excess_bytes);

/*
 * The UTC ms at which the run's written data was on the device: the first moment at or after
 * end_ms that the excess of points p[0..n) (sorted by time) is at or below slack, interpolated
 * between that point and the one before; end_ms when it was down already when the command
 * returned. -1 when it never came down in the points.
 */
int64_t report_durable_at(const struct report_point *p, size_t n, int64_t end_ms, double slack);

/* The tail in two phases: the wait (the run's dirty data flat, nothing written) and the write.
 * Times in ms, bytes, rates in bytes/s; NAN when not known. */
struct report_tail {
    double wait_ms, write_ms, write_bytes, write_bytes_per_s, peak_write_bytes_per_s;
};

/*
 * Split the tail of p[0..n) after end_ms, up to durable_at_ms (-1: to the last point): the wait
 * lasts while the excess stays within slack of its highest since the end; the write starts in
 * the interval after that, as long before its end as that interval's drop of the excess takes at
 * the devices' busiest write second, and ends at durable_at_ms. write_bytes is the excess when
 * the wait ended, write_bytes_per_s that over write_ms, peak_write_bytes_per_s the devices'
 * busiest write second among the ticks overlapping the write.
 */
void report_tail_phases(const struct report_point *p, size_t n, int64_t end_ms,
                        int64_t durable_at_ms, double slack, struct report_tail *out);

/* The figure that heads the report: "durable" for a run that writes to a local disk, else
 * "device_read"; never above the devices' peak second (capped is then 1). */
struct report_headline {
    const char *kind; /* static */
    double bytes_per_s;
    int capped;
};
void report_pick_headline(int writes, double durable, double device_read, double peak_second,
                          struct report_headline *out);

#endif
