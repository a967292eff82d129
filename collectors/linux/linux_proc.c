/*
 * linux_proc.c - the process tracker of linux_proc.h.
 *
 * Duties, per collect while some root is given: list the pids of /proc (mark) when a process was
 * created since the last listing, read the stat of every pid new since then and forget those gone
 * (sweep); decide which are followed (a
 * root, a process already followed under a root still given, or a child of a followed process);
 * read the followed ones through descriptors kept open; log each kind of failure once.
 */
#include "collectors/linux/linux_proc.h"

#include "base/log.h"
#include "collectors/linux/linux_parse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum follow_state { FS_UNKNOWN, FS_VISITING, FS_FOLLOWED, FS_NOT };

struct pid_entry {
    int pid, ppid; /* ppid as first read: a reparented orphan keeps its real parent here */
    uint64_t start_ticks;
    char comm[COUNTER_NAME_MAX];
    int root;            /* pid of the root it is followed under; 0: not followed */
    int stat_fd, io_fd;  /* open while followed; -1 otherwise */
    unsigned char state; /* enum follow_state, for the collect in progress */
    unsigned char rows;  /* rows emitted so far, saturating: 0 means the next is its first */
    unsigned char stale; /* its pid was reused: read it again as a new process */
};

struct proc_tracker {
    char *proc_dir;
    int dir_fd; /* proc_dir, for openat; -1 until opened */
    struct collector_proc_root roots[COLLECTOR_MAX_ROOTS];
    size_t nroots;
    struct pid_entry *e; /* sorted by pid */
    size_t n, cap;
    int *pids; /* this listing's pids, sorted */
    size_t npids, pids_cap;
    long clk_tck;
    int loadavg_fd;     /* proc_dir/loadavg, for the newest pid; -1 until opened */
    long long last_pid; /* the newest pid at the last listing; -1: list at the next collect */
    int warned_list, warned_io, warned_max, warned_fds;
    char buf[4096];
};

static void entry_close(struct pid_entry *e)
{
    if (e->stat_fd >= 0)
        close(e->stat_fd);
    if (e->io_fd >= 0)
        close(e->io_fd);
    e->stat_fd = e->io_fd = -1;
}

static void forget_all(struct proc_tracker *t)
{
    for (size_t i = 0; i < t->n; i++)
        entry_close(&t->e[i]);
    t->n = 0;
}

/* Two descriptors per followed process: ask for the hard limit of descriptors (raising the soft
 * limit needs no privilege). Failing that, files are opened for each read instead. */
static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

struct proc_tracker *proc_tracker_new(const char *proc_dir)
{
    struct proc_tracker *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->dir_fd = t->loadavg_fd = -1;
    t->last_pid = -1;
    t->clk_tck = sysconf(_SC_CLK_TCK);
    if (t->clk_tck <= 0)
        t->clk_tck = 100;
    if (!(t->proc_dir = strdup(proc_dir))) {
        free(t);
        return NULL;
    }
    raise_fd_limit();
    return t;
}

void proc_tracker_free(struct proc_tracker *t)
{
    if (!t)
        return;
    forget_all(t);
    if (t->dir_fd >= 0)
        close(t->dir_fd);
    if (t->loadavg_fd >= 0)
        close(t->loadavg_fd);
    free(t->e);
    free(t->pids);
    free(t->proc_dir);
    free(t);
}

void proc_tracker_set_roots(struct proc_tracker *t, const struct collector_proc_root *roots,
                            size_t n)
{
    if (n > COLLECTOR_MAX_ROOTS)
        n = COLLECTOR_MAX_ROOTS;
    /* A new root may be a process the last listing did not see: list again. */
    if (n != t->nroots || (n && memcmp(t->roots, roots, n * sizeof(*roots)) != 0))
        t->last_pid = -1;
    if (n)
        memcpy(t->roots, roots, n * sizeof(*roots));
    t->nroots = n;
    if (!n)
        forget_all(t);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The numeric entries of proc_dir into t->pids, sorted. 0, or a negative errno. */
static int list_pids(struct proc_tracker *t)
{
    DIR *d;
    struct dirent *de;
    int fd;

    if (t->dir_fd < 0 && (t->dir_fd = open(t->proc_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -errno;
    /* A DIR of its own each time: fdopendir would take the kept descriptor's offset over. */
    if ((fd = openat(t->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -errno;
    if (!(d = fdopendir(fd))) {
        close(fd);
        return -errno;
    }
    t->npids = 0;
    while ((de = readdir(d))) {
        char *endp;
        long pid;

        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        pid = strtol(de->d_name, &endp, 10);
        if (*endp || pid <= 0 || pid > INT_MAX)
            continue;
        if (t->npids == t->pids_cap) {
            size_t cap = t->pids_cap ? t->pids_cap * 2 : 512;
            int *p = realloc(t->pids, cap * sizeof(*p));
            if (!p) {
                closedir(d);
                return -ENOMEM;
            }
            t->pids = p;
            t->pids_cap = cap;
        }
        t->pids[t->npids++] = (int)pid;
    }
    closedir(d);
    if (t->npids) /* a /proc without processes (a fixture tree) leaves t->pids NULL */
        qsort(t->pids, t->npids, sizeof(*t->pids), cmp_int);
    return 0;
}

/* Read "PID/name" below proc_dir into t->buf through *fd, opening it (and keeping it open when
 * `keep`) if needed. Returns the length, or a negative errno. */
static ssize_t read_pid_file(struct proc_tracker *t, int pid, const char *name, int *fd, int keep)
{
    char rel[32];
    ssize_t len;
    int own = *fd < 0;

    if (own) {
        snprintf(rel, sizeof(rel), "%d/%s", pid, name);
        *fd = openat(t->dir_fd, rel, O_RDONLY | O_CLOEXEC);
        if (*fd < 0) {
            int e = errno;
            if ((e == EMFILE || e == ENFILE) && !t->warned_fds++)
                log_warnx("process tracking: out of file descriptors; reopening each process's "
                          "files every tick");
            return -e;
        }
    }
    len = pread(*fd, t->buf, sizeof(t->buf) - 1, 0);
    if (len < 0)
        len = -errno;
    if (own && !keep) {
        close(*fd);
        *fd = -1;
    }
    return len;
}

/* A pid seen for the first time: its stat. 0, or -1 when it cannot be read (it exited). */
static int entry_init(struct proc_tracker *t, struct pid_entry *e, int pid)
{
    struct pid_stat ps;
    int fd = -1;
    ssize_t len = read_pid_file(t, pid, "stat", &fd, 0);

    if (len <= 0 || linux_parse_pid_stat(t->buf, (size_t)len, &ps) < 0)
        return -1;
    memset(e, 0, sizeof(*e));
    e->pid = pid;
    e->ppid = ps.ppid;
    e->start_ticks = ps.start_ticks;
    memcpy(e->comm, ps.comm, sizeof(e->comm));
    e->stat_fd = e->io_fd = -1;
    return 0;
}

/* Merge the old entries with the new listing: keep the known, read the new, close the gone. */
static int sweep(struct proc_tracker *t)
{
    struct pid_entry *ne;
    size_t i = 0, k = 0, cap = t->npids ? t->npids : 1;

    if (!(ne = malloc(cap * sizeof(*ne))))
        return -ENOMEM;
    for (size_t j = 0; j < t->npids; j++) {
        int pid = t->pids[j];

        while (i < t->n && t->e[i].pid < pid)
            entry_close(&t->e[i++]);
        if (i < t->n && t->e[i].pid == pid && !t->e[i].stale) {
            ne[k++] = t->e[i++];
            continue;
        }
        if (i < t->n && t->e[i].pid == pid)
            entry_close(&t->e[i++]);
        if (entry_init(t, &ne[k], pid) == 0)
            k++;
    }
    while (i < t->n)
        entry_close(&t->e[i++]);
    free(t->e);
    t->e = ne;
    t->n = k;
    t->cap = cap;
    return 0;
}

static struct pid_entry *find(struct proc_tracker *t, int pid)
{
    size_t lo = 0, hi = t->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->e[mid].pid == pid)
            return &t->e[mid];
        if (t->e[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const struct collector_proc_root *root_of(const struct proc_tracker *t, int pid)
{
    for (size_t i = 0; i < t->nroots; i++)
        if (t->roots[i].pid == pid)
            return &t->roots[i];
    return NULL;
}

/* Is `e` followed this collect? Walks up the parents (the VISITING mark breaks a cycle that a
 * reused pid could make). Sets e->root. */
static int followed(struct proc_tracker *t, struct pid_entry *e)
{
    struct pid_entry *parent;

    if (e->state == FS_FOLLOWED || e->state == FS_NOT || e->state == FS_VISITING)
        return e->state == FS_FOLLOWED;
    e->state = FS_VISITING;
    if (root_of(t, e->pid))
        e->root = e->pid;
    else if (!(e->root && root_of(t, e->root))) {
        parent = e->ppid > 0 && e->ppid != e->pid ? find(t, e->ppid) : NULL;
        e->root = parent && followed(t, parent) ? parent->root : 0;
    }
    e->state = e->root ? FS_FOLLOWED : FS_NOT;
    return e->state == FS_FOLLOWED;
}

/* One followed process into a row. 0, -1 when it could not be read (gone or reused), -ENOMEM. */
static int read_entry(struct proc_tracker *t, struct pid_entry *e, int64_t boot_wall_ms,
                      struct raw_object *out)
{
    struct pid_stat ps;
    struct linux_parse_status st = {0};
    struct raw_row *row;
    const struct collector_proc_root *r = root_of(t, e->root);
    char name[COUNTER_NAME_MAX];
    ssize_t len = read_pid_file(t, e->pid, "stat", &e->stat_fd, 1);
    int n;

    if (len <= 0 || linux_parse_pid_stat(t->buf, (size_t)len, &ps) < 0)
        return -1;
    if (ps.start_ticks != e->start_ticks) {
        e->stale = 1; /* another process has this pid now */
        entry_close(e);
        return -1;
    }
    n = snprintf(name, sizeof(name), "%.*s:%d", (int)(sizeof(name) - 12), ps.comm, e->pid);
    if (!(row = raw_object_add(out, name, (size_t)n)))
        return -ENOMEM;
    row->v[PROC_CPU_MS] = (ps.utime_ticks + ps.stime_ticks) * 1000 / (uint64_t)t->clk_tck;
    row->v[PROC_PID] = (uint64_t)e->pid;
    row->v[PROC_PPID] = (uint64_t)(e->ppid > 0 ? e->ppid : 0);
    row->present = 1ull << PROC_CPU_MS | 1ull << PROC_PID | 1ull << PROC_PPID;
    /* Born after its run started, a process's counters started at 0 while it was followed (one
     * clock tick of slack for the start time's granularity). The root itself was not. */
    if (!e->rows && r && e->pid != r->pid &&
        boot_wall_ms + (int64_t)(e->start_ticks * 1000 / (uint64_t)t->clk_tck) +
                1000 / t->clk_tck >=
            r->since_wall_ms)
        row->flags |= RAW_FROM_ZERO;
    len = read_pid_file(t, e->pid, "io", &e->io_fd, 1);
    if (len > 0)
        linux_parse_pid_io(t->buf, (size_t)len, row, &st);
    else if (len < 0 && len != -ESRCH && !t->warned_io++)
        log_warnx("process tracking: cannot read /proc/%d/io: %s (reading another user's process "
                  "I/O needs CAP_SYS_PTRACE); its I/O counters stay empty",
                  e->pid, strerror((int)-len));
    if (e->rows < 255)
        e->rows++;
    return 0;
}

/*
 * The newest pid the kernel handed out (the last field of /proc/loadavg), or -1. When it has not
 * changed since the last listing, no process was created since (in this pid namespace), so the
 * listing would find no new child: listing /proc is the tracker's largest fixed cost.
 */
static long long newest_pid(struct proc_tracker *t)
{
    char buf[128], *sp;
    ssize_t len;

    if (t->dir_fd < 0 && (t->dir_fd = open(t->proc_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -1;
    if (t->loadavg_fd < 0 &&
        (t->loadavg_fd = openat(t->dir_fd, "loadavg", O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    len = pread(t->loadavg_fd, buf, sizeof(buf) - 1, 0);
    if (len <= 0)
        return -1;
    buf[len] = '\0';
    sp = strrchr(buf, ' ');
    return sp ? strtoll(sp + 1, NULL, 10) : -1;
}

int proc_tracker_collect(struct proc_tracker *t, int64_t wall_ms, int64_t boot_ms,
                         struct raw_object *out)
{
    size_t rows = 0;
    long long newest;
    int rc;

    if (!t->nroots)
        return 0;
    newest = newest_pid(t);
    if (newest >= 0 && newest == t->last_pid)
        goto read; /* no process was created: the known entries are all there is */
    rc = list_pids(t);
    if (rc < 0) {
        if (rc == -ENOMEM)
            return rc;
        if (!t->warned_list++)
            log_warnx("process tracking: cannot list %s: %s", t->proc_dir, strerror(-rc));
        return 0;
    }
    t->warned_list = 0;
    if ((rc = sweep(t)) < 0)
        return rc;
    t->last_pid = newest;
read:
    for (size_t i = 0; i < t->n; i++)
        t->e[i].state = FS_UNKNOWN;
    for (size_t i = 0; i < t->n; i++) {
        struct pid_entry *e = &t->e[i];

        if (!followed(t, e)) {
            entry_close(e);
            continue;
        }
        if (rows == PROC_TRACKER_MAX_ROWS) {
            if (!t->warned_max++)
                log_warnx("process tracking: more than %d processes under runs; following the "
                          "first %d",
                          PROC_TRACKER_MAX_ROWS, PROC_TRACKER_MAX_ROWS);
            entry_close(e);
            continue;
        }
        rc = read_entry(t, e, wall_ms - boot_ms, out);
        if (rc == -ENOMEM)
            return rc;
        if (rc == 0)
            rows++;
    }
    return (int)rows;
}
