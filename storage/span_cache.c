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

struct obj_points {
    struct inst_points **i; /* sorted by inst */
    size_t n, cap;
    struct inst_points **hint; /* by row index: the instance that row had last time */
    size_t nhint, hint_cap;
};

struct span_cache {
    int nobj;
    size_t max_bytes, bytes;
    int64_t from; /* -1: not exact yet; set by the first tick after a reset */
    int64_t tick;
    int skip; /* the current tick's rows are not kept (a reset in its middle) */
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
    c->skip = 1; /* until the next tick begins */
}

void span_cache_tick(struct span_cache *c, int64_t tick)
{
    if (!c)
        return;
    if (c->from >= 0 && tick <= c->tick)
        span_cache_reset(c); /* ticks go back: the points after it no longer follow */
    if (c->from < 0)
        c->from = tick;
    c->tick = tick;
    c->skip = 0;
}

int64_t span_cache_from(const struct span_cache *c)
{
    return c ? c->from : -1;
}

int span_cache_covers(const struct span_cache *c, int64_t lo)
{
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

int span_cache_add(struct span_cache *c, int o, size_t r, int64_t inst, const int64_t *v,
                   uint64_t null_mask, size_t nfields)
{
    struct inst_points *p;
    uint64_t *last;
    size_t need;

    if (!c || c->skip || c->from < 0)
        return 0;
    if (o < 0 || o >= c->nobj || nfields > SPAN_CACHE_MAX_FIELDS)
        return -EINVAL;
    if (nfields < SPAN_CACHE_MAX_FIELDS)
        null_mask &= (UINT64_C(1) << nfields) - 1;
    p = inst_of(c, &c->o[o], r, inst, nfields);
    if (!p)
        goto nomem;
    if (c->tick <= p->last_tick) {
        span_cache_reset(c); /* a second row of one tick: the table refuses it too */
        return 0;
    }
    need = p->len + POINT_MAX(nfields);
    if (need > p->cap) {
        size_t cap = p->cap < 64 ? 64 : p->cap + p->cap / 2;
        uint8_t *nb;

        if (cap < need)
            cap = need;
        if (c->bytes + (cap - p->cap) > c->max_bytes) {
            span_cache_reset(c);
            return 0;
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
    p->len += put_varint(p->b + p->len, (uint64_t)(c->tick - p->last_tick));
    p->len += put_varint(p->b + p->len, null_mask);
    for (size_t f = 0; f < nfields; f++) {
        if (null_mask & (UINT64_C(1) << f))
            continue;
        p->len += put_varint(p->b + p->len, zigzag((uint64_t)v[f] - last[f]));
        last[f] = (uint64_t)v[f];
    }
    p->last_tick = c->tick;
    return 0;
nomem:
    span_cache_reset(c);
    return -ENOMEM;
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
