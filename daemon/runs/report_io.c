/*
 * report_io.c - own against others from a run's edges; see report_io.h.
 *
 * own: the storage bytes of the run's process tree, the client's totals when it sent them (they
 * hold its reaped children), else the followed processes between the edges. others: what the
 * whole disks wrote (read) from the start edge to the last one, less own; who they were: every
 * process and control group whose storage bytes grew between the start edge and the last one
 * (io_scan). Kernel threads (the journal, the flusher) have no write_bytes of their own: the
 * control groups and the device total cover them.
 */
#include "daemon/runs/report_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_MAX 10

int64_t report_io_disk_delta(const json_t *start, const json_t *later, const char *key)
{
    json_t *sd = json_object_get(start, "disks"), *d;
    const char *name;
    int64_t sum = -1;

    json_object_foreach(json_object_get(later, "disks"), name, d)
    {
        json_t *v = json_object_get(d, key), *was = json_object_get(json_object_get(sd, name), key);
        int64_t diff;

        if (json_integer_value(json_object_get(d, "in_total")) != 1 || !json_is_integer(v) ||
            !json_is_integer(was))
            continue;
        diff = json_integer_value(v) - json_integer_value(was);
        sum = (sum < 0 ? 0 : sum) + (diff > 0 ? diff : 0); /* a reset device counts nothing */
    }
    return sum;
}

int64_t report_io_procs_delta(const json_t *start, const json_t *later, const char *key)
{
    json_t *sp = json_object_get(start, "procs"), *p;
    const char *pid;
    int64_t sum = -1;

    json_object_foreach(json_object_get(later, "procs"), pid, p)
    {
        json_t *v = json_object_get(p, key), *was = json_object_get(json_object_get(sp, pid), key);
        int64_t d;

        if (!json_is_integer(v))
            continue;
        d = json_integer_value(v) - (json_is_integer(was) ? json_integer_value(was) : 0);
        sum = (sum < 0 ? 0 : sum) + (d > 0 ? d : 0);
    }
    return sum;
}

const json_t *report_io_last_edge(const json_t *edges)
{
    const json_t *s = json_object_get(edges, "settle");

    return s ? s : json_object_get(edges, "end");
}

/* The edges as stored, without the io_scan of each (the report names the others instead). */
static json_t *edges_public(const json_t *edges)
{
    json_t *c = json_deep_copy(edges), *e;
    const char *k;

    json_object_foreach(c, k, e)
    {
        if (json_is_object(e))
            json_object_del(e, "io_scan");
    }
    return c;
}

struct named {
    const char *kind;
    char name[300];
    int64_t r, w;
};

static int by_bytes_desc(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int64_t sx = x->r + x->w, sy = y->r + y->w;

    return sx < sy ? 1 : sx > sy ? -1 : strcmp(x->name, y->name);
}

static int is_own(const json_t *edges, const char *pid, int64_t run_pid)
{
    static const char *const keys[] = {"start", "end", "settle"};

    if (run_pid > 0 && atoll(pid) == run_pid)
        return 1;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (json_object_get(json_object_get(json_object_get(edges, keys[i]), "procs"), pid))
            return 1;
    return 0;
}

static int64_t at(const json_t *a, size_t i)
{
    return json_integer_value(json_array_get(a, i));
}

/* 1 when process `pid` of the start scan `was` is the same process in the later scan `lp`:
 * the same pid started at the same tick (a reused pid is another process). */
static int alive(const json_t *lp, const char *pid, const json_t *was)
{
    const json_t *now = json_object_get(lp, pid);

    return now && at(now, 0) == at(was, 0);
}

/*
 * Linux adds a reaped child's whole I/O to its parent's counters, so a parent whose child was
 * alive at the start edge and reaped before the last one gains what the child did BEFORE the
 * start too. Return {"PID": [read, write]}: per living ancestor, the start values of its children
 * reaped in between, to take off its growth.
 */
static json_t *reaped_before(const json_t *sp, const json_t *lp)
{
    json_t *adj = json_object(), *was;
    const char *k;

    json_object_foreach((json_t *)sp, k, was)
    {
        int64_t parent = at(was, 4);
        char key[24];

        if (alive(lp, k, was))
            continue;
        for (int hops = 0; parent > 1 && hops < 16; hops++) {
            const json_t *up;

            snprintf(key, sizeof(key), "%lld", (long long)parent);
            if (json_object_get(lp, key)) {
                json_t *a = json_object_get(adj, key);

                if (!a)
                    json_object_set_new(adj, key,
                                        a = json_pack("[I, I]", (json_int_t)0, (json_int_t)0));
                json_array_set_new(a, 0, json_integer(at(a, 0) + at(was, 1)));
                json_array_set_new(a, 1, json_integer(at(a, 1) + at(was, 2)));
                break;
            }
            up = json_object_get(sp, key); /* the parent died too: its reaper gets both */
            parent = up ? at(up, 4) : 0;
        }
    }
    return adj;
}

/* Every process and control group whose bytes grew, into *out (malloc'd); returns the count. */
static size_t grown(const json_t *edges, int64_t run_pid, struct named **out)
{
    const json_t *s = json_object_get(json_object_get(edges, "start"), "io_scan");
    const json_t *l = json_object_get(report_io_last_edge(edges), "io_scan");
    json_t *lp = json_object_get(l, "procs"), *lg = json_object_get(l, "cgroups"), *v;
    json_t *adj = reaped_before(json_object_get(s, "procs"), lp);
    size_t n = 0, cap = json_object_size(lp) + json_object_size(lg) + 1;
    struct named *a = calloc(cap, sizeof(*a));
    const char *k;

    *out = a;
    if (!a) {
        json_decref(adj);
        return 0;
    }
    json_object_foreach(lp, k, v)
    {
        json_t *was = json_object_get(json_object_get(s, "procs"), k),
               *ad = json_object_get(adj, k);
        /* the same process only when it started at the same tick: a reused pid counts from 0 */
        int same = was && at(was, 0) == at(v, 0);
        int64_t r = at(v, 1) - (same ? at(was, 1) : 0) - at(ad, 0);
        int64_t w = at(v, 2) - (same ? at(was, 2) : 0) - at(ad, 1);

        if ((r <= 0 && w <= 0) || is_own(edges, k, run_pid))
            continue;
        a[n].kind = "process";
        snprintf(a[n].name, sizeof(a[n].name), "%s:%s",
                 json_string_value(json_array_get(v, 3)) ? json_string_value(json_array_get(v, 3))
                                                         : "?",
                 k);
        a[n].r = r > 0 ? r : 0;
        a[n].w = w > 0 ? w : 0;
        n++;
    }
    json_object_foreach(lg, k, v)
    {
        json_t *was = json_object_get(json_object_get(s, "cgroups"), k);
        int64_t r = at(v, 0) - (was ? at(was, 0) : 0), w = at(v, 1) - (was ? at(was, 1) : 0);

        if (r <= 0 && w <= 0)
            continue;
        a[n].kind = "cgroup";
        snprintf(a[n].name, sizeof(a[n].name), "%s", k);
        a[n].r = r > 0 ? r : 0;
        a[n].w = w > 0 ? w : 0;
        n++;
    }
    json_decref(adj);
    qsort(a, n, sizeof(*a), by_bytes_desc);
    return n;
}

static json_t *int_or_null(int64_t v)
{
    return v >= 0 ? json_integer(v) : json_null();
}

static json_t *others_json(const struct report_run *run, int64_t own_r, int64_t own_w,
                           int64_t dev_r, int64_t dev_w)
{
    const json_t *last = report_io_last_edge(run->edges);
    json_t *o = json_object(), *top = json_array(), *note;
    struct named *a = NULL;
    size_t n = 0;

    json_object_set_new(
        o, "read_bytes",
        int_or_null(dev_r >= 0 && own_r >= 0 ? (dev_r > own_r ? dev_r - own_r : 0) : -1));
    json_object_set_new(
        o, "write_bytes",
        int_or_null(dev_w >= 0 && own_w >= 0 ? (dev_w > own_w ? dev_w - own_w : 0) : -1));
    json_object_set_new(o, "device_read_bytes", int_or_null(dev_r));
    json_object_set_new(o, "device_write_bytes", int_or_null(dev_w));
    if (last && json_object_get(json_object_get(run->edges, "start"), "io_scan") &&
        json_object_get(last, "io_scan"))
        n = grown(run->edges, run->pid, &a);
    for (size_t i = 0; i < n && i < TOP_MAX; i++)
        json_array_append_new(top, json_pack("{s:s, s:s, s:I, s:I}", "kind", a[i].kind, "name",
                                             a[i].name, "read_bytes", (json_int_t)a[i].r,
                                             "write_bytes", (json_int_t)a[i].w));
    free(a);
    json_object_set_new(o, "top", top);
    note = json_object_get(json_object_get(last, "io_scan"), "note");
    if (!last || !json_object_get(last, "io_scan"))
        note = json_string("no process or control group scan was taken at both edges");
    else
        json_incref(note);
    json_object_set_new(o, "note", note ? note : json_null());
    return o;
}

/* The excess of device writes over the payload, split into the run's own and the others'. */
static json_t *amplification_json(const struct report_run *run, int64_t dev_w, int64_t others_w)
{
    json_t *a = json_object();
    int64_t p = run->payload_bytes, excess, theirs;

    if (p <= 0 || dev_w < 0) {
        json_object_set_new(a, "ratio", json_null());
        return a;
    }
    excess = dev_w - p;
    theirs = others_w < 0 ? 0 : others_w < excess ? others_w : excess > 0 ? excess : 0;
    json_object_set_new(a, "ratio", json_real((double)dev_w / (double)p));
    json_object_set_new(a, "own_ratio", json_real((double)(dev_w - theirs) / (double)p));
    json_object_set_new(a, "excess_bytes", json_integer(excess));
    json_object_set_new(a, "own_excess_bytes", json_integer(excess - theirs));
    json_object_set_new(a, "others_excess_bytes", json_integer(theirs));
    return a;
}

/* Which rule ended the settle wait, and whether it was the cap (the settle timeout). */
static void settle_json(json_t *r, const json_t *settle)
{
    const char *by = json_string_value(json_object_get(settle, "ended_by"));

    json_object_set_new(r, "settle",
                        json_pack("{s:o, s:o}", "ended_by", by ? json_string(by) : json_null(),
                                  "capped",
                                  by ? json_boolean(!strcmp(by, "timeout")) : json_null()));
}

void report_io_add(json_t *r, const struct report_run *run)
{
    const json_t *start = json_object_get(run->edges, "start");
    const json_t *last = report_io_last_edge(run->edges);
    int64_t own_r = run->storage_read_bytes, own_w = run->storage_write_bytes;
    int64_t dev_r = -1, dev_w = -1, others_w;
    const char *own_src = "client";
    json_t *own, *others;

    if (!run->edges) {
        json_object_set_new(r, "edges", json_null());
        json_object_set_new(r, "edges_note",
                            json_string("the run has no edge readings (perflogd took none: an "
                                        "older perflogd, or it could not read the counters)"));
    } else
        json_object_set_new(r, "edges", edges_public(run->edges));
    if (own_r < 0 || own_w < 0) {
        own_src = "followed";
        own_r = last ? report_io_procs_delta(start, last, "read_bytes") : -1;
        own_w = last ? report_io_procs_delta(start, last, "write_bytes") : -1;
        if (own_r < 0 && own_w < 0)
            own_src = NULL;
    }
    if (start && last) {
        dev_r = report_io_disk_delta(start, last, "read_bytes");
        dev_w = report_io_disk_delta(start, last, "write_bytes");
    }
    own = json_pack("{s:o, s:o, s:o}", "read_bytes", int_or_null(own_r), "write_bytes",
                    int_or_null(own_w), "source", own_src ? json_string(own_src) : json_null());
    json_object_set_new(r, "own", own);
    others = others_json(run, own_r, own_w, dev_r, dev_w);
    others_w = json_is_integer(json_object_get(others, "write_bytes"))
                   ? json_integer_value(json_object_get(others, "write_bytes"))
                   : -1;
    json_object_set_new(r, "others", others);
    json_object_set_new(r, "write_amplification", amplification_json(run, dev_w, others_w));
    settle_json(r, json_object_get(run->edges, "settle"));
}
