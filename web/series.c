/*
 * series.c - pattern resolution; see series.h.
 */
#include "series.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An instance either from the database or from the newest tick. */
struct inst_ref {
    int obj;
    char name[COUNTER_NAME_MAX];
    int64_t id;
};

struct inst_list {
    struct inst_ref *v;
    size_t n, cap;
};

static int inst_add(struct inst_list *l, int obj, const char *name, int64_t id)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].obj == obj && strcmp(l->v[i].name, name) == 0) {
            if (l->v[i].id < 0)
                l->v[i].id = id;
            return 0;
        }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct inst_ref *v = realloc(l->v, cap * sizeof(*v));

        if (!v)
            return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].obj = obj;
    snprintf(l->v[l->n].name, sizeof(l->v[l->n].name), "%s", name);
    l->v[l->n].id = id;
    l->n++;
    return 0;
}

static int db_inst_cb(void *arg, int obj, const char *name, int64_t id)
{
    return inst_add(arg, obj, name, id) < 0 ? -ENOMEM : 0;
}

static int series_add(struct series_set *set, int obj, size_t k, const struct inst_ref *in,
                      size_t max)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->s[i].obj == obj && set->s[i].counter == k && !strcmp(set->s[i].inst, in->name))
            return 0;
    if (set->n >= max)
        return -E2BIG;
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 32;
        struct series *s = realloc(set->s, cap * sizeof(*s));

        if (!s)
            return -ENOMEM;
        set->s = s;
        set->cap = cap;
    }
    set->s[set->n].obj = obj;
    set->s[set->n].counter = k;
    memcpy(set->s[set->n].inst, in->name, sizeof(in->name));
    set->s[set->n].inst_id = in->id;
    set->n++;
    return 0;
}

/* Does instance `name` of object `od` fit the instance part of p? */
static int inst_matches(const struct pattern *p, const struct object_def *od, const char *name)
{
    if (od->single)
        return !p->has_instance && name[0] == '\0';
    return p->has_instance && pattern_glob(p->instance, name);
}

static int add_matches(const struct inst_list *insts, const struct pattern *p, size_t max,
                       struct series_set *set)
{
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct object_def *od = &counter_objects[o];

        if (!pattern_glob(p->object, od->name))
            continue;
        for (size_t i = 0; i < insts->n; i++) {
            if (insts->v[i].obj != o || !inst_matches(p, od, insts->v[i].name))
                continue;
            for (size_t k = 0; k < od->ncounters; k++) {
                int rc;

                if (!pattern_glob(p->counter, od->counters[k].name))
                    continue;
                rc = series_add(set, o, k, &insts->v[i], max);
                if (rc < 0)
                    return rc;
            }
        }
    }
    return 0;
}

int series_resolve(struct reader *rd, const struct tick *latest, const struct pattern *pats,
                   size_t npat, size_t max, struct series_set *set)
{
    struct inst_list insts = {0};
    int rc = 0;

    if (rd)
        rc = reader_instances(rd, db_inst_cb, &insts);
    if (rc != 0) {
        rc = rc == -ENOMEM ? -ENOMEM : -EIO;
        goto out;
    }
    for (int o = 0; latest && o < OBJ_COUNT; o++)
        for (size_t r = 0; r < latest->obj[o].n; r++)
            if ((rc = inst_add(&insts, o, latest->obj[o].rows[r].name, -1)) < 0)
                goto out;
    for (size_t i = 0; i < npat && rc == 0; i++)
        rc = add_matches(&insts, &pats[i], max, set);
out:
    free(insts.v);
    return rc;
}

void series_set_free(struct series_set *set)
{
    free(set->s);
    memset(set, 0, sizeof(*set));
}

int series_path(const struct series *s, char *buf, size_t cap)
{
    const struct object_def *od = &counter_objects[s->obj];

    return pattern_format_path(buf, cap, od->name, s->inst, od->counters[s->counter].name);
}
