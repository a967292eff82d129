/*
 * span_cache.c - the raw rows not chunked yet, kept by the writer; see span_cache.h.
 */
#include "storage/span_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One instance's points: `base_*` is the state before the first point in b[0..len), `last_*` the
 * state after the last one. v holds base values then last values, nf each. */
struct inst_points {
    int64_t inst;
    int64_t base_tick, last_tick;
    uint8_t *b;
    size_t len, cap;
    size_t nf;
    uint64_t v[];
};

/*
 * The rows of the last few ticks, as given, before they are coded into the instances' points.
 * Why: coding a row touches its instance's state and the end of its buffer, two or three cache
 * lines that nothing else touched since the last tick; at 2 000 instances a tick that was most of
 * span_cache_add's time, waiting on memory (perf, bench/README.md "nineteenth session"). Rows are
 * copied here in tick order, one sequential stream, and coded STAGE_TICKS ticks at a time
 * instance by instance, so an instance's lines are fetched once for all of them.
 *
 * A staged row is STAGE_HEAD words (slot, inst, row hint, null mask, field count) and then its
 * values; row_at[k] is the word where the k-th staged row begins.
 */
#define STAGE_TICKS 8
#define STAGE_HEAD  5

struct stage {
    uint64_t *w;
    size_t len, cap; /* words */
    size_t *row_at;
    size_t nrows, rows_cap;
};

struct obj_points {
    struct inst_points **i; /* sorted by inst */
    size_t n, cap;
    struct inst_points **hint; /* by row index: the instance that row had last time */
    size_t nhint, hint_cap;
    struct stage st;
};

struct span_cache {
    int nobj;
    size_t max_bytes, bytes;
    int64_t from; /* -1: not exact yet; set by the first tick after a reset */
    int64_t tick;
    int skip;    /* the current tick's rows are not kept (a reset in its middle) */
    int nstaged; /* ticks begun since the last coding, at most STAGE_TICKS */
    int64_t staged_tick[STAGE_TICKS]; /* their ids, by slot */
    struct obj_points o[];
};

/* The most bytes one point takes: a tick step, a mask and nf values, 10 bytes each at most. */
#define POINT_MAX(nf) (10 * (2 + (nf)))

static uint64_t *base_v(struct inst_points *p)
{
    return p->v;
}

static uint64_t *last_v(struct inst_points *p)
{
    return p->v + p->nf;
}

static size_t inst_bytes(const struct inst_points *p)
{
    return sizeof(*p) + 2 * p->nf * sizeof(uint64_t) + p->cap;
}

struct span_cache *span_cache_new(int nobj, size_t max_bytes)
{
    struct span_cache *c;

    if (nobj < 0)
        return NULL;
    c = calloc(1, sizeof(*c) + (size_t)nobj * sizeof(c->o[0]));
    if (!c)
        return NULL;
    c->nobj = nobj;
    c->max_bytes = max_bytes;
    c->from = -1;
    return c;
}

static void obj_clear(struct obj_points *op)
{
    for (size_t k = 0; k < op->n; k++) {
        free(op->i[k]->b);
        free(op->i[k]);
    }
    free(op->i);
    free(op->hint);
    free(op->st.w);
    free(op->st.row_at);
    memset(op, 0, sizeof(*op));
}

void span_cache_free(struct span_cache *c)
{
    if (!c)
        return;
    for (int o = 0; o < c->nobj; o++)
        obj_clear(&c->o[o]);
    free(c);
}

void span_cache_reset(struct span_cache *c)
{
    if (!c)
        return;
    for (int o = 0; o < c->nobj; o++)
        obj_clear(&c->o[o]);
    c->bytes = 0;
    c->from = -1;
    c->nstaged = 0;
    c->skip = 1; /* until the next tick begins */
}

static int code_staged(struct span_cache *c);

void span_cache_tick(struct span_cache *c, int64_t tick)
{
    if (!c)
        return;
    if (c->from >= 0 && tick <= c->tick)
        span_cache_reset(c); /* ticks go back: the points after it no longer follow */
    if (c->nstaged == STAGE_TICKS) {
        c->skip = 1;          /* the last tick is done: no slot is kept for it */
        (void)code_staged(c); /* a failure resets the cache: exact again from this tick */
    }
    if (c->from < 0)
        c->from = tick;
    c->tick = tick;
    c->skip = 0;
    c->staged_tick[c->nstaged++] = tick;
}

int64_t span_cache_from(const struct span_cache *c)
{
    return c ? c->from : -1;
}

/* Whether a staged tick is at or before `hi` (the staged ticks increase, slot by slot). */
static int staged_upto(const struct span_cache *c, int64_t hi)
{
    return c->nstaged && c->staged_tick[0] <= hi;
}

int span_cache_covers(struct span_cache *c, int64_t lo, int64_t hi)
{
    if (c && staged_upto(c, hi))
        (void)code_staged(c); /* a failure resets the cache: it covers nothing */
    return c && c->from >= 0 && c->from <= lo;
}

void span_cache_forget_upto(struct span_cache *c, int64_t upto)
{
    if (c && c->from >= 0 && upto >= c->from)
        span_cache_reset(c);
}

size_t span_cache_bytes(const struct span_cache *c)
{
    return c ? c->bytes : 0;
}

static size_t put_varint(uint8_t *p, uint64_t x)
{
    size_t n = 0;

    while (x >= 0x80) {
        p[n++] = (uint8_t)(x | 0x80);
        x >>= 7;
    }
    p[n++] = (uint8_t)x;
    return n;
}

/* Read a varint from p[*at..len); 0, or -1 when the bytes end inside it (never, for what
 * put_varint wrote). */
static int get_varint(const uint8_t *p, size_t len, size_t *at, uint64_t *x)
{
    uint64_t v = 0;

    for (unsigned shift = 0; *at < len && shift < 64; shift += 7) {
        uint8_t byte = p[(*at)++];

        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *x = v;
            return 0;
        }
    }
    return -1;
}

static uint64_t zigzag(uint64_t d)
{
    return (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);
}

static uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);
}

/* The index of the first instance of `op` with id >= inst. */
static size_t lower_bound(const struct obj_points *op, int64_t inst)
{
    size_t lo = 0, hi = op->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (op->i[mid]->inst < inst)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The points of `inst` (nf fields), made empty when new. NULL when out of memory. */
static struct inst_points *inst_of(struct span_cache *c, struct obj_points *op, size_t r,
                                   int64_t inst, size_t nf)
{
    struct inst_points *p;
    size_t k;

    if (r < op->nhint && op->hint[r] && op->hint[r]->inst == inst && op->hint[r]->nf == nf)
        return op->hint[r];
    k = lower_bound(op, inst);
    if (k < op->n && op->i[k]->inst == inst) {
        p = op->i[k];
        if (p->nf != nf)
            return NULL; /* one object, one width: never */
    } else {
        if (op->n == op->cap) {
            size_t cap = op->cap ? 2 * op->cap : 16;
            struct inst_points **ni = realloc(op->i, cap * sizeof(*ni));

            if (!ni)
                return NULL;
            op->i = ni;
            c->bytes += (cap - op->cap) * sizeof(*ni);
            op->cap = cap;
        }
        p = calloc(1, sizeof(*p) + 2 * nf * sizeof(uint64_t));
        if (!p)
            return NULL;
        p->inst = inst;
        p->nf = nf;
        memmove(&op->i[k + 1], &op->i[k], (op->n - k) * sizeof(*op->i));
        op->i[k] = p;
        op->n++;
        c->bytes += inst_bytes(p);
    }
    if (r >= op->hint_cap) {
        size_t cap = op->hint_cap ? op->hint_cap : 16;
        struct inst_points **nh;

        while (cap <= r)
            cap *= 2;
        if (!(nh = realloc(op->hint, cap * sizeof(*nh))))
            return p; /* the hint is only a shortcut */
        c->bytes += (cap - op->hint_cap) * sizeof(*nh);
        op->hint = nh;
        op->hint_cap = cap;
    }
    while (op->nhint <= r)
        op->hint[op->nhint++] = NULL;
    op->hint[r] = p;
    return p;
}

/*
 * Make room for `need` elements of `size` bytes in *buf (capacity *cap, at least `least` once
 * grown, doubling), counted in the cache's bytes. Returns 0; 1 past the byte limit, -ENOMEM out
 * of memory (nothing changed: the caller resets).
 */
static int grow(struct span_cache *c, void **buf, size_t *cap, size_t need, size_t size,
                size_t least)
{
    size_t n = *cap ? *cap : least;
    void *nb;

    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    if (c->bytes + (n - *cap) * size > c->max_bytes)
        return 1;
    if (!(nb = realloc(*buf, n * size)))
        return -ENOMEM;
    c->bytes += (n - *cap) * size;
    *buf = nb;
    *cap = n;
    return 0;
}

/*
 * Code one row of tick `tick` into its instance's points. Returns 0; 1 when the cache was reset
 * (a second row of one tick, the byte limit: nothing staged is left either); -ENOMEM when it was
 * reset for want of memory.
 */
static int point_add(struct span_cache *c, int o, size_t r, int64_t tick, int64_t inst,
                     const uint64_t *v, uint64_t null_mask, size_t nfields)
{
    struct inst_points *p = inst_of(c, &c->o[o], r, inst, nfields);
    uint64_t *last;
    size_t need;

    if (!p)
        goto nomem;
    if (tick <= p->last_tick) {
        span_cache_reset(c); /* a second row of one tick: the table refuses it too */
        return 1;
    }
    need = p->len + POINT_MAX(nfields);
    if (need > p->cap) {
        size_t cap = p->cap < 64 ? 64 : p->cap + p->cap / 2;
        uint8_t *nb;

        if (cap < need)
            cap = need;
        if (c->bytes + (cap - p->cap) > c->max_bytes) {
            span_cache_reset(c);
            return 1;
        }
        if (!(nb = realloc(p->b, cap)))
            goto nomem;
        c->bytes += cap - p->cap;
        p->b = nb;
        p->cap = cap;
    }
    if (p->len == 0) {
        /* The first point: from the state after the points dropped before it. */
        p->base_tick = p->last_tick;
        memcpy(base_v(p), last_v(p), nfields * sizeof(uint64_t));
    }
    last = last_v(p);
    p->len += put_varint(p->b + p->len, (uint64_t)(tick - p->last_tick));
    p->len += put_varint(p->b + p->len, null_mask);
    for (size_t f = 0; f < nfields; f++) {
        if (null_mask & (UINT64_C(1) << f))
            continue;
        p->len += put_varint(p->b + p->len, zigzag(v[f] - last[f]));
        last[f] = v[f];
    }
    p->last_tick = tick;
    return 0;
nomem:
    span_cache_reset(c);
    return -ENOMEM;
}

/* Code staged row k of object o. As point_add. */
static int stage_code_row(struct span_cache *c, int o, size_t k)
{
    const uint64_t *w = c->o[o].st.w + c->o[o].st.row_at[k];

    return point_add(c, o, (size_t)w[2], c->staged_tick[w[0]], (int64_t)w[1], w + STAGE_HEAD, w[3],
                     (size_t)w[4]);
}

/*
 * Whether object o's staged ticks all have the same rows, instance for instance, in the same
 * order: then they are coded row by row, each instance's points of all the ticks together.
 * first[s] is the index of slot s's first row, first[nstaged] the end.
 */
static int stage_regular(const struct span_cache *c, const struct stage *st, const size_t *first)
{
    size_t n = first[1] - first[0];

    for (int s = 1; s < c->nstaged; s++) {
        if (first[s + 1] - first[s] != n)
            return 0;
        for (size_t k = 0; k < n; k++)
            if (st->w[st->row_at[first[s] + k] + 1] != st->w[st->row_at[k] + 1])
                return 0;
    }
    return 1;
}

/*
 * Code every staged row into the instances' points, in tick order for each instance, and empty
 * the stage (its buffers are kept). Returns 0; 1 when the cache was reset on the way (a second
 * row of one tick, the byte limit), -ENOMEM when reset for want of memory.
 */
static int code_staged(struct span_cache *c)
{
    int rc = 0;

    for (int o = 0; rc == 0 && o < c->nobj; o++) {
        struct stage *st = &c->o[o].st;
        size_t first[STAGE_TICKS + 1] = {0};
        size_t k = 0;

        if (!st->nrows)
            continue;
        for (int s = 0; s <= c->nstaged; s++) {
            while (k < st->nrows && st->w[st->row_at[k]] < (uint64_t)s)
                k++;
            first[s] = k;
        }
        if (stage_regular(c, st, first)) {
            size_t n = first[1] - first[0];

            for (size_t i = 0; rc == 0 && i < n; i++)
                for (int s = 0; rc == 0 && s < c->nstaged; s++)
                    rc = stage_code_row(c, o, first[s] + i);
        } else {
            for (k = 0; rc == 0 && k < st->nrows; k++)
                rc = stage_code_row(c, o, k);
        }
        /* A reset freed the stage: nothing of it is left to empty. */
        if (rc == 0) {
            st->len = 0;
            st->nrows = 0;
        }
    }
    if (rc == 0) {
        /* The tick in hand, if any, goes on: its next rows stage into the first slot. */
        c->nstaged = 0;
        if (c->from >= 0 && !c->skip)
            c->staged_tick[c->nstaged++] = c->tick;
    }
    return rc;
}

int span_cache_add(struct span_cache *c, int o, size_t r, int64_t inst, const int64_t *v,
                   uint64_t null_mask, size_t nfields)
{
    struct stage *st;
    uint64_t *w;
    int rc;

    if (!c || c->skip || c->from < 0)
        return 0;
    if (o < 0 || o >= c->nobj || nfields > SPAN_CACHE_MAX_FIELDS)
        return -EINVAL;
    if (nfields < SPAN_CACHE_MAX_FIELDS)
        null_mask &= (UINT64_C(1) << nfields) - 1;
    st = &c->o[o].st;
    rc = grow(c, (void **)&st->w, &st->cap, st->len + STAGE_HEAD + nfields, sizeof(*st->w), 256);
    if (rc == 0)
        rc = grow(c, (void **)&st->row_at, &st->rows_cap, st->nrows + 1, sizeof(*st->row_at), 64);
    if (rc != 0) {
        span_cache_reset(c);
        return rc < 0 ? rc : 0;
    }
    st->row_at[st->nrows++] = st->len;
    w = st->w + st->len;
    w[0] = (uint64_t)(c->nstaged - 1);
    w[1] = (uint64_t)inst;
    w[2] = (uint64_t)r;
    w[3] = null_mask;
    w[4] = nfields;
    memcpy(w + STAGE_HEAD, v, nfields * sizeof(*v));
    st->len += STAGE_HEAD + nfields;
    return 0;
}

/*
 * Decode the points of `p` in order: those up to tick hi go to fn when at or past lo, and are
 * dropped (the base moves past them). Returns 0, what fn returned, or -EIO for bytes that do not
 * decode (never: only put_varint wrote them).
 */
static int take_points(struct inst_points *p, int64_t lo, int64_t hi, span_cache_point_fn fn,
                       void *ctx)
{
    int64_t vals[SPAN_CACHE_MAX_FIELDS];
    uint64_t *cur = base_v(p);
    int64_t tick = p->base_tick;
    size_t at = 0, kept_from = 0;
    int rc = 0;

    while (at < p->len) {
        uint64_t step, mask;
        uint64_t next[SPAN_CACHE_MAX_FIELDS];

        if (get_varint(p->b, p->len, &at, &step) < 0 || get_varint(p->b, p->len, &at, &mask) < 0)
            return -EIO;
        if (tick + (int64_t)step > hi)
            break;
        memcpy(next, cur, p->nf * sizeof(uint64_t));
        for (size_t f = 0; f < p->nf; f++) {
            uint64_t z;

            if (mask & (UINT64_C(1) << f))
                continue;
            if (get_varint(p->b, p->len, &at, &z) < 0)
                return -EIO;
            next[f] += unzigzag(z);
        }
        tick += (int64_t)step;
        memcpy(cur, next, p->nf * sizeof(uint64_t));
        p->base_tick = tick;
        kept_from = at;
        if (fn && tick >= lo) {
            for (size_t f = 0; f < p->nf; f++)
                vals[f] = (int64_t)cur[f];
            if ((rc = fn(ctx, p->inst, tick, vals, mask)) < 0)
                break;
        }
    }
    memmove(p->b, p->b + kept_from, p->len - kept_from);
    p->len -= kept_from;
    return rc;
}

int span_cache_take(struct span_cache *c, int o, int64_t lo, int64_t hi, int64_t a, int64_t b,
                    span_cache_point_fn fn, void *ctx)
{
    struct obj_points *op;
    size_t k, w;
    int rc = 0, forgot = 0;

    if (!c || o < 0 || o >= c->nobj)
        return 0;
    /* Code the staged rows the span needs first (later ones wait: an instance forgotten below
     * comes back from them as new). A reset on the way leaves a drop nothing to drop, and would
     * leave a read without points: it fails (span_cache_covers, which codes them too, would
     * have said no). */
    if (staged_upto(c, hi) && (rc = code_staged(c)) != 0 && fn)
        return rc < 0 ? rc : -EAGAIN;
    rc = 0;
    op = &c->o[o];
    k = lower_bound(op, a);
    w = k;
    for (; k < op->n && op->i[k]->inst < b; k++) {
        struct inst_points *p = op->i[k];

        if (rc == 0)
            rc = take_points(p, lo, hi, fn, ctx);
        if (rc == 0 && p->len == 0 && p->last_tick <= hi) {
            /* Nothing after the span: an instance that went; it comes back new if it returns. */
            c->bytes -= inst_bytes(p);
            free(p->b);
            free(p);
            forgot = 1;
            continue;
        }
        op->i[w++] = p;
    }
    if (w < k) {
        memmove(&op->i[w], &op->i[k], (op->n - k) * sizeof(*op->i));
        op->n -= k - w;
    }
    if (forgot)
        op->nhint = 0; /* the hints may name a freed instance */
    return rc;
}
