/*
 * rollup_acc.h - the minute roll-up of the object tables, kept as ticks are written: a running
 * row count and, per counter, min, sum, count and max per instance, folded into the per-minute
 * tables once a tick of the next minute arrives. The values are those the batch roll-up
 * (schema_rollup_minute) computes from the same rows: counter_eval mirrors the SQL expression and
 * the sums are taken in the same order, as SQLite's avg() takes them. A per-operation counter
 * (CF_PER_OP) sums its numerator and denominator instead: its average is their quotient.
 */
#ifndef PERFLOG_ROLLUP_ACC_H
#define PERFLOG_ROLLUP_ACC_H

#include "collectors/model/counters.h"

#include <stddef.h>
#include <stdint.h>

/* One instance's running roll-up over one bucket; the arrays hold one entry per counter. Over
 * minutes of an hour, sum holds the sum of avg * n and cnt the rows of the minutes with an avg.
 * A per-operation counter (CF_PER_OP) has in sum the total of its numerator and in den that of
 * its denominator (the operations) over a minute; over an hour, the sum of avg * ops and the
 * total of ops. */
struct rollup_series {
    int64_t inst;
    int64_t n; /* rows seen */
    double *min, *sum, *max, *den;
    int64_t *cnt; /* rows in which the counter had a value */
};

/* The running roll-up of one object. Zero-initialized is empty. */
struct rollup_obj {
    struct rollup_series *s;
    size_t n, cap;
    uint32_t *slot; /* by instance id: index in s plus one, 0 when absent this minute */
    size_t slot_cap;
    int hour; /* fed by rollup_obj_add_bucket: an hour of minutes */
};

/* Fold one row of instance `inst` (values v, null_mask as stored) into r. Returns 0 or -ENOMEM. */
int rollup_obj_add(struct rollup_obj *r, const struct object_def *od, int64_t inst,
                   const int64_t *v, uint64_t null_mask, int64_t interval_ms);
/* Fold minute bucket `m` of the same object into hour roll-up h, as schema_rollup_hour combines
 * minute rows: counts add, min and max combine, each average counts n times. 0 or -ENOMEM. */
int rollup_obj_add_bucket(struct rollup_obj *h, const struct object_def *od,
                          const struct rollup_series *m);
/* The average of counter k (od->counters[k] is c) of series s with a value (s->cnt[k] > 0), as
 * the batch roll-up computes it: over a minute (hour 0) or an hour of minutes (hour 1). The
 * operations of a per-operation counter are s->den[k]. */
double rollup_avg(int hour, const struct counter_def *c, const struct rollup_series *s, size_t k);

/* Forget the bucket's series; keeps the allocations. */
void rollup_obj_reset(struct rollup_obj *r);
void rollup_obj_free(struct rollup_obj *r);

#endif
