/*
 * sample.c - growable rows for raw samples, and tick release.
 */
#include "collectors/model/sample.h"

#include "base/grow.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct raw_row *raw_object_add(struct raw_object *o, const char *name, size_t name_len)
{
    struct raw_row *r;

    if (grow_array(&o->rows, &o->cap, o->n, sizeof(*o->rows), 16) < 0)
        return NULL;
    r = &o->rows[o->n++];
    memset(r, 0, sizeof(*r));
    if (name_len >= sizeof(r->name))
        name_len = sizeof(r->name) - 1;
    memcpy(r->name, name, name_len);
    r->name[name_len] = '\0';
    return r;
}

struct raw_extra *raw_extra_add(struct raw_extras *e, const char *path)
{
    size_t len = strlen(path);
    struct raw_extra *x;

    if (len >= sizeof(x->path))
        return NULL;
    if (grow_array(&e->v, &e->cap, e->n, sizeof(*e->v), 16) < 0)
        return NULL;
    x = &e->v[e->n++];
    memcpy(x->path, path, len + 1);
    x->value = 0.0;
    x->valid = 0;
    return x;
}

void raw_sample_clear(struct raw_sample *s)
{
    for (int i = 0; i < OBJ_COUNT; i++)
        s->obj[i].n = 0;
    s->extra.n = 0;
}

void raw_sample_free(struct raw_sample *s)
{
    for (int i = 0; i < OBJ_COUNT; i++) {
        free(s->obj[i].rows);
        s->obj[i].rows = NULL;
        s->obj[i].n = s->obj[i].cap = 0;
    }
    free(s->extra.v);
    s->extra.v = NULL;
    s->extra.n = s->extra.cap = 0;
}

/* The paths of one set of extras: n pointers, then the strings, in one allocation. */
struct extra_names {
    _Atomic unsigned refs;
    size_t n;
    const char **path;
};

static int names_match(const struct extra_names *names, const struct raw_extra *e, size_t n)
{
    if (!names || names->n != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names->path[i], e[i].path) != 0)
            return 0;
    return 1;
}

static struct extra_names *names_new(const struct raw_extra *e, size_t n)
{
    size_t bytes = sizeof(struct extra_names) + n * sizeof(char *);
    struct extra_names *names;
    char *at;

    for (size_t i = 0; i < n; i++)
        bytes += strlen(e[i].path) + 1;
    names = malloc(bytes);
    if (!names)
        return NULL;
    names->refs = 1;
    names->n = n;
    names->path = (const char **)(void *)(names + 1);
    at = (char *)(names->path + n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(e[i].path) + 1;

        memcpy(at, e[i].path, len);
        names->path[i] = at;
        at += len;
    }
    return names;
}

void extra_names_free(struct extra_names *names)
{
    if (names && atomic_fetch_sub_explicit(&names->refs, 1, memory_order_acq_rel) == 1)
        free(names);
}

int tick_set_extras(struct tick *t, const struct raw_extra *e, size_t n, struct extra_names **cache)
{
    struct extra_names *names;
    struct tick_extra *x;

    if (n == 0)
        return 0;
    x = malloc(n * sizeof(*x));
    if (!x)
        return -ENOMEM;
    if (cache && names_match(*cache, e, n)) {
        names = *cache;
        atomic_fetch_add_explicit(&names->refs, 1, memory_order_relaxed);
    } else if (!(names = names_new(e, n))) {
        free(x);
        return -ENOMEM;
    } else if (cache) {
        extra_names_free(*cache);
        *cache = names;
        atomic_fetch_add_explicit(&names->refs, 1, memory_order_relaxed);
    }
    for (size_t i = 0; i < n; i++) {
        x[i].path = names->path[i];
        /* SQLite would store a NaN as NULL and JSON has no infinities: neither is a value. */
        x[i].valid = e[i].valid != 0 && isfinite(e[i].value);
        x[i].value = x[i].valid ? e[i].value : 0.0;
    }
    t->extras = x;
    t->n_extras = n;
    t->extra_names = names;
    return 0;
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
    free(t->extras);
    extra_names_free(t->extra_names);
    free(t);
}
