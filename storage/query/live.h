/*
 * live.h - the newest ticks, kept in memory for the HTTP API: /latest, /metrics and the recent
 * part of /data are served from here without touching SQLite, and ticks the writer has not
 * committed yet are visible at once.
 *
 * A ring of at most `capacity` ticks, each held by reference (ticks are immutable once built).
 * With a keep window set (live_set_keep), the store holds only the newest tick, the ticks of the
 * last keep_ms, and every older tick someone else still holds - the queue and the writer hold a
 * tick until it is committed - so memory does not grow with the capacity and everything older
 * than the oldest tick held is in the database (or was lost by the queue). Readers take the part
 * of a range before the oldest held tick from SQLite.
 * One thread (the sampler) publishes; HTTP workers take references. Lock: the store's own mutex,
 * held by readers only for pointer moves and reference counts. The publisher never waits for it:
 * when a reader holds it, the tick is handed off through a small lock-free slot ring and moved in
 * by the next holder (see live.c), so a preempted low-priority reader cannot delay a tick.
 */
#ifndef PERFLOG_LIVE_H
#define PERFLOG_LIVE_H

#include "collectors/model/sample.h"

#include <stddef.h>
#include <stdint.h>

struct live;

struct live *live_new(size_t capacity); /* capacity >= 1; NULL on out of memory */
void live_free(struct live *l);         /* drops every held reference; accepts NULL */

/*
 * Let go of a tick once nobody but the store holds it (written or dropped by the queue) and it is
 * more than keep_ms older than the newest, oldest first. keep_ms < 0 (the default): hold the last
 * `capacity` ticks whatever their age. Call before the first publish; not thread-safe with it.
 */
void live_set_keep(struct live *l, int64_t keep_ms);

/* Add t as the newest tick (the store takes its own reference), dropping the oldest past the
 * capacity. One publishing thread only; ticks in publishing order. Does not wait for readers. */
void live_publish_ref(struct live *l, struct tick *t);

/* The newest tick with a new reference (release with tick_free), or NULL. Thread-safe. */
struct tick *live_latest(struct live *l);

/*
 * Up to `max` held ticks with from_ms <= wall_ms <= to_ms, oldest first, each with a new
 * reference (the caller frees them). Returns the count. *oldest_ms (may be NULL) receives the
 * wall time of the oldest tick held (INT64_MAX when empty), so the caller knows which part of its
 * range must come from the database. Thread-safe.
 */
size_t live_range(struct live *l, int64_t from_ms, int64_t to_ms, struct tick **out, size_t max,
                  int64_t *oldest_ms);

#endif
