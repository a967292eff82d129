/*
 * test_queue.c - the bounded tick queue: order, bound, drop-oldest, give-back after a failure.
 */
#include "daemon/queue.h"
#include "testlib.h"

#include <stdlib.h>

static struct tick *mk(int64_t ms)
{
    struct tick *t = calloc(1, sizeof(*t));
    t->refs = 1;
    t->wall_ms = ms;
    return t;
}

int main(void)
{
    struct tick_queue *q = queue_new(6);
    struct tick *out[8];
    struct queue_stats st;
    size_t n;

    /* FIFO order. */
    for (int i = 1; i <= 4; i++)
        CHECK_INT(queue_push_take(q, mk(i)), 0);
    n = queue_pop(q, out, 8, 0);
    CHECK_INT(n, 3); /* at most half the capacity per take */
    CHECK_INT(out[0]->wall_ms, 1);
    CHECK_INT(out[2]->wall_ms, 3);

    /* While 3 are in flight, the bound counts them: 4 queued + 3 in flight > 6 drops the oldest
     * queued tick (4), never the in-flight ones. */
    CHECK_INT(queue_push_take(q, mk(5)), 0);
    CHECK_INT(queue_push_take(q, mk(6)), 0); /* 3 queued + 3 in flight = 6 */
    CHECK_INT(queue_push_take(q, mk(7)), 1); /* drops 4 */
    queue_get_stats(q, &st);
    CHECK_INT(st.queued, 3);
    CHECK_INT(st.in_flight, 3);
    CHECK_INT(st.dropped, 1);

    /* The write failed: give back; they go to the front in order. */
    queue_give_back_take(q, out, n);
    queue_get_stats(q, &st);
    CHECK_INT(st.queued, 6);
    CHECK_INT(st.in_flight, 0);
    n = queue_pop(q, out, 1, 0);
    CHECK_INT(n, 1);
    CHECK_INT(out[0]->wall_ms, 1);
    queue_pop_done(q, 1);
    free(out[0]);
    n = queue_pop(q, out, 8, 0);
    CHECK_INT(n, 3);
    CHECK_INT(out[0]->wall_ms, 2);
    CHECK_INT(out[1]->wall_ms, 3);
    CHECK_INT(out[2]->wall_ms, 5);
    queue_pop_done(q, n);
    for (size_t i = 0; i < n; i++)
        free(out[i]);

    /* Timeout with nothing queued: returns 0. Close wakes takers. */
    n = queue_pop(q, out, 8, 0);
    CHECK_INT(n, 2);
    queue_pop_done(q, n);
    for (size_t i = 0; i < n; i++)
        free(out[i]);
    CHECK_INT(queue_pop(q, out, 8, 50), 0);
    /* Waiting for a count: times out short of it, returns at once when it is there. */
    CHECK_INT(queue_oldest_age_ms(q), -1);
    CHECK_INT(queue_push_take(q, mk(10)), 0);
    CHECK_INT(queue_wait_count(q, 2, 30), 0);
    CHECK(queue_oldest_age_ms(q) >= 30);
    CHECK_INT(queue_push_take(q, mk(11)), 0);
    CHECK_INT(queue_wait_count(q, 2, 5000), 1);
    n = queue_pop(q, out, 8, 0);
    CHECK_INT(n, 2);
    queue_pop_done(q, n);
    for (size_t i = 0; i < n; i++)
        free(out[i]);
    queue_close(q);
    CHECK_INT(queue_wait_count(q, 3, 5000), 0); /* closed: no waiting */
    CHECK_INT(queue_pop(q, out, 8, 5000), 0);
    CHECK_INT(queue_wait(q, 5000), 0);
    queue_free(q);
    queue_free(NULL);
    return tl_done();
}
