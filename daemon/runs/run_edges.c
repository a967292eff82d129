/*
 * run_edges.c - a run's edges as JSON; see run_edges.h.
 *
 * Every number is the raw cumulative counter as read, converted to bytes and ms where the
 * contract names them so (sectors x 512, jiffies x 1000 / USER_HZ, KiB x 1024), so a report can
 * subtract two edges and get the exact total of a window however short.
 */
#include "daemon/runs/run_edges.h"

#include "base/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECTOR_BYTES 512

struct run_edges {
    pthread_mutex_t lock; /* guards e and reading: the API's threads and the run manager */
    struct collector_edge *e;
    struct collector_edge_reading reading;
};

struct run_edges *run_edges_new(const struct collector_config *cfg)
{
    struct run_edges *re = calloc(1, sizeof(*re));
    struct collector_config c = *cfg;

    if (!re)
        return NULL;
    c.n_pdh_counters = 0; /* extra PDH series are the ticks' business, not an edge's */
    if (!(re->e = collector_edge_new(&c))) {
        free(re);
        return NULL;
    }
    pthread_mutex_init(&re->lock, NULL);
    return re;
}

int run_edges_reconfigure(struct run_edges *re, const struct collector_config *cfg)
{
    struct collector_config c = *cfg;
    struct collector_edge *e, *old;

    c.n_pdh_counters = 0;
    if (!(e = collector_edge_new(&c)))
        return -ENOMEM;
    pthread_mutex_lock(&re->lock);
    old = re->e;
    re->e = e;
    pthread_mutex_unlock(&re->lock);
    collector_edge_free(old);
    return 0;
}

void run_edges_free(struct run_edges *re)
{
    if (!re)
        return;
    collector_edge_free(re->e);
    collector_edge_reading_free(&re->reading);
    pthread_mutex_destroy(&re->lock);
    free(re);
}

/* Set key to field f of row r when it was read, times `mul`. */
static void put(json_t *o, const char *key, const struct raw_row *r, int f, uint64_t mul)
{
    if (r->present & (1ull << f))
        json_object_set_new(o, key, json_integer((json_int_t)(r->v[f] * mul)));
}

static json_t *disks_json(const struct raw_object *o)
{
    json_t *j = json_object();

    for (size_t i = 0; i < o->n; i++) {
        const struct raw_row *r = &o->rows[i];
        json_t *d = json_object();

        put(d, "read_bytes", r, DISK_RD_SECTORS, SECTOR_BYTES);
        put(d, "write_bytes", r, DISK_WR_SECTORS, SECTOR_BYTES);
        put(d, "read_ops", r, DISK_RD_IOS, 1);
        put(d, "write_ops", r, DISK_WR_IOS, 1);
        put(d, "busy_ms", r, DISK_IO_MS, 1);
        put(d, "queue_ms", r, DISK_QUEUE_MS, 1);
        /* 1: a whole disk, part of the Disk _Total: the sum over these is the device total */
        json_object_set_new(d, "in_total", json_integer((r->flags & RAW_IN_TOTAL) != 0));
        json_object_set_new(j, r->name, d);
    }
    return j;
}

static json_t *nics_json(const struct raw_object *o)
{
    static const struct {
        const char *key;
        int f;
    } keys[] = {
        {"rx_bytes", NET_RX_BYTES},     {"tx_bytes", NET_TX_BYTES}, {"rx_packets", NET_RX_PACKETS},
        {"tx_packets", NET_TX_PACKETS}, {"rx_errors", NET_RX_ERRS}, {"tx_errors", NET_TX_ERRS},
        {"rx_drops", NET_RX_DROP},      {"tx_drops", NET_TX_DROP},
    };
    json_t *j = json_object();

    for (size_t i = 0; i < o->n; i++) {
        json_t *n = json_object();

        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            put(n, keys[k].key, &o->rows[i], keys[k].f, 1);
        json_object_set_new(j, o->rows[i].name, n);
    }
    return j;
}

/* One Processor row in ms; the unit of the raw fields is collector_cpu_ticks_per_s. */
static json_t *cpu_row(const struct raw_row *r, uint64_t hz)
{
    static const char *const keys[CPU_STEAL + 1] = {
        [CPU_USER] = "user_ms",       [CPU_NICE] = "nice_ms",     [CPU_SYSTEM] = "system_ms",
        [CPU_IDLE] = "idle_ms",       [CPU_IOWAIT] = "iowait_ms", [CPU_IRQ] = "irq_ms",
        [CPU_SOFTIRQ] = "softirq_ms", [CPU_STEAL] = "steal_ms",
    };
    json_t *j = json_object();

    /* The time fields only: the softirq and softnet counts after them are not in jiffies. */
    for (int f = 0; f <= CPU_STEAL; f++)
        if (r->present & (1ull << f))
            json_object_set_new(j, keys[f], json_integer((json_int_t)(r->v[f] * 1000 / hz)));
    return j;
}

static json_t *cpu_json(const struct raw_object *o)
{
    long t = collector_cpu_ticks_per_s();
    uint64_t hz = t > 0 ? (uint64_t)t : 100;
    json_t *j = NULL, *cores = json_array();

    for (size_t i = 0; i < o->n; i++) {
        if (!strcmp(o->rows[i].name, "_Total"))
            j = cpu_row(&o->rows[i], hz);
        else
            json_array_append_new(cores, cpu_row(&o->rows[i], hz));
    }
    if (!j)
        j = json_object();
    json_object_set_new(j, "cores", cores);
    return j;
}

static json_t *mem_json(const struct raw_object *o, const int64_t *kernel)
{
    json_t *j = json_object();

    if (o->n) {
        const struct raw_row *r = &o->rows[0];

        put(j, "dirty_bytes", r, MEM_DIRTY_KB, 1024);
        put(j, "writeback_bytes", r, MEM_WRITEBACK_KB, 1024);
        put(j, "cached_bytes", r, MEM_CACHED_KB, 1024);
        put(j, "dirtied_bytes", r, MEM_DIRTIED_KB, 1024);
        put(j, "written_bytes", r, MEM_WRITTEN_KB, 1024);
        put(j, "pgpgin_bytes", r, MEM_PGPGIN_KB, 1024);
        put(j, "pgpgout_bytes", r, MEM_PGPGOUT_KB, 1024);
    }
    if (kernel[KERNEL_DIRTY_THRESHOLD_BYTES] >= 0)
        json_object_set_new(j, "dirty_threshold_bytes",
                            json_integer(kernel[KERNEL_DIRTY_THRESHOLD_BYTES]));
    if (kernel[KERNEL_DIRTY_BACKGROUND_THRESHOLD_BYTES] >= 0)
        json_object_set_new(j, "dirty_background_threshold_bytes",
                            json_integer(kernel[KERNEL_DIRTY_BACKGROUND_THRESHOLD_BYTES]));
    return j;
}

static json_t *kernel_json(const int64_t *k)
{
    json_t *j = json_object();

    for (int i = 0; i < KERNEL_NFIELDS; i++)
        if (k[i] >= 0)
            json_object_set_new(j, collector_kernel_names[i], json_integer(k[i]));
    return j;
}

/* 1 when pid is root or descends from it, by the parents of the scan. */
static int in_tree(const struct collector_edge_reading *rd, int pid, int root)
{
    for (int hops = 0; pid > 0 && hops < 64; hops++) {
        size_t i;

        if (pid == root)
            return 1;
        for (i = 0; i < rd->nprocs && rd->procs[i].pid != pid; i++)
            ;
        if (i == rd->nprocs)
            return 0;
        pid = rd->procs[i].ppid;
    }
    return 0;
}

static json_t *proc_json(const struct collector_proc_io *p)
{
    json_t *j = json_pack("{s:s, s:i, s:I}", "name", p->name, "ppid", p->ppid, "cpu_ms",
                          (json_int_t)p->cpu_ms);

    if (j && p->have_io) {
        json_object_set_new(j, "read_bytes", json_integer((json_int_t)p->read_bytes));
        json_object_set_new(j, "write_bytes", json_integer((json_int_t)p->write_bytes));
        json_object_set_new(j, "rchar", json_integer((json_int_t)p->rchar));
        json_object_set_new(j, "wchar", json_integer((json_int_t)p->wchar));
    }
    return j;
}

/*
 * io_scan: {"procs": {"PID": [start_ticks, read_bytes, write_bytes, "name", ppid]}, "cgroups":
 * {"NAME": [read_bytes, write_bytes]}}, only those with bytes: one that has none at an edge
 * counts from zero at the next, so nothing is lost by leaving it out.
 */
static json_t *scan_json(const struct collector_edge_reading *rd)
{
    json_t *procs = json_object(), *groups = json_object();
    char key[24];

    for (size_t i = 0; i < rd->nprocs; i++) {
        const struct collector_proc_io *p = &rd->procs[i];

        if (!p->have_io || (!p->read_bytes && !p->write_bytes))
            continue;
        snprintf(key, sizeof(key), "%d", p->pid);
        json_object_set_new(procs, key,
                            json_pack("[I, I, I, s, i]", (json_int_t)p->start_ticks,
                                      (json_int_t)p->read_bytes, (json_int_t)p->write_bytes,
                                      p->name, p->ppid));
    }
    for (size_t i = 0; i < rd->ncgroups; i++)
        json_object_set_new(groups, rd->cgroups[i].name,
                            json_pack("[I, I]", (json_int_t)rd->cgroups[i].read_bytes,
                                      (json_int_t)rd->cgroups[i].write_bytes));
    return json_pack("{s:o, s:o}", "procs", procs, "cgroups", groups);
}

/* A scan that could read no process's io file (not root) names nobody: say why once. */
static int scan_read_io(const struct collector_edge_reading *rd)
{
    for (size_t i = 0; i < rd->nprocs; i++)
        if (rd->procs[i].have_io)
            return 1;
    return 0;
}

json_t *run_edges_take(struct run_edges *re, int64_t root_pid, int scan, json_t **kernel, char *why,
                       size_t whylen)
{
    struct collector_edge_reading *rd = &re->reading;
    const char *reason = NULL;
    json_t *j = NULL, *procs;
    int rc;

    pthread_mutex_lock(&re->lock);
    rc = collector_edge_read(re->e, scan || root_pid > 0 ? COLLECTOR_EDGE_SCAN : 0, rd, &reason);
    if (rc < 0) {
        snprintf(why, whylen, "%s", reason ? reason : strerror(-rc));
        goto out;
    }
    procs = json_object();
    for (size_t i = 0; i < rd->nprocs && root_pid > 0; i++)
        if (in_tree(rd, rd->procs[i].pid, (int)root_pid)) {
            char key[24];

            snprintf(key, sizeof(key), "%d", rd->procs[i].pid);
            json_object_set_new(procs, key, proc_json(&rd->procs[i]));
        }
    j = json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:o}", "t_ms", (json_int_t)rd->wall_ms, "mono_ns",
                  (json_int_t)rd->mono_ns, "disks", disks_json(&rd->sample.obj[OBJ_DISK]), "nics",
                  nics_json(&rd->sample.obj[OBJ_NET]), "cpu",
                  cpu_json(&rd->sample.obj[OBJ_PROCESSOR]), "mem",
                  mem_json(&rd->sample.obj[OBJ_MEMORY], rd->kernel), "procs", procs);
    if (j && scan) {
        json_object_set_new(j, "io_scan", scan_json(rd));
        if (reason || !scan_read_io(rd))
            json_object_set_new(json_object_get(j, "io_scan"), "note",
                                json_string(reason ? reason
                                                   : "no process's io file could be read "
                                                     "(perflogd is not root): only control "
                                                     "groups are named"));
    }
    if (j && kernel)
        *kernel = kernel_json(rd->kernel);
    if (!j)
        snprintf(why, whylen, "out of memory");
out:
    pthread_mutex_unlock(&re->lock);
    return j;
}

json_t *run_edges_now(struct run_edges *re)
{
    struct collector_edge_reading *rd = &re->reading;
    const char *reason = NULL;
    json_t *j = NULL;

    pthread_mutex_lock(&re->lock);
    if (collector_edge_read(re->e, 0, rd, &reason) == 0)
        j = json_pack("{s:I, s:o}", "t_ms", (json_int_t)rd->wall_ms, "disks",
                      disks_json(&rd->sample.obj[OBJ_DISK]));
    pthread_mutex_unlock(&re->lock);
    return j;
}
