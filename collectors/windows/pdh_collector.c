/*
 * pdh_collector.c - the collector of collector.h on Windows, with PDH (Performance Data Helper).
 *
 * One query holds a counter per (source of pdh_map.c, instance). Paths are given in English
 * (PdhAddEnglishCounterW), so they work whatever the display language. A multi-instance object
 * ("\PhysicalDisk(*)\...") is expanded into its instances with PdhExpandWildCardPathW, on the
 * localized form of the path that PDH gives back for the English one, and expanded again every
 * EXPAND_PERIOD_MS: a counter whose instance is gone is removed, a new disk or NIC is added
 * (mark and sweep). Cumulative counters are read raw (PdhGetRawCounterValue), so the stored
 * values mean what Linux's do; levels are read formatted. A reading whose CStatus is not valid
 * (PDH_CSTATUS_INVALID_DATA, NO_INSTANCE, ...) leaves its field without a value: a gap.
 *
 * A path PDH rejects is logged once by name and the rest keep working; it is retried at each
 * expansion and logged again when it comes back. The extra paths of the config ("pdh_counters")
 * are pdh_user.c's, in the same query and expanded at the same times; their values become the
 * extras of the sample (sample.h), stored as series of their own.
 *
 * The processes of runs (collector_follow) are read apart from PDH, by proc_windows.c, and their
 * rows are appended after the PDH rows are finished.
 */
#include "base/glob_match.h"
#include "base/grow.h"
#include "base/log.h"
#include "collectors/collector.h"
#include "collectors/windows/pdh_map.h"
#include "collectors/windows/pdh_user.h"
#include "collectors/windows/pdh_util.h"
#include "collectors/windows/proc_windows.h"

#include <errno.h>
#include <pdh.h>
#include <pdhmsg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#define EXPAND_PERIOD_MS 60000
#define PATH_MAX_UTF8    PDH_UTIL_PATH_MAX

struct counter {
    PDH_HCOUNTER h;
    size_t src;                  /* index into pdh_sources */
    char inst[COUNTER_NAME_MAX]; /* the stored instance name; "" for a single-instance object */
    WCHAR *path;                 /* the full (localized) path, NULL for a single-instance one */
    LONGLONG time_base;          /* PdhGetCounterTimeBase, for PDH_OP_TIMER_MS */
    int seen;                    /* mark of the expansion in progress */
};

/* Side data of one row of the sample being built: PDH_FIELD_* values and failed fields. */
struct row_extra {
    uint64_t pseudo[PDH_FIELD_COUNT - COUNTER_MAX_FIELDS];
    unsigned pseudo_present;
    uint64_t failed; /* fields some source of which had no value this tick */
};

struct collector {
    struct collector_config cfg; /* globs and extra paths point to copies owned here */
    PDH_HQUERY query;
    struct counter *ctr;
    size_t n, cap;
    struct path_state *src; /* one per source of pdh_map.c */
    struct pdh_user *user;  /* the extra paths of cfg.pdh_counters */
    struct row_extra *rx[OBJ_COUNT];
    size_t rx_cap[OBJ_COUNT];
    uint64_t page_size;
    int64_t next_expand_ms;
    int collect_failing;
    struct proc_win *procs; /* created by the first collector_follow with a root */
};

static int64_t monotonic_ms(void)
{
    return (int64_t)GetTickCount64();
}

static struct counter *counter_add(struct collector *c)
{
    if (grow_array(&c->ctr, &c->cap, c->n, sizeof(*c->ctr), 64) < 0)
        return NULL;
    memset(&c->ctr[c->n], 0, sizeof(c->ctr[0]));
    return &c->ctr[c->n++];
}

static void counter_drop(struct collector *c, size_t i)
{
    PdhRemoveCounter(c->ctr[i].h);
    free(c->ctr[i].path);
    c->ctr[i] = c->ctr[--c->n];
}

static int source_in_use(const struct collector *c, size_t src)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->ctr[i].src == src)
            return 1;
    return 0;
}

/* Whether instance `name` of object `obj` passes the disk or interface globs. */
static int selected(const struct collector *c, const struct pdh_map_object_kind *k,
                    const char *name)
{
    if (k->globs == 1)
        return collector_name_selected(name, c->cfg.disk_include, c->cfg.n_disk_include,
                                       c->cfg.disk_exclude, c->cfg.n_disk_exclude);
    if (k->globs == 2)
        return collector_name_selected(name, c->cfg.net_include, c->cfg.n_net_include,
                                       c->cfg.net_exclude, c->cfg.n_net_exclude);
    return 1;
}

static int add_counter(struct collector *c, size_t src, const char *inst, const WCHAR *path,
                       int english)
{
    PDH_HCOUNTER h;
    PDH_STATUS st = english ? PdhAddEnglishCounterW(c->query, path, 0, &h)
                            : PdhAddCounterW(c->query, path, 0, &h);
    struct counter *k;

    if (st != ERROR_SUCCESS)
        return (int)st;
    k = counter_add(c);
    if (!k || (!english && !(k->path = _wcsdup(path)))) {
        if (k)
            c->n--;
        PdhRemoveCounter(h);
        return -ENOMEM;
    }
    k->h = h;
    k->src = src;
    k->seen = 1;
    snprintf(k->inst, sizeof(k->inst), "%s", inst);
    if (pdh_sources[src].op == PDH_OP_TIMER_MS && PdhGetCounterTimeBase(h, &k->time_base) != 0)
        k->time_base = 0;
    return 0;
}

/* Add the counter of one fixed English path (a single-instance object, or an _Total instance)
 * unless the source has it already. Returns ERROR_SUCCESS or the PDH status; its path in `path`. */
static PDH_STATUS add_fixed(struct collector *c, size_t src, const char *inst, char *path,
                            size_t cap)
{
    const struct pdh_source *s = &pdh_sources[src];
    WCHAR wpath[PATH_MAX_UTF8];
    int rc;

    if (pdh_map_path(s->object, inst[0] ? inst : NULL, s->counter, path, cap) < 0 ||
        pdh_util_wide(path, wpath, PATH_MAX_UTF8) < 0)
        return PDH_CSTATUS_BAD_COUNTERNAME;
    if (source_in_use(c, src))
        return ERROR_SUCCESS;
    rc = add_counter(c, src, inst, wpath, 1);
    return rc == -ENOMEM ? (PDH_STATUS)PDH_MEMORY_ALLOCATION_FAILURE : (PDH_STATUS)rc;
}

static void expand_fixed(struct collector *c, size_t src)
{
    char path[PATH_MAX_UTF8];
    PDH_STATUS st = add_fixed(c, src, "", path, sizeof(path));

    if (st != (PDH_STATUS)PDH_MEMORY_ALLOCATION_FAILURE)
        pdh_util_note_path(&c->src[src], path, st);
}

/* Add the counters of one expanded instance path, unless already there (then mark it). */
static void add_instance(struct collector *c, size_t src, const struct pdh_map_object_kind *k,
                         const WCHAR *path)
{
    char utf8[PATH_MAX_UTF8], raw[PATH_MAX_UTF8], inst[COUNTER_NAME_MAX];

    for (size_t i = 0; i < c->n; i++)
        if (c->ctr[i].src == src && c->ctr[i].path && wcscmp(c->ctr[i].path, path) == 0) {
            c->ctr[i].seen = 1;
            return;
        }
    pdh_util_utf8(path, utf8, sizeof(utf8));
    if (pdh_map_instance_of(utf8, raw, sizeof(raw)) < 0)
        return;
    if (k->unc_names)
        pdh_map_share_name(raw, inst, sizeof(inst));
    else
        pdh_map_instance_name(raw, inst, sizeof(inst));
    if (!k->keep_total && strcmp(inst, "_Total") == 0)
        return; /* delta.c sums the instances, as on Linux */
    if (!selected(c, k, inst))
        return;
    if (add_counter(c, src, inst, path, 0) == -ENOMEM)
        log_warnx("PDH: out of memory adding %s", utf8);
}

/*
 * When the instances cannot be listed (wine's PDH takes no wildcard at all), an object with a
 * _Total of its own is recorded through that one instance; said once. Returns 1 if it worked.
 */
static int total_only(struct collector *c, size_t src, const char *wild, PDH_STATUS why_st)
{
    char path[PATH_MAX_UTF8], why[96];

    if (add_fixed(c, src, "_Total", path, sizeof(path)) != ERROR_SUCCESS)
        return 0;
    pdh_util_note_path(&c->src[src], path, ERROR_SUCCESS);
    for (size_t i = 0; i < src; i++) /* two sources may read the same counter: say it once */
        if (c->src[i].expand_reported &&
            strcmp(pdh_sources[i].object, pdh_sources[src].object) == 0 &&
            strcmp(pdh_sources[i].counter, pdh_sources[src].counter) == 0)
            c->src[src].expand_reported = 1;
    if (!c->src[src].expand_reported) {
        pdh_util_status_text(why_st, why, sizeof(why));
        log_warnx("PDH: cannot list the instances of %s (%s); recording %s only", wild, why, path);
        c->src[src].expand_reported = 1;
    }
    return 1;
}

static void expand_wildcard(struct collector *c, size_t src, const struct pdh_map_object_kind *k)
{
    const struct pdh_source *s = &pdh_sources[src];
    char path[PATH_MAX_UTF8];
    WCHAR wpath[PATH_MAX_UTF8], *local, *list = NULL;
    PDH_STATUS st;

    if (pdh_map_path(s->object, "*", s->counter, path, sizeof(path)) < 0 ||
        pdh_util_wide(path, wpath, PATH_MAX_UTF8) < 0)
        return;
    local = pdh_util_localized(c->query, wpath, &st);
    if (local) {
        list = pdh_util_expand(local, &st);
        free(local);
    }
    if (!list) {
        if (!(k->keep_total && total_only(c, src, path, st)))
            pdh_util_note_path(&c->src[src], path, st);
        return;
    }
    pdh_util_note_path(&c->src[src], path, ERROR_SUCCESS);
    for (const WCHAR *p = list; *p; p += wcslen(p) + 1)
        add_instance(c, src, k, p);
    free(list);
}

/* A fallback source is used only while the source of its field is rejected. */
static int fallback_wanted(const struct collector *c, const struct pdh_source *s)
{
    for (size_t i = 0; i < pdh_nsources; i++)
        if (pdh_sources[i].obj == s->obj && pdh_sources[i].field == s->fallback_of &&
            pdh_sources[i].fallback_of < 0)
            return c->src[i].rejected;
    return 0;
}

/* Mark, add what is new, sweep what vanished. */
static void expand_all(struct collector *c)
{
    for (size_t i = 0; i < c->n; i++)
        c->ctr[i].seen = !c->ctr[i].path; /* fixed paths (and the _Total fallback) stay */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < pdh_nsources; i++) {
            const struct pdh_source *s = &pdh_sources[i];
            const struct pdh_map_object_kind *k = pdh_map_object_kind(s->obj);
            if ((s->fallback_of >= 0) != pass)
                continue;
            if (pass && !fallback_wanted(c, s))
                continue;
            if (k->single)
                expand_fixed(c, i);
            else
                expand_wildcard(c, i, k);
        }
    }
    for (size_t i = c->n; i-- > 0;)
        if (!c->ctr[i].seen)
            counter_drop(c, i);
    pdh_user_expand(c->user, c->query);
}

/* The row named `inst` of `o`, added (with zeroed side data) when absent. */
static struct raw_row *row_of(struct collector *c, struct raw_sample *out, enum object_id o,
                              const char *inst, struct row_extra **rx)
{
    struct raw_object *ro = &out->obj[o];
    struct raw_row *r;

    for (size_t i = 0; i < ro->n; i++)
        if (strcmp(ro->rows[i].name, inst) == 0) {
            *rx = &c->rx[o][i];
            return &ro->rows[i];
        }
    if (ro->n == c->rx_cap[o]) {
        size_t cap = c->rx_cap[o] ? c->rx_cap[o] * 2 : 16;
        struct row_extra *p = realloc(c->rx[o], cap * sizeof(*p));
        if (!p)
            return NULL;
        c->rx[o] = p;
        c->rx_cap[o] = cap;
    }
    r = raw_object_add(ro, inst, strlen(inst));
    if (!r)
        return NULL;
    *rx = &c->rx[o][ro->n - 1];
    memset(*rx, 0, sizeof(**rx));
    return r;
}

static void read_counter(const struct counter *k, struct pdh_reading *rd)
{
    const struct pdh_source *s = &pdh_sources[k->src];
    PDH_RAW_COUNTER raw;
    PDH_FMT_COUNTERVALUE fmt;
    DWORD type;
    PDH_STATUS st;

    memset(rd, 0, sizeof(*rd));
    rd->time_base = k->time_base;
    if (s->op == PDH_OP_FORMATTED) {
        st = PdhGetFormattedCounterValue(k->h, PDH_FMT_LARGE | PDH_FMT_NOCAP100, &type, &fmt);
        rd->cstatus = st != ERROR_SUCCESS ? (uint32_t)st : (uint32_t)fmt.CStatus;
        rd->formatted = fmt.largeValue;
        return;
    }
    st = PdhGetRawCounterValue(k->h, &type, &raw);
    rd->cstatus = st != ERROR_SUCCESS ? (uint32_t)st : (uint32_t)raw.CStatus;
    rd->first = raw.FirstValue;
    rd->second = raw.SecondValue;
}

static void store(struct collector *c, struct raw_sample *out, const struct counter *k)
{
    const struct pdh_source *s = &pdh_sources[k->src];
    struct pdh_reading rd;
    struct row_extra *rx;
    struct raw_row *row;
    uint64_t v;
    int ok;

    read_counter(k, &rd);
    if (rd.cstatus == PDH_CSTATUS_NO_INSTANCE || rd.cstatus == PDH_CSTATUS_NO_OBJECT)
        return; /* gone: no row, the next expansion drops the counter */
    ok = pdh_map_value(s, &rd, c->page_size, &v) == 0;
    row = row_of(c, out, s->obj, k->inst, &rx);
    if (!row)
        return;
    if (s->field >= COUNTER_MAX_FIELDS) {
        unsigned bit = 1u << (s->field - COUNTER_MAX_FIELDS);
        if (ok) {
            rx->pseudo[s->field - COUNTER_MAX_FIELDS] += v;
            rx->pseudo_present |= bit;
        }
        return;
    }
    if (!ok) {
        rx->failed |= 1ull << s->field;
        return;
    }
    row->v[s->field] = (row->present >> s->field) & 1 ? row->v[s->field] + v : v;
    row->present |= 1ull << s->field;
}

static void finish_rows(struct collector *c, struct raw_sample *out)
{
    for (int o = 0; o < OBJ_COUNT; o++) {
        const struct pdh_map_object_kind *k = pdh_map_object_kind((enum object_id)o);
        for (size_t i = 0; i < out->obj[o].n; i++) {
            struct raw_row *r = &out->obj[o].rows[i];
            struct row_extra *rx = &c->rx[o][i];
            r->present &= ~rx->failed;
            pdh_map_finish((enum object_id)o, r, rx->pseudo, rx->pseudo_present);
            if (!k->single && !k->keep_total)
                r->flags |= RAW_IN_TOTAL;
        }
    }
}

int collector_collect(struct collector *c, struct raw_sample *out)
{
    int64_t now = monotonic_ms();
    PDH_STATUS st;
    int n = 0;

    raw_sample_clear(out);
    if (now >= c->next_expand_ms) {
        expand_all(c);
        c->next_expand_ms = now + EXPAND_PERIOD_MS;
    }
    st = PdhCollectQueryData(c->query);
    if (st != ERROR_SUCCESS) {
        if (!c->collect_failing)
            log_warnx("PDH: cannot collect (PDH status 0x%08lX)", (unsigned long)st);
        c->collect_failing = 1;
    } else {
        c->collect_failing = 0;
        for (size_t i = 0; i < c->n; i++)
            store(c, out, &c->ctr[i]);
        finish_rows(c, out);
        pdh_user_read(c->user, &out->extra);
    }
    /* After finish_rows, which knows only the PDH objects' rows. */
    if (c->procs)
        proc_win_collect(c->procs, &out->obj[OBJ_PROCESS]);
    for (int o = 0; o < OBJ_COUNT; o++)
        n += out->obj[o].n > 0;
    return n ? n : st != ERROR_SUCCESS ? -EIO : -ENOENT;
}

struct collector *collector_new(const struct collector_config *cfg)
{
    struct collector *c = calloc(1, sizeof(*c));
    SYSTEM_INFO si;
    PDH_STATUS st;

    if (!c)
        return NULL;
    if (!(c->src = calloc(pdh_nsources, sizeof(*c->src))) ||
        collector_config_copy(&c->cfg, cfg) < 0 ||
        !(c->user = pdh_user_new(c->cfg.pdh_counters, c->cfg.n_pdh_counters))) {
        collector_free(c);
        return NULL;
    }
    GetSystemInfo(&si);
    c->page_size = si.dwPageSize ? si.dwPageSize : 4096;
    st = PdhOpenQueryW(NULL, 0, &c->query);
    if (st != ERROR_SUCCESS) {
        log_error("PDH: cannot open a query (PDH status 0x%08lX)", (unsigned long)st);
        c->query = NULL;
        collector_free(c);
        return NULL;
    }
    return c;
}

void collector_free(struct collector *c)
{
    if (!c)
        return;
    if (c->query)
        PdhCloseQuery(c->query); /* removes its counters too */
    proc_win_free(c->procs);
    for (size_t i = 0; i < c->n; i++)
        free(c->ctr[i].path);
    free(c->ctr);
    free(c->src);
    pdh_user_free(c->user);
    for (int o = 0; o < OBJ_COUNT; o++)
        free(c->rx[o]);
    collector_config_free(&c->cfg);
    free(c);
}

long collector_cpu_ticks_per_s(void)
{
    return 10000000L; /* PDH processor times are in 100 ns units */
}

void collector_follow(struct collector *c, const struct collector_proc_root *roots, size_t n)
{
    if (!c->procs) {
        if (!n)
            return;
        if (!(c->procs = proc_win_new())) {
            log_warnx("process tracking: out of memory; runs have no Process counters");
            return;
        }
    }
    proc_win_set_roots(c->procs, roots, n);
}
