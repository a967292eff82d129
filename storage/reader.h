/*
 * reader.h - read-only access to the counter log, for the HTTP API and other readers.
 *
 * Each reader is one read-only SQLite connection (WAL lets it read while the writer writes), used
 * by one thread at a time: the HTTP workers share a few, one request at a time each. Rows are
 * handed to callbacks in time order, so a caller aggregates without holding a result set in memory.
 * A callback returning non-zero stops the walk, and that value is returned.
 */
#ifndef PERFLOG_READER_H
#define PERFLOG_READER_H

#include "collectors/model/counters.h"

#include <stddef.h>
#include <stdint.h>

#define READER_MAX_COUNTERS 32 /* counters per object; counters.c has at most 12 */

enum reader_tier { READER_1M, READER_1H };

struct reader;

/* Open `path` read-only (it must exist). Returns 0 and sets *out, or a negative errno with a
 * message in err (-EPROTO: the file is not a perflog database of a version this build reads). */
int reader_open(const char *path, struct reader **out, char *err, size_t errlen);
void reader_close(struct reader *r); /* accepts NULL */
const char *reader_errmsg(struct reader *r);

/* Free the pages r's cache holds (its schema and settings stay): between requests, as the
 * writer's next commit would invalidate them anyway. */
void reader_release_memory(struct reader *r);

/* The host name the writer recorded (meta key 'host') into buf (cap bytes, always terminated when
 * cap > 0). Returns 0, -ENOENT when the database has none (buf ""), or -EIO. */
int reader_host(struct reader *r, char *buf, size_t cap);

/* A run as its export needs it (web/export.h, export_run_window, decides its window). */
struct reader_run {
    char status[16];                      /* running, ending, settled, interrupted, failed */
    int64_t start_ms, end_ms, settled_ms; /* 0: not recorded */
    int64_t pid;                          /* its followed process, -1: none */
};

/* Run `id` into *out. Returns 0, -ENOENT (no such run) or -EIO. */
int reader_run_window(struct reader *r, int64_t id, struct reader_run *out);

/*
 * The newest settled run labelled `label` that ended at or before before_ms and has a stored
 * report: its id into *id and its report's JSON text into *json_out (malloc'd; the caller frees
 * it). Returns 0, -ENOENT (none), -ENOMEM or -EIO.
 */
int reader_labelled_report(struct reader *r, const char *label, int64_t before_ms, int64_t *id,
                           char **json_out);

/* The time of the first tick at or after from_ms into *t_ms, found through the index in one step
 * however long the empty stretch before it. Returns 0, -ENOENT (no tick at or after from_ms) or
 * -EIO. */
int reader_next_tick(struct reader *r, int64_t from_ms, int64_t *t_ms);

/* Every instance the log knows: cb(arg, object id, name, instance id), in id order. */
int reader_instances(struct reader *r,
                     int (*cb)(void *arg, int obj, const char *name, int64_t inst), void *arg);

/* The roll-up watermarks: the minute tier is complete for buckets before *minute_until_ms, the
 * hour tier before *hour_until_ms (0 when nothing is rolled up yet). */
int reader_rollup_marks(struct reader *r, int64_t *minute_until_ms, int64_t *hour_until_ms);

/* Ticks with from_ms <= t_ms <= to_ms, ordered by (t_ms, id): cb(arg, tick id, t_ms,
 * interval_ms) with interval_ms -1 when the tick has none (first after a start). */
int reader_ticks(struct reader *r, int64_t from_ms, int64_t to_ms,
                 int (*cb)(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms), void *arg);

/*
 * Raw rows of object `obj` for instance ids insts[0..ninst) (insts NULL: every instance) in the
 * ticks with ids tick_from..tick_to, in primary-key order (tick id, instance): cb(arg, tick id,
 * instance id, stored fields, null mask) - the values and mask counter_eval takes. Only the fields
 * of the mask `fields` (bit i: field i) are read; the others come back as no value. Scanning the
 * object's primary key by id range, with no join, is what makes a day of one counter cheap to read.
 */
int reader_rows(struct reader *r, int obj, uint32_t fields, const int64_t *insts, size_t ninst,
                int64_t tick_from, int64_t tick_to,
                int (*cb)(void *arg, int64_t tick, int64_t inst, const int64_t *v,
                          uint64_t null_mask),
                void *arg);

/* The processes followed in ticks tick_from..tick_to: cb(arg, instance id, pid, parent pid as
 * first seen) once per instance, -1 for a value never stored. A non-zero cb return stops (and is
 * returned). */
int reader_process_ids(struct reader *r, int64_t tick_from, int64_t tick_to,
                       int (*cb)(void *arg, int64_t inst, int64_t pid, int64_t ppid), void *arg);

/* One roll-up row: n ticks, and min/avg/max of every counter of the object (bit k of null_mask
 * set: counter k had no value in the bucket). */
struct reader_rollup_row {
    int64_t bucket_ms, inst, n;
    uint64_t null_mask;
    double min[READER_MAX_COUNTERS], avg[READER_MAX_COUNTERS], max[READER_MAX_COUNTERS];
    /* a per-operation counter's operations in the bucket (CF_PER_OP; NAN: not kept, a bucket
     * written before they were); 0 for the other counters */
    double ops[READER_MAX_COUNTERS];
};

/* Roll-up rows of `tier` for the instances with from_ms <= bucket_ms <= to_ms, by bucket. */
int reader_rollups(struct reader *r, int obj, enum reader_tier tier, const int64_t *insts,
                   size_t ninst, int64_t from_ms, int64_t to_ms,
                   int (*cb)(void *arg, const struct reader_rollup_row *row), void *arg);

/*
 * The extra PDH series (pdh_extra.h). A database of a version before 4 has none: these then find
 * nothing and return 0.
 *
 * reader_pdh_paths: every extra path the log knows, in id order: cb(arg, path id, path, object,
 * instance ("" for a single-instance object), counter).
 */
int reader_pdh_paths(struct reader *r,
                     int (*cb)(void *arg, int64_t id, const char *path, const char *object,
                               const char *instance, const char *counter),
                     void *arg);

/* Values of the paths ids[0..nids) in the ticks with ids tick_from..tick_to, in (tick, path id)
 * order: cb(arg, tick id, path id, value, valid), valid 0 for a stored gap. */
int reader_pdh_values(struct reader *r, const int64_t *ids, size_t nids, int64_t tick_from,
                      int64_t tick_to,
                      int (*cb)(void *arg, int64_t tick, int64_t id, double value, int valid),
                      void *arg);

/* Roll-up rows of `tier` for the paths ids[0..nids) with from_ms <= bucket_ms <= to_ms, by bucket,
 * in the shape of the object roll-ups: row->inst is the path id, counter 0 its min/avg/max, n the
 * number of values in the bucket. */
int reader_pdh_rollups(struct reader *r, enum reader_tier tier, const int64_t *ids, size_t nids,
                       int64_t from_ms, int64_t to_ms,
                       int (*cb)(void *arg, const struct reader_rollup_row *row), void *arg);

#endif
