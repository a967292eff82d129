/*
 * data.c - series over a time range from the raw tier, the roll-ups and memory; see data.h.
 */
#include "storage/query/data.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MINUTE_MS     60000LL
#define HOUR_MS       3600000LL
#define LIVE_BATCH    4096    /* ticks taken from memory per request at most */
#define RAW_TICKS_MAX 4000000 /* raw ticks one bucketed answer may read (46 days at 1 s) */

/* Per (series, bucket) accumulators of the bucketed mode. A per-operation counter (CF_PER_OP)
 * sums num * scale in sum and the operations in den: its average is their quotient. */
struct acc {
    double *sum, *n, *min, *max, *den;
};

/* Ticks read from the database (then, in raw mode, those from memory appended: id -1). */
struct tick_list {
    int64_t *ids, *ts, *iv; /* id, t_ms, interval_ms (-1: none) */
    size_t n, cap, max;
    size_t ndb;           /* the first ndb came from the database */
    int64_t id_lo, id_hi; /* their id range */
    size_t *order;        /* indices sorted by id, when the ids are not (a wall-clock step) */
};

/* What the row callbacks need. */
struct walk {
    const struct series *s;
    size_t ns;
    int obj;
    struct data_result *res;
    const struct tick_list *ticks; /* for raw rows: id -> time, interval, point */
    /* bucketed mode */
    struct acc acc;
    int64_t first_ms, step_ms;
};

static int fail(char *why, size_t whylen, int rc, const char *msg)
{
    snprintf(why, whylen, "%s", msg);
    return rc;
}

/* Fold value v of one row into bucket cell c: sum gets `part` (v, or a per-operation counter's
 * num * scale) and den its operations. */
static void acc_put(struct acc *a, size_t c, double v, double part, double ops)
{
    a->sum[c] += part;
    a->den[c] += ops;
    a->n[c] += 1;
    if (v < a->min[c])
        a->min[c] = v;
    if (v > a->max[c])
        a->max[c] = v;
}

static void put_value(struct walk *w, size_t si, size_t point, double v)
{
    if (w->acc.sum)
        acc_put(&w->acc, si * w->res->npoints + point, v, v, 0.0);
    else
        w->res->values[si * w->res->npoints + point] = v;
}

/* A per-operation counter's value x of one row, of num * scale (`part`) over `ops` operations
 * (bucketed mode only). */
static void put_per_op(struct walk *w, size_t si, size_t point, double x, double part, double ops)
{
    acc_put(&w->acc, si * w->res->npoints + point, x, part, ops);
}

/* Whether series s is a per-operation counter's. */
static int per_op(const struct series *s)
{
    return s->obj >= 0 && (counter_objects[s->obj].counters[s->counter].flags & CF_PER_OP);
}

/* The point of time t_ms: its bucket in the bucketed mode. */
static int bucket_of(const struct walk *w, int64_t t_ms, size_t *point)
{
    int64_t b = (t_ms - w->first_ms) / w->step_ms;

    if (t_ms < w->first_ms || b >= (int64_t)w->res->npoints)
        return 0;
    *point = (size_t)b;
    return 1;
}

static void eval_row(struct walk *w, size_t point, int obj, const char *inst, int64_t inst_id,
                     const int64_t *v, uint64_t null_mask, int64_t interval_ms)
{
    const struct object_def *od = &counter_objects[obj];

    for (size_t i = 0; i < w->ns; i++) {
        const struct series *s = &w->s[i];
        const struct counter_def *c = &od->counters[s->counter];
        double x, num, den;

        if (s->obj != obj || (inst ? strcmp(s->inst, inst) != 0 : s->inst_id != inst_id))
            continue;
        if (!counter_eval(c, v, null_mask, interval_ms, &x))
            continue;
        if (w->acc.sum && (c->flags & CF_PER_OP) && counter_num_den(c, v, null_mask, &num, &den))
            put_per_op(w, i, point, x, num * c->scale, den);
        else
            put_value(w, i, point, x);
    }
}

/* Index of the database tick `id` in l, or -1. Ids are almost always consecutive. */
static long tick_find(const struct tick_list *l, int64_t id)
{
    size_t lo = 0, hi = l->ndb;

    if (l->ndb && id >= l->ids[0] && (uint64_t)(id - l->ids[0]) < l->ndb &&
        l->ids[id - l->ids[0]] == id && !l->order)
        return (long)(id - l->ids[0]);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, at = l->order ? l->order[mid] : mid;

        if (l->ids[at] == id)
            return (long)at;
        if (l->ids[at] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int raw_row_cb(void *arg, int64_t tick, int64_t inst, const int64_t *v, uint64_t null_mask)
{
    struct walk *w = arg;
    long i = tick_find(w->ticks, tick);
    size_t point;

    if (i < 0)
        return 0;
    if (!w->acc.sum)
        point = (size_t)i;
    else if (!bucket_of(w, w->ticks->ts[i], &point))
        return 0;
    eval_row(w, point, w->obj, NULL, inst, v, null_mask, w->ticks->iv[i] > 0 ? w->ticks->iv[i] : 0);
    return 0;
}

/* A stored value of an extra PDH series: put as it is, a gap left empty. */
static int raw_pdh_cb(void *arg, int64_t tick, int64_t id, double value, int valid)
{
    struct walk *w = arg;
    long i = tick_find(w->ticks, tick);
    size_t point;

    if (i < 0 || !valid)
        return 0;
    if (!w->acc.sum)
        point = (size_t)i;
    else if (!bucket_of(w, w->ticks->ts[i], &point))
        return 0;
    for (size_t k = 0; k < w->ns; k++)
        if (w->s[k].obj == SERIES_PDH && w->s[k].inst_id == id)
            put_value(w, k, point, value);
    return 0;
}

/* Roll-up rows of objects, and of extra PDH series (w->obj SERIES_PDH: counter 0, inst the path
 * id; reader_pdh_rollups). */
static int rollup_cb(void *arg, const struct reader_rollup_row *row)
{
    struct walk *w = arg;
    size_t point;

    if (!bucket_of(w, row->bucket_ms, &point))
        return 0;
    for (size_t i = 0; i < w->ns; i++) {
        const struct series *s = &w->s[i];
        size_t c = i * w->res->npoints + point;

        if (s->obj != w->obj || s->inst_id != row->inst || (row->null_mask >> s->counter) & 1)
            continue;
        if (per_op(s)) {
            /* weighted by its operations; a bucket written before they were kept, by its ticks */
            double ops = isnan(row->ops[s->counter]) ? (double)row->n : row->ops[s->counter];

            w->acc.sum[c] += row->avg[s->counter] * ops;
            w->acc.den[c] += ops;
        } else {
            w->acc.sum[c] += row->avg[s->counter] * (double)row->n;
        }
        w->acc.n[c] += (double)row->n;
        if (row->min[s->counter] < w->acc.min[c])
            w->acc.min[c] = row->min[s->counter];
        if (row->max[s->counter] > w->acc.max[c])
            w->acc.max[c] = row->max[s->counter];
    }
    return 0;
}

/* The database ids of the instances of object `obj` among the series. */
static size_t object_insts(const struct series *s, size_t ns, int obj, int64_t *ids)
{
    size_t n = 0;

    for (size_t i = 0; i < ns; i++) {
        int dup = 0;

        if (s[i].obj != obj || s[i].inst_id < 0)
            continue;
        for (size_t j = 0; j < n; j++)
            dup |= ids[j] == s[i].inst_id;
        if (!dup)
            ids[n++] = s[i].inst_id;
    }
    return n;
}

/* The raw fields the series' counters of object `obj` read. */
static uint32_t object_fields(const struct series *s, size_t ns, int obj)
{
    uint32_t m = 0;

    for (size_t i = 0; i < ns; i++)
        if (s[i].obj == obj) {
            const struct counter_def *c = &counter_objects[obj].counters[s[i].counter];

            m |= c->num | (c->den == DEN_FIELDS ? c->den_fields : 0);
        }
    return m;
}

/* The extra PDH series' rows, as walk_db reads the objects'. */
static int walk_db_pdh(struct reader *rd, struct walk *w, enum reader_tier tier, int raw,
                       int64_t from_ms, int64_t to_ms, int64_t *ids)
{
    size_t n = object_insts(w->s, w->ns, SERIES_PDH, ids);

    if (!n || (raw && w->ticks->ndb == 0))
        return 0;
    w->obj = SERIES_PDH;
    return raw ? reader_pdh_values(rd, ids, n, w->ticks->id_lo, w->ticks->id_hi, raw_pdh_cb, w)
               : reader_pdh_rollups(rd, tier, ids, n, from_ms, to_ms, rollup_cb, w);
}

/* Walk the database rows of every object the series name, then of their extra PDH series: raw
 * rows of the ticks of w->ticks, or the roll-up rows of `tier` in [from_ms, to_ms]. */
static int walk_db(struct reader *rd, struct walk *w, enum reader_tier tier, int raw,
                   int64_t from_ms, int64_t to_ms)
{
    int64_t *ids = malloc((w->ns ? w->ns : 1) * sizeof(*ids));
    int rc = 0;

    if (!ids)
        return -ENOMEM;
    for (int o = 0; rc == 0 && o < OBJ_COUNT; o++) {
        size_t n = object_insts(w->s, w->ns, o, ids);

        if (!n)
            continue;
        w->obj = o;
        if (raw && w->ticks->ndb == 0)
            continue;
        rc = raw ? reader_rows(rd, o, object_fields(w->s, w->ns, o), ids, n, w->ticks->id_lo,
                               w->ticks->id_hi, raw_row_cb, w)
                 : reader_rollups(rd, o, tier, ids, n, from_ms, to_ms, rollup_cb, w);
    }
    if (rc == 0)
        rc = walk_db_pdh(rd, w, tier, raw, from_ms, to_ms, ids);
    free(ids);
    return rc;
}

/* The extras of a tick in memory: matched to the series by path. */
static void live_extras(struct walk *w, const struct tick *t, size_t point)
{
    for (size_t k = 0; k < w->ns; k++) {
        if (w->s[k].obj != SERIES_PDH)
            continue;
        for (size_t x = 0; x < t->n_extras; x++)
            if (!strcmp(t->extras[x].path, w->s[k].pdh_path)) {
                if (t->extras[x].valid)
                    put_value(w, k, point, t->extras[x].value);
                break;
            }
    }
}

static void walk_live(struct walk *w, struct tick *const *ticks, size_t n, size_t first_point)
{
    for (size_t i = 0; i < n; i++) {
        const struct tick *t = ticks[i];
        size_t point = first_point + i;

        if (w->acc.sum && !bucket_of(w, t->wall_ms, &point))
            continue;
        for (int o = 0; o < OBJ_COUNT; o++)
            for (size_t r = 0; r < t->obj[o].n; r++) {
                const struct tick_row *row = &t->obj[o].rows[r];

                eval_row(w, point, o, row->name, 0, row->v, row->null_mask, t->interval_ms);
            }
        if (t->n_extras)
            live_extras(w, t, point);
    }
}

/* Ticks of [from_ms, to_ms] held in memory (references; release them), and the oldest held. */
static struct tick **take_live(struct live *live, int64_t from_ms, int64_t to_ms, size_t *n,
                               int64_t *oldest_ms)
{
    struct tick **lt = calloc(LIVE_BATCH, sizeof(*lt));

    *n = 0;
    *oldest_ms = INT64_MAX;
    if (lt && live)
        *n = live_range(live, from_ms, to_ms, lt, LIVE_BATCH, oldest_ms);
    return lt;
}

static void release(struct tick **ticks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tick_free(ticks[i]);
    free(ticks);
}

/* ---- the ticks of a range ---- */

static int tick_cb(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms)
{
    struct tick_list *l = arg;

    if (l->n == l->max)
        return -E2BIG;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        int64_t *a = realloc(l->ids, cap * sizeof(*a));

        if (!a)
            return -ENOMEM;
        l->ids = a;
        if (!(a = realloc(l->ts, cap * sizeof(*a))))
            return -ENOMEM;
        l->ts = a;
        if (!(a = realloc(l->iv, cap * sizeof(*a))))
            return -ENOMEM;
        l->iv = a;
        l->cap = cap;
    }
    l->ids[l->n] = tick;
    l->ts[l->n] = t_ms;
    l->iv[l->n++] = interval_ms;
    return 0;
}

/* A tick's id and its index in the list: qsort has no context argument, so the sort carries the
 * key with the index rather than reading it through a global. */
struct id_at {
    int64_t id;
    size_t at;
};

static int by_id(const void *a, const void *b)
{
    int64_t x = ((const struct id_at *)a)->id, y = ((const struct id_at *)b)->id;

    return (x > y) - (x < y);
}

/* Read the database ticks of [from_ms, to_ms] into l and index them by id. */
static int read_ticks(struct reader *rd, int64_t from_ms, int64_t to_ms, struct tick_list *l)
{
    struct id_at *keys;
    int sorted = 1;
    int rc = reader_ticks(rd, from_ms, to_ms, tick_cb, l);

    if (rc != 0)
        return rc;
    l->ndb = l->n;
    l->id_lo = INT64_MAX;
    l->id_hi = INT64_MIN;
    for (size_t i = 0; i < l->n; i++) {
        l->id_lo = l->ids[i] < l->id_lo ? l->ids[i] : l->id_lo;
        l->id_hi = l->ids[i] > l->id_hi ? l->ids[i] : l->id_hi;
        sorted &= i == 0 || l->ids[i] > l->ids[i - 1];
    }
    if (sorted)
        return 0;
    /* The wall clock went back at some point: time order is not id order. */
    l->order = malloc(l->n * sizeof(*l->order));
    keys = malloc(l->n * sizeof(*keys));
    if (!l->order || !keys) {
        free(keys);
        return -ENOMEM; /* l->order is freed with the list */
    }
    for (size_t i = 0; i < l->n; i++)
        keys[i] = (struct id_at){l->ids[i], i};
    qsort(keys, l->n, sizeof(*keys), by_id);
    for (size_t i = 0; i < l->n; i++)
        l->order[i] = keys[i].at;
    free(keys);
    return 0;
}

static void tick_list_free(struct tick_list *l)
{
    free(l->ids);
    free(l->ts);
    free(l->iv);
    free(l->order);
    memset(l, 0, sizeof(*l));
}

static int too_many(char *why, size_t whylen, int64_t points, const struct data_req *req)
{
    snprintf(why, whylen,
             "the answer would have %lld points per series, over the limit of %lld (max_points); "
             "ask for a shorter range or a coarser step",
             (long long)points, (long long)req->max_points);
    return -E2BIG;
}

/* The other limit: DATA_MAX_CELLS values in all, whatever max_points allows per series. */
static int too_many_cells(char *why, size_t whylen, size_t ns, int64_t points)
{
    snprintf(why, whylen,
             "%zu series of %lld points each is over the limit of %d values per answer; ask "
             "for fewer counters or a coarser step",
             ns, (long long)points, DATA_MAX_CELLS);
    return -E2BIG;
}

static int query_raw(struct reader *rd, struct live *live, struct walk *w,
                     const struct data_req *req, char *why, size_t whylen)
{
    struct tick_list l = {.max = (size_t)req->max_points};
    struct tick **lt;
    size_t nlive = 0;
    int64_t oldest = INT64_MAX, est;
    int rc = 0;

    est = (req->to_ms - req->from_ms) / (req->interval_ms > 0 ? req->interval_ms : 1000) + 1;
    if (est > req->max_points)
        return too_many(why, whylen, est, req);
    if ((uint64_t)est * w->ns > DATA_MAX_CELLS)
        return too_many_cells(why, whylen, w->ns, est);
    lt = take_live(live, req->from_ms, req->to_ms, &nlive, &oldest);
    if (!lt)
        return -ENOMEM;
    /* the database answers the part of the range before the oldest tick in memory */
    if (rd && req->from_ms < oldest)
        rc = read_ticks(rd, req->from_ms, oldest <= req->to_ms ? oldest - 1 : req->to_ms, &l);
    if (rc == -E2BIG || (rc == 0 && l.n + nlive > (size_t)req->max_points)) {
        /* a full list stopped the read: the range holds more than that */
        rc = too_many(why, whylen, (int64_t)(l.n + nlive) + (rc == -E2BIG), req);
        goto out;
    }
    if (rc == 0 && (l.n + nlive) * w->ns > DATA_MAX_CELLS) {
        rc = too_many_cells(why, whylen, w->ns, (int64_t)(l.n + nlive));
        goto out;
    }
    if (rc != 0) {
        rc = rc == -ENOMEM ? rc : fail(why, whylen, -EIO, reader_errmsg(rd));
        goto out;
    }
    for (size_t i = 0; i < nlive; i++)
        if ((rc = tick_cb(&l, -1, lt[i]->wall_ms, lt[i]->interval_ms)) < 0)
            goto out;
    w->res->npoints = l.n;
    w->res->values = malloc((l.n * w->ns + 1) * sizeof(double));
    if (!w->res->values) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < l.n * w->ns; i++)
        w->res->values[i] = NAN;
    w->ticks = &l;
    if (rd && l.ndb)
        rc = walk_db(rd, w, READER_1M, 1, 0, 0);
    if (rc != 0 && rc != -ENOMEM)
        rc = fail(why, whylen, -EIO, reader_errmsg(rd));
    walk_live(w, lt, nlive, l.ndb);
    w->res->ts = l.ts; /* the timestamps are the answer's */
    l.ts = NULL;
out:
    w->ticks = NULL;
    release(lt, nlive);
    tick_list_free(&l);
    return rc;
}

/* ---- buckets ---- */

static int acc_alloc(struct acc *a, size_t cells)
{
    a->sum = calloc(cells, sizeof(double));
    a->n = calloc(cells, sizeof(double));
    a->den = calloc(cells, sizeof(double));
    a->min = malloc(cells * sizeof(double));
    a->max = malloc(cells * sizeof(double));
    if (!a->sum || !a->n || !a->den || !a->min || !a->max)
        return -ENOMEM;
    for (size_t i = 0; i < cells; i++) {
        a->min[i] = INFINITY;
        a->max[i] = -INFINITY;
    }
    return 0;
}

static void acc_free(struct acc *a)
{
    free(a->sum);
    free(a->n);
    free(a->den);
    free(a->min);
    free(a->max);
}

/* Read [from_ms, end_ms) of the bucketed range from the best source for each part. */
static int fill_buckets(struct reader *rd, struct live *live, struct walk *w, int64_t from_ms,
                        int64_t end_ms)
{
    int64_t m_until = 0, h_until = 0, oldest = INT64_MAX, at = from_ms;
    size_t nlive = 0;
    struct tick **lt = take_live(live, from_ms, end_ms - 1, &nlive, &oldest);
    int rc = 0;

    if (!lt)
        return -ENOMEM;
    if (rd)
        reader_rollup_marks(rd, &m_until, &h_until);
    if (rd && !strcmp(w->res->tier, "1h") && at < h_until) {
        rc = walk_db(rd, w, READER_1H, 0, at, (h_until < end_ms ? h_until : end_ms) - 1);
        at = h_until < end_ms ? h_until : end_ms;
    }
    if (rd && rc == 0 && strcmp(w->res->tier, "raw") && at < m_until && at < end_ms) {
        rc = walk_db(rd, w, READER_1M, 0, at, (m_until < end_ms ? m_until : end_ms) - 1);
        at = m_until < end_ms ? m_until : end_ms;
    }
    if (rd && rc == 0 && at < end_ms && at < oldest) {
        struct tick_list l = {.max = RAW_TICKS_MAX};

        rc = read_ticks(rd, at, (oldest < end_ms ? oldest : end_ms) - 1, &l);
        w->ticks = &l;
        if (rc == 0)
            rc = walk_db(rd, w, READER_1M, 1, 0, 0);
        w->ticks = NULL;
        tick_list_free(&l);
    }
    if (rc == 0) {
        /* memory holds what the database has (or will have) from `oldest` on */
        size_t skip = 0;

        while (skip < nlive && lt[skip]->wall_ms < at)
            skip++;
        walk_live(w, lt + skip, nlive - skip, 0);
    }
    release(lt, nlive);
    return rc;
}

static void finish_buckets(struct walk *w, enum data_agg agg)
{
    size_t cells = w->ns * w->res->npoints;

    for (size_t c = 0; c < cells; c++) {
        double v = NAN;

        if (w->acc.n[c] > 0 && agg != DATA_MIN && agg != DATA_MAX &&
            per_op(&w->s[c / w->res->npoints]))
            v = w->acc.den[c] > 0 ? w->acc.sum[c] / w->acc.den[c] : 0.0;
        else if (w->acc.n[c] > 0)
            v = agg == DATA_MIN   ? w->acc.min[c]
                : agg == DATA_MAX ? w->acc.max[c]
                                  : w->acc.sum[c] / w->acc.n[c];
        w->res->values[c] = v;
    }
}

static int query_buckets(struct reader *rd, struct live *live, struct walk *w,
                         const struct data_req *req, char *why, size_t whylen)
{
    int64_t step = req->step_ms, first = req->from_ms / step * step;
    int64_t last = req->to_ms / step * step, points = (last - first) / step + 1;
    int rc;

    if (points > req->max_points)
        return too_many(why, whylen, points, req);
    if ((uint64_t)points * w->ns > DATA_MAX_CELLS)
        return too_many_cells(why, whylen, w->ns, points);
    w->res->npoints = (size_t)points;
    w->first_ms = first;
    w->step_ms = step;
    w->res->ts = malloc((size_t)points * sizeof(int64_t));
    w->res->values = malloc(((size_t)points * w->ns + 1) * sizeof(double));
    if (!w->res->ts || !w->res->values || acc_alloc(&w->acc, (size_t)points * w->ns + 1) < 0)
        return -ENOMEM;
    for (int64_t i = 0; i < points; i++)
        w->res->ts[i] = first + i * step;
    rc = fill_buckets(rd, live, w, first, last + step);
    if (rc == 0)
        finish_buckets(w, req->agg);
    else if (rc == -E2BIG)
        snprintf(why, whylen,
                 "the range holds more than %d raw ticks to aggregate; use a step of whole "
                 "minutes or hours, which reads the roll-ups",
                 RAW_TICKS_MAX);
    else if (rc != -ENOMEM)
        rc = fail(why, whylen, -EIO, reader_errmsg(rd));
    return rc;
}

int data_query(struct reader *rd, struct live *live, const struct series *s, size_t ns,
               const struct data_req *req, struct data_result *res, char *why, size_t whylen)
{
    struct walk w = {.s = s, .ns = ns, .res = res};
    int rc;

    memset(res, 0, sizeof(*res));
    res->nseries = ns;
    if (req->step_ms <= 0 || req->step_ms <= req->interval_ms) {
        res->tier = "raw";
        res->step_ms = req->interval_ms;
        rc = query_raw(rd, live, &w, req, why, whylen);
    } else {
        res->tier = req->step_ms % HOUR_MS == 0     ? "1h"
                    : req->step_ms % MINUTE_MS == 0 ? "1m"
                                                    : "raw";
        res->step_ms = req->step_ms;
        rc = query_buckets(rd, live, &w, req, why, whylen);
        acc_free(&w.acc);
    }
    if (rc < 0)
        data_result_free(res);
    return rc;
}

void data_result_free(struct data_result *r)
{
    free(r->ts);
    free(r->values);
    r->ts = NULL;
    r->values = NULL;
    r->npoints = 0;
}
