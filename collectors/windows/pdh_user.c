/*
 * pdh_user.c - the extra PDH paths of the config; see pdh_user.h.
 *
 * Values are PdhGetFormattedCounterValue with PDH_FMT_DOUBLE | PDH_FMT_NOCAP100: what typeperf
 * prints for the path (PDH computes rates from its last two collects, so a rate has no value at
 * the first one). learn.microsoft.com/windows/win32/api/pdh/nf-pdh-pdhexpandwildcardpathw: the
 * wildcard path is in the machine's language, hence the translation of the English path first.
 */
#include "collectors/windows/pdh_user.h"

#include "base/log.h"
#include "collectors/model/pdh_path.h"
#include "collectors/windows/pdh_map.h"
#include "collectors/windows/pdh_util.h"

#include <pdhmsg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct user_counter {
    PDH_HCOUNTER h;
    char name[PDH_PATH_MAX]; /* the series (pdh_path.h) */
    WCHAR *path;             /* the expanded path it was added with; NULL: the configured one */
    int seen;                /* mark of the expansion in progress */
};

struct pdh_user {
    const char *const *paths; /* configured, borrowed */
    size_t npaths;
    struct path_state *state; /* one per configured path */
    int *own_reported;        /* one per configured path: "perflog's own" was logged */
    int garbled_reported;     /* the wine workaround of read_value was logged */
    struct user_counter *ctr;
    size_t n, cap;
};

struct pdh_user *pdh_user_new(const char *const *paths, size_t n)
{
    struct pdh_user *u = calloc(1, sizeof(*u));

    if (!u)
        return NULL;
    u->paths = paths;
    u->npaths = n;
    u->state = calloc(n + 1, sizeof(*u->state));
    u->own_reported = calloc(n + 1, sizeof(*u->own_reported));
    if (!u->state || !u->own_reported) {
        pdh_user_free(u);
        return NULL;
    }
    return u;
}

void pdh_user_free(struct pdh_user *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++)
        free(u->ctr[i].path);
    free(u->ctr);
    free(u->state);
    free(u->own_reported);
    free(u);
}

/* The counter of series `name`, marked as seen, or NULL. */
static struct user_counter *find(struct pdh_user *u, const char *name)
{
    for (size_t i = 0; i < u->n; i++)
        if (strcmp(u->ctr[i].name, name) == 0) {
            u->ctr[i].seen = 1;
            return &u->ctr[i];
        }
    return NULL;
}

/* Add series `name` read through `wpath` (English when `english`). Returns the PDH status. */
static PDH_STATUS add(struct pdh_user *u, PDH_HQUERY query, const char *name, const WCHAR *wpath,
                      int english)
{
    PDH_HCOUNTER h;
    PDH_STATUS st =
        english ? PdhAddEnglishCounterW(query, wpath, 0, &h) : PdhAddCounterW(query, wpath, 0, &h);
    struct user_counter *c;

    if (st != ERROR_SUCCESS)
        return st;
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 16;
        struct user_counter *p = realloc(u->ctr, cap * sizeof(*p));

        if (!p) {
            PdhRemoveCounter(h);
            return (PDH_STATUS)PDH_MEMORY_ALLOCATION_FAILURE;
        }
        u->ctr = p;
        u->cap = cap;
    }
    c = &u->ctr[u->n];
    memset(c, 0, sizeof(*c));
    if (!english && !(c->path = _wcsdup(wpath))) {
        PdhRemoveCounter(h);
        return (PDH_STATUS)PDH_MEMORY_ALLOCATION_FAILURE;
    }
    c->h = h;
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->seen = 1;
    u->n++;
    return ERROR_SUCCESS;
}

/* 1 when series `name` is one of perflog's own counters (then said once for path i). */
static int own_counter(struct pdh_user *u, size_t i, const char *name)
{
    struct pdh_path_parts parts;

    if (pdh_path_split(name, &parts) < 0 || !pdh_path_builtin(parts.object, parts.counter))
        return 0;
    if (!u->own_reported[i]) {
        log_info("PDH: %s%s%s is one of perflog's own counters; it is recorded once, as such, "
                 "not again as an extra path",
                 name, strcmp(name, u->paths[i]) ? ", from " : "",
                 strcmp(name, u->paths[i]) ? u->paths[i] : "");
        u->own_reported[i] = 1;
    }
    return 1;
}

/* A configured path without a wildcard: one series. */
static void expand_plain(struct pdh_user *u, PDH_HQUERY query, size_t i, const WCHAR *wpath)
{
    struct pdh_path_parts parts;
    char name[PDH_PATH_MAX];
    PDH_STATUS st;

    if (pdh_path_split(u->paths[i], &parts) < 0 || pdh_path_join(&parts, name, sizeof(name)) < 0) {
        pdh_util_note_path(&u->state[i], u->paths[i], (PDH_STATUS)PDH_CSTATUS_BAD_COUNTERNAME);
        return;
    }
    if (own_counter(u, i, name) || find(u, name))
        return;
    st = add(u, query, name, wpath, 1);
    if (st != (PDH_STATUS)PDH_MEMORY_ALLOCATION_FAILURE)
        pdh_util_note_path(&u->state[i], u->paths[i], st);
}

/* One path of an expansion of configured path i. */
static void add_expanded(struct pdh_user *u, PDH_HQUERY query, size_t i, const WCHAR *p)
{
    char utf8[PDH_UTIL_PATH_MAX], name[PDH_PATH_MAX];
    PDH_STATUS st;

    pdh_util_utf8(p, utf8, sizeof(utf8));
    if (pdh_path_name(u->paths[i], utf8, name, sizeof(name)) < 0) {
        log_debug("PDH: %s (from %s) has no name perflog can store; skipped", utf8, u->paths[i]);
        return;
    }
    if (own_counter(u, i, name) || find(u, name))
        return;
    st = add(u, query, name, p, 0);
    if (st != ERROR_SUCCESS)
        log_debug("PDH: cannot add %s (from %s): PDH status 0x%08lX", utf8, u->paths[i],
                  (unsigned long)st);
}

/* A configured path with a wildcard: the paths PDH lists for it. */
static void expand_wild(struct pdh_user *u, PDH_HQUERY query, size_t i, const WCHAR *wpath)
{
    PDH_STATUS st, local_st;
    WCHAR *local = pdh_util_localized(query, wpath, &local_st), *list = NULL;
    int translated = local != NULL;

    if (local) {
        list = pdh_util_expand(local, &st);
        free(local);
    }
    /* PDH translates a wildcard instance, not always a wildcard counter: the path as written
     * then, which is right on an English Windows. */
    if (!list)
        list = pdh_util_expand(wpath, &st);
    if (!list) {
        pdh_util_note_path(&u->state[i], u->paths[i], translated ? st : local_st);
        return;
    }
    pdh_util_note_path(&u->state[i], u->paths[i], ERROR_SUCCESS);
    for (const WCHAR *p = list; *p; p += wcslen(p) + 1)
        add_expanded(u, query, i, p);
    free(list);
}

void pdh_user_expand(struct pdh_user *u, PDH_HQUERY query)
{
    WCHAR wpath[PDH_UTIL_PATH_MAX];
    size_t k = 0;

    for (size_t i = 0; i < u->n; i++)
        u->ctr[i].seen = 0;
    for (size_t i = 0; i < u->npaths; i++) {
        if (pdh_util_wide(u->paths[i], wpath, PDH_UTIL_PATH_MAX) < 0)
            pdh_util_note_path(&u->state[i], u->paths[i], (PDH_STATUS)PDH_CSTATUS_BAD_COUNTERNAME);
        else if (pdh_path_has_wildcard(u->paths[i]))
            expand_wild(u, query, i, wpath);
        else
            expand_plain(u, query, i, wpath);
    }
    /* Sweep, keeping the order: the ticks then share one names block (sample.h). */
    for (size_t i = 0; i < u->n; i++) {
        if (u->ctr[i].seen) {
            u->ctr[k++] = u->ctr[i];
            continue;
        }
        PdhRemoveCounter(u->ctr[i].h);
        free(u->ctr[i].path);
    }
    u->n = k;
}

/* The formatted value of counter c into x: PDH_FMT_DOUBLE, or PDH_FMT_LARGE where the double is
 * garbled (pdh_map_double_garbled: wine), said once. */
static void read_value(struct pdh_user *u, const struct user_counter *c, struct raw_extra *x)
{
    PDH_FMT_COUNTERVALUE v;
    PDH_STATUS st = PdhGetFormattedCounterValue(c->h, PDH_FMT_DOUBLE | PDH_FMT_NOCAP100, NULL, &v);

    x->valid = st == ERROR_SUCCESS && pdh_map_cstatus_ok((uint32_t)v.CStatus);
    x->value = x->valid ? v.doubleValue : 0.0;
    if (!x->valid || !pdh_map_double_garbled(x->value))
        return;
    if (!u->garbled_reported) {
        log_info("PDH: %s reads as %g with PDH_FMT_DOUBLE, which no counter gives (a wine bug); "
                 "such counters are read as integers (PDH_FMT_LARGE)",
                 c->name, x->value);
        u->garbled_reported = 1;
    }
    st = PdhGetFormattedCounterValue(c->h, PDH_FMT_LARGE | PDH_FMT_NOCAP100, NULL, &v);
    x->valid = st == ERROR_SUCCESS && pdh_map_cstatus_ok((uint32_t)v.CStatus);
    x->value = x->valid ? (double)v.largeValue : 0.0;
}

void pdh_user_read(struct pdh_user *u, struct raw_extras *out)
{
    int debug = log_get_level() >= LOG_LVL_DEBUG;

    for (size_t i = 0; i < u->n; i++) {
        struct raw_extra *x = raw_extra_add(out, u->ctr[i].name);

        if (!x)
            continue; /* out of memory: the tick goes without it */
        read_value(u, &u->ctr[i], x);
        if (debug && x->valid)
            log_debug("PDH: %s = %.6f", x->path, x->value);
        else if (debug)
            log_debug("PDH: %s has no value this tick", x->path);
    }
}
