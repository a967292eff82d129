/*
 * rollup_acc.c - running minute roll-ups; see rollup_acc.h.
 */
#include "storage/rollup_acc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The series of `inst`, created empty on first sight this minute. NULL on out of memory. */
static struct rollup_series *series_of(struct rollup_obj *r, size_t ncounters, int64_t inst)
{
    struct rollup_series *s;

    if (inst < 0)
        return NULL;
    if ((size_t)inst >= r->slot_cap) {
        size_t cap = r->slot_cap ? r->slot_cap : 64;
        uint32_t *p;

        while (cap <= (size_t)inst)
            cap *= 2;
        p = realloc(r->slot, cap * sizeof(*p));
        if (!p)
            return NULL;
        memset(p + r->slot_cap, 0, (cap - r->slot_cap) * sizeof(*p));
        r->slot = p;
        r->slot_cap = cap;
    }
    if (r->slot[inst])
        return &r->s[r->slot[inst] - 1];
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        struct rollup_series *p = realloc(r->s, cap * sizeof(*p));

        if (!p)
            return NULL;
        /* New entries get their arrays on first use; reused ones keep theirs. */
        memset(p + r->cap, 0, (cap - r->cap) * sizeof(*p));
        r->s = p;
        r->cap = cap;
    }
    s = &r->s[r->n];
    if (!s->min && ncounters) {
        /* One block for the five arrays, sized for this object's counters. */
        double *d = malloc(ncounters * (4 * sizeof(double) + sizeof(int64_t)));

        if (!d)
            return NULL;
        s->min = d;
        s->sum = d + ncounters;
        s->max = d + 2 * ncounters;
        s->den = d + 3 * ncounters;
        s->cnt = (int64_t *)(d + 4 * ncounters);
    }
    s->inst = inst;
    s->n = 0;
    for (size_t k = 0; k < ncounters; k++) {
        s->sum[k] = 0.0;
        s->den[k] = 0.0;
        s->cnt[k] = 0;
    }
    r->slot[inst] = (uint32_t)++r->n;
    return s;
}

int rollup_obj_add(struct rollup_obj *r, const struct object_def *od, int64_t inst,
                   const int64_t *v, uint64_t null_mask, int64_t interval_ms)
{
    struct rollup_series *s = series_of(r, od->ncounters, inst);

    if (!s)
        return -ENOMEM;
    s->n++;
    for (size_t k = 0; k < od->ncounters; k++) {
        const struct counter_def *c = &od->counters[k];
        double x, num, den;

        if (!counter_eval(c, v, null_mask, interval_ms, &x))
            continue;
        if (!s->cnt[k] || x < s->min[k])
            s->min[k] = x;
        if (!s->cnt[k] || x > s->max[k])
            s->max[k] = x;
        /* In row order, one addition per row: how SQLite's avg() and total() sum. */
        if ((c->flags & CF_PER_OP) && counter_num_den(c, v, null_mask, &num, &den)) {
            s->sum[k] += num;
            s->den[k] += den;
        } else {
            s->sum[k] += x;
        }
        s->cnt[k]++;
    }
    return 0;
}

int rollup_obj_add_bucket(struct rollup_obj *h, const struct object_def *od,
                          const struct rollup_series *m)
{
    struct rollup_series *s = series_of(h, od->ncounters, m->inst);

    if (!s)
        return -ENOMEM;
    h->hour = 1;
    s->n += m->n;
    for (size_t k = 0; k < od->ncounters; k++) {
        if (!m->cnt[k])
            continue;
        if (!s->cnt[k] || m->min[k] < s->min[k])
            s->min[k] = m->min[k];
        if (!s->cnt[k] || m->max[k] > s->max[k])
            s->max[k] = m->max[k];
        if (od->counters[k].flags & CF_PER_OP) {
            /* total(avg * ops) / total(ops), the avg being the stored double */
            s->sum[k] += rollup_avg(0, &od->counters[k], m, k) * m->den[k];
            s->den[k] += m->den[k];
        } else {
            /* sum(avg * n) / sum(n of the minutes with an avg), the avg being the stored double */
            s->sum[k] += m->sum[k] / (double)m->cnt[k] * (double)m->n;
        }
        s->cnt[k] += m->n;
    }
    return 0;
}

double rollup_avg(int hour, const struct counter_def *c, const struct rollup_series *s, size_t k)
{
    if (!(c->flags & CF_PER_OP))
        return s->sum[k] / (double)s->cnt[k];
    if (s->den[k] == 0.0)
        return 0.0;
    return hour ? s->sum[k] / s->den[k] : s->sum[k] * c->scale / s->den[k];
}

void rollup_obj_reset(struct rollup_obj *r)
{
    for (size_t i = 0; i < r->n; i++)
        r->slot[r->s[i].inst] = 0;
    r->n = 0;
    r->hour = 0;
}

void rollup_obj_free(struct rollup_obj *r)
{
    for (size_t i = 0; i < r->cap; i++)
        free(r->s[i].min);
    free(r->s);
    free(r->slot);
    memset(r, 0, sizeof(*r));
}
