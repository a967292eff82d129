/*
 * proc_windows.c - the process tracker of proc_windows.h.
 *
 * Duties, per collect while some root is given: take a Toolhelp snapshot of the processes and
 * merge it with what was followed at the last collect (a followed process keeps its handle, its
 * first-seen parent pid and its root); decide which are followed (proc_tree.c, which asks for the
 * creation time of a process whose parent link it checks, through OpenProcess); open the newly
 * followed, read every followed one into a row, close the handles of the others; log each kind of
 * failure once.
 */
#include "collectors/windows/proc_windows.h"

#include "base/log.h"
#include "collectors/windows/proc_tree.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
/* tlhelp32.h needs windows.h first */
#include <tlhelp32.h>

/* Rows per collect: a fork bomb under a run must not sink the sampler. */
#define MAX_FOLLOWED 4096
/* Creation times come from the system time, which moves in clock ticks (15.6 ms by default): a
 * process started just after its run may look up to one tick older. */
#define CREATED_SLACK_MS 16

/* What goes with one entry of the snapshot besides proc_tree_entry. */
struct proc_side {
    HANDLE h; /* open while followed (or while its parent link was being checked); NULL otherwise */
    char name[COUNTER_NAME_MAX];
    unsigned char rows; /* rows emitted so far, saturating: 0 means the next is its first */
};

struct proc_win {
    struct collector_proc_root roots[COLLECTOR_MAX_ROOTS];
    uint32_t root_pids[COLLECTOR_MAX_ROOTS];
    size_t nroots;
    struct proc_tree_entry *e; /* sorted by pid; e[i] goes with side[i] */
    struct proc_side *side;
    size_t n;
    uint64_t snapshot_ft; /* when the snapshot in progress was taken (FILETIME) */
    int warned_snapshot, warned_open, warned_io, warned_max;
};

static uint64_t ft_u64(FILETIME ft)
{
    return (uint64_t)ft.dwHighDateTime << 32 | ft.dwLowDateTime;
}

static void side_close(struct proc_side *s)
{
    if (s->h)
        CloseHandle(s->h);
    s->h = NULL;
}

static void forget_all(struct proc_win *t)
{
    for (size_t i = 0; i < t->n; i++)
        side_close(&t->side[i]);
    free(t->e);
    free(t->side);
    t->e = NULL;
    t->side = NULL;
    t->n = 0;
}

struct proc_win *proc_win_new(void)
{
    return calloc(1, sizeof(struct proc_win));
}

void proc_win_free(struct proc_win *t)
{
    if (!t)
        return;
    forget_all(t);
    free(t);
}

void proc_win_set_roots(struct proc_win *t, const struct collector_proc_root *roots, size_t n)
{
    if (n > COLLECTOR_MAX_ROOTS)
        n = COLLECTOR_MAX_ROOTS;
    for (size_t i = 0; i < n; i++) {
        t->roots[i] = roots[i];
        t->root_pids[i] = roots[i].pid > 0 ? (uint32_t)roots[i].pid : 0;
    }
    t->nroots = n;
    if (!n)
        forget_all(t);
}

/* One process of the snapshot, before the merge. */
struct snap_proc {
    uint32_t pid, ppid;
    char name[COUNTER_NAME_MAX];
};

static int cmp_snap(const void *a, const void *b)
{
    uint32_t x = ((const struct snap_proc *)a)->pid, y = ((const struct snap_proc *)b)->pid;
    return (x > y) - (x < y);
}

/* The processes running now into *out (sorted by pid). 0, -ENOMEM, or -EIO (logged once). */
static int snapshot(struct proc_win *t, struct snap_proc **out, size_t *nout)
{
    PROCESSENTRY32W pe;
    struct snap_proc *s = NULL;
    size_t n = 0, cap = 0;
    char utf8[4 * MAX_PATH];
    HANDLE snap;
    FILETIME now;

    GetSystemTimeAsFileTime(&now);
    t->snapshot_ft = ft_u64(now);
    snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
    if (snap == INVALID_HANDLE_VALUE) {
        if (!t->warned_snapshot++)
            log_warnx("process tracking: cannot list the processes (CreateToolhelp32Snapshot: "
                      "error %lu); runs have no Process counters meanwhile",
                      (unsigned long)GetLastError());
        return -EIO;
    }
    t->warned_snapshot = 0;
    pe.dwSize = sizeof(pe);
    for (BOOL ok = Process32FirstW(snap, &pe); ok; ok = Process32NextW(snap, &pe)) {
        if (pe.th32ProcessID == 0)
            continue; /* the idle process: no handle can be opened on it */
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            struct snap_proc *p = realloc(s, ncap * sizeof(*p));
            if (!p) {
                free(s);
                CloseHandle(snap);
                return -ENOMEM;
            }
            s = p;
            cap = ncap;
        }
        s[n].pid = pe.th32ProcessID;
        s[n].ppid = pe.th32ParentProcessID;
        if (WideCharToMultiByte(CP_UTF8, 0, pe.szExeFile, -1, utf8, (int)sizeof(utf8), NULL,
                                NULL) <= 0)
            snprintf(utf8, sizeof(utf8), "?");
        proc_tree_instance_name(utf8, pe.th32ProcessID, s[n].name, sizeof(s[n].name));
        n++;
    }
    CloseHandle(snap);
    if (n)
        qsort(s, n, sizeof(*s), cmp_snap);
    *out = s;
    *nout = n;
    return 0;
}

/*
 * Merge the snapshot with the last collect's entries: a process that held a handle is the same
 * process still (the handle pins its pid) and keeps its parent pid as first seen, its root and its
 * creation time; any other is taken as new. Handles of processes gone are closed.
 */
static int merge(struct proc_win *t, const struct snap_proc *s, size_t ns)
{
    struct proc_tree_entry *ne = calloc(ns ? ns : 1, sizeof(*ne));
    struct proc_side *nside = calloc(ns ? ns : 1, sizeof(*nside));
    size_t i = 0;

    if (!ne || !nside) {
        free(ne);
        free(nside);
        return -ENOMEM;
    }
    for (size_t j = 0; j < ns; j++) {
        while (i < t->n && t->e[i].pid < s[j].pid)
            side_close(&t->side[i++]);
        ne[j].pid = s[j].pid;
        ne[j].ppid = s[j].ppid;
        memcpy(nside[j].name, s[j].name, sizeof(nside[j].name));
        if (i < t->n && t->e[i].pid == s[j].pid) {
            if (t->side[i].h) {
                ne[j] = t->e[i];
                nside[j] = t->side[i];
                t->side[i].h = NULL;
            }
            i++;
        }
    }
    while (i < t->n)
        side_close(&t->side[i++]);
    free(t->e);
    free(t->side);
    t->e = ne;
    t->side = nside;
    t->n = ns;
    return 0;
}

/*
 * Open e's process and learn its creation time; the handle is kept in its side entry. A process
 * created after the snapshot is not the one the snapshot saw (its pid was reused in between); one
 * that has exited (a handle elsewhere keeps it listed) is not taken up.
 */
static int open_entry(struct proc_win *t, struct proc_tree_entry *e)
{
    struct proc_side *s = &t->side[e - t->e];
    FILETIME c, x, k, u;
    uint64_t created;

    if (!s->h) {
        s->h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)e->pid);
        if (!s->h) {
            DWORD err = GetLastError();
            if (err != ERROR_INVALID_PARAMETER && !t->warned_open++) /* gone: no need to say */
                log_warnx("process tracking: cannot open process %lu (error %lu); it is not "
                          "followed",
                          (unsigned long)e->pid, (unsigned long)err);
            return -1;
        }
    }
    if (!GetProcessTimes(s->h, &c, &x, &k, &u) || !(created = ft_u64(c)) ||
        created > t->snapshot_ft || ft_u64(x)) {
        side_close(s);
        return -1;
    }
    e->created = created;
    return 0;
}

static int created_cb(void *ctx, struct proc_tree_entry *e)
{
    return open_entry(ctx, e);
}

static const struct collector_proc_root *root_of(const struct proc_win *t, uint32_t pid)
{
    for (size_t i = 0; i < t->nroots; i++)
        if (t->root_pids[i] == pid)
            return &t->roots[i];
    return NULL;
}

/* One followed process into a row. 0, -1 when it could not be read, -ENOMEM. */
static int read_entry(struct proc_win *t, size_t i, struct raw_object *out)
{
    struct proc_tree_entry *e = &t->e[i];
    struct proc_side *s = &t->side[i];
    const struct collector_proc_root *r = root_of(t, e->root);
    IO_COUNTERS io;
    FILETIME c, x, k, u;
    struct raw_row *row;

    if ((!s->h || !e->created) && open_entry(t, e) < 0)
        return -1;
    if (!GetProcessTimes(s->h, &c, &x, &k, &u) || ft_u64(c) != e->created) {
        side_close(s); /* cannot happen while the handle pins the pid; drop it if it does */
        e->created = 0;
        return -1;
    }
    if (!(row = raw_object_add(out, s->name, strlen(s->name))))
        return -ENOMEM;
    /* Kernel + user time in 100 ns units (GetProcessTimes). */
    row->v[PROC_CPU_MS] = (ft_u64(k) + ft_u64(u)) / 10000;
    row->v[PROC_PID] = e->pid;
    row->v[PROC_PPID] = e->ppid;
    row->present = 1ull << PROC_CPU_MS | 1ull << PROC_PID | 1ull << PROC_PPID;
    /* Windows counts the bytes and calls of ReadFile/WriteFile (and other I/O) per process, like
     * Linux's rchar/wchar/syscr/syscw; it has no storage-level split (read_bytes/write_bytes). */
    if (GetProcessIoCounters(s->h, &io)) {
        row->v[PROC_RCHAR] = io.ReadTransferCount;
        row->v[PROC_WCHAR] = io.WriteTransferCount;
        row->v[PROC_SYSCR] = io.ReadOperationCount;
        row->v[PROC_SYSCW] = io.WriteOperationCount;
        row->present |=
            1ull << PROC_RCHAR | 1ull << PROC_WCHAR | 1ull << PROC_SYSCR | 1ull << PROC_SYSCW;
    } else if (!t->warned_io++) {
        log_warnx("process tracking: cannot read the I/O counters of process %lu (error %lu); "
                  "its I/O counters stay empty",
                  (unsigned long)e->pid, (unsigned long)GetLastError());
    }
    /* Born after its run started, a process's counters started at 0 while it was followed. The
     * root itself was not. */
    if (!s->rows && r && e->pid != (uint32_t)r->pid &&
        proc_tree_filetime_to_unix_ms(e->created) + CREATED_SLACK_MS >= r->since_wall_ms)
        row->flags |= RAW_FROM_ZERO;
    if (s->rows < 255)
        s->rows++;
    if (ft_u64(x))
        side_close(s); /* it has exited: that was its last reading */
    return 0;
}

int proc_win_collect(struct proc_win *t, struct raw_object *out)
{
    struct snap_proc *s = NULL;
    size_t ns = 0, rows = 0;
    int rc;

    if (!t->nroots)
        return 0;
    rc = snapshot(t, &s, &ns);
    if (rc < 0)
        return rc == -ENOMEM ? rc : 0;
    rc = merge(t, s, ns);
    free(s);
    if (rc < 0)
        return rc;
    proc_tree_decide(t->e, t->n, t->root_pids, t->nroots, created_cb, t);
    for (size_t i = 0; i < t->n; i++) {
        if (!t->e[i].root) {
            side_close(&t->side[i]);
            t->e[i].created = 0;
            continue;
        }
        if (rows == MAX_FOLLOWED) {
            if (!t->warned_max++)
                log_warnx("process tracking: more than %d processes under runs; following the "
                          "first %d",
                          MAX_FOLLOWED, MAX_FOLLOWED);
            side_close(&t->side[i]);
            continue;
        }
        rc = read_entry(t, i, out);
        if (rc == -ENOMEM)
            return rc;
        if (rc == 0)
            rows++;
    }
    return (int)rows;
}
