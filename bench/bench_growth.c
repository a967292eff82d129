/*
 * bench_growth.c - cost of one tick (collect + delta + store) as the machine grows.
 *
 * Builds synthetic /proc and /sys trees with k/8 of 256 CPUs, 1000 disks and 1000 interfaces for
 * k = 1, 2, 4, 8, then times ticks on each: the real Linux collector reads the tree, delta.c turns
 * it into a tick, and db_write_ticks commits it to a real SQLite file (one transaction per tick,
 * as the writer does at the default commit interval). Between ticks every counter is advanced
 * (outside the timed part) so deltas are non-zero. Prints the median and p90 ms per tick and the
 * ms per 1000 instances, which stays flat when the cost is linear.
 *
 * usage: bench_growth [DIR] [TICKS]   (DIR defaults to a new directory under /tmp)
 */
#include "base/log.h"
#include "bench_util.h"
#include "collectors/collector.h"
#include "collectors/model/delta.h"
#include "storage/db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void mkdirs(const char *path)
{
    char tmp[8400];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "r+");
    if (!f)
        f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    /* In place (same inode): the collector keeps its /proc files open. */
    if (fwrite(text, 1, len, f) != len || ftruncate(fileno(f), (off_t)len) != 0) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

struct growth {
    int ncpu, ndisk, nnet;
};

/* Write the /proc files of tick `k`: counters grow with k so every delta is non-zero. */
static void write_proc(const char *root, const struct growth *g, unsigned long long k)
{
    size_t cap = 1 << 22, len = 0;
    char *b = malloc(cap), path[8400];

#define APP(...) len += (size_t)snprintf(b + len, cap - len, __VA_ARGS__)
    APP("cpu  %llu 0 %llu %llu 10 0 5 0 0 0\n", 100ULL * k * (unsigned)g->ncpu,
        50ULL * k * (unsigned)g->ncpu, 800ULL * k * (unsigned)g->ncpu);
    for (int i = 0; i < g->ncpu; i++)
        APP("cpu%d %llu 0 %llu %llu 10 0 5 0 0 0\n", i, 100ULL * k + (unsigned)i, 50ULL * k,
            800ULL * k);
    APP("intr 0\nctxt 1\nbtime 1700000000\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n");
    snprintf(path, sizeof(path), "%s/proc/stat", root);
    write_file(path, b, len);

    len = 0;
    for (int i = 0; i < g->ndisk; i++)
        APP(" 259 %7d disk%d %llu 0 %llu %llu %llu 0 %llu %llu 0 %llu %llu 0 0 0 0 0 0\n", i, i,
            10 * k, 800 * k, 3 * k, 20 * k + (unsigned)i, 1600 * k, 5 * k, 9 * k, 12 * k);
    snprintf(path, sizeof(path), "%s/proc/diskstats", root);
    write_file(path, b, len);

    len = 0;
    APP("Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
        "drop fifo colls carrier compressed\n");
    for (int i = 0; i < g->nnet; i++)
        APP("eth%d: %llu %llu 0 0 0 0 0 0 %llu %llu 0 0 0 0 0 0\n", i, 150000 * k, 100 * k,
            90000 * k + (unsigned)i, 60 * k);
    snprintf(path, sizeof(path), "%s/proc/net/dev", root);
    write_file(path, b, len);

    len = 0;
    APP("MemTotal: 24000000 kB\nMemFree: 1000 kB\nMemAvailable: %llu kB\nBuffers: 100 kB\n"
        "Cached: %llu kB\nDirty: %llu kB\nWriteback: 0 kB\n",
        20000000 + k, 300000 + k, 100 + k);
    snprintf(path, sizeof(path), "%s/proc/meminfo", root);
    write_file(path, b, len);
    len = 0;
    APP("nr_dirtied %llu\nnr_written %llu\npgpgin %llu\npgpgout %llu\npgfault %llu\n"
        "pgmajfault %llu\n",
        100 * k, 90 * k, 400 * k, 500 * k, 1000 * k, k);
    snprintf(path, sizeof(path), "%s/proc/vmstat", root);
    write_file(path, b, len);
    len = 0;
    APP("Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails "
        "EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
        "Tcp: 1 200 120000 -1 1 1 0 0 3 %llu %llu 0 0 0 0\n",
        1000 * k, 900 * k);
    snprintf(path, sizeof(path), "%s/proc/net/snmp", root);
    write_file(path, b, len);
#undef APP
    free(b);
}

static void make_tree(const char *root, const struct growth *g)
{
    char path[8400];

    snprintf(path, sizeof(path), "%s/proc/net", root);
    mkdirs(path);
    for (int i = 0; i < g->ndisk; i++) {
        snprintf(path, sizeof(path), "%s/sys/block/disk%d/slaves", root, i);
        mkdirs(path);
    }
    for (int i = 0; i < g->nnet; i++) {
        snprintf(path, sizeof(path), "%s/sys/class/net/eth%d", root, i);
        mkdirs(path);
        snprintf(path, sizeof(path), "%s/sys/class/net/eth%d/speed", root, i);
        write_file(path, "10000\n", 6);
        snprintf(path, sizeof(path), "%s/sys/class/net/eth%d/mtu", root, i);
        write_file(path, "1500\n", 5);
    }
    write_proc(root, g, 1);
}

int main(int argc, char **argv)
{
    char base[2048], root[4096], dbpath[4200], err[512];
    int ticks = argc > 2 ? atoi(argv[2]) : 30;

    log_set_level(LOG_LVL_ERROR);
    if (argc > 1) {
        snprintf(base, sizeof(base), "%s", argv[1]);
        mkdirs(base);
    } else {
        snprintf(base, sizeof(base), "/tmp/perflog-bench-growth-XXXXXX");
        if (!mkdtemp(base)) {
            perror("mkdtemp");
            return 1;
        }
    }
    if (ticks < 5)
        ticks = 5;
    printf("# one tick = collect (real Linux collector on a synthetic tree) + delta + SQLite "
           "commit\n");
    printf("%6s %6s %6s %10s %10s %10s %14s\n", "cpus", "disks", "ifaces", "instances", "median_ms",
           "p90_ms", "ms_per_1000_inst");
    for (int scale = 1; scale <= 8; scale *= 2) {
        struct growth g = {256 * scale / 8, 1000 * scale / 8, 1000 * scale / 8};
        struct collector_config cc = {.root = root};
        struct collector *c;
        struct delta_state *d = delta_new();
        struct raw_sample raw = {0};
        struct db *db;
        int64_t *t = calloc((size_t)ticks, sizeof(*t));
        int ninst = g.ncpu + 1 + g.ndisk + 1 + g.nnet + 1 + 2;

        snprintf(root, sizeof(root), "%s/root-%d", base, scale);
        snprintf(dbpath, sizeof(dbpath), "%s/growth-%d.db", base, scale);
        make_tree(root, &g);
        remove(dbpath);
        if (db_open(dbpath, "bench", &db, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        c = collector_new(&cc);
        for (int k = 0; k <= ticks; k++) {
            write_proc(root, &g, (unsigned long long)k + 2);
            int64_t t0 = now_ns();
            raw_sample_clear(&raw);
            collector_collect(c, &raw);
            struct tick *tk = delta_tick(d, &raw, 1800000000000LL + k * 1000, 1000, 0);
            if (!tk || db_write_ticks(db, &tk, 1) < 0) {
                fprintf(stderr, "tick failed\n");
                return 1;
            }
            tick_free(tk);
            if (k > 0) /* the first tick creates the instances: not a steady-state tick */
                t[k - 1] = now_ns() - t0;
        }
        qsort(t, (size_t)ticks, sizeof(*t), cmp_i64);
        double med = (double)t[ticks / 2] / 1e6, p90 = (double)t[ticks * 9 / 10] / 1e6;
        printf("%6d %6d %6d %10d %10.3f %10.3f %14.3f\n", g.ncpu, g.ndisk, g.nnet, ninst, med, p90,
               med * 1000.0 / ninst);
        fflush(stdout);
        collector_free(c);
        delta_free(d);
        raw_sample_free(&raw);
        db_close(db);
        free(t);
    }
    return 0;
}
