/*
 * queue.h - the bounded queue between the sampler and the writer; it also holds the ticks that
 * cannot be written yet (database full or locked), up to its capacity.
 *
 * The sampler pushes and never waits for the writer (only for the queue's mutex, held for a few
 * pointer moves). The writer takes a batch, and gives it back at the front if the write failed.
 * Held ticks (queued + taken) never exceed the capacity: past it the oldest queued tick is dropped
 * and counted. Thread-safe; the lock is the queue's own mutex.
 */
#ifndef PERFLOG_QUEUE_H
#define PERFLOG_QUEUE_H

#include "collectors/model/sample.h"

#include <stddef.h>
#include <stdint.h>

struct tick_queue;

struct queue_stats {
    size_t queued;    /* waiting to be taken */
    size_t in_flight; /* taken by the writer, not yet confirmed */
    uint64_t dropped; /* ticks lost because the bound was reached */
    size_t capacity;  /* the bound: queued + in_flight never exceed it */
};

struct tick_queue *queue_new(size_t capacity); /* capacity >= 2; NULL on out of memory */
void queue_free(struct tick_queue *q);         /* frees held ticks too; accepts NULL */

/* Hand `t` to the queue (it owns it now). Returns the number of ticks dropped to make room. */
size_t queue_push_take(struct tick_queue *q, struct tick *t);

/*
 * Wait up to `timeout_ms` for ticks, then move up to `max` of the oldest into out[] (the caller
 * owns them until it frees them or gives them back). Never more than half the capacity, so the
 * sampler always finds something to drop first. Returns the count (0 on timeout or close).
 */
size_t queue_pop(struct tick_queue *q, struct tick **out, size_t max, int64_t timeout_ms);

/* The writer is done with n taken ticks: written (caller frees them) or ... */
void queue_pop_done(struct tick_queue *q, size_t n);
/* ... not written: they go back to the front, oldest first, dropping the oldest past the bound. */
void queue_give_back_take(struct tick_queue *q, struct tick **ticks, size_t n);

/* Wake a waiting queue_pop for good (shutdown); pushes still work. */
void queue_close(struct tick_queue *q);
/* Wait up to timeout_ms for a push (or close). Returns 1 if ticks are queued. */
int queue_wait(struct tick_queue *q, int64_t timeout_ms);
/* Wait up to timeout_ms until at least `count` ticks are queued (or close). Returns 1 if so.
 * Meanwhile pushes do not wake the waiter before the count is reached. One waiter at a time. */
int queue_wait_count(struct tick_queue *q, size_t count, int64_t timeout_ms);
/* How long the oldest queued tick has been waiting, in ms; -1 when none is queued. */
int64_t queue_oldest_age_ms(struct tick_queue *q);

void queue_get_stats(struct tick_queue *q, struct queue_stats *out); /* lock-free; thread-safe */

#endif
