/*
 * queue.c - bounded tick queue (a ring) with give-back; see queue.h.
 */
#include "daemon/queue.h"

#include "base/monocond.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct tick_queue {
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t nonempty;
    struct tick **ring;
    size_t cap, head, n; /* n queued, starting at ring[head] */
    size_t in_flight;
    uint64_t dropped;
    int closed;
    size_t wake_at; /* a push signals a waiting taker once this many ticks are queued */
    /* Copies of n, in_flight and dropped for queue_get_stats, which reads them without the lock:
     * an HTTP worker asking for statistics must never hold the lock the sampler pushes under. */
    _Atomic size_t a_queued, a_in_flight;
    _Atomic uint64_t a_dropped;
};

/* Refresh the lock-free copies; called with the lock held after every change. */
static void mirror(struct tick_queue *q)
{
    atomic_store_explicit(&q->a_queued, q->n, memory_order_relaxed);
    atomic_store_explicit(&q->a_in_flight, q->in_flight, memory_order_relaxed);
    atomic_store_explicit(&q->a_dropped, q->dropped, memory_order_relaxed);
}

struct tick_queue *queue_new(size_t capacity)
{
    struct tick_queue *q;

    if (capacity < 2)
        capacity = 2;
    q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->ring = calloc(capacity, sizeof(*q->ring));
    if (!q->ring) {
        free(q);
        return NULL;
    }
    q->cap = capacity;
    q->wake_at = 1;
    pthread_mutex_init(&q->lock, NULL);
    monocond_init(&q->nonempty);
    return q;
}

void queue_free(struct tick_queue *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->n; i++)
        tick_free(q->ring[(q->head + i) % q->cap]);
    pthread_cond_destroy(&q->nonempty);
    pthread_mutex_destroy(&q->lock);
    free(q->ring);
    free(q);
}

/* Drop the oldest queued tick. Lock held; n > 0. */
static void drop_oldest(struct tick_queue *q)
{
    tick_free(q->ring[q->head]);
    q->ring[q->head] = NULL;
    q->head = (q->head + 1) % q->cap;
    q->n--;
    q->dropped++;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

size_t queue_push_take(struct tick_queue *q, struct tick *t)
{
    size_t dropped = 0;
    int wake;

    t->queued_mono_ns = mono_ns();
    pthread_mutex_lock(&q->lock);
    while (q->n > 0 && q->n + q->in_flight >= q->cap) {
        drop_oldest(q);
        dropped++;
    }
    if (q->n < q->cap) {
        q->ring[(q->head + q->n) % q->cap] = t;
        q->n++;
    } else {
        tick_free(t); /* unreachable while takes are bounded to half the capacity */
        q->dropped++;
        dropped++;
    }
    /* Waking the writer for a batch it will not take yet would cost it a context switch. */
    wake = q->n >= q->wake_at;
    mirror(q);
    pthread_mutex_unlock(&q->lock);
    /* Signalled after the unlock: a writer woken while the lock is still held blocks on it at
     * once and needs a second wake-up from the unlock (two futex calls and a context switch
     * more a batch). The queue outlives every push, and a taker re-checks the count. */
    if (wake)
        pthread_cond_signal(&q->nonempty);
    return dropped;
}

static void deadline_after(struct timespec *ts, int64_t timeout_ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += timeout_ms / 1000;
    ts->tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* Wait for at least `count` queued ticks, a close, or the timeout. Lock held. */
static void wait_count(struct tick_queue *q, size_t count, int64_t timeout_ms)
{
    struct timespec ts;

    deadline_after(&ts, timeout_ms);
    while (q->n < count && !q->closed)
        if (monocond_timedwait(&q->nonempty, &q->lock, &ts) == ETIMEDOUT)
            break;
}

int queue_wait_count(struct tick_queue *q, size_t count, int64_t timeout_ms)
{
    int reached;

    pthread_mutex_lock(&q->lock);
    q->wake_at = count ? count : 1;
    wait_count(q, count, timeout_ms);
    q->wake_at = 1;
    reached = q->n >= count;
    pthread_mutex_unlock(&q->lock);
    return reached;
}

int64_t queue_oldest_age_ms(struct tick_queue *q)
{
    int64_t age = -1;

    pthread_mutex_lock(&q->lock);
    if (q->n)
        age = (mono_ns() - q->ring[q->head]->queued_mono_ns) / 1000000;
    pthread_mutex_unlock(&q->lock);
    return age;
}

int queue_wait(struct tick_queue *q, int64_t timeout_ms)
{
    int has;

    pthread_mutex_lock(&q->lock);
    wait_count(q, 1, timeout_ms);
    has = q->n > 0;
    pthread_mutex_unlock(&q->lock);
    return has;
}

size_t queue_pop(struct tick_queue *q, struct tick **out, size_t max, int64_t timeout_ms)
{
    size_t k = 0;

    if (max > q->cap / 2)
        max = q->cap / 2 ? q->cap / 2 : 1;
    pthread_mutex_lock(&q->lock);
    wait_count(q, 1, timeout_ms);
    while (k < max && q->n > 0) {
        out[k++] = q->ring[q->head];
        q->ring[q->head] = NULL;
        q->head = (q->head + 1) % q->cap;
        q->n--;
    }
    q->in_flight += k;
    mirror(q);
    pthread_mutex_unlock(&q->lock);
    return k;
}

void queue_pop_done(struct tick_queue *q, size_t n)
{
    pthread_mutex_lock(&q->lock);
    q->in_flight -= n <= q->in_flight ? n : q->in_flight;
    mirror(q);
    pthread_mutex_unlock(&q->lock);
}

void queue_give_back_take(struct tick_queue *q, struct tick **ticks, size_t n)
{
    pthread_mutex_lock(&q->lock);
    q->in_flight -= n <= q->in_flight ? n : q->in_flight;
    /* Put them back at the front, newest first, so the oldest ends up at the head. */
    for (size_t i = n; i-- > 0;) {
        if (q->n == q->cap) {
            /* Full: the tick being given back is older than everything queued. */
            tick_free(ticks[i]);
            q->dropped++;
            continue;
        }
        q->head = (q->head + q->cap - 1) % q->cap;
        q->ring[q->head] = ticks[i];
        q->n++;
    }
    mirror(q);
    pthread_mutex_unlock(&q->lock);
}

void queue_close(struct tick_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->nonempty);
    pthread_mutex_unlock(&q->lock);
}

void queue_get_stats(struct tick_queue *q, struct queue_stats *out)
{
    out->queued = atomic_load_explicit(&q->a_queued, memory_order_relaxed);
    out->in_flight = atomic_load_explicit(&q->a_in_flight, memory_order_relaxed);
    out->dropped = atomic_load_explicit(&q->a_dropped, memory_order_relaxed);
    out->capacity = q->cap; /* fixed at queue_new */
}
