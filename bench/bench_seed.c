/*
 * bench_seed.c - write a synthetic but realistic counter log, for the HTTP API benchmarks.
 *
 * HOURS hours of 1 s ticks ending at the current second, shaped like this project's 2-vCPU VM:
 * Processor 0, 1 and _Total; PhysicalDisk vda, vdb and _Total; Network Interface lo, eth0 and
 * _Total (lo stays out of _Total, as the Linux collector does); Memory; TCP. Every level (CPU load,
 * IOPS, throughput, dirty pages, connections) is a bounded random walk from a fixed seed, so two
 * runs write the same values (only the times follow the clock). Each tick lands 0-2 ms after its
 * second, as the sampler's do, and carries the real interval since the previous one. The first
 * tick has no interval and no deltas, like the first tick after a daemon start.
 *
 * Ticks go through db_write_ticks in batches of 600 (one transaction each), then db_maintain runs
 * until it is done, so the minute and hour roll-ups exist. The file should not exist beforehand
 * (its ticks would be mixed with these).
 *
 * With CHUNK_AFTER_S, the raw rows older than that many seconds then go into the compressed tier
 * (retention.chunk_after_minutes), in the writer's steps; the longest step is printed. HOURS 0
 * writes nothing and only chunks DB_PATH, an existing file (tests/integration/test_dense_store.py
 * chunks one of two copies of a database that way).
 *
 * usage: bench_seed DB_PATH [HOURS [CHUNK_AFTER_S]]   (default 24 hours, no chunks)
 */
#include "storage/db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH 600

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* xorshift64*: small, fast and the same everywhere. `x` is the generator's state, never 0. */
static uint64_t rnd(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ULL;
}

static double urand(uint64_t *x) /* [0, 1) */
{
    return (double)(rnd(x) >> 11) / 9007199254740992.0;
}

/* One step of a random walk on `x`, kept inside [lo, hi]. */
static double walk(uint64_t *rng, double *x, double step, double lo, double hi)
{
    *x += (urand(rng) * 2.0 - 1.0) * step;
    if (*x < lo)
        *x = lo + (lo - *x);
    if (*x > hi)
        *x = hi - (*x - hi);
    if (*x < lo)
        *x = lo;
    return *x;
}

/* A non-negative integer count around `mean` (rounded with a random fraction, so sums stay right).
 */
static int64_t count(uint64_t *rng, double mean)
{
    double v = mean * (0.8 + 0.4 * urand(rng));
    int64_t n = (int64_t)v;

    if (v - (double)n > urand(rng))
        n++;
    return n < 0 ? 0 : n;
}

#define NCPU  2
#define NDISK 2

/* The levels the walks move. */
struct state {
    uint64_t rng;          /* the one random generator, fixed seed */
    double cpu_busy[NCPU]; /* share of the interval, 0..1 */
    double cpu_iowait[NCPU];
    double disk_rd_iops[NDISK], disk_wr_iops[NDISK], disk_rd_kb[NDISK], disk_wr_kb[NDISK];
    double lo_pps, eth_rx_pps, eth_tx_pps;
    double mem_avail_kb, mem_cached_kb, mem_dirty_kb, mem_pgfault;
    double tcp_estab, tcp_segs;
};

static void state_init(struct state *s)
{
    memset(s, 0, sizeof(*s));
    s->rng = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < NCPU; i++) {
        s->cpu_busy[i] = 0.08 + 0.05 * i;
        s->cpu_iowait[i] = 0.01;
    }
    for (int i = 0; i < NDISK; i++) {
        s->disk_rd_iops[i] = 20.0 / (i + 1);
        s->disk_wr_iops[i] = 40.0 / (i + 1);
        s->disk_rd_kb[i] = 16.0;
        s->disk_wr_kb[i] = 24.0;
    }
    s->lo_pps = 150;
    s->eth_rx_pps = 400;
    s->eth_tx_pps = 300;
    s->mem_avail_kb = 5.5e6;
    s->mem_cached_kb = 1.8e6;
    s->mem_dirty_kb = 2000;
    s->mem_pgfault = 3000;
    s->tcp_estab = 40;
    s->tcp_segs = 600;
}

static void state_step(struct state *s)
{
    for (int i = 0; i < NCPU; i++) {
        walk(&s->rng, &s->cpu_busy[i], 0.03, 0.02, 0.95);
        walk(&s->rng, &s->cpu_iowait[i], 0.004, 0.0, 0.1);
    }
    for (int i = 0; i < NDISK; i++) {
        walk(&s->rng, &s->disk_rd_iops[i], 3.0, 0.0, 400.0);
        walk(&s->rng, &s->disk_wr_iops[i], 4.0, 0.0, 600.0);
        walk(&s->rng, &s->disk_rd_kb[i], 2.0, 4.0, 256.0);
        walk(&s->rng, &s->disk_wr_kb[i], 2.0, 4.0, 512.0);
    }
    walk(&s->rng, &s->lo_pps, 10, 0, 5000);
    walk(&s->rng, &s->eth_rx_pps, 25, 10, 20000);
    walk(&s->rng, &s->eth_tx_pps, 20, 10, 20000);
    walk(&s->rng, &s->mem_avail_kb, 4000, 2.0e6, 7.5e6);
    walk(&s->rng, &s->mem_cached_kb, 3000, 0.5e6, 3.0e6);
    walk(&s->rng, &s->mem_dirty_kb, 300, 0, 200000);
    walk(&s->rng, &s->mem_pgfault, 150, 100, 50000);
    walk(&s->rng, &s->tcp_estab, 0.6, 2, 500);
    walk(&s->rng, &s->tcp_segs, 30, 10, 30000);
}

/* Rows of one object: n named rows, all fields present. */
static struct tick_row *rows_new(struct tick_object *o, const char *const *names, size_t n)
{
    o->rows = calloc(n, sizeof(*o->rows));
    if (!o->rows)
        return NULL;
    o->n = n;
    for (size_t i = 0; i < n; i++)
        snprintf(o->rows[i].name, sizeof(o->rows[i].name), "%s", names[i]);
    return o->rows;
}

/* Mark every cumulative field of `row` as having no value (a first tick has no deltas). */
static void no_deltas(const struct object_def *od, struct tick_row *row)
{
    for (size_t f = 0; f < od->nfields; f++)
        if (od->fields[f].kind != FIELD_GAUGE) {
            row->v[f] = 0;
            row->null_mask |= 1ull << f;
        }
}

static void cpu_row(struct state *s, int i, int64_t interval_ms, struct tick_row *r)
{
    int64_t jiffies = (interval_ms + 5) / 10; /* USER_HZ 100 */
    int64_t busy = (int64_t)(s->cpu_busy[i] * (double)jiffies + urand(&s->rng));
    int64_t iow = (int64_t)(s->cpu_iowait[i] * (double)jiffies + urand(&s->rng));

    if (busy > jiffies)
        busy = jiffies;
    if (iow > jiffies - busy)
        iow = jiffies - busy;
    r->v[CPU_IRQ] = busy > 0 && urand(&s->rng) < 0.05 ? 1 : 0;
    r->v[CPU_SOFTIRQ] = busy > 1 && urand(&s->rng) < 0.2 ? 1 : 0;
    r->v[CPU_STEAL] = busy > 2 && urand(&s->rng) < 0.1 ? 1 : 0;
    r->v[CPU_NICE] = busy > 3 && urand(&s->rng) < 0.05 ? 1 : 0;
    busy -= r->v[CPU_IRQ] + r->v[CPU_SOFTIRQ] + r->v[CPU_STEAL] + r->v[CPU_NICE];
    r->v[CPU_SYSTEM] = busy * 3 / 10;
    r->v[CPU_USER] = busy - r->v[CPU_SYSTEM];
    r->v[CPU_IOWAIT] = iow;
    r->v[CPU_IDLE] =
        jiffies - busy - iow - r->v[CPU_IRQ] - r->v[CPU_SOFTIRQ] - r->v[CPU_STEAL] - r->v[CPU_NICE];
}

static void disk_row(struct state *s, int i, int64_t interval_ms, struct tick_row *r)
{
    double sec = (double)interval_ms / 1000.0;
    int64_t rd = count(&s->rng, s->disk_rd_iops[i] * sec),
            wr = count(&s->rng, s->disk_wr_iops[i] * sec);
    int64_t rd_ms = rd * (1 + (int64_t)(rnd(&s->rng) % 3)),
            wr_ms = wr * (1 + (int64_t)(rnd(&s->rng) % 4));
    int64_t io_ms = rd_ms + wr_ms;

    if (io_ms > interval_ms)
        io_ms = interval_ms;
    r->v[DISK_RD_IOS] = rd;
    r->v[DISK_RD_MERGES] = rd / 8;
    r->v[DISK_RD_SECTORS] = count(&s->rng, (double)rd * s->disk_rd_kb[i] * 2.0);
    r->v[DISK_RD_MS] = rd_ms;
    r->v[DISK_WR_IOS] = wr;
    r->v[DISK_WR_MERGES] = wr / 3;
    r->v[DISK_WR_SECTORS] = count(&s->rng, (double)wr * s->disk_wr_kb[i] * 2.0);
    r->v[DISK_WR_MS] = wr_ms;
    r->v[DISK_IN_FLIGHT] = urand(&s->rng) < 0.1 ? 1 + (int64_t)(rnd(&s->rng) % 3) : 0;
    r->v[DISK_IO_MS] = io_ms;
    r->v[DISK_QUEUE_MS] = rd_ms + wr_ms + (int64_t)(rnd(&s->rng) % 3);
}

static void net_row(uint64_t *rng, double rx_pps, double tx_pps, double rx_size, double tx_size,
                    int64_t speed, int64_t mtu, int64_t interval_ms, struct tick_row *r)
{
    double sec = (double)interval_ms / 1000.0;
    int64_t rxp = count(rng, rx_pps * sec), txp = count(rng, tx_pps * sec);

    r->v[NET_RX_PACKETS] = rxp;
    r->v[NET_RX_BYTES] = count(rng, (double)rxp * rx_size);
    r->v[NET_TX_PACKETS] = txp;
    r->v[NET_TX_BYTES] = count(rng, (double)txp * tx_size);
    r->v[NET_RX_ERRS] = 0;
    r->v[NET_RX_DROP] = 3; /* levels, as read */
    r->v[NET_TX_ERRS] = 0;
    r->v[NET_TX_DROP] = 0;
    if (speed > 0)
        r->v[NET_SPEED_MBPS] = speed;
    else
        r->null_mask |= 1ull << NET_SPEED_MBPS; /* lo has no speed */
    r->v[NET_MTU] = mtu;
}

/* The _Total row of `o` from rows[first..n-1) (the last row is _Total). */
static void total_row(const struct object_def *od, struct tick_object *o, size_t first)
{
    struct tick_row *t = &o->rows[o->n - 1];

    for (size_t f = 0; f < od->nfields; f++) {
        int seen = 0;

        t->v[f] = 0;
        for (size_t r = first; r < o->n - 1; r++)
            if (!(o->rows[r].null_mask & (1ull << f))) {
                t->v[f] += o->rows[r].v[f];
                seen = 1;
            }
        if (!seen || (od->fields[f].flags & FIELDF_NO_TOTAL))
            t->null_mask |= 1ull << f;
    }
}

static struct tick *make_tick(struct state *s, int64_t t_ms, int64_t interval_ms)
{
    static const char *const cpus[] = {"0", "1", "_Total"};
    static const char *const disks[] = {"vda", "vdb", "_Total"};
    static const char *const nets[] = {"lo", "eth0", "_Total"};
    static const char *const single[] = {""};
    struct tick *t = calloc(1, sizeof(*t));
    int64_t iv = interval_ms > 0 ? interval_ms : 1000;
    struct tick_row *r;

    if (!t)
        return NULL;
    t->refs = 1;
    t->wall_ms = t_ms;
    t->interval_ms = interval_ms;
    if (!rows_new(&t->obj[OBJ_PROCESSOR], cpus, 3) || !rows_new(&t->obj[OBJ_DISK], disks, 3) ||
        !rows_new(&t->obj[OBJ_NET], nets, 3) || !rows_new(&t->obj[OBJ_MEMORY], single, 1) ||
        !rows_new(&t->obj[OBJ_TCP], single, 1)) {
        tick_free(t);
        return NULL;
    }
    for (int i = 0; i < NCPU; i++)
        cpu_row(s, i, iv, &t->obj[OBJ_PROCESSOR].rows[i]);
    total_row(&counter_objects[OBJ_PROCESSOR], &t->obj[OBJ_PROCESSOR], 0);
    for (int i = 0; i < NDISK; i++)
        disk_row(s, i, iv, &t->obj[OBJ_DISK].rows[i]);
    total_row(&counter_objects[OBJ_DISK], &t->obj[OBJ_DISK], 0);
    net_row(&s->rng, s->lo_pps, s->lo_pps, 900, 900, 0, 65536, iv, &t->obj[OBJ_NET].rows[0]);
    net_row(&s->rng, s->eth_rx_pps, s->eth_tx_pps, 1100, 400, 10000, 1500, iv,
            &t->obj[OBJ_NET].rows[1]);
    total_row(&counter_objects[OBJ_NET], &t->obj[OBJ_NET], 1); /* lo is not in _Total */

    r = &t->obj[OBJ_MEMORY].rows[0];
    r->v[MEM_AVAILABLE_KB] = (int64_t)s->mem_avail_kb;
    r->v[MEM_CACHED_KB] = (int64_t)s->mem_cached_kb;
    r->v[MEM_BUFFERS_KB] = 120000 + (int64_t)(s->mem_cached_kb / 50);
    r->v[MEM_DIRTY_KB] = (int64_t)s->mem_dirty_kb;
    r->v[MEM_WRITEBACK_KB] = urand(&s->rng) < 0.05 ? (int64_t)(rnd(&s->rng) % 2000) : 0;
    r->v[MEM_DIRTIED_KB] = count(&s->rng, s->mem_dirty_kb / 20);
    r->v[MEM_WRITTEN_KB] = count(&s->rng, s->mem_dirty_kb / 21);
    r->v[MEM_PGPGIN_KB] = t->obj[OBJ_DISK].rows[2].v[DISK_RD_SECTORS] / 2;
    r->v[MEM_PGPGOUT_KB] = t->obj[OBJ_DISK].rows[2].v[DISK_WR_SECTORS] / 2;
    r->v[MEM_PGFAULT] = count(&s->rng, s->mem_pgfault);
    r->v[MEM_PGMAJFAULT] = urand(&s->rng) < 0.02 ? 1 : 0;

    r = &t->obj[OBJ_TCP].rows[0];
    r->v[TCP_IN_SEGS] = count(&s->rng, s->tcp_segs);
    r->v[TCP_OUT_SEGS] = count(&s->rng, s->tcp_segs * 0.9);
    r->v[TCP_RETRANS_SEGS] = urand(&s->rng) < 0.03 ? 1 : 0;
    r->v[TCP_CURR_ESTAB] = (int64_t)s->tcp_estab;

    if (interval_ms <= 0)
        for (int o = 0; o < OBJ_COUNT; o++)
            for (size_t i = 0; i < t->obj[o].n; i++)
                no_deltas(&counter_objects[o], &t->obj[o].rows[i]);
    return t;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The writer's chunking, step by step after the roll-ups; prints the median and longest step. */
static int chunk_steps(struct db *db, int chunk_after_s)
{
    struct db_retention ret = {36500, 36500, 36500, 0, chunk_after_s};
    int64_t steps = 0, cap = 0, t0 = mono_ns(), t, *ns = NULL;
    int rc;

    do {
        t = mono_ns();
        rc = db_maintain(db, wall_ms(), &ret);
        t = mono_ns() - t;
        if (steps == cap) {
            int64_t *more = realloc(ns, (size_t)(cap = cap ? cap * 2 : 1024) * sizeof(*ns));
            if (!more) {
                free(ns);
                return -ENOMEM;
            }
            ns = more;
        }
        ns[steps++] = t;
    } while (rc > 0);
    qsort(ns, (size_t)steps, sizeof(*ns), cmp_i64);
    if (rc < 0) {
        fprintf(stderr, "bench_seed: chunking: %s (%s)\n", strerror(-rc), db_errmsg(db));
        free(ns);
        return rc;
    }
    printf("bench_seed: chunked the rows older than %d s in %lld db_maintain steps, %.2f s; "
           "step median %.1f ms, p99 %.1f ms, longest %.1f ms\n",
           chunk_after_s, (long long)steps, (double)(mono_ns() - t0) / 1e9,
           (double)ns[steps / 2] / 1e6, (double)ns[steps * 99 / 100] / 1e6,
           (double)ns[steps - 1] / 1e6);
    free(ns);
    return 0;
}

int main(int argc, char **argv)
{
    struct tick *batch[BATCH];
    struct state s;
    struct db *db;
    char err[512], host[256] = "bench";
    double hours = argc > 2 ? atof(argv[2]) : 24.0;
    int64_t end_ms, nticks, written = 0, prev_ms = -1, t0 = mono_ns(), t_write, steps = 0;
    struct db_retention ret = {7, 90, 1825, 0, 0};
    int chunk_after_s = argc > 3 ? atoi(argv[3]) : 0;
    int rc;

    if (argc < 2 || argc > 4 || hours < 0 || hours > 24.0 * 365 || chunk_after_s < 0 ||
        (hours == 0 && (chunk_after_s == 0 || access(argv[1], F_OK) != 0))) {
        fprintf(stderr, "usage: bench_seed DB_PATH [HOURS [CHUNK_AFTER_S]]   (default 24 hours, no "
                        "chunks; HOURS 0: only chunk the existing DB_PATH)\n");
        return 2;
    }
    if (access(argv[1], F_OK) == 0 && hours > 0)
        fprintf(stderr, "bench_seed: warning: %s exists; its ticks will be mixed with these\n",
                argv[1]);
    gethostname(host, sizeof(host) - 1);
    if ((rc = db_open(argv[1], host, &db, err, sizeof(err))) < 0) {
        fprintf(stderr, "bench_seed: %s\n", err);
        return 1;
    }
    nticks = (int64_t)(hours * 3600.0 + 0.5);
    if (ret.raw_days * 24.0 < hours + 24)
        ret.raw_days = (int)(hours / 24.0) + 2; /* keep every seeded tick */
    end_ms = wall_ms() / 1000 * 1000;
    state_init(&s);
    for (int64_t i = 0; i < nticks;) {
        size_t n = 0;

        while (n < BATCH && i < nticks) {
            int64_t second = end_ms - (nticks - 1 - i) * 1000;
            int64_t t_ms = second + (int64_t)(rnd(&s.rng) % 3); /* the sampler wakes 0-2 ms late */

            state_step(&s);
            batch[n] = make_tick(&s, t_ms, prev_ms < 0 ? 0 : t_ms - prev_ms);
            if (!batch[n]) {
                fprintf(stderr, "bench_seed: out of memory\n");
                return 1;
            }
            prev_ms = t_ms;
            n++;
            i++;
        }
        rc = db_write_ticks(db, batch, n);
        for (size_t k = 0; k < n; k++)
            tick_free(batch[k]);
        if (rc < 0) {
            fprintf(stderr, "bench_seed: writing ticks: %s (%s)\n", strerror(-rc), db_errmsg(db));
            db_close(db);
            return 1;
        }
        written += (int64_t)n;
    }
    t_write = mono_ns();
    /* Roll up every completed minute and hour, as the daemon's writer does in the background. */
    while ((rc = db_maintain(db, wall_ms(), &ret)) > 0)
        steps++;
    if (rc < 0) {
        fprintf(stderr, "bench_seed: db_maintain: %s (%s)\n", strerror(-rc), db_errmsg(db));
        db_close(db);
        return 1;
    }
    if (chunk_after_s > 0 && chunk_steps(db, chunk_after_s) < 0) {
        db_close(db);
        return 1;
    }
    db_close(db);
    printf("bench_seed: %lld ticks written (%.2f h ending at %lld ms) in %.2f s, roll-ups in "
           "%.2f s (%lld db_maintain steps); %.2f s in all\n",
           (long long)written, (double)written / 3600.0, (long long)end_ms,
           (double)(t_write - t0) / 1e9, (double)(mono_ns() - t_write) / 1e9, (long long)steps + 1,
           (double)(mono_ns() - t0) / 1e9);
    return 0;
}
