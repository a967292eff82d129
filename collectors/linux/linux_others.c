/*
 * linux_others.c - every process's and every control group's storage bytes; see linux_others.h.
 */
#include "collectors/linux/linux_others.h"

#include "base/grow.h"
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CGROUP_MAX_DEPTH 16 /* deeper groups are not walked: a bound on a hostile tree */
#define SMALL_FILE       8192

/* Sum the values of `rkey` and `wkey` in "NAME=VALUE" tokens (v2) over every line. */
int others_parse_io_stat(const char *buf, size_t len, uint64_t *read_bytes, uint64_t *write_bytes)
{
    const char *p = buf, *end = buf + len;
    uint64_t r = 0, w = 0;

    while (p < end) {
        const char *eol = scan_eol(p, end);

        p = scan_token(scan_blanks(p, eol), eol); /* MAJ:MIN */
        while ((p = scan_blanks(p, eol)) < eol) {
            const char *tok = p, *q;
            uint64_t v;

            p = scan_token(p, eol);
            if ((size_t)(p - tok) > 7 && !memcmp(tok, "rbytes=", 7)) {
                q = scan_u64(tok + 7, p, &v);
                if (!q)
                    return -EINVAL;
                r += v;
            } else if ((size_t)(p - tok) > 7 && !memcmp(tok, "wbytes=", 7)) {
                q = scan_u64(tok + 7, p, &v);
                if (!q)
                    return -EINVAL;
                w += v;
            }
        }
        p = scan_next_line(eol, end);
    }
    *read_bytes = r;
    *write_bytes = w;
    return 0;
}

int others_parse_blkio_bytes(const char *buf, size_t len, uint64_t *read_bytes,
                             uint64_t *write_bytes)
{
    const char *p = buf, *end = buf + len;
    uint64_t r = 0, w = 0;

    while (p < end) {
        const char *eol = scan_eol(p, end), *dev, *op, *q;
        uint64_t v;
        size_t oplen;

        dev = scan_blanks(p, eol);
        op = scan_blanks(scan_token(dev, eol), eol);
        q = scan_token(op, eol);
        oplen = (size_t)(q - op);
        p = scan_next_line(eol, end);
        if (!memchr(dev, ':', (size_t)(op - dev))) /* the last "Total N" line */
            continue;
        if (!(oplen == 4 && !memcmp(op, "Read", 4)) && !(oplen == 5 && !memcmp(op, "Write", 5)))
            continue;
        if (!scan_u64(scan_blanks(q, eol), eol, &v))
            return -EINVAL;
        if (oplen == 4)
            r += v;
        else
            w += v;
    }
    *read_bytes = r;
    *write_bytes = w;
    return 0;
}

int others_parse_key(const char *buf, size_t len, const char *key, uint64_t *out)
{
    const char *p = buf, *end = buf + len;
    size_t klen = strlen(key);

    while (p < end) {
        const char *eol = scan_eol(p, end);

        if ((size_t)(eol - p) > klen && !memcmp(p, key, klen) && scan_is_blank(p[klen]))
            return scan_u64(scan_blanks(p + klen, eol), eol, out) ? 0 : -ENOENT;
        p = scan_next_line(eol, end);
    }
    return -ENOENT;
}

/* Read a file of at most cap-1 bytes. Returns its length or a negative errno. */
static ssize_t read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), err;
    size_t len = 0;
    ssize_t n;

    if (fd < 0)
        return -errno;
    while (len < cap - 1) {
        n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = errno;
            if (n < 0) {
                close(fd);
                return -err;
            }
            break;
        }
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return (ssize_t)len;
}

static struct collector_proc_io *add_proc(struct collector_edge_reading *out)
{
    if (grow_array(&out->procs, &out->procs_cap, out->nprocs, sizeof(*out->procs), 256) < 0)
        return NULL;
    memset(&out->procs[out->nprocs], 0, sizeof(out->procs[0]));
    return &out->procs[out->nprocs++];
}

/* Read one process; 0 when it is gone or unreadable (nothing added), 1 added, -ENOMEM. */
static int read_proc(const char *proc_dir, int pid, long ticks_per_s, char *buf,
                     struct collector_edge_reading *out)
{
    char path[PATH_MAX];
    struct pid_stat ps;
    struct collector_proc_io *p;
    struct raw_row row;
    ssize_t n;

    snprintf(path, sizeof(path), "%s/%d/stat", proc_dir, pid);
    n = read_file(path, buf, SMALL_FILE);
    if (n < 0 || linux_parse_pid_stat(buf, (size_t)n, &ps) < 0)
        return 0;
    if (!(p = add_proc(out)))
        return -ENOMEM;
    p->pid = pid;
    p->ppid = ps.ppid;
    memcpy(p->name, ps.comm, sizeof(p->name));
    p->start_ticks = ps.start_ticks;
    p->cpu_ms = (ps.utime_ticks + ps.stime_ticks) * 1000 / (uint64_t)ticks_per_s;
    snprintf(path, sizeof(path), "%s/%d/io", proc_dir, pid);
    n = read_file(path, buf, SMALL_FILE);
    memset(&row, 0, sizeof(row));
    if (n >= 0 && linux_parse_pid_io(buf, (size_t)n, &row, NULL) == 0) {
        const uint64_t need = (1ull << PROC_READ_BYTES) | (1ull << PROC_WRITE_BYTES);

        p->have_io = (row.present & need) == need;
        p->rchar = row.v[PROC_RCHAR];
        p->wchar = row.v[PROC_WCHAR];
        p->read_bytes = row.v[PROC_READ_BYTES];
        p->write_bytes = row.v[PROC_WRITE_BYTES];
    }
    return 1;
}

int others_scan_procs(const char *proc_dir, struct collector_edge_reading *out)
{
    long hz = sysconf(_SC_CLK_TCK);
    char *buf = malloc(SMALL_FILE);
    struct dirent *de;
    DIR *d;
    int added = 0, rc;

    if (!buf)
        return -ENOMEM;
    if (!(d = opendir(proc_dir))) {
        free(buf);
        return 0;
    }
    while ((de = readdir(d))) {
        char *endp;
        long pid = strtol(de->d_name, &endp, 10);

        if (*endp || pid <= 0 || pid > INT_MAX)
            continue;
        rc = read_proc(proc_dir, (int)pid, hz > 0 ? hz : 100, buf, out);
        if (rc < 0) {
            added = rc;
            break;
        }
        added += rc;
    }
    closedir(d);
    free(buf);
    return added;
}

static int add_cgroup(struct collector_edge_reading *out, const char *name, uint64_t r, uint64_t w)
{
    struct collector_cgroup_io *g;

    if (!r && !w)
        return 0;
    if (grow_array(&out->cgroups, &out->cgroups_cap, out->ncgroups, sizeof(*out->cgroups), 32) < 0)
        return -ENOMEM;
    g = &out->cgroups[out->ncgroups++];
    snprintf(g->name, sizeof(g->name), "%s", name);
    g->read_bytes = r;
    g->write_bytes = w;
    return 1;
}

/* One hierarchy being walked. */
struct walk {
    const char *file;   /* the stat file of each group */
    const char *prefix; /* of the names: "" or "blkio:" */
    int (*parse)(const char *buf, size_t len, uint64_t *r, uint64_t *w);
    char *buf;
    struct collector_edge_reading *out;
};

/* Read the group at dir (named rel below its hierarchy) and walk its children. */
static int walk_group(struct walk *wk, char *dir, size_t dirlen, const char *rel, int depth)
{
    char name[COLLECTOR_CGROUP_NAME_MAX];
    struct dirent *de;
    uint64_t r, w;
    ssize_t n;
    DIR *d;
    int added = 0, rc;

    if (snprintf(dir + dirlen, PATH_MAX - dirlen, "/%s", wk->file) < (int)(PATH_MAX - dirlen) &&
        (n = read_file(dir, wk->buf, SMALL_FILE)) >= 0 &&
        wk->parse(wk->buf, (size_t)n, &r, &w) == 0) {
        snprintf(name, sizeof(name), "%s%s", wk->prefix, rel[0] ? rel : "/");
        if ((rc = add_cgroup(wk->out, name, r, w)) < 0)
            return rc;
        added += rc;
    }
    dir[dirlen] = '\0';
    if (depth >= CGROUP_MAX_DEPTH || !(d = opendir(dir)))
        return added;
    while ((de = readdir(d))) {
        char sub[COLLECTOR_CGROUP_NAME_MAX];
        size_t l = strlen(de->d_name);

        if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) || de->d_name[0] == '.' ||
            dirlen + 1 + l >= PATH_MAX)
            continue;
        if (snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >=
            (int)sizeof(sub))
            continue;
        dir[dirlen] = '/';
        memcpy(dir + dirlen + 1, de->d_name, l + 1);
        rc = walk_group(wk, dir, dirlen + 1 + l, sub, depth + 1);
        dir[dirlen] = '\0';
        if (rc < 0) {
            added = rc;
            break;
        }
        added += rc;
    }
    closedir(d);
    return added;
}

static int walk_hierarchy(struct walk *wk, const char *top)
{
    char dir[PATH_MAX];
    size_t l = strlen(top);

    if (l >= sizeof(dir))
        return 0;
    memcpy(dir, top, l + 1);
    return walk_group(wk, dir, l, "", 0);
}

/* 1 when path exists. */
static int exists(const char *dir, const char *file)
{
    char path[PATH_MAX];

    if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
        return 0;
    return access(path, F_OK) == 0;
}

int others_scan_cgroups(const char *cgroup_dir, struct collector_edge_reading *out)
{
    char v2[PATH_MAX], v1[PATH_MAX];
    struct walk wk = {.out = out};
    int added = 0, rc;

    if (!(wk.buf = malloc(SMALL_FILE)))
        return -ENOMEM;
    /* The unified hierarchy is at the top on a pure v2 system, under unified/ on a hybrid one. */
    snprintf(v2, sizeof(v2), "%s%s", cgroup_dir,
             exists(cgroup_dir, "cgroup.controllers") ? "" : "/unified");
    snprintf(v1, sizeof(v1), "%s/blkio", cgroup_dir);
    if (exists(v2, "cgroup.controllers")) {
        wk.file = "io.stat";
        wk.prefix = "";
        wk.parse = others_parse_io_stat;
        added = walk_hierarchy(&wk, v2);
    }
    if (added >= 0 && exists(v1, "blkio.throttle.io_service_bytes")) {
        wk.file = "blkio.throttle.io_service_bytes";
        wk.prefix = "blkio:";
        wk.parse = others_parse_blkio_bytes;
        rc = walk_hierarchy(&wk, v1);
        added = rc < 0 ? rc : added + rc;
    }
    free(wk.buf);
    return added;
}
