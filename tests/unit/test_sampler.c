/*
 * test_sampler.c - the tick loop on a fixture /proc and /sys: ticks come in order with their real
 * elapsed intervals, reach the queue and the live ring, and new settings apply at the next tick.
 * (How close a tick lands to its grid point is the machine's: tests/integration/test_scheduler.py
 * measures it on the release build.) The
 * settings' strings are freed as soon as each call returns, as a reload frees the old config: the
 * sampler and the collector it makes keep copies of every list (pdh_counters included), which
 * the ASan build checks.
 */
#include "daemon/queue.h"
#include "daemon/sampler.h"
#include "storage/query/live.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#define WAIT_MS 60000 /* a generous bound for a few 100 ms ticks on a loaded machine */

static char *heap(const char *s)
{
    char *d = malloc(strlen(s) + 1);

    return d ? strcpy(d, s) : NULL;
}

/* Settings whose strings are on the heap, for free_settings. */
static void make_settings(struct sampler_settings *s, int64_t interval_ms)
{
    memset(s, 0, sizeof(*s));
    s->interval_ms = interval_ms;
    s->collect.root = heap(FIXTURES_DIR "/linux/base");
    s->collect.disk_exclude[0] = heap("loop*");
    s->collect.n_disk_exclude = 1;
    s->collect.pdh_counters[0] = heap("\\LogicalDisk(C:)\\% Free Space");
    s->collect.n_pdh_counters = 1;
}

static void free_settings(struct sampler_settings *s)
{
    memset((char *)s->collect.root, 'X', strlen(s->collect.root));
    free((char *)s->collect.root);
    free((char *)s->collect.disk_exclude[0]);
    free((char *)s->collect.pdh_counters[0]);
}

/* Take every queued tick; check their order and contents; returns how many. */
static size_t drain(struct tick_queue *q, int64_t *last_ms)
{
    struct tick *t[64];
    size_t n = queue_pop(q, t, 64, 0);

    for (size_t i = 0; i < n; i++) {
        CHECK(t[i]->wall_ms > *last_ms);
        CHECK(*last_ms == 0 || t[i]->interval_ms > 0); /* only the first tick has none */
        CHECK(t[i]->obj[OBJ_PROCESSOR].n > 0);         /* the fixture's /proc/stat was read */
        CHECK(t[i]->obj[OBJ_DISK].n > 0);
        /* The exclude glob, freed by the caller long ago, still applies. */
        for (size_t r = 0; r < t[i]->obj[OBJ_DISK].n; r++)
            CHECK(strncmp(t[i]->obj[OBJ_DISK].rows[r].name, "loop", 4) != 0);
        *last_ms = t[i]->wall_ms;
        tick_free(t[i]);
    }
    queue_pop_done(q, n);
    return n;
}

int main(void)
{
    struct tick_queue *q = queue_new(256);
    struct live *live = live_new(8);
    struct sampler_settings s;
    struct sampler_stats st;
    struct sampler *sp;
    struct tick *latest;
    int64_t last_ms = 0;
    char err[256];
    size_t n = 0;

    make_settings(&s, 100);
    sp = sampler_start(&s, q, live, err, sizeof(err));
    free_settings(&s);
    CHECK(sp != NULL);
    if (!sp)
        return tl_done();

    CHECK_INT(queue_wait_count(q, 3, WAIT_MS), 1);
    n = drain(q, &last_ms);
    CHECK(n >= 3);
    latest = live_latest(live);
    CHECK(latest && latest->wall_ms >= last_ms);
    tick_free(latest);

    /* A new interval applies at the next tick. */
    make_settings(&s, 200);
    sampler_reconfigure(sp, &s);
    free_settings(&s);
    for (int tries = 0; tries < 50; tries++) {
        sampler_get_stats(sp, &st);
        if (st.interval_ms == 200)
            break;
        queue_wait_count(q, 1, WAIT_MS);
        drain(q, &last_ms);
    }
    CHECK_INT(st.interval_ms, 200);
    CHECK_INT(queue_wait_count(q, 2, WAIT_MS), 1);
    n = drain(q, &last_ms);
    CHECK(n >= 2);
    sampler_get_stats(sp, &st);
    CHECK(st.ticks >= 3); /* counted after the push: the newest may not be yet */
    CHECK(st.last_tick_wall_ms > 0);

    sampler_stop(sp);
    live_free(live);
    queue_free(q);
    return tl_done();
}
