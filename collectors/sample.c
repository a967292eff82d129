/*
 * sample.c - growable rows for raw samples, and tick release.
 */
#include "sample.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct raw_row *raw_object_add(struct raw_object *o, const char *name, size_t name_len)
{
    struct raw_row *r;

    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 16;
        struct raw_row *rows = realloc(o->rows, cap * sizeof(*rows));
        if (!rows)
            return NULL;
        o->rows = rows;
        o->cap = cap;
    }
    r = &o->rows[o->n++];
    memset(r, 0, sizeof(*r));
    if (name_len >= sizeof(r->name))
        name_len = sizeof(r->name) - 1;
    memcpy(r->name, name, name_len);
    r->name[name_len] = '\0';
    return r;
}

void raw_sample_clear(struct raw_sample *s)
{
    for (int i = 0; i < OBJ_COUNT; i++)
        s->obj[i].n = 0;
}

void raw_sample_free(struct raw_sample *s)
{
    for (int i = 0; i < OBJ_COUNT; i++) {
        free(s->obj[i].rows);
        s->obj[i].rows = NULL;
        s->obj[i].n = s->obj[i].cap = 0;
    }
}

struct tick *tick_ref(struct tick *t)
{
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

void tick_free(struct tick *t)
{
    if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < OBJ_COUNT; i++)
        free(t->obj[i].rows);
    free(t);
}
