/*
 * report_compare.h - runs side by side: one row per headline figure of the run report, one
 * value per run, each value taken from that run's own report (never computed again), and its
 * ratio to the first run's. The figures are one table (report_compare.c); a new report figure
 * is one row there. Used by GET /api/v1/runs/compare and by perflog compare for runs on several
 * hosts. Pure functions on JSON; thread-safe.
 */
#ifndef PERFLOG_REPORT_COMPARE_H
#define PERFLOG_REPORT_COMPARE_H

#include <jansson.h>
#include <stddef.h>

#define REPORT_COMPARE_MIN_RUNS 2
#define REPORT_COMPARE_MAX_RUNS 20

/*
 * The comparison of reports[0..n) (borrowed; each a run report as docs/report.md defines it):
 * {"runs": [report, ...], "figures": [{"name", "title", "unit", "values", "ratios"}]}. A value is
 * the report's own JSON value (null when the report lacks it); a ratio is value / the first
 * run's value, null when either is not a number or the first is 0. A figure of each disk or
 * interface has one row per instance any run has, and is left out when every value is null or 0
 * (an idle device). Returns a new object, or NULL when out of memory.
 */
json_t *report_compare(json_t *const *reports, size_t n);

/*
 * The value at RFC 6901 pointer `ptr` ("/throughput/durable"; "" is the document) in `doc`, or
 * NULL. Object keys only ("~0" and "~1" escapes), plus decimal array indexes. Borrowed.
 */
const json_t *report_compare_at(const json_t *doc, const char *ptr);

#endif
