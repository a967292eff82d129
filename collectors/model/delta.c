/*
 * delta.c - raw readings to per-tick deltas, with wrap and reset rules; see delta.h.
 */
#include "collectors/model/delta.h"

#include "base/name_hash.h"

#include <stdlib.h>
#include <string.h>

/* Open-addressing index of the previous reading's rows, by name. */
struct prev_object {
    struct raw_object rows;
    uint32_t *slots; /* row index + 1; 0 is empty */
    size_t nslots;
    int dups; /* some name occurs twice (the index then holds the first of each) */
};

struct delta_state {
    struct prev_object prev[OBJ_COUNT];
    struct extra_names *names; /* the extras' paths of the last tick, shared with the next */
};

static const struct raw_row *prev_find(const struct prev_object *p, const char *name)
{
    if (!p->nslots)
        return NULL;
    for (size_t i = name_hash(name) & (p->nslots - 1);; i = (i + 1) & (p->nslots - 1)) {
        uint32_t s = p->slots[i];
        if (!s)
            return NULL;
        if (strcmp(p->rows.rows[s - 1].name, name) == 0)
            return &p->rows.rows[s - 1];
    }
}

/*
 * The previous row named like row r of this reading. Readings list their rows in the same order
 * tick after tick, so row r of the previous one is tried first: without duplicate names it is
 * the one the index would find.
 */
static const struct raw_row *prev_match(const struct prev_object *p, const struct raw_row *cur,
                                        size_t r, int *same)
{
    if (!p->dups && r < p->rows.n && strcmp(p->rows.rows[r].name, cur->name) == 0)
        return &p->rows.rows[r];
    *same = 0;
    return prev_find(p, cur->name);
}

/* Copy `cur` into `p` and index it; `same`: its names are p's, in p's order, so the index
 * stays. Returns 0 or -1 on out of memory (p unchanged). */
static int prev_store(struct prev_object *p, const struct raw_object *cur, int same)
{
    size_t nslots = 16;
    uint32_t *slots;
    struct raw_row *rows = NULL;
    int dups = 0;

    if (same && cur->n == p->rows.n && p->slots) {
        if (cur->n)
            memcpy(p->rows.rows, cur->rows, cur->n * sizeof(*cur->rows));
        return 0;
    }

    while (nslots < cur->n * 2)
        nslots *= 2;
    slots = calloc(nslots, sizeof(*slots));
    if (!slots)
        return -1;
    if (cur->n > p->rows.cap) {
        rows = realloc(p->rows.rows, cur->n * sizeof(*rows));
        if (!rows) {
            free(slots);
            return -1;
        }
        p->rows.rows = rows;
        p->rows.cap = cur->n;
    }
    if (cur->n)
        memcpy(p->rows.rows, cur->rows, cur->n * sizeof(*cur->rows));
    p->rows.n = cur->n;
    for (size_t r = 0; r < cur->n; r++) {
        size_t i = name_hash(cur->rows[r].name) & (nslots - 1);
        while (slots[i]) {
            if (strcmp(p->rows.rows[slots[i] - 1].name, cur->rows[r].name) == 0) {
                dups = 1;
                break; /* duplicate name: the first row wins */
            }
            i = (i + 1) & (nslots - 1);
        }
        if (!slots[i])
            slots[i] = (uint32_t)r + 1;
    }
    free(p->slots);
    p->slots = slots;
    p->nslots = nslots;
    p->dups = dups;
    return 0;
}

struct delta_state *delta_new(void)
{
    return calloc(1, sizeof(struct delta_state));
}

void delta_reset(struct delta_state *d)
{
    for (int i = 0; i < OBJ_COUNT; i++) {
        free(d->prev[i].slots);
        d->prev[i].slots = NULL;
        d->prev[i].nslots = 0;
        d->prev[i].rows.n = 0;
    }
}

void delta_free(struct delta_state *d)
{
    if (!d)
        return;
    delta_reset(d);
    for (int i = 0; i < OBJ_COUNT; i++)
        free(d->prev[i].rows.rows);
    extra_names_free(d->names);
    free(d);
}

int delta_field(enum field_kind kind, uint64_t prev, uint64_t cur, int64_t *out)
{
    uint64_t d;

    switch (kind) {
    case FIELD_GAUGE:
        *out = (int64_t)cur;
        return 1;
    case FIELD_CUM_U64:
        if (cur < prev || cur - prev > (uint64_t)INT64_MAX)
            return 0;
        *out = (int64_t)(cur - prev);
        return 1;
    case FIELD_CUM_U32:
        if (cur > UINT32_MAX || prev > UINT32_MAX)
            return 0;
        d = (uint32_t)((uint32_t)cur - (uint32_t)prev);
        /* A wrap that advanced by more than half the range is more likely a reset. */
        if (d > (uint64_t)INT32_MAX)
            return 0;
        *out = (int64_t)d;
        return 1;
    }
    return 0;
}

/* One instance: deltas against its previous reading (or none), levels as read. */
static void row_delta(const struct object_def *od, const struct raw_row *prev,
                      const struct raw_row *cur, struct tick_row *out)
{
    int reset = 0;

    memcpy(out->name, cur->name, sizeof(out->name));
    out->null_mask = 0;
    out->raw_mask = cur->present;
    memcpy(out->raw, cur->v, sizeof(out->raw));
    /* A 64-bit counter that went down means the instance was re-created: no deltas at all. */
    for (size_t f = 0; prev && f < od->nfields; f++)
        if (od->fields[f].kind == FIELD_CUM_U64 && (cur->present & prev->present & (1ull << f)) &&
            cur->v[f] < prev->v[f])
            reset = 1;
    for (size_t f = 0; f < od->nfields; f++) {
        uint64_t bit = 1ull << f;
        int ok;

        out->v[f] = 0;
        if (!(cur->present & bit))
            ok = 0;
        else if (od->fields[f].kind == FIELD_GAUGE)
            ok = delta_field(FIELD_GAUGE, 0, cur->v[f], &out->v[f]);
        else if (!prev && (cur->flags & RAW_FROM_ZERO))
            ok = delta_field(od->fields[f].kind, 0, cur->v[f], &out->v[f]);
        else if (!prev || reset || !(prev->present & bit))
            ok = 0;
        else
            ok = delta_field(od->fields[f].kind, prev->v[f], cur->v[f], &out->v[f]);
        if (!ok) {
            out->v[f] = 0;
            out->null_mask |= bit;
        }
    }
    /* Every byte of *out is written: delta_tick does not zero the rows first. */
    for (size_t f = od->nfields; f < COUNTER_MAX_FIELDS; f++)
        out->v[f] = 0;
}

/* Sum the member rows into a "_Total" row; a field no member has a value for has none. */
static void total_row(const struct object_def *od, const struct tick_row *rows,
                      const struct raw_row *raw, size_t n, struct tick_row *out)
{
    uint64_t seen = 0;

    memset(out, 0, sizeof(*out));
    strcpy(out->name, "_Total");
    for (size_t r = 0; r < n; r++) {
        if (!(raw[r].flags & RAW_IN_TOTAL))
            continue;
        for (size_t f = 0; f < od->nfields; f++) {
            if (rows[r].null_mask & (1ull << f))
                continue;
            out->v[f] += rows[r].v[f];
            seen |= 1ull << f;
        }
    }
    for (size_t f = 0; f < od->nfields; f++)
        if (!(seen & (1ull << f)) || (od->fields[f].flags & FIELDF_NO_TOTAL)) {
            out->v[f] = 0;
            out->null_mask |= 1ull << f;
        }
}

static int object_has_total(const struct raw_object *o)
{
    for (size_t r = 0; r < o->n; r++)
        if (o->rows[r].flags & RAW_IN_TOTAL)
            return 1;
    return 0;
}

struct tick *delta_tick(struct delta_state *d, const struct raw_sample *cur, int64_t wall_ms,
                        int64_t interval_ms, uint32_t missed)
{
    struct tick *t = calloc(1, sizeof(*t));
    int same[OBJ_COUNT];

    if (!t)
        return NULL;
    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = interval_ms;
    t->missed = missed;
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct raw_object *ro = &cur->obj[o];
        const struct object_def *od = &counter_objects[o];
        int total = object_has_total(ro);
        size_t n = ro->n + (size_t)total;

        same[o] = ro->n == d->prev[o].rows.n;
        if (!n)
            continue;
        /* Not zeroed: row_delta and total_row write all of each row (at a thousand instances
         * the zeroing was 7% of the sampler's time). */
        t->obj[o].rows = malloc(n * sizeof(struct tick_row));
        if (!t->obj[o].rows)
            goto oom;
        for (size_t r = 0; r < ro->n; r++)
            row_delta(od, prev_match(&d->prev[o], &ro->rows[r], r, &same[o]), &ro->rows[r],
                      &t->obj[o].rows[r]);
        if (total)
            total_row(od, t->obj[o].rows, ro->rows, ro->n, &t->obj[o].rows[ro->n]);
        t->obj[o].n = n;
    }
    /* Extra PDH series are PDH's own formatted values: no deltas, copied as read. */
    if (tick_set_extras(t, cur->extra.v, cur->extra.n, &d->names) < 0)
        goto oom;
    for (int o = 0; o < OBJ_COUNT; o++)
        if (prev_store(&d->prev[o], &cur->obj[o], same[o]) < 0)
            goto oom_state;
    return t;
oom_state:
    /* Part of the state is new, part old: forget it all rather than mix two readings. */
    delta_reset(d);
oom:
    tick_free(t);
    return NULL;
}
