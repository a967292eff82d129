/*
 * report_io.h - the run's own storage I/O against everyone else's, from the run's edges
 * (daemon/run_edges.h): the report's `edges`, `own`, `others` and `write_amplification` sections
 * (docs/report.md). Pure functions on JSON.
 */
#ifndef PERFLOG_REPORT_IO_H
#define PERFLOG_REPORT_IO_H

#include "daemon/runs/report.h"

#include <jansson.h>
#include <stdint.h>

/*
 * What the whole disks (in_total 1) did between two EDGEs: the sum over the disks of `later` that
 * `start` has too of later[key] - start[key] (a disk that appeared or was renamed in between
 * brings no cumulative count of its own). -1 when no disk has the key in both.
 */
int64_t report_io_disk_delta(const json_t *start, const json_t *later, const char *key);

/*
 * The storage bytes (`key`: "read_bytes" or "write_bytes") of the run's followed processes
 * between two EDGEs: for every process of `later`, its value less its value in `start` (0 when it
 * was not there yet). A child reaped in between is inside its parent's counters. -1 when
 * `later` has no process with the key.
 */
int64_t report_io_procs_delta(const json_t *start, const json_t *later, const char *key);

/* The later of settle and end of an `edges` object (NULL when neither was taken). */
const json_t *report_io_last_edge(const json_t *edges);

/*
 * Add `edges` (as stored, without the private io_scan), `own`, `others` (with top[]) and
 * `write_amplification` to report `r`, from run->edges and the client's totals. A run without
 * edges gets `edges` null and the reason in `edges_note`.
 */
void report_io_add(json_t *r, const struct report_run *run);

#endif
