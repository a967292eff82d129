/*
 * linux_edge.c - out-of-band edge readings on Linux (collector.h, collector_edge_*).
 *
 * An edge reader is a collector of its own (its own open files, buffer and device caches, so the
 * sampler's are never touched) plus what only an edge reads: the writeback settings of
 * /proc/sys/vm, the dirty thresholds of /proc/vmstat, and on request every process and control
 * group (linux_others.c).
 */
#include "collectors/collector.h"
#include "collectors/linux/linux_others.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VMSTAT_MAX (64u * 1024)

struct collector_edge {
    struct collector *c;
    char *root; /* without a trailing '/': "" for "/" */
    long page_size;
    char *buf; /* VMSTAT_MAX bytes */
};

struct collector_edge *collector_edge_new(const struct collector_config *cfg)
{
    struct collector_edge *e = calloc(1, sizeof(*e));
    const char *root = cfg->root ? cfg->root : "";
    size_t n = strlen(root);
    long ps = sysconf(_SC_PAGESIZE);

    if (!e)
        return NULL;
    while (n > 0 && root[n - 1] == '/')
        n--;
    if (!(e->root = strndup(root, n)) || !(e->buf = malloc(VMSTAT_MAX)) ||
        !(e->c = collector_new(cfg))) {
        collector_edge_free(e);
        return NULL;
    }
    e->page_size = ps > 0 ? ps : 4096;
    return e;
}

void collector_edge_free(struct collector_edge *e)
{
    if (!e)
        return;
    collector_free(e->c);
    free(e->buf);
    free(e->root);
    free(e);
}

/* Read ROOT/rel into e->buf (NUL-terminated). Returns the length or a negative errno. */
static ssize_t edge_read_file(struct collector_edge *e, const char *rel)
{
    char path[PATH_MAX];
    size_t len = 0;
    ssize_t n;
    int fd;

    if (snprintf(path, sizeof(path), "%s/%s", e->root, rel) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -errno;
    while (len < VMSTAT_MAX - 1) {
        n = read(fd, e->buf + len, VMSTAT_MAX - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    e->buf[len] = '\0';
    return (ssize_t)len;
}

static int64_t sysctl_value(struct collector_edge *e, const char *name)
{
    char rel[128];
    uint64_t v;
    ssize_t n;

    snprintf(rel, sizeof(rel), "proc/sys/vm/%s", name);
    n = edge_read_file(e, rel);
    if (n <= 0)
        return -1;
    /* "N\n": a one-line file whose first token is the value. */
    e->buf[strcspn(e->buf, "\n")] = '\0';
    {
        char *endp;
        unsigned long long u = strtoull(e->buf, &endp, 10);
        if (endp == e->buf || *endp)
            return -1;
        v = u;
    }
    return v > INT64_MAX ? -1 : (int64_t)v;
}

static void read_kernel(struct collector_edge *e, int64_t *k)
{
    static const char *const vm_keys[] = {
        [KERNEL_DIRTY_THRESHOLD_BYTES] = "nr_dirty_threshold",
        [KERNEL_DIRTY_BACKGROUND_THRESHOLD_BYTES] = "nr_dirty_background_threshold",
    };
    ssize_t n;

    for (int i = 0; i < KERNEL_DIRTY_THRESHOLD_BYTES; i++)
        k[i] = sysctl_value(e, collector_kernel_names[i]);
    n = edge_read_file(e, "proc/vmstat");
    for (int i = KERNEL_DIRTY_THRESHOLD_BYTES; i < KERNEL_NFIELDS; i++) {
        uint64_t pages;

        k[i] = -1;
        if (n > 0 && others_parse_key(e->buf, (size_t)n, vm_keys[i], &pages) == 0)
            k[i] = (int64_t)(pages * (uint64_t)e->page_size);
    }
}

int collector_edge_read(struct collector_edge *e, unsigned flags,
                        struct collector_edge_reading *out, const char **why)
{
    struct timespec wall, mono;
    char dir[PATH_MAX];
    int rc;

    (void)why;
    out->nprocs = out->ncgroups = 0;
    clock_gettime(CLOCK_REALTIME, &wall);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    out->wall_ms = (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
    out->mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
    rc = collector_collect(e->c, &out->sample);
    if (rc < 0)
        return rc;
    read_kernel(e, out->kernel);
    if (!(flags & COLLECTOR_EDGE_SCAN))
        return 0;
    if (snprintf(dir, sizeof(dir), "%s/proc", e->root) >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    if ((rc = others_scan_procs(dir, out)) < 0)
        return rc;
    if (snprintf(dir, sizeof(dir), "%s/sys/fs/cgroup", e->root) >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    rc = others_scan_cgroups(dir, out);
    return rc < 0 ? rc : 0;
}
