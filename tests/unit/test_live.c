/*
 * test_live.c - the in-memory store of the newest ticks: order, capacity, references, ranges, and
 * the raw readings delta_tick keeps in each row for /metrics, and the keep window that lets go
 * of written ticks.
 */
#include "collectors/model/delta.h"
#include "storage/query/live.h"
#include "testlib.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct tick *mk(int64_t ms)
{
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = ms;
    return t;
}

static void test_ring(void)
{
    struct live *l = live_new(3);
    struct tick *out[8], *t;
    int64_t oldest = 0;
    size_t n;

    CHECK(live_latest(l) == NULL);
    CHECK_INT(live_range(l, 0, 100, out, 8, &oldest), 0);
    CHECK(oldest == INT64_MAX);
    for (int i = 1; i <= 5; i++) {
        t = mk(i * 1000);
        live_publish_ref(l, t);
        tick_free(t); /* the store keeps its own reference */
    }
    t = live_latest(l);
    CHECK(t && t->wall_ms == 5000);
    tick_free(t);
    n = live_range(l, 0, 100000, out, 8, &oldest);
    CHECK_INT(n, 3); /* capacity 3: ticks 3, 4, 5 */
    CHECK_INT(oldest, 3000);
    CHECK_INT(out[0]->wall_ms, 3000);
    CHECK_INT(out[2]->wall_ms, 5000);
    for (size_t i = 0; i < n; i++)
        tick_free(out[i]);
    n = live_range(l, 3500, 4500, out, 8, NULL);
    CHECK_INT(n, 1);
    CHECK_INT(out[0]->wall_ms, 4000);
    /* a reference outlives the store */
    live_free(l);
    CHECK_INT(out[0]->wall_ms, 4000);
    CHECK_INT(out[0]->refs, 1);
    tick_free(out[0]);
    n = 0;
    l = live_new(2);
    CHECK_INT(live_range(l, 0, 10, out, 0, NULL), 0);
    live_free(l);
    CHECK(live_new(0) == NULL);
    live_free(NULL);
}

/* A publisher and readers at once: run under TSan/ASan in CI. */
static void *reader_thread(void *arg)
{
    struct live *l = arg;
    struct tick *out[16];

    for (int i = 0; i < 20000; i++) {
        size_t n = live_range(l, 0, INT64_MAX, out, 16, NULL);
        struct tick *t = live_latest(l);

        for (size_t k = 1; k < n; k++)
            if (out[k]->wall_ms <= out[k - 1]->wall_ms)
                abort();
        for (size_t k = 0; k < n; k++)
            tick_free(out[k]);
        tick_free(t);
    }
    return NULL;
}

static void test_threads(void)
{
    struct live *l = live_new(8);
    pthread_t th[2];

    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, reader_thread, l);
    for (int i = 1; i <= 20000; i++) {
        struct tick *t = mk(i);

        live_publish_ref(l, t);
        tick_free(t);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    /* every tick handed off while a reader held the lock made it into the ring, in order */
    {
        struct tick *out[8], *t = live_latest(l);
        size_t n = live_range(l, 0, INT64_MAX, out, 8, NULL);

        CHECK(t && t->wall_ms == 20000);
        CHECK_INT(n, 8);
        for (size_t k = 0; k < n; k++) {
            CHECK_INT(out[k]->wall_ms, 20000 - 7 + (int64_t)k);
            tick_free(out[k]);
        }
        tick_free(t);
    }
    live_free(l);
}

/* The wall times held, oldest first, as "1,2,3" (seconds). */
static const char *held(struct live *l, char *buf, size_t cap)
{
    struct tick *out[64];
    size_t n = live_range(l, INT64_MIN, INT64_MAX, out, 64, NULL), len = 0;

    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "," : "",
                                (long long)(out[i]->wall_ms / 1000));
        tick_free(out[i]);
    }
    return buf;
}

/*
 * With a keep window, a tick leaves once nobody else holds it (the queue and the writer hold it
 * until it is committed) and it is older than the window; only from the oldest end, so a tick
 * still held blocks the newer ones behind it and the ring stays consecutive.
 */
static void test_keep(void)
{
    struct live *l = live_new(64);
    struct tick *t[12], *out[4];
    char buf[256];
    int64_t oldest;

    live_set_keep(l, 2000); /* the ticks of the last 2 s, and the newest */
    for (int i = 1; i <= 6; i++) {
        t[i] = mk(i * 1000); /* the test holds a reference, as the queue would */
        live_publish_ref(l, t[i]);
    }
    CHECK_STR(held(l, buf, sizeof(buf)), "1,2,3,4,5,6"); /* all unwritten: all kept */
    tick_free(t[2]);                                     /* "written", but 1 is not yet */
    t[7] = mk(7000);
    live_publish_ref(l, t[7]);
    CHECK_STR(held(l, buf, sizeof(buf)), "1,2,3,4,5,6,7");
    tick_free(t[1]);
    tick_free(t[3]);
    tick_free(t[5]); /* 4 is still held: 5 stays behind it */
    t[8] = mk(8000);
    live_publish_ref(l, t[8]);
    CHECK_STR(held(l, buf, sizeof(buf)), "4,5,6,7,8");
    CHECK_INT(live_range(l, 0, INT64_MAX, out, 1, &oldest), 1);
    CHECK_INT(oldest, 4000);
    /* a reader's reference only delays the pruning */
    tick_free(t[4]);
    tick_free(t[6]);
    tick_free(t[7]);
    tick_free(t[8]); /* 6, 7, 8: 6 is older than 8 - 2 s, 7 and 8 are inside the window */
    t[9] = mk(9000);
    live_publish_ref(l, t[9]); /* out[0] (tick 4) is still the reader's */
    CHECK_STR(held(l, buf, sizeof(buf)), "4,5,6,7,8,9");
    tick_free(out[0]);
    t[11] = live_latest(l); /* a reader's lock prunes too */
    CHECK(t[11] == t[9]);
    tick_free(t[11]);
    tick_free(t[9]); /* the newest: kept whatever holds it */
    CHECK_STR(held(l, buf, sizeof(buf)), "7,8,9");
    /* a gap longer than the window: only the newest stays */
    t[10] = mk(60000);
    live_publish_ref(l, t[10]);
    tick_free(t[10]);
    CHECK_STR(held(l, buf, sizeof(buf)), "60");
    t[11] = live_latest(l);
    CHECK(t[11] && t[11]->wall_ms == 60000);
    tick_free(t[11]);
    live_free(l);

    /* without a window (the default) the capacity alone decides, as test_ring shows */
    l = live_new(3);
    for (int i = 1; i <= 4; i++) {
        t[i] = mk(i * 1000);
        live_publish_ref(l, t[i]);
        tick_free(t[i]);
    }
    CHECK_STR(held(l, buf, sizeof(buf)), "2,3,4");
    live_free(l);
}

static void test_raw_readings(void)
{
    struct delta_state *d = delta_new();
    struct raw_sample s = {0};
    struct raw_row *r;
    struct tick *t;

    r = raw_object_add(&s.obj[OBJ_DISK], "vda", 3);
    r->flags = RAW_IN_TOTAL;
    r->present = (1ull << DISK_NFIELDS) - 1;
    r->v[DISK_RD_SECTORS] = 1000;
    t = delta_tick(d, &s, 1000, 0, 0);
    CHECK(t && t->obj[OBJ_DISK].n == 2);
    CHECK(t->obj[OBJ_DISK].rows[0].raw_mask == r->present);
    CHECK(t->obj[OBJ_DISK].rows[0].raw[DISK_RD_SECTORS] == 1000);
    CHECK(t->obj[OBJ_DISK].rows[0].null_mask & (1ull << DISK_RD_SECTORS)); /* first: no delta */
    CHECK_STR(t->obj[OBJ_DISK].rows[1].name, "_Total");
    CHECK(t->obj[OBJ_DISK].rows[1].raw_mask == 0); /* a computed row has no raw reading */
    CHECK_INT(t->refs, 1);
    tick_free(t);
    raw_sample_clear(&s);
    r = raw_object_add(&s.obj[OBJ_DISK], "vda", 3);
    r->flags = RAW_IN_TOTAL;
    r->present = (1ull << DISK_NFIELDS) - 1;
    r->v[DISK_RD_SECTORS] = 1800;
    t = delta_tick(d, &s, 2000, 1000, 0);
    CHECK(t->obj[OBJ_DISK].rows[0].raw[DISK_RD_SECTORS] == 1800);
    CHECK(t->obj[OBJ_DISK].rows[0].v[DISK_RD_SECTORS] == 800);
    tick_ref(t);
    CHECK_INT(t->refs, 2);
    tick_free(t);
    tick_free(t);
    raw_sample_free(&s);
    delta_free(d);
}

int main(void)
{
    test_ring();
    test_threads();
    test_keep();
    test_raw_readings();
    return tl_done();
}
