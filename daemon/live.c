/*
 * live.c - a ring of tick references behind one mutex.
 */
#include "live.h"

#include <pthread.h>
#include <stdlib.h>

struct live {
    pthread_mutex_t lock; /* guards everything below */
    struct tick **ring;
    size_t cap, head, n; /* ring[head] is the oldest */
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
    pthread_mutex_init(&l->lock, NULL);
    return l;
fail:
    free(l);
    return NULL;
}

void live_free(struct live *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        tick_free(l->ring[(l->head + i) % l->cap]);
    pthread_mutex_destroy(&l->lock);
    free(l->ring);
    free(l);
}

void live_publish(struct live *l, struct tick *t)
{
    struct tick *old = NULL;

    tick_ref(t);
    pthread_mutex_lock(&l->lock);
    if (l->n == l->cap) {
        old = l->ring[l->head];
        l->head = (l->head + 1) % l->cap;
        l->n--;
    }
    l->ring[(l->head + l->n) % l->cap] = t;
    l->n++;
    pthread_mutex_unlock(&l->lock);
    tick_free(old); /* outside the lock: the last reference frees the rows */
}

struct tick *live_latest(struct live *l)
{
    struct tick *t = NULL;

    pthread_mutex_lock(&l->lock);
    if (l->n)
        t = tick_ref(l->ring[(l->head + l->n - 1) % l->cap]);
    pthread_mutex_unlock(&l->lock);
    return t;
}

size_t live_range(struct live *l, int64_t from_ms, int64_t to_ms, struct tick **out, size_t max,
                  int64_t *oldest_ms)
{
    size_t got = 0;

    pthread_mutex_lock(&l->lock);
    if (oldest_ms)
        *oldest_ms = l->n ? l->ring[l->head]->wall_ms : INT64_MAX;
    for (size_t i = 0; i < l->n && got < max; i++) {
        struct tick *t = l->ring[(l->head + i) % l->cap];

        if (t->wall_ms >= from_ms && t->wall_ms <= to_ms)
            out[got++] = tick_ref(t);
    }
    pthread_mutex_unlock(&l->lock);
    return got;
}
