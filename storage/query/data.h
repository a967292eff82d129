/*
 * data.h - the numbers of GET /api/v1/data: series over a time range, from the raw ticks or the
 * roll-up tiers, with the newest ticks taken from memory.
 *
 * Without a step, every tick in the range is a point (its real timestamp). With a step, points
 * sit on multiples of the step and each is the avg, min or max of the values in [t, t + step).
 * Roll-ups are used when they can answer exactly: a step that is a whole number of hours reads the
 * hour tier, a whole number of minutes the minute tier; the part of the range the tier has not
 * covered yet (its watermark, see reader_rollup_marks) is computed from the finer tiers, and
 * ticks still in memory come from memory. Values equal counter_eval on the stored fields, so the
 * raw points equal the counter_values view bit for bit.
 */
#ifndef PERFLOG_DATA_H
#define PERFLOG_DATA_H

#include "storage/query/live.h"
#include "storage/query/series.h"
#include "storage/reader.h"

#include <stddef.h>
#include <stdint.h>

#define DATA_MAX_CELLS 4000000 /* series x points in one answer: bounds the memory of a request */

enum data_agg { DATA_AVG, DATA_MIN, DATA_MAX };

struct data_req {
    int64_t from_ms, to_ms; /* inclusive */
    int64_t step_ms;        /* 0: every raw tick */
    enum data_agg agg;
    int64_t max_points;  /* per series */
    int64_t interval_ms; /* the sampling interval, to size a raw answer before reading it */
};

struct data_result {
    const char *tier; /* "raw", "1m", "1h" */
    int64_t step_ms;  /* the step, or the sampling interval for raw ticks */
    size_t npoints, nseries;
    int64_t *ts;    /* npoints timestamps, ms since the epoch */
    double *values; /* nseries * npoints, series-major; NAN = no value */
};

/*
 * Compute the result for series s[0..ns). `rd` and `live` may be NULL (then that source is
 * empty). Returns 0, -E2BIG when the answer would exceed req->max_points per series or
 * DATA_MAX_CELLS in all (why says which limit, with the numbers), -EIO (why has the database
 * error) or -ENOMEM. Thread-safe for distinct readers.
 */
int data_query(struct reader *rd, struct live *live, const struct series *s, size_t ns,
               const struct data_req *req, struct data_result *res, char *why, size_t whylen);

void data_result_free(struct data_result *r); /* accepts a zeroed result */

#endif
