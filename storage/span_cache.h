/*
 * span_cache.h - the raw rows not chunked yet, kept by the writer as it inserts them, so that a
 * chunk step codes them without reading them back from the object tables.
 *
 * At 1 000 disks and NICs the SELECT of a chunk step, which reads back every raw row of its span,
 * was about 40 % of the step and the steps half of the writer's time (bench/README.md). The writer
 * has every row in hand when it inserts it; this keeps a copy, coded small, until the step that
 * chunks it.
 *
 * The cache is exact from a tick on: it holds every row of every object whose tick is at or past
 * span_cache_from() and not chunked yet, with the values the tables hold. Whatever could make it
 * differ from the tables resets it (the owner calls span_cache_reset): a rolled-back
 * transaction, a DELETE of raw rows other than a chunk step's at or past that tick
 * (span_cache_forget_upto), a commit by another connection to the file (the owner watches PRAGMA
 * data_version), and the cache growing past its byte limit (it resets itself and skips
 * the rest of that tick). After a reset it is exact again from the next tick begun. A chunk step
 * reads a span from it only when the span starts at or past that tick (span_cache_covers), else
 * from the table; either way span_cache_take drops the span's points of the step's instances.
 *
 * Per instance, points are (tick, null mask, values) in tick order, coded as varints: the tick's
 * step from the previous point, the mask, then each present field's zig-zag difference from that
 * field's previous present value (0 before the first). Rows are first staged as given, in one
 * sequential buffer per object, and coded a few ticks at a time, instance by instance (see
 * span_cache.c): a row's instance is touched once for those ticks, not once a tick. So a second
 * row of one tick, or the byte limit reached while coding, resets the cache when the rows are
 * coded: when the stage is full, or at the latest in span_cache_covers and span_cache_take for a
 * span that reaches the staged ticks.
 *
 * Not thread-safe: the writer thread owns it.
 */
#ifndef PERFLOG_STORAGE_SPAN_CACHE_H
#define PERFLOG_STORAGE_SPAN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define SPAN_CACHE_MAX_FIELDS 64

struct span_cache;

/* A cache for objects 0..nobj-1 that holds at most max_bytes of points and buffers (beyond, it
 * resets). NULL when out of memory. Free with span_cache_free (NULL is fine). */
struct span_cache *span_cache_new(int nobj, size_t max_bytes);
void span_cache_free(struct span_cache *c);

/* Drop every point: the cache is exact again from the next tick begun. */
void span_cache_reset(struct span_cache *c);

/* Tick `tick` begins: the rows span_cache_add is given next are its rows. Ticks increase. */
void span_cache_tick(struct span_cache *c, int64_t tick);

/*
 * Row `r` of object `o` in the current tick: instance `inst`, values v[0..nfields-1], field f
 * NULL where bit f of null_mask is set. `r` is only a hint (a collector lists the same instances
 * in the same order tick after tick). Returns 0, or -ENOMEM (the cache is then reset: the caller
 * goes on without it).
 */
int span_cache_add(struct span_cache *c, int o, size_t r, int64_t inst, const int64_t *v,
                   uint64_t null_mask, size_t nfields);

/* The first tick from which the cache holds every row, or -1 (none begun since the reset). */
int64_t span_cache_from(const struct span_cache *c);

/* Whether every row of ticks lo and later is in the cache, for a take of ticks [lo, hi]. Codes
 * the staged rows first when one is of a tick up to hi (a reset on the way, and the answer is
 * no). */
int span_cache_covers(struct span_cache *c, int64_t lo, int64_t hi);

/* Raw rows of ticks up to `upto` are being deleted other than by a chunk step: reset when that
 * reaches the ticks the cache answers for. */
void span_cache_forget_upto(struct span_cache *c, int64_t upto);

/* One point for span_cache_take: v[f] is set where bit f of null_mask is clear. Returns 0 or a
 * negative errno, which stops the take. */
typedef int (*span_cache_point_fn)(void *ctx, int64_t inst, int64_t tick, const int64_t *v,
                                   uint64_t null_mask);

/*
 * The points of object `o`'s instances [a, b) with ticks [lo, hi], instance by instance in
 * increasing id, each in tick order, to fn (NULL: none); then every point of those instances up
 * to tick hi is dropped, and an instance left with none is forgotten. Returns 0 or what fn
 * returned (the points are then partly dropped: the owner resets the cache with its transaction).
 * The staged rows are coded first when one is of a tick up to hi; when that resets the cache a
 * take with fn returns -ENOMEM (out of memory) or -EAGAIN (a second row of one tick, the byte
 * limit) without calling it.
 */
int span_cache_take(struct span_cache *c, int o, int64_t lo, int64_t hi, int64_t a, int64_t b,
                    span_cache_point_fn fn, void *ctx);

/* Bytes held now: points, buffers, the per-instance state and the stage. */
size_t span_cache_bytes(const struct span_cache *c);

#endif
