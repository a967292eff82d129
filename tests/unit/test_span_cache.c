/*
 * test_span_cache.c - the raw rows kept for the chunk steps (storage/span_cache.h) come back
 * exactly as added: 64-bit extremes, NULLs, gaps in the ticks, an instance that appears and
 * vanishes, instances added out of id order; a take drops what it returns and nothing else;
 * and every way the cache can stop being exact (a reset, a delete reaching its ticks, ticks that
 * go back, a second row of a tick, the byte limit) leaves it answering for no span it does not
 * hold whole.
 */
#include "storage/span_cache.h"
#include "testlib.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define NF 5

/* What a take returned, in order. */
struct got {
    size_t n;
    int64_t inst[4096], tick[4096], v[4096][NF];
    uint64_t nulls[4096];
};

static int collect(void *ctx, int64_t inst, int64_t tick, const int64_t *v, uint64_t nulls)
{
    struct got *g = ctx;

    if (g->n == 4096)
        return -ENOSPC;
    g->inst[g->n] = inst;
    g->tick[g->n] = tick;
    for (int f = 0; f < NF; f++)
        g->v[g->n][f] = (nulls >> f) & 1 ? 0 : v[f];
    g->nulls[g->n] = nulls;
    g->n++;
    return 0;
}

/* The value of field f of instance inst at tick t, or NULL (bit set in *nulls) */
static int64_t value(int64_t inst, int64_t t, int f, uint64_t *nulls)
{
    static const int64_t odd[] = {INT64_MIN, INT64_MAX, -1, 0, 1, INT64_MIN + 1, 4294967295LL};
    uint64_t x = (uint64_t)(inst * 7919 + t * 104729 + f * 31);

    if (x % 13 == 0)
        *nulls |= UINT64_C(1) << f;
    if (x % 5 == 0)
        return odd[(x / 5) % 7];
    return (int64_t)(x * 2654435761u) - (int64_t)(t * 1000);
}

/* Whether instance inst has a row at tick t: instance 9 only in ticks 40-59, instance 3 not on
 * ticks that are multiples of 7 (a missed read). */
static int has_row(int64_t inst, int64_t t)
{
    if (inst == 9)
        return t >= 40 && t < 60;
    if (inst == 3)
        return t % 7 != 0;
    return 1;
}

static const int64_t insts[] = {5, 3, -2, 9, 1000000007}; /* rows in this order, not by id */

static void add_ticks(struct span_cache *c, int64_t from, int64_t to)
{
    for (int64_t t = from; t <= to; t++) {
        span_cache_tick(c, t);
        for (size_t r = 0; r < sizeof(insts) / sizeof(insts[0]); r++) {
            int64_t v[NF];
            uint64_t nulls = 0;

            if (!has_row(insts[r], t))
                continue;
            for (int f = 0; f < NF; f++)
                v[f] = value(insts[r], t, f, &nulls);
            CHECK_INT(span_cache_add(c, 0, r, insts[r], v, nulls, NF), 0);
        }
    }
}

/* The points a take of instances [a, b), ticks [lo, hi] must return, in its order. */
static void expect(struct got *e, int64_t lo, int64_t hi, int64_t a, int64_t b)
{
    static const int64_t sorted[] = {-2, 3, 5, 9, 1000000007};

    e->n = 0;
    for (size_t k = 0; k < 5; k++) {
        if (sorted[k] < a || sorted[k] >= b)
            continue;
        for (int64_t t = lo; t <= hi; t++) {
            uint64_t nulls = 0;

            if (!has_row(sorted[k], t))
                continue;
            e->inst[e->n] = sorted[k];
            e->tick[e->n] = t;
            for (int f = 0; f < NF; f++)
                e->v[e->n][f] = value(sorted[k], t, f, &nulls);
            for (int f = 0; f < NF; f++)
                if ((nulls >> f) & 1)
                    e->v[e->n][f] = 0;
            e->nulls[e->n] = nulls;
            e->n++;
        }
    }
}

static int same(const struct got *a, const struct got *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        if (a->inst[i] != b->inst[i] || a->tick[i] != b->tick[i] || a->nulls[i] != b->nulls[i])
            return 0;
        for (int f = 0; f < NF; f++)
            if (a->v[i][f] != b->v[i][f])
                return 0;
    }
    return 1;
}

static struct got got, want;

/* Take object 0's instances [a, b), ticks [lo, hi], and whether what came back is exactly their
 * points from tick `from` on (the ones before were dropped earlier). */
static int take_is(struct span_cache *c, int64_t lo, int64_t hi, int64_t a, int64_t b, int64_t from)
{
    got.n = 0;
    if (span_cache_take(c, 0, lo, hi, a, b, collect, &got) != 0)
        return 0;
    expect(&want, from, hi, a, b);
    return same(&got, &want);
}

static void test_round_trip(void)
{
    struct span_cache *c = span_cache_new(2, 1 << 20);

    CHECK(c != NULL);
    CHECK_INT(span_cache_from(c), -1);
    CHECK(!span_cache_covers(c, 1, 60));
    add_ticks(c, 1, 120);
    CHECK_INT(span_cache_from(c), 1);
    CHECK(span_cache_covers(c, 1, 60));
    CHECK(span_cache_covers(c, 61, 120));
    CHECK(span_cache_bytes(c) > 0);

    /* a step of two instances, then the rest: each point once, by instance, in tick order */
    CHECK(take_is(c, 1, 60, INT64_MIN, 4, 1));
    CHECK(take_is(c, 1, 60, 4, INT64_MAX, 1));
    CHECK_INT(want.n, 60 + 20 + 60); /* 5 and 1000000007 whole, 9's twenty ticks */

    /* taken points are gone: the same span again gives nothing; the next span is whole, and
     * instance 9, which had nothing after tick 59, is no more */
    got.n = 0;
    CHECK_INT(span_cache_take(c, 0, 1, 60, INT64_MIN, INT64_MAX, collect, &got), 0);
    CHECK_INT(got.n, 0);
    CHECK(take_is(c, 61, 120, INT64_MIN, INT64_MAX, 61));

    /* everything taken and every instance ended: nothing is left but the object's arrays and
     * the stage's buffers (kept for the next ticks: 4 KiB of rows and 512 B of their offsets;
     * the five instances' points would be 1 000 B more) */
    CHECK(span_cache_bytes(c) < 1024 + 4608);

    /* instances go on past a take: the values after it still decode from the dropped ones */
    add_ticks(c, 121, 200);
    CHECK(take_is(c, 121, 150, INT64_MIN, INT64_MAX, 121));
    CHECK(take_is(c, 151, 200, INT64_MIN, INT64_MAX, 151));

    /* another object has nothing of this one's */
    got.n = 0;
    CHECK_INT(span_cache_take(c, 1, 1, 200, INT64_MIN, INT64_MAX, collect, &got), 0);
    CHECK_INT(got.n, 0);
    span_cache_free(c);
    span_cache_free(NULL);
}

/* A take without a callback (a span read back from the table) drops the same points, and a take
 * of a span that starts after points it does not return drops those too. */
static void test_drop_only(void)
{
    struct span_cache *c = span_cache_new(1, 1 << 20);

    add_ticks(c, 1, 90);
    CHECK_INT(span_cache_take(c, 0, 1, 30, INT64_MIN, INT64_MAX, NULL, NULL), 0);
    CHECK(take_is(c, 40, 60, INT64_MIN, INT64_MAX, 40));
    CHECK(take_is(c, 1, 90, INT64_MIN, INT64_MAX, 61));
    span_cache_free(c);
}

/* Every way the cache stops being exact: it then answers for no span it does not hold whole. */
static void test_not_exact(void)
{
    struct span_cache *c = span_cache_new(1, 1 << 20);
    int64_t v[NF] = {1, 2, 3, 4, 5};

    /* rows before the first tick are not kept */
    CHECK_INT(span_cache_add(c, 0, 0, 1, v, 0, NF), 0);
    CHECK_INT(span_cache_bytes(c), 0);

    add_ticks(c, 10, 20);
    span_cache_forget_upto(c, 9); /* before its ticks: nothing changes */
    CHECK_INT(span_cache_from(c), 10);
    span_cache_forget_upto(c, 10);
    CHECK_INT(span_cache_from(c), -1);
    CHECK_INT(span_cache_bytes(c), 0);
    /* the rest of the tick in hand is not kept either; exact again from the next one */
    CHECK_INT(span_cache_add(c, 0, 0, 1, v, 0, NF), 0);
    CHECK_INT(span_cache_bytes(c), 0);
    add_ticks(c, 21, 30);
    CHECK_INT(span_cache_from(c), 21);
    CHECK(!span_cache_covers(c, 20, 30));
    CHECK(span_cache_covers(c, 21, 30));

    /* ticks that go back */
    span_cache_tick(c, 25);
    CHECK_INT(span_cache_from(c), 25);
    CHECK_INT(span_cache_bytes(c), 0);

    /* a second row of one instance in one tick: found when the stage is coded, at the latest
     * when the cache is asked what it covers */
    add_ticks(c, 31, 31);
    CHECK_INT(span_cache_add(c, 0, 0, 5, v, 0, NF), 0);
    CHECK(!span_cache_covers(c, 31, 31));
    CHECK_INT(span_cache_from(c), -1);
    /* and a take that would read it fails rather than return a part */
    add_ticks(c, 32, 33);
    CHECK_INT(span_cache_add(c, 0, 0, 5, v, 0, NF), 0);
    got.n = 0;
    CHECK_INT(span_cache_take(c, 0, 32, 33, INT64_MIN, INT64_MAX, collect, &got), -EAGAIN);
    CHECK_INT(got.n, 0);
    CHECK_INT(span_cache_from(c), -1);

    /* an explicit reset */
    add_ticks(c, 32, 40);
    span_cache_reset(c);
    CHECK_INT(span_cache_from(c), -1);
    CHECK(!span_cache_covers(c, 32, 40));

    /* bad arguments */
    span_cache_tick(c, 41);
    CHECK_INT(span_cache_add(c, 1, 0, 5, v, 0, NF), -EINVAL);
    CHECK_INT(span_cache_add(c, 0, 0, 5, v, 0, SPAN_CACHE_MAX_FIELDS + 1), -EINVAL);
    span_cache_free(c);
}

/* Past its byte limit the cache starts over from the next tick, and stays within the limit. */
static void test_limit(void)
{
    struct span_cache *c = span_cache_new(1, 8192);
    size_t most = 0;
    int64_t last = 400, from;

    for (int64_t t = 1; t <= 400; t++) {
        add_ticks(c, t, t);
        if (span_cache_bytes(c) > most)
            most = span_cache_bytes(c);
    }
    CHECK(span_cache_from(c) > 1 && span_cache_from(c) <= 400);
    /* Coding the stage may reach the limit too: then it starts over from the next tick. */
    if (!span_cache_covers(c, span_cache_from(c), last)) {
        CHECK_INT(span_cache_from(c), -1);
        last++;
        add_ticks(c, last, last);
    }
    CHECK(most <= 8192 && span_cache_bytes(c) <= 8192);
    /* what it holds since it started over comes back whole */
    from = span_cache_from(c);
    CHECK(span_cache_covers(c, from, last));
    CHECK(take_is(c, from, last, INT64_MIN, INT64_MAX, from));
    span_cache_free(c);
}

/*
 * The stage codes a few ticks at a time, instance by instance where every tick staged has the
 * same rows in the same order, tick by tick otherwise. Both come back the same: runs of ticks
 * with one order, rows that swap places, appear and go inside one stage, a take in the middle of
 * a stage and rows added after it, against every point added, in the order a take gives them.
 */
#define ORD_N 6
static int64_t ord_v[400][ORD_N][NF];
static uint64_t ord_nulls[400][ORD_N];
static uint8_t ord_has[400][ORD_N];

/* The rows of tick t, as instance ids 10..15 in the order they are added. */
static size_t ord_rows(int64_t t, int64_t *ids)
{
    size_t n = 0;

    for (int k = 0; k < ORD_N; k++) {
        int j = (t >= 17 && t < 25 && t % 2) ? ORD_N - 1 - k : k; /* reversed on odd ticks */

        if (t >= 60 && t < 70 && j == 2)
            continue; /* instance 12 missing for ten ticks */
        if (j == 5 && t < 45)
            continue; /* instance 15 appears at tick 45 */
        ids[n++] = 10 + j;
    }
    return n;
}

static void ord_add(struct span_cache *c, int64_t from, int64_t to)
{
    for (int64_t t = from; t <= to; t++) {
        int64_t ids[ORD_N];
        size_t n = ord_rows(t, ids);

        span_cache_tick(c, t);
        for (size_t r = 0; r < n; r++) {
            int k = (int)(ids[r] - 10);
            uint64_t nulls = 0;

            for (int f = 0; f < NF; f++)
                ord_v[t][k][f] = value(ids[r], t, f, &nulls);
            ord_nulls[t][k] = nulls;
            ord_has[t][k] = 1;
            CHECK_INT(span_cache_add(c, 1, r, ids[r], ord_v[t][k], nulls, NF), 0);
        }
    }
}

static int ord_take_is(struct span_cache *c, int64_t lo, int64_t hi, int64_t a, int64_t b)
{
    got.n = 0;
    want.n = 0;
    if (span_cache_take(c, 1, lo, hi, a, b, collect, &got) != 0)
        return 0;
    for (int k = 0; k < ORD_N; k++) {
        if (10 + k < a || 10 + k >= b)
            continue;
        for (int64_t t = lo; t <= hi; t++) {
            if (!ord_has[t][k])
                continue;
            want.inst[want.n] = 10 + k;
            want.tick[want.n] = t;
            for (int f = 0; f < NF; f++)
                want.v[want.n][f] = (ord_nulls[t][k] >> f) & 1 ? 0 : ord_v[t][k][f];
            want.nulls[want.n] = ord_nulls[t][k];
            want.n++;
        }
    }
    return same(&got, &want);
}

static void test_stage_orders(void)
{
    struct span_cache *c = span_cache_new(2, 1 << 20);
    int64_t v[NF] = {0};

    ord_add(c, 1, 100);
    CHECK(span_cache_covers(c, 1, 50));
    CHECK(ord_take_is(c, 1, 50, 10, 13));
    CHECK(ord_take_is(c, 1, 50, 13, 16));
    /* a take in the middle of a stage: the rows staged before it and after it follow on */
    ord_add(c, 101, 103);
    CHECK(ord_take_is(c, 51, 102, 10, 12));
    ord_add(c, 104, 111);
    CHECK(ord_take_is(c, 51, 111, 12, 16));
    CHECK(ord_take_is(c, 103, 111, 10, 12));
    /* a take in the middle of a tick that reaches it: it codes the tick's first row, and the
     * tick's next rows follow it */
    span_cache_tick(c, 112);
    for (int k = 0; k < 3; k++) {
        uint64_t nulls = 0;

        for (int f = 0; f < NF; f++)
            ord_v[112][k][f] = value(10 + k, 112, f, &nulls);
        ord_nulls[112][k] = nulls;
        ord_has[112][k] = 1;
        CHECK_INT(span_cache_add(c, 1, (size_t)k, 10 + k, ord_v[112][k], nulls, NF), 0);
        if (k == 0) {
            CHECK(ord_take_is(c, 112, 112, 10, 11));
            ord_has[112][0] = 0;
        }
    }
    CHECK(ord_take_is(c, 112, 112, 10, 16));
    /* a second row of one instance inside a stage of one order, found when coded */
    ord_add(c, 113, 115);
    CHECK_INT(span_cache_add(c, 1, 9, 11, v, 0, NF), 0);
    CHECK(!span_cache_covers(c, 113, 115));
    span_cache_free(c);

    /* A take whose span ends before the staged ticks leaves them staged; an instance it leaves
     * with no points (ticks 200-207 coded when 208 began, 208-209 staged) is forgotten and comes
     * back, new, from its staged rows. */
    c = span_cache_new(2, 1 << 20);
    ord_add(c, 200, 209);
    CHECK(span_cache_covers(c, 200, 207));
    CHECK(ord_take_is(c, 200, 207, 10, 16));
    CHECK(span_cache_covers(c, 208, 209));
    CHECK(ord_take_is(c, 208, 209, 10, 16));
    CHECK_INT(want.n, 2 * 6);
    span_cache_free(c);
}

/* A callback's error stops the take and comes back. */
static int refuse(void *ctx, int64_t inst, int64_t tick, const int64_t *v, uint64_t nulls)
{
    (void)ctx, (void)inst, (void)tick, (void)v, (void)nulls;
    return -ENOMEM;
}

static void test_callback_error(void)
{
    struct span_cache *c = span_cache_new(1, 1 << 20);

    add_ticks(c, 1, 10);
    CHECK_INT(span_cache_take(c, 0, 1, 10, INT64_MIN, INT64_MAX, refuse, NULL), -ENOMEM);
    span_cache_free(c);
}

int main(void)
{
    test_round_trip();
    test_drop_only();
    test_not_exact();
    test_limit();
    test_stage_orders();
    test_callback_error();
    return tl_done();
}
