/*
 * linux_collector.c - the collector of collector.h on Linux: /proc and /sys under a configurable
 * root, read into one growable buffer and handed to the pure parsers of linux_parse.h.
 *
 * Duties: keep the /proc files open and re-read them from offset 0 each tick (reopening one
 * whose read failed); probe the optional ones (pressure, softirqs, softnet, netstat) once and never
 * again when the kernel has no such file; classify each block device once by name (is it in
 * /sys/block, is it stacked on others) and each interface once (globs), forgetting names that
 * vanish; read an interface's speed and MTU from sysfs when it appears, when rtnetlink says it
 * changed (on the real root) and on a period after; log each failure once.
 * The network file system clients' files (optional_sources) are read only while they list a
 * share or mount: one that is missing or empty is probed again only when the mount table changes.
 */
#include "collectors/linux/linux_collector.h"

#include "base/log.h"
#include "collectors/linux/linux_devcache.h"
#include "collectors/linux/linux_linkwatch.h"
#include "collectors/linux/linux_mountwatch.h"
#include "collectors/linux/linux_netfs.h"
#include "collectors/linux/linux_parse.h"
#include "collectors/linux/linux_proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_MIN_FREE (16u * 1024)         /* free buffer space asked of each read */
#define READ_MAX      (256u * 1024 * 1024) /* a /proc file larger than this is an error */

#define DEV_SELECTED 0x1u /* passes the globs (and, for a disk, is a device of /sys/block) */
#define DEV_IN_TOTAL 0x2u /* a whole disk not stacked on others: part of "_Total" */

/* The /proc files read at each collect, in this order. */
enum source_id {
    SRC_STAT,
    SRC_SOFTIRQS,
    SRC_SOFTNET,
    SRC_DISKSTATS,
    SRC_NET_DEV,
    SRC_MEMINFO,
    SRC_VMSTAT,
    SRC_SNMP,
    SRC_NETSTAT,
    SRC_PSI_IO,
    SRC_PSI_MEMORY,
    SRC_PSI_CPU,
    NSOURCES
};

struct source_state {
    int fd;         /* -1: (re)open at the next collect */
    int failing;    /* the last open, read or parse failed and was logged */
    int warned_bad; /* a malformed line was logged: never again for this file */
    int absent;     /* an optional file the kernel does not have: never opened again */
    int opened;     /* opened once at least: a later ENOENT is a failure, not an absence */
    size_t prefix;  /* bytes to read, for a source with an extent; 0: all */
    char path[PATH_MAX];
};

/* Files that exist, or say anything, only while a network file system client is in use. */
enum optional_id { OPT_CIFS, OPT_NFS, NOPTIONAL };
struct optional_state {
    struct source_state s;
    int active; /* the last read listed a share or mount: read it at every collect */
};

struct collector {
    char *root;                  /* without a trailing '/': "" for "/" */
    struct collector_config cfg; /* a collector_config_copy; root is used as trimmed below */
    long page_size;
    int64_t now_ms; /* monotonic time of the collect in progress */
    int64_t sysfs_period_ms;
    char *buf; /* the contents of the file being parsed */
    size_t cap;
    struct source_state src[NSOURCES];
    struct optional_state opt[NOPTIONAL];
    struct mountwatch *mounts; /* when it fires, every optional source is probed again */
    struct linux_devcache *disks, *nets;
    int net_dir; /* ROOT/sys/class/net (O_PATH), for the interfaces' attributes; -1: not open */
    size_t nets_kept, nets_kept_last; /* interfaces selected in this pass so far, in the last one */
    size_t attr_fds_max;              /* speed and MTU files kept open at most (net_read_small) */
    struct linkwatch *links;          /* the real root's link changes; NULL: the period alone */
    int links_all_due;          /* link messages were lost: re-read every interface in this pass */
    struct proc_tracker *procs; /* created by the first collector_follow with a root */
    int following;              /* the last collector_follow gave roots: a run is in progress */
};

static int64_t monotonic_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How read_from() knows a short read is the end (see there). */
#define READ_WHOLE        0x1u
#define READ_SMALL_RECORD 0x2u
#define SEQ_HALF_PAGE     2048u

/*
 * Read the file behind `fd` from offset `len` (bytes already in c->buf) to its end, or until
 * `limit` bytes (0: no limit) are in c->buf. A read of a seq_file returns at most one kernel
 * buffer of whole records (fs/seq_file.c, seq_read_iter()), so a short read does not mean the end
 * of /proc/diskstats or /proc/net/dev: only a read of 0 does. Successive preads at the offset
 * reached continue where the last one stopped, and the one at 0 of the next tick starts afresh.
 *
 * Two cases are told by `flags` and save the read of 0, a system call per file and tick:
 * READ_WHOLE, a file of single_open() (/proc/stat, meminfo, net/snmp, ...) is one record the
 * kernel formats whole and copies out as far as the buffer goes, so a short read is the end;
 * READ_SMALL_RECORD, the kernel's buffer (a page at least) stops a read only when the next record
 * does not fit, so a read shorter than asked and than half a page, of records far shorter than
 * that, is the end. Returns the length or a negative errno.
 */
static ssize_t read_from(struct collector *c, int fd, size_t len, unsigned flags, size_t limit)
{
    for (;;) {
        size_t ask;
        ssize_t n;

        if (c->cap - len < READ_MIN_FREE) {
            size_t cap = c->cap ? c->cap * 2 : 4 * READ_MIN_FREE;
            char *buf;

            if (cap > READ_MAX)
                return -EFBIG;
            buf = realloc(c->buf, cap);
            if (!buf)
                return -ENOMEM;
            c->buf = buf;
            c->cap = cap;
        }
        ask = c->cap - len;
        if (limit > len && limit - len < ask)
            ask = limit - len;
        n = pread(fd, c->buf + len, ask, (off_t)len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return (ssize_t)len;
        len += (size_t)n;
        if (limit && len >= limit)
            return (ssize_t)len;
        if ((size_t)n < ask &&
            ((flags & READ_WHOLE) || ((flags & READ_SMALL_RECORD) && (size_t)n < SEQ_HALF_PAGE)))
            return (ssize_t)len;
    }
}

/* One /proc file and the parser for it. */
struct source {
    const char *rel; /* path under the root */
    enum object_id obj;
    int (*parse)(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                 struct linux_parse_status *st);
    /* or, for a parser that needs nothing of the collector, the parser itself */
    int (*plain)(const char *buf, size_t len, struct raw_object *out,
                 struct linux_parse_status *st);
    int optional;        /* probed once: absent on some kernels, and not worth an open() per tick */
    unsigned read_flags; /* READ_WHOLE, READ_SMALL_RECORD */
    /* When set, the file is read only as far as the last line the parser wants, learnt from the
     * tick before: the kernel formats a seq_file's records only as far as the read asks. Returns
     * the offset past that line and sets *complete when every wanted line is in [buf, len). */
    size_t (*extent)(const char *buf, size_t len, int *complete);
    int run_only; /* read only while the processes of a run are followed (costly, see sources) */
};

static const struct source sources[NSOURCES];

#define EXTENT_SLACK 512 /* bytes beyond last tick's extent: numbers grow, lines move */

/*
 * Read source i (open) into c->buf: all of it, or for a source with an extent the prefix that
 * held every wanted line last time, and the rest when it no longer does. Returns the length.
 */
static ssize_t source_read_extent(struct collector *c, size_t i)
{
    const struct source *src = &sources[i];
    struct source_state *s = &c->src[i];
    ssize_t len = read_from(c, s->fd, 0, src->read_flags, src->extent ? s->prefix : 0);
    size_t ext;
    int complete = 0;

    if (len < 0 || !src->extent)
        return len;
    ext = src->extent(c->buf, (size_t)len, &complete);
    if (!complete && s->prefix && (size_t)len >= s->prefix) {
        len = read_from(c, s->fd, (size_t)len, src->read_flags, 0);
        if (len < 0)
            return len;
        ext = src->extent(c->buf, (size_t)len, &complete);
    }
    /* A kernel without one of the lines gets the whole file every time. */
    s->prefix = complete ? ext + EXTENT_SLACK : 0;
    return len;
}

/* Log a failing source once, until it works again. */
static void source_failed(struct source_state *s, const char *what, int err)
{
    if (s->failing)
        return;
    s->failing = 1;
    errno = -err;
    log_warn("%s: cannot %s", s->path, what);
}

/* Open if needed and read source i into c->buf. Returns the length or a negative errno. */
static ssize_t source_read(struct collector *c, size_t i)
{
    struct source_state *s = &c->src[i];
    ssize_t len;

    if (s->absent)
        return -ENOENT;
    if (s->fd < 0) {
        s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            int err = -errno;
            /* A kernel without PSI (before 4.20, or psi=0) or a /proc without the file: asking
             * again every tick would cost an open() per tick for nothing. */
            if (err == -ENOENT && sources[i].optional && !s->opened) {
                s->absent = 1;
                log_info("%s: not on this system, not read", s->path);
                return err;
            }
            source_failed(s, "open", err);
            return err;
        }
        s->opened = 1;
    }
    len = source_read_extent(c, i);
    if (len < 0) {
        source_failed(s, "read", (int)len);
        close(s->fd);
        s->fd = -1;
    }
    return len;
}

/* Open if needed and read optional file s into c->buf, whole; a missing file is not logged (it is
 * the normal state of a machine without the client). Returns the length or a negative errno. */
static ssize_t optional_read(struct collector *c, struct source_state *s)
{
    ssize_t len;

    if (s->fd < 0) {
        s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            int err = -errno;

            if (err != -ENOENT)
                source_failed(s, "open", err);
            return err;
        }
    }
    len = read_from(c, s->fd, 0, 0, 0);
    if (len < 0) {
        source_failed(s, "read", (int)len);
        close(s->fd);
        s->fd = -1;
    }
    return len;
}

/* Build ROOT/sys/block/NAME + suffix; sysfs spells a '/' of a device name '!' (cciss!c0d0). */
static int block_path(const struct collector *c, const char *name, const char *suffix, char *path,
                      size_t cap)
{
    int n = snprintf(path, cap, "%s/sys/block/%s%s", c->root, name, suffix);
    size_t start = strlen(c->root) + strlen("/sys/block/"), stop = start + strlen(name);

    if (n < 0 || (size_t)n >= cap)
        return -ENAMETOOLONG;
    for (size_t i = start; i < stop; i++)
        if (path[i] == '/')
            path[i] = '!';
    return 0;
}

/* 1 when ROOT/sys/block/NAME/slaves holds an entry: a dm or md device built on other disks. */
static int disk_is_stacked(const struct collector *c, const char *name)
{
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d;
    int stacked = 0;

    if (block_path(c, name, "/slaves", path, sizeof(path)) < 0 || !(d = opendir(path)))
        return 0;
    while (!stacked && (de = readdir(d)))
        stacked = strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return stacked;
}

/* Classify a block device name seen for the first time: DEV_* bits. */
static unsigned disk_classify(const struct collector *c, const char *name)
{
    const struct collector_config *k = &c->cfg;
    char path[PATH_MAX];
    struct stat sb;

    if (!collector_name_selected(name, k->disk_include, k->n_disk_include, k->disk_exclude,
                                 k->n_disk_exclude))
        return 0;
    /* Partitions have no entry of their own in /sys/block, only whole devices do
     * (Documentation/ABI/stable/sysfs-block). */
    if (block_path(c, name, "", path, sizeof(path)) < 0 || stat(path, &sb) < 0 ||
        !S_ISDIR(sb.st_mode))
        return 0;
    if (disk_is_stacked(c, name)) {
        log_debug("disk %s: stacked on other devices, not part of _Total", name);
        return DEV_SELECTED;
    }
    log_debug("disk %s: whole disk", name);
    return DEV_SELECTED | DEV_IN_TOTAL;
}

/* linux_parse_row_hook for /proc/diskstats. */
static int disk_keep(void *ctx, struct raw_row *row)
{
    struct collector *c = ctx;
    struct linux_devcache_entry *e;
    int is_new;

    e = linux_devcache_get(c->disks, row->name, &is_new);
    if (!e)
        return -ENOMEM;
    if (is_new)
        e->flags = disk_classify(c, row->name);
    if (!(e->flags & DEV_SELECTED))
        return 0;
    if (e->flags & DEV_IN_TOTAL)
        row->flags |= RAW_IN_TOTAL;
    return 1;
}

/*
 * The re-read period of the interfaces' speed and MTU: sysfs_period_ms, stretched to
 * NET_PROBE_MS_PER_IF per interface selected (in the last pass over /proc/net/dev, or this one
 * so far when that is more; the config's excluded interfaces are never read), so that on average no
 * more than 1000 / NET_PROBE_MS_PER_IF interfaces (two files each) are read a second, however many
 * there are: 5 s up to 250 interfaces, 20 s at 1000. At 1000 interfaces, the 400 files a second of
 * a 5 s period were half of the sampler's time (bench/README.md). A period of 0 (tests) stays 0.
 */
#define NET_PROBE_MS_PER_IF 20

static int64_t net_probe_period(const struct collector *c)
{
    int64_t p = c->sysfs_period_ms;
    size_t n = c->nets_kept > c->nets_kept_last ? c->nets_kept : c->nets_kept_last;
    int64_t spread = (int64_t)n * NET_PROBE_MS_PER_IF;

    return p > 0 && spread > p ? spread : p;
}

/* Read what the file behind `fd` holds now into buf (NUL-terminated), from its start. Returns the
 * length or a negative errno. */
static ssize_t pread_small(int fd, char *buf, size_t cap)
{
    ssize_t n;

    do
        n = pread(fd, buf, cap - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    return n;
}

/*
 * Open IF/FILE under ROOT/sys/class/net. The directory stays open and the file is opened relative
 * to it: at a thousand interfaces the walk of the path's directories was 12% of the sampler's time
 * (bench/README.md). A file missing there is looked for by its whole path too, in case the
 * directory was replaced since it was opened; when it is found that way, the directory is opened
 * afresh next time. Returns the descriptor or a negative errno.
 */
static int net_open(struct collector *c, const char *ifname, const char *file)
{
    char path[PATH_MAX];
    int fd;

    if (c->net_dir < 0) {
        if (snprintf(path, sizeof(path), "%s/sys/class/net", c->root) >= (int)sizeof(path))
            return -ENAMETOOLONG;
        c->net_dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    if (c->net_dir >= 0) {
        if (snprintf(path, sizeof(path), "%s/%s", ifname, file) >= (int)sizeof(path))
            return -ENAMETOOLONG;
        fd = openat(c->net_dir, path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 || errno != ENOENT)
            return fd >= 0 ? fd : -errno;
    }
    if (snprintf(path, sizeof(path), "%s/sys/class/net/%s/%s", c->root, ifname, file) >=
        (int)sizeof(path))
        return -ENAMETOOLONG;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (c->net_dir >= 0) {
        close(c->net_dir);
        c->net_dir = -1;
    }
    return fd;
}

/*
 * The interfaces' speed and MTU files stay open between reads, up to c->attr_fds_max of them
 * (beyond, each read opens and closes its file), and are read again with one pread: on this VM
 * the open and close of the two files of four interfaces every 5 s were a fifth of the sampler's
 * time on an idle machine (bench/README.md). A kept file is opened afresh after
 * NET_ATTR_REOPEN_PERIODS re-read periods (a minute at 5 s), or at once when a read fails other
 * than with EINVAL (the speed of a link that has none): an interface that is removed makes its
 * files read ENODEV, and one that is renamed is forgotten at the next pass over /proc/net/dev, but
 * another one given the old name within the same second would be read through the old one's files
 * until the reopen.
 */
#define NET_ATTR_REOPEN_PERIODS 12

/*
 * The kept files' budget: an eighth of the descriptors the process may open (its soft limit,
 * which collector_new raises to the hard one, up to 65 536), at least NET_ATTR_FDS_MIN and at most
 * NET_ATTR_FDS_CAP (two files each of 2 048 interfaces). At 1 000 interfaces and 128 kept files,
 * the open and close of the rest were a fifth of the sampler's time (bench/README.md).
 */
#define NET_ATTR_FDS_MIN 128
#define NET_ATTR_FDS_CAP 4096

static size_t attr_fds_budget(void)
{
    struct rlimit rl;
    rlim_t n = NET_ATTR_FDS_MIN;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl); /* raising the soft limit needs no privilege */
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        n = rl.rlim_cur == RLIM_INFINITY ? NET_ATTR_FDS_CAP : rl.rlim_cur / 8;
    return n < NET_ATTR_FDS_MIN ? NET_ATTR_FDS_MIN : n > NET_ATTR_FDS_CAP ? NET_ATTR_FDS_CAP : n;
}

/* Read IF/FILE under ROOT/sys/class/net into buf, through `a`'s kept descriptor when it has one.
 * Returns the length or a negative errno. */
static ssize_t net_read_small(struct collector *c, const char *ifname, const char *file,
                              struct dev_attr *a, char *buf, size_t cap)
{
    ssize_t n;
    int fd;

    if (a->kept && c->now_ms - a->opened_ms >= NET_ATTR_REOPEN_PERIODS * net_probe_period(c))
        linux_devcache_drop(c->nets, a);
    if (a->kept) {
        n = pread_small(a->fd, buf, cap);
        if (n >= 0 || n == -EINVAL)
            return n;
        linux_devcache_drop(c->nets, a);
    }
    fd = net_open(c, ifname, file);
    if (fd < 0)
        return fd;
    n = pread_small(fd, buf, cap);
    linux_devcache_keep(c->nets, a, fd, c->now_ms, c->attr_fds_max);
    return n;
}

/*
 * Read /sys/class/net/IF/FILE into `a`. A missing file is normal for some links, and a speed reads
 * EINVAL or "-1" for links without a known speed (virtual ones, a link that is down): those are
 * logged at info and debug level; other failures are warnings. Each is logged once, and again
 * only after the file has read well in between.
 */
static void net_read_attr(struct collector *c, const char *ifname, const char *file,
                          struct dev_attr *a)
{
    char path[PATH_MAX], buf[64];
    int speed = strcmp(file, "speed") == 0;
    int64_t v = 0;
    ssize_t n = net_read_small(c, ifname, file, a, buf, sizeof(buf));
    int parsed = 0;

    if (n >= 0)
        parsed = linux_parse_sysfs_int(buf, (size_t)n, &v) == 0;
    if (parsed && v >= 0) {
        a->value = v;
        a->present = 1;
        a->failing = 0;
        return;
    }
    a->present = 0;
    if (a->failing)
        return;
    a->failing = 1;
    snprintf(path, sizeof(path), "%s/sys/class/net/%s/%s", c->root, ifname, file);
    if (n == -ENOENT) {
        log_info("%s: missing, no %s for interface %s", path, file, ifname);
    } else if (speed && (n == -EINVAL || parsed)) {
        log_debug("%s: no speed known for interface %s", path, ifname);
    } else if (n >= 0) {
        log_warnx("%s: unexpected contents, no %s for interface %s", path, file, ifname);
    } else {
        errno = (int)-n;
        log_warn("%s: cannot read", path);
    }
}

/* Close the kept speed and MTU files of `e`: rtnetlink said its name changed hands or its device
 * changed, and a kept file follows the device it was opened for, not the name. */
static void net_attrs_reopen(struct collector *c, struct linux_devcache_entry *e)
{
    linux_devcache_drop(c->nets, &e->speed_mbps);
    linux_devcache_drop(c->nets, &e->mtu);
}

/* Re-read speed and MTU of an interface when they are due. */
static void net_probe(struct collector *c, struct linux_devcache_entry *e, int is_new)
{
    int64_t period = net_probe_period(c);

    if (!is_new && c->now_ms < e->next_probe_ms && !c->links_all_due)
        return;
    if (c->links_all_due)
        net_attrs_reopen(c, e);
    net_read_attr(c, e->name, "speed", &e->speed_mbps);
    net_read_attr(c, e->name, "mtu", &e->mtu);
    /* Interfaces found together are spread over the period so that their re-reads do not all
     * fall on the same tick. */
    e->next_probe_ms = c->now_ms + period + (is_new && period > 0 ? e->hash % period : 0);
}

static void net_put_attr(struct raw_row *row, int field, const struct dev_attr *a)
{
    if (!a->present)
        return;
    row->v[field] = (uint64_t)a->value;
    row->present |= 1ull << field;
}

/* linux_parse_row_hook for /proc/net/dev. */
static int net_keep(void *ctx, struct raw_row *row)
{
    struct collector *c = ctx;
    const struct collector_config *k = &c->cfg;
    struct linux_devcache_entry *e;
    int is_new;

    e = linux_devcache_get(c->nets, row->name, &is_new);
    if (!e)
        return -ENOMEM;
    if (is_new && collector_name_selected(row->name, k->net_include, k->n_net_include,
                                          k->net_exclude, k->n_net_exclude))
        e->flags = DEV_SELECTED;
    if (!(e->flags & DEV_SELECTED))
        return 0;
    if (strcmp(row->name, "lo") != 0)
        row->flags |= RAW_IN_TOTAL;
    c->nets_kept++;
    net_probe(c, e, is_new);
    net_put_attr(row, NET_SPEED_MBPS, &e->speed_mbps);
    net_put_attr(row, NET_MTU, &e->mtu);
    return 1;
}

static int src_stat(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                    struct linux_parse_status *st)
{
    (void)c;
    return linux_parse_proc_stat(buf, len, out, st);
}

/* A pass over the device cache per read: names the file no longer lists are forgotten. */
static int src_diskstats(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                         struct linux_parse_status *st)
{
    int rc;

    linux_devcache_begin(c->disks);
    rc = linux_parse_diskstats(buf, len, out, disk_keep, c, st);
    if (rc == 0)
        linux_devcache_sweep(c->disks);
    return rc;
}

/* linkwatch_fn: an interface rtnetlink named changed (a new MTU, carrier, name) or went: its
 * speed and MTU are due at this pass, through files opened afresh. */
static void link_changed(void *ctx, const char *ifname)
{
    struct collector *c = ctx;
    struct linux_devcache_entry *e = linux_devcache_find(c->nets, ifname);

    if (!e)
        return; /* not known yet: read when the pass first sees it */
    net_attrs_reopen(c, e);
    e->next_probe_ms = 0;
}

static int src_net_dev(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                       struct linux_parse_status *st)
{
    int rc;

    /* The messages queued until now: a change made before this read of /proc/net/dev is seen in
     * this tick's values. */
    if (c->links && linkwatch_poll(c->links, link_changed, c))
        c->links_all_due = 1;
    linux_devcache_begin(c->nets);
    c->nets_kept = 0;
    rc = linux_parse_net_dev(buf, len, out, net_keep, c, st);
    if (rc == 0) {
        linux_devcache_sweep(c->nets);
        c->nets_kept_last = c->nets_kept;
        c->links_all_due = 0;
    }
    return rc;
}

static int src_meminfo(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                       struct linux_parse_status *st)
{
    (void)c;
    return linux_parse_meminfo(buf, len, out, st);
}

static int src_vmstat(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                      struct linux_parse_status *st)
{
    return linux_parse_vmstat(buf, len, c->page_size, out, st);
}

static int src_snmp(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                    struct linux_parse_status *st)
{
    (void)c;
    return linux_parse_net_snmp(buf, len, out, st);
}

static int src_psi_io(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                      struct linux_parse_status *st)
{
    (void)c;
    return parse_pressure(buf, len, PSI_RES_IO, out, st);
}

static int src_psi_memory(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                          struct linux_parse_status *st)
{
    (void)c;
    return parse_pressure(buf, len, PSI_RES_MEMORY, out, st);
}

static int src_psi_cpu(struct collector *c, const char *buf, size_t len, struct raw_object *out,
                       struct linux_parse_status *st)
{
    (void)c;
    return parse_pressure(buf, len, PSI_RES_CPU, out, st);
}

static const struct source sources[NSOURCES] = {
    [SRC_STAT] = {"proc/stat", OBJ_PROCESSOR, src_stat, NULL, 0, READ_WHOLE},
    /* After /proc/stat, so that their per-CPU fields land on its rows. */
    [SRC_SOFTIRQS] = {"proc/softirqs", OBJ_PROCESSOR, NULL, parse_softirqs, 1, READ_WHOLE},
    [SRC_SOFTNET] = {"proc/net/softnet_stat", OBJ_PROCESSOR, NULL, parse_softnet_stat, 1,
                     READ_SMALL_RECORD},
    [SRC_DISKSTATS] = {"proc/diskstats", OBJ_DISK, src_diskstats, NULL, 0, READ_SMALL_RECORD},
    [SRC_NET_DEV] = {"proc/net/dev", OBJ_NET, src_net_dev, NULL, 0, READ_SMALL_RECORD},
    [SRC_MEMINFO] = {"proc/meminfo", OBJ_MEMORY, src_meminfo, NULL, 0, READ_WHOLE},
    /* About half of its two hundred lines are after the last one read, and formatting them is
     * most of the cost of a read (mm/vmstat.c, vmstat_show()). */
    [SRC_VMSTAT] = {"proc/vmstat", OBJ_MEMORY, src_vmstat, NULL, 0, READ_SMALL_RECORD,
                    vmstat_extent},
    [SRC_SNMP] = {"proc/net/snmp", OBJ_TCP, src_snmp, NULL, 0, READ_WHOLE},
    /* The kernel formats some 250 counters (TcpExt, IpExt, MPTcpExt) folded over every CPU for
     * each read, about 40 us here: more than the whole budget of the new counters if read every
     * tick, so the TcpExt counters are logged while a run is in progress only. */
    [SRC_NETSTAT] = {"proc/net/netstat", OBJ_TCP, NULL, parse_net_netstat, 1, READ_WHOLE, NULL, 1},
    [SRC_PSI_IO] = {"proc/pressure/io", OBJ_PRESSURE, src_psi_io, NULL, 1, READ_WHOLE},
    [SRC_PSI_MEMORY] = {"proc/pressure/memory", OBJ_PRESSURE, src_psi_memory, NULL, 1, READ_WHOLE},
    [SRC_PSI_CPU] = {"proc/pressure/cpu", OBJ_PRESSURE, src_psi_cpu, NULL, 1, READ_WHOLE},
};

/* Read and parse source i into its object. Returns 0 or a negative errno (object rolled back). */
static int source_collect(struct collector *c, size_t i, struct raw_sample *out)
{
    struct source_state *s = &c->src[i];
    struct raw_object *o = &out->obj[sources[i].obj];
    struct linux_parse_status st = {0, 0};
    size_t n0 = o->n;
    ssize_t len = source_read(c, i);
    int rc;

    if (len < 0)
        return (int)len;
    rc = sources[i].parse ? sources[i].parse(c, c->buf, (size_t)len, o, &st)
                          : sources[i].plain(c->buf, (size_t)len, o, &st);
    if (rc < 0) {
        o->n = n0;
        source_failed(s, "parse", rc);
        return rc;
    }
    if (s->failing)
        log_info("%s: readable again", s->path);
    s->failing = 0;
    if (st.bad_lines && !s->warned_bad) {
        s->warned_bad = 1;
        log_warnx("%s: skipped %zu malformed line(s), the first at line %zu (reported once)",
                  s->path, st.bad_lines, st.first_bad);
    }
    return 0;
}

/* One optional file and its parser (linux_netfs.h: the count of shares or mounts it lists). */
struct optional_source {
    const char *rel;
    enum object_id obj;
    int (*parse)(const char *buf, size_t len, struct raw_object *out,
                 struct linux_parse_status *st);
};

static const struct optional_source optional_sources[NOPTIONAL] = {
    /* Exists while the cifs module is loaded. */
    [OPT_CIFS] = {"proc/fs/cifs/Stats", OBJ_SMB, netfs_parse_cifs_stats},
    /* Always exists; lists NFS counters only while an NFS file system is mounted. */
    [OPT_NFS] = {"proc/self/mountstats", OBJ_NFS, netfs_parse_mountstats},
};

/*
 * Read optional source i if it is active or `probe` is set. A file is probed afresh (reopened:
 * a module loaded again has a new one), and stays active while it lists something; a file that
 * is missing, unreadable or lists nothing is left alone until the next probe, so a machine
 * without cifs or NFS pays nothing for them. Returns 1 when rows were added, else 0.
 */
static int optional_collect(struct collector *c, size_t i, int probe, struct raw_sample *out)
{
    struct optional_state *os = &c->opt[i];
    struct raw_object *o = &out->obj[optional_sources[i].obj];
    struct linux_parse_status st = {0, 0};
    size_t n0 = o->n;
    ssize_t len;
    int found;

    if (!probe && !os->active)
        return 0;
    if (probe && os->s.fd >= 0) {
        close(os->s.fd);
        os->s.fd = -1;
    }
    os->active = 0;
    len = optional_read(c, &os->s);
    if (len < 0)
        return 0;
    found = optional_sources[i].parse(c->buf, (size_t)len, o, &st);
    if (found < 0) {
        o->n = n0;
        source_failed(&os->s, "parse", found);
        return 0;
    }
    if (probe)
        log_debug("%s: %d share(s) or mount(s)", os->s.path, found);
    os->s.failing = 0;
    if (st.bad_lines && !os->s.warned_bad) {
        os->s.warned_bad = 1;
        log_warnx("%s: skipped %zu malformed line(s), the first at line %zu (reported once)",
                  os->s.path, st.bad_lines, st.first_bad);
    }
    os->active = found > 0;
    if (!os->active && os->s.fd >= 0) {
        close(os->s.fd);
        os->s.fd = -1;
    }
    return o->n > n0;
}

int collector_collect(struct collector *c, struct raw_sample *out)
{
    unsigned done = 0;
    int err = -ENOENT, n = 0, probe;

    raw_sample_clear(out);
    c->now_ms = monotonic_ms();
    for (size_t i = 0; i < NSOURCES; i++) {
        int rc;

        if (sources[i].run_only && !c->following)
            continue;
        rc = source_collect(c, i, out);
        if (rc < 0)
            err = rc;
        else
            done |= 1u << sources[i].obj;
    }
    probe = mountwatch_changed(c->mounts);
    for (size_t i = 0; i < NOPTIONAL; i++)
        if (optional_collect(c, i, probe, out))
            done |= 1u << optional_sources[i].obj;
    if (c->procs) {
        struct timespec wall, boot;

        clock_gettime(CLOCK_REALTIME, &wall);
        clock_gettime(CLOCK_BOOTTIME, &boot);
        if (proc_tracker_collect(c->procs, (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000,
                                 (int64_t)boot.tv_sec * 1000 + boot.tv_nsec / 1000000,
                                 &out->obj[OBJ_PROCESS]) > 0)
            done |= 1u << OBJ_PROCESS;
    }
    for (int o = 0; o < OBJ_COUNT; o++)
        n += (done >> o) & 1;
    return n ? n : err;
}

void collector_follow(struct collector *c, const struct collector_proc_root *roots, size_t n)
{
    c->following = n > 0;
    if (!c->procs && n) {
        char dir[PATH_MAX];

        snprintf(dir, sizeof(dir), "%s/proc", c->root);
        if (!(c->procs = proc_tracker_new(dir))) {
            log_error("process tracking: out of memory");
            return;
        }
    }
    if (c->procs)
        proc_tracker_set_roots(c->procs, roots, n);
}

void collector_set_sysfs_period(struct collector *c, int64_t period_ms)
{
    c->sysfs_period_ms = period_ms < 0 ? 0 : period_ms;
}

size_t collector_attr_fds_max(const struct collector *c)
{
    return c->attr_fds_max;
}

void collector_set_attr_fds_max(struct collector *c, size_t n)
{
    c->attr_fds_max = n;
}

/* Keep the root without trailing slashes, so that "/" + "/proc/stat" is "/proc/stat". */
static char *root_copy(const char *root)
{
    size_t n = root ? strlen(root) : 0;

    while (n > 0 && root[n - 1] == '/')
        n--;
    return strndup(root ? root : "", n);
}

struct collector *collector_new(const struct collector_config *cfg)
{
    struct collector *c = calloc(1, sizeof(*c));
    long ps = sysconf(_SC_PAGESIZE);
    char path[PATH_MAX];

    if (!c)
        return NULL;
    /* Accepted everywhere so one config file serves a mixed fleet, but PDH exists only on
     * Windows: say so instead of silently logging nothing for them. */
    if (cfg->n_pdh_counters > 0)
        log_warnx("config: pdh_counters (%zu path%s) are PDH paths, read on Windows only; ignored "
                  "here",
                  cfg->n_pdh_counters, cfg->n_pdh_counters == 1 ? "" : "s");
    for (size_t i = 0; i < NSOURCES; i++)
        c->src[i].fd = -1;
    for (size_t i = 0; i < NOPTIONAL; i++)
        c->opt[i].s.fd = -1;
    c->net_dir = -1;
    c->attr_fds_max = attr_fds_budget();
    c->page_size = ps >= 1024 && ps % 1024 == 0 ? ps : 4096;
    c->root = root_copy(cfg->root);
    c->disks = linux_devcache_new();
    c->nets = linux_devcache_new();
    if (!c->root || !c->disks || !c->nets || collector_config_copy(&c->cfg, cfg) < 0) {
        collector_free(c);
        return NULL;
    }
    /* Link messages describe this network namespace's interfaces, which a fixture tree's are not.
     */
    if (!c->root[0])
        c->links = linkwatch_new();
    c->sysfs_period_ms = c->links ? COLLECTOR_SYSFS_WATCHED_PERIOD_MS : COLLECTOR_SYSFS_PERIOD_MS;
    for (size_t i = 0; i < NSOURCES; i++) {
        struct source_state *s = &c->src[i];
        int n = snprintf(s->path, sizeof(s->path), "%s/%s", c->root, sources[i].rel);
        if (n < 0 || (size_t)n >= sizeof(s->path)) {
            log_error("collector root too long: %s", c->root);
            collector_free(c);
            return NULL;
        }
    }
    for (size_t i = 0; i < NOPTIONAL; i++) {
        struct source_state *s = &c->opt[i].s;
        int n = snprintf(s->path, sizeof(s->path), "%s/%s", c->root, optional_sources[i].rel);
        if (n < 0 || (size_t)n >= sizeof(s->path)) {
            collector_free(c);
            return NULL;
        }
    }
    /* The path fits: it is no longer than proc/self/mountstats, just checked. */
    snprintf(path, sizeof(path), "%s/proc/self/mounts", c->root);
    if (!(c->mounts = mountwatch_new(path))) {
        collector_free(c);
        return NULL;
    }
    return c;
}

void collector_free(struct collector *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < NSOURCES; i++)
        if (c->src[i].fd >= 0)
            close(c->src[i].fd);
    for (size_t i = 0; i < NOPTIONAL; i++)
        if (c->opt[i].s.fd >= 0)
            close(c->opt[i].s.fd);
    if (c->net_dir >= 0)
        close(c->net_dir);
    mountwatch_free(c->mounts);
    linkwatch_free(c->links);
    collector_config_free(&c->cfg);
    linux_devcache_free(c->disks);
    linux_devcache_free(c->nets);
    proc_tracker_free(c->procs);
    free(c->buf);
    free(c->root);
    free(c);
}

long collector_cpu_ticks_per_s(void)
{
    return sysconf(_SC_CLK_TCK); /* /proc/stat counts in USER_HZ (proc(5)) */
}
