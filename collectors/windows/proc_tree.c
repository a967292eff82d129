/*
 * proc_tree.c - the pure half of process following on Windows (proc_tree.h).
 */
#include "collectors/windows/proc_tree.h"

#include "collectors/model/counters.h"
#include "collectors/windows/pdh_map.h"

#include <stdio.h>
#include <string.h>

enum tree_state { TS_UNKNOWN, TS_VISITING, TS_FOLLOWED, TS_NOT };

#define TS_MASK  0x0fu
#define TS_ASKED 0x10u /* `created` was asked for this entry (once is enough) */

struct decide_ctx {
    struct proc_tree_entry *e;
    size_t n;
    const uint32_t *roots;
    size_t nroots;
    proc_tree_created_fn created;
    void *ctx;
};

static int is_root(const struct decide_ctx *d, uint32_t pid)
{
    for (size_t i = 0; i < d->nroots; i++)
        if (d->roots[i] == pid)
            return 1;
    return 0;
}

static struct proc_tree_entry *find(const struct decide_ctx *d, uint32_t pid)
{
    size_t lo = 0, hi = d->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->e[mid].pid == pid)
            return &d->e[mid];
        if (d->e[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* e->created, asking for it once if unknown. 0 when it cannot be known. */
static uint64_t created_of(const struct decide_ctx *d, struct proc_tree_entry *e)
{
    if (!e->created && !(e->state & TS_ASKED)) {
        e->state |= TS_ASKED;
        if (!d->created || d->created(d->ctx, e) < 0)
            e->created = 0;
    }
    return e->created;
}

static void set_state(struct proc_tree_entry *e, enum tree_state s)
{
    e->state = (unsigned char)((e->state & ~TS_MASK) | s);
}

/* Is `e` followed? Walks up the parents; the VISITING mark breaks a cycle of parent pids (pid
 * reuse can make one). */
static int followed(const struct decide_ctx *d, struct proc_tree_entry *e)
{
    struct proc_tree_entry *parent;
    unsigned s = e->state & TS_MASK;
    uint64_t pc;

    if (s != TS_UNKNOWN)
        return s == TS_FOLLOWED;
    set_state(e, TS_VISITING);
    if (is_root(d, e->pid)) {
        e->root = e->pid;
    } else if (!(e->root && is_root(d, e->root))) {
        e->root = 0;
        parent = e->ppid && e->ppid != e->pid ? find(d, e->ppid) : NULL;
        if (parent && followed(d, parent) && created_of(d, e)) {
            pc = created_of(d, parent);
            if (!pc || pc <= e->created)
                e->root = parent->root;
        }
    }
    set_state(e, e->root ? TS_FOLLOWED : TS_NOT);
    return e->root != 0;
}

size_t proc_tree_decide(struct proc_tree_entry *e, size_t n, const uint32_t *roots, size_t nroots,
                        proc_tree_created_fn created, void *ctx)
{
    struct decide_ctx d = {e, n, roots, nroots, created, ctx};
    size_t count = 0;

    for (size_t i = 0; i < n; i++)
        e[i].state = TS_UNKNOWN;
    for (size_t i = 0; i < n; i++)
        count += (size_t)followed(&d, &e[i]);
    return count;
}

/* 1 when `s` (of length len) ends in ".exe", in any case. */
static int has_exe_suffix(const char *s, size_t len)
{
    static const char ext[] = ".exe";

    if (len < 4)
        return 0;
    for (size_t i = 0; i < 4; i++) {
        char c = s[len - 4 + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != ext[i])
            return 0;
    }
    return 1;
}

size_t proc_tree_instance_name(const char *exe, uint32_t pid, char *out, size_t cap)
{
    char stem[COUNTER_NAME_MAX], base[COUNTER_NAME_MAX], suffix[16];
    size_t len = strlen(exe), slen;

    if (cap > COUNTER_NAME_MAX)
        cap = COUNTER_NAME_MAX;
    slen = (size_t)snprintf(suffix, sizeof(suffix), ":%lu", (unsigned long)pid);
    if (cap <= slen) {
        if (cap)
            out[0] = '\0';
        return 0;
    }
    if (has_exe_suffix(exe, len))
        len -= 4;
    if (len > sizeof(stem) - 1)
        len = sizeof(stem) - 1;
    memcpy(stem, exe, len);
    stem[len] = '\0';
    /* Leaves room for ":pid"; cuts on a UTF-8 boundary. */
    pdh_map_instance_name(stem, base, cap - slen);
    return (size_t)snprintf(out, cap, "%s%s", base, suffix);
}

int64_t proc_tree_filetime_to_unix_ms(uint64_t filetime)
{
    /* 11644473600 s from 1601-01-01 to 1970-01-01 (Microsoft: "Converting a time_t value to a
     * FILETIME"). */
    return (int64_t)(filetime / 10000) - 11644473600000LL;
}
