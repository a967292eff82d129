/*
 * report_proc.c - a run's process tree from stored rows; see report_proc.h.
 *
 * Every Process row carries its pid and its parent's (as first seen, so an orphan reparented to
 * init still points at its real parent). The rows of the window give (instance, pid, ppid); the
 * tree is the closure from the root's pid. A pid reused within the window by a process of another
 * run would join the tree only if its parent did too, which a reused pid's parent is not.
 */
#include "storage/query/report_proc.h"

#include "base/grow.h"
#include "base/name_hash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE_MAX 4096 /* ticks taken from memory at most, as data.c does */

struct proc {
    char name[COUNTER_NAME_MAX]; /* "" until known */
    int64_t inst;                /* database id, -1 when only in memory */
    int64_t pid, ppid;
    int member;
};

struct procs {
    struct proc *p;
    size_t n, cap;
    uint32_t *slots; /* index + 1 of p by name, open addressing; 0 is empty */
    size_t nslots;
};

static void index_put(struct procs *ps, size_t i)
{
    size_t k = name_hash(ps->p[i].name) & (ps->nslots - 1);

    while (ps->slots[k])
        k = (k + 1) & (ps->nslots - 1);
    ps->slots[k] = (uint32_t)i + 1;
}

/* (Re)build the name index for at least `want` entries. 0 or -ENOMEM. */
static int index_grow(struct procs *ps, size_t want)
{
    size_t nslots = 64;
    uint32_t *slots;

    while (nslots < want * 2)
        nslots *= 2;
    if (!(slots = calloc(nslots, sizeof(*slots))))
        return -ENOMEM;
    free(ps->slots);
    ps->slots = slots;
    ps->nslots = nslots;
    for (size_t i = 0; i < ps->n; i++)
        if (ps->p[i].name[0])
            index_put(ps, i);
    return 0;
}

/* A new entry, not indexed. NULL past the limit or out of memory. */
static struct proc *proc_add(struct procs *ps, int64_t inst)
{
    if (ps->n == REPORT_PROC_MAX * 4)
        return NULL; /* a window with this many processes: the rest are not looked at */
    if (grow_array(&ps->p, &ps->cap, ps->n, sizeof(*ps->p), 64) < 0)
        return NULL;
    ps->p[ps->n] = (struct proc){.inst = inst, .pid = -1, .ppid = -1};
    return &ps->p[ps->n++];
}

/* The entry named `name`, added (and indexed) when new. */
static struct proc *proc_by_name(struct procs *ps, const char *name)
{
    struct proc *p;

    if (ps->nslots) {
        for (size_t k = name_hash(name) & (ps->nslots - 1); ps->slots[k];
             k = (k + 1) & (ps->nslots - 1))
            if (strcmp(ps->p[ps->slots[k] - 1].name, name) == 0)
                return &ps->p[ps->slots[k] - 1];
    }
    if ((ps->n + 1) * 2 > ps->nslots && index_grow(ps, ps->n + 1) < 0)
        return NULL;
    if (!(p = proc_add(ps, -1)))
        return NULL;
    snprintf(p->name, sizeof(p->name), "%s", name);
    index_put(ps, ps->n - 1);
    return p;
}

static void proc_ids(struct proc *p, const int64_t *v, uint64_t null_mask)
{
    if (p->pid < 0 && !(null_mask & (1ull << PROC_PID)))
        p->pid = v[PROC_PID];
    if (p->ppid < 0 && !(null_mask & (1ull << PROC_PPID)))
        p->ppid = v[PROC_PPID];
}

static int ids_cb(void *arg, int64_t inst, int64_t pid, int64_t ppid)
{
    struct proc *p = proc_add(arg, inst);

    if (!p)
        return -ENOMEM;
    p->pid = pid;
    p->ppid = ppid;
    return 0;
}

struct tick_span {
    int64_t lo, hi;
};

static int span_cb(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms)
{
    struct tick_span *s = arg;

    (void)t_ms;
    (void)interval_ms;
    s->lo = tick < s->lo ? tick : s->lo;
    s->hi = tick > s->hi ? tick : s->hi;
    return 0;
}

static int name_cb(void *arg, int obj, const char *name, int64_t inst)
{
    struct procs *ps = arg;

    if (obj != OBJ_PROCESS)
        return 0;
    for (size_t i = 0; i < ps->n; i++)
        if (ps->p[i].inst == inst)
            snprintf(ps->p[i].name, sizeof(ps->p[i].name), "%s", name);
    return 0;
}

/* The processes with rows in the window, from the database. */
static int from_db(struct reader *rd, int64_t from_ms, int64_t to_ms, struct procs *ps)
{
    struct tick_span span = {INT64_MAX, INT64_MIN};

    if (reader_ticks(rd, from_ms, to_ms, span_cb, &span) != 0)
        return -EIO;
    if (span.lo > span.hi)
        return 0;
    if (reader_process_ids(rd, span.lo, span.hi, ids_cb, ps) != 0 ||
        (ps->n && reader_instances(rd, name_cb, ps) != 0))
        return -EIO;
    return index_grow(ps, ps->n + 1);
}

/* ... and from the ticks in memory that the writer may not have stored yet. */
static int from_live(struct live *live, int64_t from_ms, int64_t to_ms, struct procs *ps)
{
    struct tick **lt = calloc(LIVE_MAX, sizeof(*lt));
    size_t n;

    if (!lt)
        return -ENOMEM;
    n = live_range(live, from_ms, to_ms, lt, LIVE_MAX, NULL);
    for (size_t i = 0; i < n; i++) {
        const struct tick_object *o = &lt[i]->obj[OBJ_PROCESS];

        for (size_t r = 0; r < o->n; r++) {
            struct proc *p = proc_by_name(ps, o->rows[r].name);
            if (p)
                proc_ids(p, o->rows[r].v, o->rows[r].null_mask);
        }
        tick_free(lt[i]);
    }
    free(lt);
    return 0;
}

/* Mark the tree under root_pid; returns the number of members. */
static size_t mark_tree(struct procs *ps, int64_t root_pid)
{
    size_t members = 0;
    int changed = 1;

    for (size_t i = 0; i < ps->n; i++)
        if (ps->p[i].pid == root_pid && ps->p[i].name[0]) {
            ps->p[i].member = 1;
            members++;
        }
    while (changed && members < REPORT_PROC_MAX) {
        changed = 0;
        for (size_t i = 0; i < ps->n && members < REPORT_PROC_MAX; i++) {
            struct proc *c = &ps->p[i];

            if (c->member || !c->name[0] || c->ppid <= 0)
                continue;
            for (size_t k = 0; k < ps->n; k++)
                if (ps->p[k].member && ps->p[k].pid == c->ppid) {
                    c->member = changed = 1;
                    members++;
                    break;
                }
        }
    }
    return members;
}

static int add_series(struct series_set *set, const struct proc *p, size_t counter)
{
    if (grow_array(&set->s, &set->cap, set->n, sizeof(*set->s), 64) < 0)
        return -ENOMEM;
    set->s[set->n] = (struct series){.obj = OBJ_PROCESS, .counter = counter, .inst_id = p->inst};
    memcpy(set->s[set->n].inst, p->name, sizeof(p->name));
    set->n++;
    return 0;
}

int report_proc_restrict(struct reader *rd, struct live *live, int root_pid, int64_t from_ms,
                         int64_t to_ms, struct series_set *set)
{
    const struct object_def *od = &counter_objects[OBJ_PROCESS];
    const char *names[COUNTER_MAX_FIELDS * 2];
    uint64_t wanted = 0;
    size_t k = 0, nnames = 0, nproc;

    for (size_t i = 0; i < set->n; i++) {
        if (set->s[i].obj == OBJ_PROCESS)
            wanted |= 1ull << set->s[i].counter;
        else
            set->s[k++] = set->s[i];
    }
    set->n = k;
    for (size_t c = 0; c < od->ncounters && nnames < sizeof(names) / sizeof(names[0]); c++)
        if (wanted & (1ull << c))
            names[nnames++] = od->counters[c].name;
    if (!nnames)
        return 0;
    return report_proc_series(rd, live, root_pid, from_ms, to_ms, names, nnames, set, &nproc);
}

int report_proc_series(struct reader *rd, struct live *live, int root_pid, int64_t from_ms,
                       int64_t to_ms, const char *const *counters, size_t ncounters,
                       struct series_set *set, size_t *nproc)
{
    const struct object_def *od = &counter_objects[OBJ_PROCESS];
    struct procs ps = {0};
    int rc = 0;

    *nproc = 0;
    if (root_pid <= 0)
        return 0;
    if (rd)
        rc = from_db(rd, from_ms, to_ms, &ps);
    if (rc == 0 && live)
        rc = from_live(live, from_ms, to_ms, &ps);
    if (rc == 0)
        *nproc = mark_tree(&ps, root_pid);
    for (size_t i = 0; rc == 0 && i < ps.n; i++) {
        if (!ps.p[i].member)
            continue;
        for (size_t c = 0; rc == 0 && c < ncounters; c++)
            for (size_t k = 0; rc == 0 && k < od->ncounters; k++)
                if (strcmp(od->counters[k].name, counters[c]) == 0)
                    rc = add_series(set, &ps.p[i], k);
    }
    free(ps.p);
    free(ps.slots);
    return rc;
}
