/*
 * sample.h - what a collector reads (raw cumulative values) and what a tick carries to storage
 * (per-tick deltas and levels). Both are plain growable arrays of rows, one row per instance.
 */
#ifndef PERFLOG_SAMPLE_H
#define PERFLOG_SAMPLE_H

#include "collectors/model/counters.h"
#include "collectors/model/pdh_path.h"

#include <stddef.h>
#include <stdint.h>

/* One instance as read: raw values, bit i of `present` set when field i was read. */
#define RAW_IN_TOTAL 0x1u /* delta.c adds this row into the object's "_Total" row */
#define RAW_FROM_ZERO                                                                              \
    0x2u /* a new instance whose counters started at 0 (a process born while it                    \
          * was followed): its first reading is its first delta */

struct raw_row {
    char name[COUNTER_NAME_MAX];
    unsigned flags;
    uint64_t present;
    uint64_t v[COUNTER_MAX_FIELDS];
};

struct raw_object {
    struct raw_row *rows;
    size_t n, cap;
};

/*
 * One reading of an extra PDH path (collector.h: pdh_counters). Extra series are not counters of
 * the object table: each is one PDH path with the value PDH formats for it (what typeperf
 * prints), stored as it is. Only the Windows collector produces them.
 */
struct raw_extra {
    char path[PDH_PATH_MAX]; /* "\Object(Instance)\Counter", no machine prefix (pdh_path.h) */
    double value;            /* PDH_FMT_DOUBLE | PDH_FMT_NOCAP100 */
    int valid;               /* 0: no value this tick (a CStatus other than valid data) */
};

struct raw_extras {
    struct raw_extra *v;
    size_t n, cap;
};

/* One reading of every object. Owned by its creator; reuse across ticks with raw_sample_clear. */
struct raw_sample {
    struct raw_object obj[OBJ_COUNT];
    struct raw_extras extra;
};

/* Append a zeroed row named `name` (truncated to COUNTER_NAME_MAX-1). NULL on out of memory. */
struct raw_row *raw_object_add(struct raw_object *o, const char *name, size_t name_len);
/* Append an extra reading of `path` without a value. NULL on out of memory or when the path does
 * not fit in PDH_PATH_MAX. */
struct raw_extra *raw_extra_add(struct raw_extras *e, const char *path);
void raw_sample_clear(struct raw_sample *s); /* keeps the allocations */
void raw_sample_free(struct raw_sample *s);  /* frees the rows; accepts a zeroed sample */

/*
 * One instance as stored: bit i of `null_mask` set means field i has no value this tick. The raw
 * reading rides along for /metrics (Prometheus wants the cumulative values themselves): bit i of
 * `raw_mask` set means raw[i] holds field i as read. Computed rows (_Total sums) have no raw
 * values. Storage ignores them.
 */
struct tick_row {
    char name[COUNTER_NAME_MAX];
    uint64_t null_mask;
    int64_t v[COUNTER_MAX_FIELDS];
    uint64_t raw_mask;
    uint64_t raw[COUNTER_MAX_FIELDS];
};

struct tick_object {
    struct tick_row *rows;
    size_t n;
};

/* One extra PDH series of a tick (struct raw_extra, as read). */
struct tick_extra {
    const char *path; /* owned by the tick's extra_names */
    double value;
    int valid; /* 0: no value this tick: a gap */
};

/* The path strings of a tick's extras: immutable, reference-counted, shared by consecutive ticks
 * while the set of extra paths stays the same (sample.c). */
struct extra_names;

/*
 * One tick, as the sampler hands it to the writer. Heap-allocated and reference-counted: the queue
 * (and the writer after it) hold one reference, the in-memory store of recent ticks another.
 * Immutable once published, so holders read it without a lock. tick_free drops a reference.
 */
struct tick {
    _Atomic unsigned refs; /* 1 when created */
    int64_t wall_ms;       /* real UTC time of the sample, ms since the epoch */
    int64_t interval_ms; /* real elapsed time since the previous tick (monotonic); 0: first tick */
    uint32_t missed;     /* ticks that should have happened before this one and did not */
    int64_t queued_mono_ns; /* when the sampler queued it (daemon/queue.c) */
    struct tick_object obj[OBJ_COUNT];
    struct tick_extra *extras; /* n_extras extra PDH series, in the collector's order */
    size_t n_extras;
    struct extra_names *extra_names; /* holds the extras' paths; NULL without extras */
};

struct tick *tick_ref(struct tick *t); /* adds a reference; returns t; thread-safe */
void tick_free(struct tick *t); /* drops a reference, frees at 0; accepts NULL; thread-safe */

/*
 * Give t (which has no extras yet) a copy of the readings e[0..n). The paths go into a names
 * block: *cache when its paths are e's, in order, else a new block that then replaces *cache (its
 * old reference dropped). cache may be NULL: then the block is t's alone. Returns 0, or -ENOMEM
 * with t unchanged. Not thread-safe as to *cache (one sampler owns it).
 */
int tick_set_extras(struct tick *t, const struct raw_extra *e, size_t n,
                    struct extra_names **cache);

/* Drop a reference to a names block (a cache of tick_set_extras); accepts NULL; thread-safe. */
void extra_names_free(struct extra_names *names);

#endif
