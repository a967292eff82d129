/*
 * delta.h - the one place that turns raw cumulative readings into per-tick values.
 *
 * It keeps the previous reading of every instance and knows each field's width: a 32-bit field that
 * goes down has wrapped; a 64-bit field that goes down was reset (device re-created, counters
 * cleared), so the instance has no cumulative values that tick: a gap, never a negative or a huge
 * spike. The first reading of an instance has no deltas. Instances that vanish are forgotten
 * (mark and sweep by name), so a renamed device simply starts again under its new name.
 * Rows flagged RAW_IN_TOTAL are summed, per tick, into an extra "_Total" row. The readings of
 * extra PDH paths (struct raw_extra) are copied into the tick as they are.
 */
#ifndef PERFLOG_DELTA_H
#define PERFLOG_DELTA_H

#include "collectors/model/sample.h"

struct delta_state;

struct delta_state *delta_new(void);    /* NULL on out of memory */
void delta_free(struct delta_state *d); /* accepts NULL */

/* Forget every previous reading (after a gap in sampling too long to bridge). */
void delta_reset(struct delta_state *d);

/*
 * Build the tick for reading `cur`, taken `interval_ms` after the previous one, and remember `cur`
 * as the previous reading. Returns a heap tick (tick_free), or NULL on out of memory (the state is
 * then unchanged). Not thread-safe.
 */
struct tick *delta_tick(struct delta_state *d, const struct raw_sample *cur, int64_t wall_ms,
                        int64_t interval_ms, uint32_t missed);

/* The delta of one field, as described above. Returns 1 and sets *out, or 0 for no value. Pure. */
int delta_field(enum field_kind kind, uint64_t prev, uint64_t cur, int64_t *out);

#endif
