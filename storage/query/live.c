/*
 * live.c - a ring of tick references behind one mutex, fed without waiting.
 *
 * The sampler must never wait for an HTTP worker. A worker holds the mutex only for pointer moves,
 * but it runs at a lower priority and can be preempted while holding it, so the sampler does not
 * take the mutex unless it is free: it drops the tick into a small single-producer hand-off ring
 * (`pending`) and only tries the lock. Whoever holds the lock next - a reader, or the sampler on a
 * later tick - first moves the pending ticks into the ring, in the order they were published.
 *
 * With a keep window, the same holder then lets go of the oldest ticks nobody else holds. Only
 * the oldest go, and only while each is free, so the ring stays one run of consecutive ticks and
 * "older than the oldest held" keeps meaning "committed": the writer drops its reference only
 * after the commit (writer.c), and a reader's reference only delays the pruning.
 */
#include "storage/query/live.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define LIVE_PENDING 16                 /* ticks the sampler can hand off while the lock is busy */
#define LIVE_DROPPED (2 * LIVE_PENDING) /* pushed out + pruned by one holder at most */

struct live {
    pthread_mutex_t lock; /* guards ring, cap, head, n and drain_seq */
    struct tick **ring;
    size_t cap, head, n; /* ring[head] is the oldest */
    uint64_t drain_seq;  /* next pending slot to drain */
    uint64_t pub_seq;    /* next pending slot to fill; the publisher's own */
    int64_t keep_ms;     /* < 0: keep `cap` ticks; set before publishing, then read-only */
    _Atomic(struct tick *) pending[LIVE_PENDING];
};

struct live *live_new(size_t capacity)
{
    struct live *l = calloc(1, sizeof(*l));

    if (!l || capacity == 0)
        goto fail;
    l->ring = calloc(capacity, sizeof(*l->ring));
    if (!l->ring)
        goto fail;
    l->cap = capacity;
    l->keep_ms = -1;
    for (size_t i = 0; i < LIVE_PENDING; i++)
        atomic_init(&l->pending[i], NULL);
    pthread_mutex_init(&l->lock, NULL);
    return l;
fail:
    free(l);
    return NULL;
}

/* Append t as the newest; returns the tick pushed out past the capacity, or NULL. Locked. */
static struct tick *push_locked(struct live *l, struct tick *t)
{
    struct tick *old = NULL;

    if (l->n == l->cap) {
        old = l->ring[l->head];
        l->head = (l->head + 1) % l->cap;
        l->n--;
    }
    l->ring[(l->head + l->n) % l->cap] = t;
    l->n++;
    return old;
}

/* Move the handed-off ticks into the ring; the ones pushed out go to out[] (freed by the caller
 * after unlocking). Returns their count. At most LIVE_PENDING per call: the publisher may refill
 * slots while this runs, and what it adds now is moved by the next holder. Locked. */
static size_t drain_locked(struct live *l, struct tick **out)
{
    size_t n = 0;
    struct tick *t;

    for (int k = 0;
         k < LIVE_PENDING && (t = atomic_exchange(&l->pending[l->drain_seq % LIVE_PENDING], NULL));
         k++) {
        struct tick *old = push_locked(l, t);

        l->drain_seq++;
        if (old)
            out[n++] = old;
    }
    return n;
}

/* The oldest tick can go: the keep window is set, it is not the newest, nobody else holds it
 * (refs is 1: a new reference to a held tick is taken only under the lock), and it is older than
 * the window. Locked. */
static int prunable_locked(const struct live *l)
{
    const struct tick *oldest = l->ring[l->head], *newest = l->ring[(l->head + l->n - 1) % l->cap];

    return l->keep_ms >= 0 && l->n > 1 && atomic_load(&oldest->refs) == 1 &&
           oldest->wall_ms < newest->wall_ms - l->keep_ms;
}

/* Let go of up to `room` of the oldest ticks nobody else holds; they go to out[] (freed by the
 * caller after unlocking). Returns their count. Locked. */
static size_t prune_locked(struct live *l, struct tick **out, size_t room)
{
    size_t n = 0;

    while (n < room && prunable_locked(l)) {
        out[n++] = l->ring[l->head];
        l->ring[l->head] = NULL;
        l->head = (l->head + 1) % l->cap;
        l->n--;
    }
    return n;
}

/* Drain, then prune; out[] has room for LIVE_DROPPED. Returns the count in out[]. Locked. */
static size_t tidy_locked(struct live *l, struct tick **out)
{
    size_t n = drain_locked(l, out);

    return n + prune_locked(l, out + n, LIVE_DROPPED - n);
}

static void free_all(struct tick **ticks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tick_free(ticks[i]);
}

/* Lock and bring the ring up to date; the caller unlocks and then frees *dropped. */
static size_t lock_current(struct live *l, struct tick **dropped)
{
    pthread_mutex_lock(&l->lock);
    return tidy_locked(l, dropped);
}

void live_set_keep(struct live *l, int64_t keep_ms)
{
    l->keep_ms = keep_ms < 0 ? -1 : keep_ms;
}

void live_free(struct live *l)
{
    struct tick *dropped[LIVE_DROPPED];
    size_t nd;

    if (!l)
        return;
    nd = lock_current(l, dropped);
    pthread_mutex_unlock(&l->lock);
    free_all(dropped, nd);
    for (size_t i = 0; i < l->n; i++)
        tick_free(l->ring[(l->head + i) % l->cap]);
    pthread_mutex_destroy(&l->lock);
    free(l->ring);
    free(l);
}

void live_publish_ref(struct live *l, struct tick *t)
{
    _Atomic(struct tick *) *slot = &l->pending[l->pub_seq % LIVE_PENDING];
    struct tick *dropped[LIVE_DROPPED];
    size_t nd;

    tick_ref(t);
    if (atomic_load(slot) != NULL) {
        /* LIVE_PENDING ticks handed off and nobody took the lock since: wait for it once */
        nd = lock_current(l, dropped);
        pthread_mutex_unlock(&l->lock);
        free_all(dropped, nd);
    }
    atomic_store(slot, t);
    l->pub_seq++;
    if (pthread_mutex_trylock(&l->lock) != 0)
        return; /* a reader has the lock; it (or the next tick) moves t into the ring */
    nd = tidy_locked(l, dropped);
    pthread_mutex_unlock(&l->lock);
    free_all(dropped, nd);
}

struct tick *live_latest(struct live *l)
{
    struct tick *dropped[LIVE_DROPPED], *t = NULL;
    size_t nd = lock_current(l, dropped);

    if (l->n)
        t = tick_ref(l->ring[(l->head + l->n - 1) % l->cap]);
    pthread_mutex_unlock(&l->lock);
    free_all(dropped, nd);
    return t;
}

size_t live_range(struct live *l, int64_t from_ms, int64_t to_ms, struct tick **out, size_t max,
                  int64_t *oldest_ms)
{
    struct tick *dropped[LIVE_DROPPED];
    size_t got = 0, nd = lock_current(l, dropped);

    if (oldest_ms)
        *oldest_ms = l->n ? l->ring[l->head]->wall_ms : INT64_MAX;
    for (size_t i = 0; i < l->n && got < max; i++) {
        struct tick *t = l->ring[(l->head + i) % l->cap];

        if (t->wall_ms >= from_ms && t->wall_ms <= to_ms)
            out[got++] = tick_ref(t);
    }
    pthread_mutex_unlock(&l->lock);
    free_all(dropped, nd);
    return got;
}
