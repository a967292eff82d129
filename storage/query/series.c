/*
 * series.c - pattern resolution; see series.h.
 */
#include "storage/query/series.h"

#include "base/grow.h"

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
    if (grow_array(&l->v, &l->cap, l->n, sizeof(*l->v), 64) < 0)
        return -ENOMEM;
    l->v[l->n].obj = obj;
    snprintf(l->v[l->n].name, sizeof(l->v[l->n].name), "%s", name);
    l->v[l->n].id = id;
    l->n++;
    return 0;
}

/* An extra PDH path, from pdh_paths or from the newest tick. */
struct pdh_ref {
    char path[PDH_PATH_MAX];
    struct pdh_path_parts parts;
    int64_t id;
};

struct pdh_list {
    struct pdh_ref *v;
    size_t n, cap;
};

static int db_inst_cb(void *arg, int obj, const char *name, int64_t id)
{
    return inst_add(arg, obj, name, id) < 0 ? -ENOMEM : 0;
}

/* Add path (cut into its parts) unless there; a path that does not cut is left out. */
static int pdh_add(struct pdh_list *l, const char *path, int64_t id)
{
    struct pdh_ref *r;

    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].path, path) == 0) {
            if (l->v[i].id < 0)
                l->v[i].id = id;
            return 0;
        }
    if (strlen(path) >= sizeof(r->path))
        return 0;
    if (grow_array(&l->v, &l->cap, l->n, sizeof(*l->v), 16) < 0)
        return -ENOMEM;
    r = &l->v[l->n];
    if (pdh_path_split(path, &r->parts) < 0)
        return 0;
    snprintf(r->path, sizeof(r->path), "%s", path);
    r->id = id;
    l->n++;
    return 0;
}

static int db_pdh_cb(void *arg, int64_t id, const char *path, const char *object,
                     const char *instance, const char *counter)
{
    (void)object; /* pdh_add cuts the path as the writer cut it into these */
    (void)instance;
    (void)counter;
    return pdh_add(arg, path, id) < 0 ? -ENOMEM : 0;
}

static struct series *series_new(struct series_set *set, size_t max)
{
    if (set->n >= max)
        return NULL;
    if (grow_array(&set->s, &set->cap, set->n, sizeof(*set->s), 32) < 0)
        return NULL;
    memset(&set->s[set->n], 0, sizeof(set->s[0]));
    return &set->s[set->n++];
}

static int series_add(struct series_set *set, int obj, size_t k, const struct inst_ref *in,
                      size_t max)
{
    struct series *s;

    for (size_t i = 0; i < set->n; i++)
        if (set->s[i].obj == obj && set->s[i].counter == k && !strcmp(set->s[i].inst, in->name))
            return 0;
    if (!(s = series_new(set, max)))
        return set->n >= max ? -E2BIG : -ENOMEM;
    s->obj = obj;
    s->counter = k;
    memcpy(s->inst, in->name, sizeof(in->name));
    s->inst_id = in->id;
    return 0;
}

static int series_add_pdh(struct series_set *set, const struct pdh_ref *p, size_t max)
{
    struct series *s;

    for (size_t i = 0; i < set->n; i++)
        if (set->s[i].obj == SERIES_PDH && !strcmp(set->s[i].pdh_path, p->path))
            return 0;
    if (!(s = series_new(set, max)))
        return set->n >= max ? -E2BIG : -ENOMEM;
    s->obj = SERIES_PDH;
    s->inst_id = p->id;
    memcpy(s->pdh_path, p->path, sizeof(p->path));
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

/* Does extra path p fit the pattern? The instance rule is the objects' (inst_matches). */
static int pdh_matches(const struct pattern *p, const struct pdh_path_parts *parts)
{
    if (!pattern_glob(p->object, parts->object) || !pattern_glob(p->counter, parts->counter))
        return 0;
    if (!parts->instance[0])
        return !p->has_instance;
    return p->has_instance && pattern_glob(p->instance, parts->instance);
}

static int add_pdh_matches(const struct pdh_list *paths, const struct pattern *p, size_t max,
                           struct series_set *set)
{
    int rc = 0;

    for (size_t i = 0; i < paths->n && rc == 0; i++)
        if (pdh_matches(p, &paths->v[i].parts))
            rc = series_add_pdh(set, &paths->v[i], max);
    return rc;
}

/* Every instance and extra path known, from the database (rd) and the newest tick (latest). */
static int gather(struct reader *rd, const struct tick *latest, struct inst_list *insts,
                  struct pdh_list *paths)
{
    int rc = 0;

    if (rd)
        rc = reader_instances(rd, db_inst_cb, insts);
    if (rd && rc == 0)
        rc = reader_pdh_paths(rd, db_pdh_cb, paths);
    if (rc != 0)
        return rc == -ENOMEM ? -ENOMEM : -EIO;
    for (int o = 0; latest && o < OBJ_COUNT; o++)
        for (size_t r = 0; r < latest->obj[o].n; r++)
            if ((rc = inst_add(insts, o, latest->obj[o].rows[r].name, -1)) < 0)
                return rc;
    for (size_t i = 0; latest && i < latest->n_extras; i++)
        if ((rc = pdh_add(paths, latest->extras[i].path, -1)) < 0)
            return rc;
    return 0;
}

int series_resolve(struct reader *rd, const struct tick *latest, const struct pattern *pats,
                   size_t npat, size_t max, struct series_set *set)
{
    struct inst_list insts = {0};
    struct pdh_list paths = {0};
    int rc = gather(rd, latest, &insts, &paths);

    for (size_t i = 0; i < npat && rc == 0; i++)
        rc = add_matches(&insts, &pats[i], max, set);
    for (size_t i = 0; i < npat && rc == 0; i++)
        rc = add_pdh_matches(&paths, &pats[i], max, set);
    free(insts.v);
    free(paths.v);
    return rc;
}

void series_set_free(struct series_set *set)
{
    free(set->s);
    memset(set, 0, sizeof(*set));
}

int series_path(const struct series *s, char *buf, size_t cap)
{
    const struct object_def *od;

    if (s->obj == SERIES_PDH)
        return snprintf(buf, cap, "%s", s->pdh_path);
    od = &counter_objects[s->obj];
    return pattern_format_path(buf, cap, od->name, s->inst, od->counters[s->counter].name);
}

const char *series_unit(const struct series *s)
{
    return s->obj == SERIES_PDH ? "" : counter_objects[s->obj].counters[s->counter].unit;
}

const char *series_kind(const struct series *s)
{
    return s->obj == SERIES_PDH ? "value" : counter_objects[s->obj].counters[s->counter].kind;
}

void series_parts(const struct series *s, struct pdh_path_parts *out)
{
    const struct object_def *od;

    if (s->obj == SERIES_PDH) {
        if (pdh_path_split(s->pdh_path, out) < 0)
            memset(out, 0, sizeof(*out)); /* never: only paths that cut become series */
        return;
    }
    od = &counter_objects[s->obj];
    snprintf(out->object, sizeof(out->object), "%s", od->name);
    snprintf(out->instance, sizeof(out->instance), "%s", od->single ? "" : s->inst);
    snprintf(out->counter, sizeof(out->counter), "%s", od->counters[s->counter].name);
}
