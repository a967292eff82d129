/*
 * compare.h - perflog compare and perflog run --repeat: runs side by side. The figures come from
 * the daemon's GET /api/v1/runs/compare, or, for runs on several hosts, from the same table
 * (web/report_compare.h) applied to the runs' reports; nothing here computes a figure.
 */
#ifndef PERFLOG_CLI_COMPARE_H
#define PERFLOG_CLI_COMPARE_H

#include "cli.h"

#include <jansson.h>
#include <stdio.h>

enum compare_format { COMPARE_TEXT, COMPARE_JSON, COMPARE_CSV };

/*
 * Add "median", "min" and "max" (null when no run has a number) to every figure of cmp, the
 * comparison JSON: for perflog run --repeat. Statistics of the figures, not new figures.
 */
void compare_add_stats(json_t *cmp);

/*
 * Print cmp ({"runs", "figures"}) to f: a table with a column per run and the ratio to the first
 * run after each value of the later columns (and median/min/max when the figures have them), the
 * JSON, or CSV with a header row. Pure apart from writing to f.
 */
void compare_print(FILE *f, const json_t *cmp, enum compare_format fmt);

/*
 * GET /api/v1/runs/compare?ids=... from c for ids[0..n): the comparison in *out (new), 0; or
 * CLI_EXIT_FAIL after the message (the server's, for an unknown id or a run without report).
 */
int compare_fetch(const struct cli *c, const long long *ids, size_t n, json_t **out);

#endif
