/*
 * report.c - the run report of design section 7; see report.h.
 *
 * One raw data_query fetches every counter the report needs over [start - interval, tail end]:
 * points at or before start only give the gauges their level at start (the tick at or just before
 * start_ms, as the settle rule of the runs spec reads it). A tick's rates cover the interval before
 * it, (t - interval, t], so each tick counts in the run (start, end] and in the tail (end, tail
 * end] for the share of its interval inside them: a 1.5 s copy gets the right parts of the two or
 * three ticks around it, and run + tail add up with nothing counted twice. Byte and packet counts
 * integrate rate x that share of the tick's real interval, which gives back the stored deltas over
 * whole ticks; averages are weighted the same way.
 */
#include "report.h"

#include "claims.h"
#include "data.h"
#include "printf_attr.h"
#include "report_io.h"
#include "report_proc.h"
#include "series.h"
#include "timeparse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE_MAX 4096 /* ticks taken from memory at most, as data.c does */

/* The counters the report reads. */
static const char *const report_patterns[] = {
    "\\PhysicalDisk(*)\\Disk Read Bytes/sec",
    "\\PhysicalDisk(*)\\Disk Write Bytes/sec",
    "\\PhysicalDisk(*)\\Disk Reads/sec",
    "\\PhysicalDisk(*)\\Disk Writes/sec",
    "\\PhysicalDisk(*)\\% Disk Time",
    "\\Network Interface(*)\\Bytes Received/sec",
    "\\Network Interface(*)\\Bytes Sent/sec",
    "\\Network Interface(*)\\Packets Received/sec",
    "\\Network Interface(*)\\Packets Sent/sec",
    "\\Network Interface(*)\\Packets Received Errors",
    "\\Network Interface(*)\\Packets Outbound Errors",
    "\\Network Interface(*)\\Packets Received Discarded",
    "\\Network Interface(*)\\Packets Outbound Discarded",
    "\\Network Interface(*)\\Current Bandwidth",
    "\\TCP\\Segments Retransmitted/sec",
    "\\TCP\\Segments Sent/sec",
    "\\Processor(*)\\% Processor Time",
    "\\Processor(*)\\% Privileged Time",
    "\\Memory\\Cache Bytes",
    "\\Memory\\Dirty Bytes",
    "\\Memory\\Writeback Bytes",
    "\\Memory\\Written Back Bytes/sec",
};

#define NPATTERNS (sizeof(report_patterns) / sizeof(report_patterns[0]))

enum window { W_RUN, W_TAIL };

/* The fetched data and the windows. */
struct ctx {
    const struct series *s;
    size_t ns;
    const struct data_result *res;
    const double *iv_s; /* per point: the tick's real interval in seconds, 0 when unknown */
    int64_t start_ms;   /* the run: start_ms < t <= end_ms */
    int64_t end_ms;     /* the tail: end_ms < t <= tail_to_ms */
    int64_t tail_to_ms;
};

/* What one series did in one window. Integral and time skip points without an interval. */
struct agg {
    size_t n;         /* points with a value */
    double integral;  /* sum of value x interval (s): bytes for a bytes/s rate */
    double time_s;    /* sum of the intervals of those points */
    double peak, sum; /* largest value, plain sum */
};

/* ---- reading the data ---- */

static int in_window(const struct ctx *x, int64_t t, enum window w)
{
    return w == W_RUN ? t > x->start_ms && t <= x->end_ms : t > x->end_ms && t <= x->tail_to_ms;
}

static double value(const struct ctx *x, long si, size_t p)
{
    return x->res->values[(size_t)si * x->res->npoints + p];
}

/*
 * Whether point p counts in window w, and for how many seconds. A tick's rates cover the interval
 * before it, (t - interval, t]. Every tick whose interval overlaps the run (start, end] counts in
 * the run, whole: what the copy did happened while it ran, and a command that ends 0.2 s into a
 * tick did its I/O in those 0.2 s, not spread over the second (measured: pro-rating lost 15% of a
 * 512 MiB cold read). The tail is the ticks after that, up to its end. A point without an interval
 * counts when its time is in the window, with no time.
 */
static double overlap_s(const struct ctx *x, size_t p, enum window w, int *in)
{
    int64_t t = x->res->ts[p];
    double from = (double)t - x->iv_s[p] * 1000.0;

    if (x->iv_s[p] <= 0) {
        *in = w == W_RUN ? t > x->start_ms && t <= x->end_ms : t > x->end_ms && t <= x->tail_to_ms;
        return 0;
    }
    if (w == W_RUN)
        *in = t > x->start_ms && from < (double)x->end_ms;
    else
        *in = from >= (double)x->end_ms && t <= x->tail_to_ms;
    return *in ? x->iv_s[p] : 0;
}

static struct agg aggregate(const struct ctx *x, long si, enum window w)
{
    struct agg a = {0, 0, 0, -INFINITY, 0};

    if (si < 0)
        return a;
    for (size_t p = 0; p < x->res->npoints; p++) {
        double v = value(x, si, p), ov;
        int in;

        if (isnan(v))
            continue;
        ov = overlap_s(x, p, w, &in);
        if (!in)
            continue;
        a.n++;
        a.sum += v;
        a.peak = v > a.peak ? v : a.peak;
        a.integral += v * ov;
        a.time_s += ov;
    }
    return a;
}

/* The interval-weighted mean, or NAN without values. */
static double agg_avg(const struct agg *a)
{
    if (a->time_s > 0)
        return a->integral / a->time_s;
    return a->n ? a->sum / (double)a->n : NAN;
}

/* The value of the newest point with one at or before t_ms, or NAN. */
static double value_at(const struct ctx *x, long si, int64_t t_ms)
{
    double r = NAN;

    if (si < 0)
        return NAN;
    for (size_t p = 0; p < x->res->npoints && x->res->ts[p] <= t_ms; p++)
        if (!isnan(value(x, si, p)))
            r = value(x, si, p);
    return r;
}

/*
 * The level when the command returned: the first tick at or after end_ms, whose interval holds
 * the command's last moments (the run counts that tick whole, too), else the tick before. The tick
 * before end would miss what the command did in its last second: a 1 GiB cp that returns 0.7 s
 * into a tick read "648 KiB dirty at exit" from the tick before, with 1 GiB dirty a moment later.
 */
static double value_at_end(const struct ctx *x, long si)
{
    for (size_t p = 0; si >= 0 && p < x->res->npoints; p++) {
        int64_t t = x->res->ts[p];

        if (t >= x->end_ms && !isnan(value(x, si, p)) &&
            (double)t - x->iv_s[p] * 1000.0 < (double)x->end_ms + 1.0)
            return value(x, si, p);
        if (t >= x->end_ms)
            break;
    }
    return value_at(x, si, x->end_ms);
}

/* The level at start: the tick at or just before start, else the first of the run. */
static double value_at_start(const struct ctx *x, long si)
{
    double v = value_at(x, si, x->start_ms);

    for (size_t p = 0; isnan(v) && si >= 0 && p < x->res->npoints; p++)
        if (in_window(x, x->res->ts[p], W_RUN))
            v = value(x, si, p);
    return v;
}

/* Index of the series of (obj, inst, counter name) in the set, or -1. */
static long find_series(const struct ctx *x, int obj, const char *inst, const char *counter)
{
    for (size_t i = 0; i < x->ns; i++)
        if (x->s[i].obj == obj && strcmp(x->s[i].inst, inst) == 0 &&
            strcmp(counter_objects[obj].counters[x->s[i].counter].name, counter) == 0)
            return (long)i;
    return -1;
}

/* ---- the ticks' real intervals ---- */

struct tick_iv {
    int64_t t_ms, iv_ms;
};

struct iv_list {
    struct tick_iv *v;
    size_t n, cap;
};

static int iv_add(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms)
{
    struct iv_list *l = arg;

    (void)tick;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct tick_iv *v = realloc(l->v, cap * sizeof(*v));

        if (!v)
            return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (struct tick_iv){t_ms, interval_ms};
    return 0;
}

static int by_time(const void *a, const void *b)
{
    int64_t x = ((const struct tick_iv *)a)->t_ms, y = ((const struct tick_iv *)b)->t_ms;

    return (x > y) - (x < y);
}

/*
 * The real interval (s) of every point of res: data_result has the ticks' times only, so read
 * the same ticks' intervals from the database and memory and match them by time. A point whose
 * tick is not found (it left memory in between) falls back to the gap to the previous point.
 */
static double *point_intervals(struct reader *rd, struct live *live, const struct data_result *res,
                               int64_t from_ms, int64_t to_ms, int64_t interval_ms)
{
    struct iv_list l = {0};
    double *iv = calloc(res->npoints + 1, sizeof(*iv));
    struct tick **lt = live ? calloc(LIVE_MAX, sizeof(*lt)) : NULL;
    size_t nlive = 0;

    if (!iv || (live && !lt))
        goto fail;
    if (rd && reader_ticks(rd, from_ms, to_ms, iv_add, &l) != 0)
        goto fail;
    if (lt)
        nlive = live_range(live, from_ms, to_ms, lt, LIVE_MAX, NULL);
    for (size_t i = 0; i < nlive; i++) {
        iv_add(&l, -1, lt[i]->wall_ms, lt[i]->interval_ms);
        tick_free(lt[i]);
    }
    if (l.n)
        qsort(l.v, l.n, sizeof(*l.v), by_time);
    for (size_t p = 0; p < res->npoints; p++) {
        struct tick_iv key = {res->ts[p], 0};
        struct tick_iv *hit = l.n ? bsearch(&key, l.v, l.n, sizeof(*l.v), by_time) : NULL;
        int64_t ms = hit ? hit->iv_ms : p ? res->ts[p] - res->ts[p - 1] : interval_ms;

        iv[p] = ms > 0 ? (double)ms / 1000.0 : 0.0;
    }
    free(lt);
    free(l.v);
    return iv;
fail:
    free(lt);
    free(l.v);
    free(iv);
    return NULL;
}

static int newest_cb(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms)
{
    int64_t *newest = arg;

    (void)tick;
    (void)interval_ms;
    if (t_ms > *newest)
        *newest = t_ms;
    return 0;
}

/* The time of the newest tick at or after from_ms, or from_ms when there is none. */
static int64_t newest_tick_ms(struct reader *rd, struct live *live, int64_t from_ms)
{
    int64_t newest = from_ms;
    struct tick *t = live ? live_latest(live) : NULL;

    if (t) {
        newest = t->wall_ms > newest ? t->wall_ms : newest;
        tick_free(t);
        return newest;
    }
    if (rd)
        reader_ticks(rd, from_ms, INT64_MAX, newest_cb, &newest);
    return newest;
}

/* ---- JSON helpers ---- */

static void set_num(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

/* A byte or packet count: an integer, or null. */
static void set_count(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_integer((json_int_t)llround(v)) : json_null());
}

/* A known-or-minus-one integer of the run. */
static void set_known(json_t *o, const char *key, int64_t v)
{
    json_object_set_new(o, key, v >= 0 ? json_integer(v) : json_null());
}

static void set_str(json_t *o, const char *key, const char *s)
{
    json_object_set_new(o, key, s ? json_string(s) : json_null());
}

static void set_time(json_t *o, const char *key, int64_t ms)
{
    char buf[40];

    json_object_set_new(o, key,
                        ms >= 0 ? json_string(tp_format_utc(ms, buf, sizeof(buf))) : json_null());
}

/* The run integral of a rate, or NAN when the window has no value of it. */
static double total(const struct agg *a)
{
    return a->n ? a->integral : NAN;
}

static double peak(const struct agg *a)
{
    return a->n ? a->peak : NAN;
}

/* Distinct instances of obj, other than _Total, in the set's order: calls cb for each. */
static void each_instance(const struct ctx *x, int obj,
                          void (*cb)(const struct ctx *, const char *, void *), void *arg)
{
    for (size_t i = 0; i < x->ns; i++) {
        int seen = 0;

        if (x->s[i].obj != obj || strcmp(x->s[i].inst, "_Total") == 0)
            continue;
        for (size_t j = 0; j < i && !seen; j++)
            seen = x->s[j].obj == obj && strcmp(x->s[j].inst, x->s[i].inst) == 0;
        if (!seen)
            cb(x, x->s[i].inst, arg);
    }
}

/* ---- disks ---- */

struct disk_totals {
    json_t *arr;
    double read, write, tail_write; /* sums over disks, NAN until one has a value */
};

static double add_known(double sum, double v)
{
    if (isnan(v))
        return sum;
    return isnan(sum) ? v : sum + v;
}

static void disk_one(const struct ctx *x, const char *inst, void *arg)
{
    struct disk_totals *t = arg;
    struct agg rd = aggregate(x, find_series(x, OBJ_DISK, inst, "Disk Read Bytes/sec"), W_RUN);
    struct agg wr = aggregate(x, find_series(x, OBJ_DISK, inst, "Disk Write Bytes/sec"), W_RUN);
    struct agg tw = aggregate(x, find_series(x, OBJ_DISK, inst, "Disk Write Bytes/sec"), W_TAIL);
    struct agg ro = aggregate(x, find_series(x, OBJ_DISK, inst, "Disk Reads/sec"), W_RUN);
    struct agg wo = aggregate(x, find_series(x, OBJ_DISK, inst, "Disk Writes/sec"), W_RUN);
    struct agg busy = aggregate(x, find_series(x, OBJ_DISK, inst, "% Disk Time"), W_RUN);
    json_t *d;

    if (!rd.n && !wr.n && !tw.n)
        return; /* a device the log knows but that was not there for this run */
    d = json_object();
    set_str(d, "instance", inst);
    set_count(d, "read_bytes", total(&rd));
    set_count(d, "write_bytes", total(&wr));
    set_count(d, "tail_write_bytes", total(&tw));
    set_num(d, "avg_read_bytes_per_s", agg_avg(&rd));
    set_num(d, "peak_read_bytes_per_s", peak(&rd));
    set_num(d, "avg_write_bytes_per_s", agg_avg(&wr));
    set_num(d, "peak_write_bytes_per_s", peak(&wr));
    set_count(d, "read_ops", total(&ro));
    set_count(d, "write_ops", total(&wo));
    set_num(d, "busy_pct", agg_avg(&busy));
    json_array_append_new(t->arr, d);
    t->read = add_known(t->read, total(&rd));
    t->write = add_known(t->write, total(&wr));
    t->tail_write = add_known(t->tail_write, total(&tw));
}

/* Disks, and the device totals: _Total (whole disks only, so stacked dm/md devices do not count
 * twice) when the log has it, else the sum of the listed devices. */
static json_t *disks_json(const struct ctx *x, struct disk_totals *t)
{
    long tr = find_series(x, OBJ_DISK, "_Total", "Disk Read Bytes/sec");
    long tw = find_series(x, OBJ_DISK, "_Total", "Disk Write Bytes/sec");
    struct agg a = aggregate(x, tr, W_RUN), b = aggregate(x, tw, W_RUN),
               c = aggregate(x, tw, W_TAIL);

    t->arr = json_array();
    t->read = t->write = t->tail_write = NAN;
    each_instance(x, OBJ_DISK, disk_one, t);
    if (a.n || b.n) {
        t->read = total(&a);
        t->write = total(&b);
        t->tail_write = c.n ? c.integral : 0.0;
    }
    return t->arr;
}

/* ---- interfaces ---- */

struct net_totals {
    json_t *arr;
    double packets; /* rx + tx over all listed interfaces, NAN without any */
};

/* Growth of a cumulative count over the run, NAN when unknown or reset. */
static double count_delta(const struct ctx *x, long si)
{
    double a = value_at_start(x, si), b = value_at_end(x, si);

    return isnan(a) || isnan(b) || b < a ? NAN : b - a;
}

static double sum2(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : a + b;
}

static void net_one(const struct ctx *x, const char *inst, void *arg)
{
    struct net_totals *t = arg;
    struct agg rb = aggregate(x, find_series(x, OBJ_NET, inst, "Bytes Received/sec"), W_RUN);
    struct agg tb = aggregate(x, find_series(x, OBJ_NET, inst, "Bytes Sent/sec"), W_RUN);
    struct agg rp = aggregate(x, find_series(x, OBJ_NET, inst, "Packets Received/sec"), W_RUN);
    struct agg tp = aggregate(x, find_series(x, OBJ_NET, inst, "Packets Sent/sec"), W_RUN);
    struct agg bw = aggregate(x, find_series(x, OBJ_NET, inst, "Current Bandwidth"), W_RUN);
    double rx = total(&rb), tx = total(&tb), rxp = total(&rp), txp = total(&tp);
    double rxp_i = round(rxp), txp_i = round(txp), top;
    json_t *n;

    if (!rb.n && !tb.n)
        return;
    n = json_object();
    set_str(n, "instance", inst);
    set_count(n, "rx_bytes", rx);
    set_count(n, "tx_bytes", tx);
    set_count(n, "rx_packets", rxp);
    set_count(n, "tx_packets", txp);
    set_num(n, "rx_bytes_per_packet", rxp_i > 0 ? round(rx) / rxp_i : NAN);
    set_num(n, "tx_bytes_per_packet", txp_i > 0 ? round(tx) / txp_i : NAN);
    set_num(n, "avg_rx_bytes_per_s", agg_avg(&rb));
    set_num(n, "avg_tx_bytes_per_s", agg_avg(&tb));
    set_num(n, "peak_rx_bytes_per_s", peak(&rb));
    set_num(n, "peak_tx_bytes_per_s", peak(&tb));
    set_count(n, "errors",
              sum2(count_delta(x, find_series(x, OBJ_NET, inst, "Packets Received Errors")),
                   count_delta(x, find_series(x, OBJ_NET, inst, "Packets Outbound Errors"))));
    set_count(n, "discards",
              sum2(count_delta(x, find_series(x, OBJ_NET, inst, "Packets Received Discarded")),
                   count_delta(x, find_series(x, OBJ_NET, inst, "Packets Outbound Discarded"))));
    /* the busier direction's peak against the link speed (full duplex: each way has it all) */
    top = fmax(peak(&rb), peak(&tb));
    set_num(n, "bandwidth_bits_per_s", bw.n && bw.peak > 0 ? bw.peak : NAN);
    set_num(n, "peak_bandwidth_pct", bw.n && bw.peak > 0 ? 100.0 * top * 8.0 / bw.peak : NAN);
    json_array_append_new(t->arr, n);
    /* Packets per file count the wire: the loopback carries perflog's own requests to its
     * daemon (the live line, the settle polls); \Network Interface(_Total) leaves it out too. */
    if (strcmp(inst, "lo") != 0)
        t->packets = add_known(t->packets, sum2(rxp_i, txp_i));
}

/* ---- CPU ---- */

struct busiest {
    double avg, priv;
    const char *inst;
};

static void cpu_one(const struct ctx *x, const char *inst, void *arg)
{
    struct busiest *b = arg;
    struct agg a = aggregate(x, find_series(x, OBJ_PROCESSOR, inst, "% Processor Time"), W_RUN);
    struct agg p = aggregate(x, find_series(x, OBJ_PROCESSOR, inst, "% Privileged Time"), W_RUN);
    double avg = agg_avg(&a);

    if (!isnan(avg) && (!b->inst || avg > b->avg)) {
        b->avg = avg;
        b->priv = agg_avg(&p);
        b->inst = inst;
    }
}

static json_t *cpu_json(const struct ctx *x)
{
    struct agg all =
        aggregate(x, find_series(x, OBJ_PROCESSOR, "_Total", "% Processor Time"), W_RUN);
    struct busiest b = {NAN, NAN, NULL};
    json_t *c = json_object(), *bj = json_object();

    each_instance(x, OBJ_PROCESSOR, cpu_one, &b);
    set_num(c, "avg_pct", agg_avg(&all));
    set_str(bj, "instance", b.inst);
    set_num(bj, "avg_pct", b.avg);
    set_num(bj, "privileged_pct", b.priv);
    json_object_set_new(c, "busiest", bj);
    return c;
}

/* ---- memory ---- */

static json_t *memory_json(const struct ctx *x)
{
    long cache = find_series(x, OBJ_MEMORY, "", "Cache Bytes");
    long dirty = find_series(x, OBJ_MEMORY, "", "Dirty Bytes");
    long wb = find_series(x, OBJ_MEMORY, "", "Writeback Bytes");
    struct agg tail =
        aggregate(x, find_series(x, OBJ_MEMORY, "", "Written Back Bytes/sec"), W_TAIL);
    struct agg run = aggregate(x, find_series(x, OBJ_MEMORY, "", "Written Back Bytes/sec"), W_RUN);
    double dirty_start = sum2(value_at_start(x, dirty), value_at_start(x, wb));
    double dirty_end = sum2(value_at_end(x, dirty), value_at_end(x, wb));
    double peak_dirty = NAN;
    json_t *m = json_object();

    for (size_t p = 0; dirty >= 0 && wb >= 0 && p < x->res->npoints; p++)
        if (in_window(x, x->res->ts[p], W_RUN) || in_window(x, x->res->ts[p], W_TAIL))
            peak_dirty = fmax(peak_dirty, sum2(value(x, dirty, p), value(x, wb, p)));
    set_count(m, "cache_growth_bytes", value_at_end(x, cache) - value_at_start(x, cache));
    set_count(m, "dirty_bytes_at_start", dirty_start);
    set_count(m, "dirty_bytes_at_end", dirty_end);
    set_count(m, "peak_dirty_bytes", peak_dirty);
    set_count(m, "writeback_run_bytes", total(&run));
    /* with the counter logged, a tail without a value of it wrote back nothing */
    set_count(m, "writeback_tail_bytes",
              tail.n                                                          ? tail.integral
              : find_series(x, OBJ_MEMORY, "", "Written Back Bytes/sec") >= 0 ? 0.0
                                                                              : NAN);
    return m;
}

/* ---- the run's processes (the Process object) ---- */

/* What the report reads of each process, in this order. */
static const char *const proc_counters[] = {
    "IO Read Bytes/sec",       "IO Write Bytes/sec", "Storage Read Bytes/sec",
    "Storage Write Bytes/sec", "% Processor Time",
};
enum { PC_RCHAR, PC_WCHAR, PC_READ, PC_WRITE, PC_CPU, PC_N };

#define REPORT_PROCESSES_SHOWN 50 /* the busiest processes listed; the count says how many */

/* One process's totals over the run. */
struct proc_totals {
    const char *inst;
    double v[PC_N]; /* bytes for the I/O counters; CPU seconds for PC_CPU */
    double peak_cpu_pct;
};

static int by_io_desc(const void *a, const void *b)
{
    const struct proc_totals *x = a, *y = b;
    double sx =
        (isnan(x->v[PC_RCHAR]) ? 0 : x->v[PC_RCHAR]) + (isnan(x->v[PC_WCHAR]) ? 0 : x->v[PC_WCHAR]);
    double sy =
        (isnan(y->v[PC_RCHAR]) ? 0 : y->v[PC_RCHAR]) + (isnan(y->v[PC_WCHAR]) ? 0 : y->v[PC_WCHAR]);

    return (sx < sy) - (sx > sy);
}

/* The instance name's pid (after the last ':'), or -1. */
static long long inst_pid(const char *inst)
{
    const char *c = strrchr(inst, ':');

    return c && c[1] ? strtoll(c + 1, NULL, 10) : -1;
}

/*
 * "processes": the run's process tree from the stored Process rows, busiest first. *root gets
 * the root process's totals (its I/O includes what its children did once it reaped them), for a
 * run whose client sent no I/O numbers of its own. A database without Process rows (an older
 * schema) gives an empty list.
 */
static json_t *processes_json(struct reader *rd, struct live *live, int64_t interval_ms,
                              const struct report_run *run, int64_t to_ms, size_t *nproc,
                              struct proc_totals *root)
{
    struct series_set set = {0};
    struct data_result res = {0};
    struct data_req req = {.from_ms = run->start_ms - interval_ms,
                           .to_ms = to_ms,
                           .agg = DATA_AVG,
                           .interval_ms = interval_ms};
    struct proc_totals *pt = NULL;
    double *iv = NULL;
    json_t *arr = json_array();
    char err[256];
    size_t n = 0;

    *nproc = 0;
    if (run->pid <= 0 || run->pid > INT32_MAX ||
        report_proc_series(rd, live, (int)run->pid, req.from_ms, to_ms, proc_counters, PC_N, &set,
                           nproc) != 0 ||
        set.n == 0)
        goto out;
    req.max_points = (to_ms - req.from_ms) / interval_ms + 1024;
    if (data_query(rd, live, set.s, set.n, &req, &res, err, sizeof(err)) != 0 ||
        !(iv = point_intervals(rd, live, &res, req.from_ms, to_ms, interval_ms)) ||
        !(pt = calloc(set.n / PC_N + 1, sizeof(*pt))))
        goto out;
    {
        struct ctx x = {
            set.s, set.n, &res, iv, run->start_ms, run->end_ms >= 0 ? run->end_ms : to_ms, to_ms};

        for (size_t i = 0; i + PC_N <= set.n; i += PC_N, n++) {
            pt[n].inst = set.s[i].inst;
            for (size_t c = 0; c < PC_N; c++) {
                struct agg a = aggregate(&x, (long)(i + c), W_RUN);
                pt[n].v[c] = c == PC_CPU && a.n ? a.integral / 100.0 : total(&a);
                if (c == PC_CPU)
                    pt[n].peak_cpu_pct = peak(&a);
            }
            if (inst_pid(pt[n].inst) == run->pid && root)
                *root = pt[n];
        }
    }
    qsort(pt, n, sizeof(*pt), by_io_desc);
    for (size_t i = 0; i < n && i < REPORT_PROCESSES_SHOWN; i++) {
        json_t *o = json_object();

        set_str(o, "instance", pt[i].inst);
        json_object_set_new(o, "pid", json_integer(inst_pid(pt[i].inst)));
        set_count(o, "io_read_bytes", pt[i].v[PC_RCHAR]);
        set_count(o, "io_write_bytes", pt[i].v[PC_WCHAR]);
        set_count(o, "storage_read_bytes", pt[i].v[PC_READ]);
        set_count(o, "storage_write_bytes", pt[i].v[PC_WRITE]);
        set_num(o, "cpu_s", pt[i].v[PC_CPU]);
        set_num(o, "peak_cpu_pct", pt[i].peak_cpu_pct);
        json_array_append_new(arr, o);
    }
    if (root && root->inst) /* the names live in `set`, freed below */
        root->inst = "";
out:
    free(pt);
    free(iv);
    data_result_free(&res);
    series_set_free(&set);
    return arr;
}

/* ---- the run's own numbers ---- */

/* The client's own /proc/self/io deltas when it sent them, else the run's root process's. */
static json_t *process_json(const struct report_run *run, const struct proc_totals *root)
{
    json_t *p = json_object();
    double pct = NAN;

    if (run->io_read_bytes < 0 && root->inst) {
        double rd = root->v[PC_RCHAR], sr = root->v[PC_READ];

        if (rd > 0 && sr >= 0)
            pct = fmin(100.0, fmax(0.0, 100.0 * (rd - sr) / rd));
        set_count(p, "io_read_bytes", rd);
        set_count(p, "storage_read_bytes", sr);
        set_num(p, "cache_served_read_pct", pct);
        set_count(p, "io_write_bytes", root->v[PC_WCHAR]);
        set_count(p, "storage_write_bytes", root->v[PC_WRITE]);
        set_str(p, "source", "process counters");
        return p;
    }
    set_str(p, "source", run->io_read_bytes >= 0 ? "client" : NULL);
    if (run->io_read_bytes > 0 && run->storage_read_bytes >= 0) {
        pct = 100.0 * (double)(run->io_read_bytes - run->storage_read_bytes) /
              (double)run->io_read_bytes;
        pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
    }
    set_known(p, "io_read_bytes", run->io_read_bytes);
    set_known(p, "storage_read_bytes", run->storage_read_bytes);
    set_num(p, "cache_served_read_pct", pct);
    set_known(p, "io_write_bytes", run->io_write_bytes);
    set_known(p, "storage_write_bytes", run->storage_write_bytes);
    return p;
}

/* "followed" and "not_followed_reason" of "process": whether the run's processes were followed
 * at all, so that "processes_followed": 0 is not mistaken for processes that did nothing. */
static void followed_json(json_t *p, const struct report_run *run)
{
    const char *why = NULL;
    json_t *f = json_true();

    if (run->pid <= 0) {
        f = json_false();
        why = "the run gave no pid";
    } else if (run->followed < 0) {
        f = json_false();
        why = run->not_followed_reason && run->not_followed_reason[0]
                  ? run->not_followed_reason
                  : "perflogd could not follow its pid";
    } else if (run->followed == 0) {
        f = json_null();
        why = "perflogd stopped while the run was open; whether its processes were followed is "
              "not known";
    }
    json_object_set_new(p, "followed", f);
    json_object_set_new(p, "not_followed_reason", why ? json_string(why) : json_null());
}

static json_t *payload_json(const struct report_run *run, const struct disk_totals *d,
                            double packets, double duration_s)
{
    json_t *p = json_object();
    double bytes = run->payload_bytes > 0 ? (double)run->payload_bytes : NAN;
    double files = run->files > 0 ? (double)run->files : NAN;
    double written = isnan(d->write) ? NAN : round(d->write);
    double tail = isnan(d->tail_write) ? 0.0 : round(d->tail_write);

    set_known(p, "bytes", run->payload_bytes);
    set_known(p, "files", run->files);
    /* fmin would turn an unknown into 100 */
    set_num(p, "on_disk_at_end_pct",
            100.0 * written / bytes > 100.0 ? 100.0 : 100.0 * written / bytes);
    set_num(p, "write_amplification", (written + tail) / bytes);
    set_num(p, "ms_per_file", duration_s * 1000.0 / files);
    set_num(p, "packets_per_file", packets / files);
    return p;
}

static json_t *tool_json(const struct report_run *run, const struct disk_totals *d,
                         double duration_s)
{
    json_t *t = json_object();
    struct tool_claim c;
    int have = run->tool_output && claims_parse(run->tool_output, strlen(run->tool_output), &c);
    double moved = run->payload_bytes > 0 ? (double)run->payload_bytes : fmax(d->read, d->write);

    set_str(t, "name", have ? c.name : NULL);
    set_num(t, "claimed_bytes_per_s",
            have && c.claimed_bytes_per_s >= 0 ? c.claimed_bytes_per_s : NAN);
    set_count(t, "claimed_bytes", have && c.claimed_bytes >= 0 ? (double)c.claimed_bytes : NAN);
    set_num(t, "claimed_seconds", have && c.claimed_seconds >= 0 ? c.claimed_seconds : NAN);
    set_num(t, "measured_bytes_per_s", duration_s > 0 ? moved / duration_s : NAN);
    return t;
}

/* ---- the report ---- */

static int fetch(struct reader *rd, struct live *live, int64_t interval_ms, int64_t from_ms,
                 int64_t to_ms, struct series_set *set, struct data_result *res, double **iv,
                 char *err, size_t errlen)
{
    struct pattern pats[NPATTERNS];
    struct tick *latest = live ? live_latest(live) : NULL;
    struct data_req req = {
        .from_ms = from_ms, .to_ms = to_ms, .agg = DATA_AVG, .interval_ms = interval_ms};
    int rc;

    for (size_t i = 0; i < NPATTERNS; i++)
        pattern_parse(report_patterns[i], strlen(report_patterns[i]), &pats[i], NULL);
    rc = series_resolve(rd, latest, pats, NPATTERNS, 100000, set);
    tick_free(latest);
    if (rc != 0) {
        snprintf(err, errlen, "resolving the report's counters: %s",
                 rc == -EIO && rd ? reader_errmsg(rd) : strerror(-rc));
        return rc;
    }
    if (set->n == 0)
        return 0;
    req.max_points = (to_ms - from_ms) / interval_ms + 1024;
    rc = data_query(rd, live, set->s, set->n, &req, res, err, errlen);
    if (rc != 0)
        return rc;
    *iv = point_intervals(rd, live, res, from_ms, to_ms, interval_ms);
    if (!*iv) {
        snprintf(err, errlen, "reading the ticks' intervals: %s", rd ? reader_errmsg(rd) : "");
        return -EIO;
    }
    return 0;
}

json_t *report_compute(struct reader *rd, struct live *live, int64_t interval_ms,
                       const struct report_run *run, char *err, size_t errlen)
{
    struct series_set set = {0};
    struct data_result res = {0};
    double *iv = NULL;
    struct ctx x = {0};
    struct disk_totals dt;
    struct net_totals nt = {NULL, NAN};
    int64_t newest, end_ms, tail_to_ms;
    double duration_s, tail_s;
    json_t *r = NULL;
    char host[256];

    if (!run || run->start_ms < 0) {
        snprintf(err, errlen, "the run has no start time");
        return NULL;
    }
    if (interval_ms <= 0)
        interval_ms = 1000;
    newest = run->end_ms >= 0 && run->settled_ms >= 0 ? run->settled_ms
                                                      : newest_tick_ms(rd, live, run->start_ms);
    end_ms = run->end_ms >= 0 ? run->end_ms : newest;
    tail_to_ms = run->settled_ms >= 0 ? run->settled_ms : newest;
    if (tail_to_ms < end_ms)
        tail_to_ms = end_ms;
    if (fetch(rd, live, interval_ms, run->start_ms - interval_ms, tail_to_ms, &set, &res, &iv, err,
              errlen) != 0)
        goto out;
    x = (struct ctx){set.s, set.n, &res, iv, run->start_ms, end_ms, tail_to_ms};
    duration_s = (double)(end_ms - run->start_ms) / 1000.0;
    tail_s = (double)(tail_to_ms - end_ms) / 1000.0;

    r = json_object();
    json_object_set_new(r, "id", json_integer(run->id));
    set_str(r, "label", run->label);
    if (!run->host && rd && reader_host(rd, host, sizeof(host)) == 0)
        set_str(r, "host", host);
    else
        set_str(r, "host", run->host);
    set_str(r, "command", run->command);
    set_str(r, "status", run->status);
    json_object_set_new(r, "exit_code",
                        run->exit_code >= 0 ? json_integer(run->exit_code) : json_null());
    set_time(r, "start_utc", run->start_ms);
    set_time(r, "end_utc", run->end_ms);
    set_time(r, "settled_utc", run->settled_ms);
    set_num(r, "duration_s", duration_s);
    set_num(r, "tail_s", run->end_ms >= 0 ? tail_s : NAN);
    json_object_set_new(r, "disks", disks_json(&x, &dt));
    nt.arr = json_array();
    each_instance(&x, OBJ_NET, net_one, &nt);
    json_object_set_new(r, "interfaces", nt.arr);
    {
        struct agg re =
            aggregate(&x, find_series(&x, OBJ_TCP, "", "Segments Retransmitted/sec"), W_RUN);
        struct agg se = aggregate(&x, find_series(&x, OBJ_TCP, "", "Segments Sent/sec"), W_RUN);
        json_t *t = json_object();

        set_count(t, "retransmitted_segments", total(&re));
        set_count(t, "sent_segments", total(&se));
        json_object_set_new(r, "tcp", t);
    }
    json_object_set_new(r, "cpu", cpu_json(&x));
    json_object_set_new(r, "memory", memory_json(&x));
    {
        struct proc_totals root = {0};
        size_t nproc;
        json_t *procs = processes_json(rd, live, interval_ms, run, tail_to_ms, &nproc, &root);

        json_t *pj = process_json(run, &root);

        followed_json(pj, run);
        json_object_set_new(r, "process", pj);
        json_object_set_new(r, "processes_followed", json_integer((json_int_t)nproc));
        json_object_set_new(r, "processes", procs);
    }
    json_object_set_new(r, "payload", payload_json(run, &dt, nt.packets, duration_s));
    json_object_set_new(r, "tool", tool_json(run, &dt, duration_s));
    set_count(r, "disk_read_bytes", dt.read);
    set_count(r, "disk_write_bytes", dt.write);
    set_count(r, "disk_tail_write_bytes", dt.tail_write);
    report_io_add(r, run);
    json_object_set_new(r, "peers", json_array());
out:
    free(iv);
    data_result_free(&res);
    series_set_free(&set);
    return r;
}

/* ---- text ---- */

struct sbuf {
    char *s;
    size_t n, cap;
    int oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) PERFLOG_PRINTF(2, 3);

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->oom)
        return;
    va_start(ap, fmt);
    n = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (b->n + (size_t)n + 1 > b->cap) {
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *s = realloc(b->s, cap);

        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
        va_start(ap, fmt);
        vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
    }
    b->n += (size_t)n;
}

/* IEC bytes: "512 B", "1.50 KiB", "100.00 MiB"; "?" for unknown. */
static const char *iec(double v, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;

    if (!isfinite(v)) {
        snprintf(buf, cap, "?");
        return buf;
    }
    while (fabs(v) >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%.0f B", v);
    else
        snprintf(buf, cap, "%.2f %s", v, units[u]);
    return buf;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "?";
}

static void text_head(struct sbuf *b, const json_t *r)
{
    const json_t *tool = json_object_get(r, "tool"), *mem = json_object_get(r, "memory");
    const json_t *cpu = json_object_get(r, "cpu"), *bz = json_object_get(cpu, "busiest");
    const json_t *proc = json_object_get(r, "process");
    char a[32], c[32], d[32];

    sb_printf(b, "Run %lld", (long long)num(r, "id"));
    if (json_is_string(json_object_get(r, "label")))
        sb_printf(b, " \"%s\"", str(r, "label"));
    sb_printf(b, " on %s: %s\n", str(r, "host"), str(r, "command"));
    if (json_is_integer(json_object_get(r, "exit_code")))
        snprintf(d, sizeof(d), "%lld", (long long)num(r, "exit_code"));
    else
        snprintf(d, sizeof(d), "unknown");
    sb_printf(b, "  %s -> %s, %.1f s, exit %s\n", str(r, "start_utc"), str(r, "end_utc"),
              num(r, "duration_s"), d);
    sb_printf(b, "Throughput:     measured %s/s", iec(num(tool, "measured_bytes_per_s"), a, 32));
    if (json_is_string(json_object_get(tool, "name")))
        sb_printf(b, ", %s claimed %s/s", str(tool, "name"),
                  iec(num(tool, "claimed_bytes_per_s"), c, 32));
    sb_printf(b, "\n");
    if (isfinite(num(proc, "cache_served_read_pct")))
        sb_printf(b, "Cache-served:   %.1f %% of %s read\n", num(proc, "cache_served_read_pct"),
                  iec(num(proc, "io_read_bytes"), a, 32));
    else
        sb_printf(b, "Cache-served:   unknown\n");
    if (!json_is_true(json_object_get(proc, "followed")) &&
        json_is_string(json_object_get(proc, "not_followed_reason")))
        sb_printf(b, "Processes:      %s%s\n",
                  json_is_false(json_object_get(proc, "followed")) ? "not followed: " : "",
                  str(proc, "not_followed_reason"));
    sb_printf(b, "Dirty at exit:  %s; tail %.1f s, %s written back after exit\n",
              iec(num(mem, "dirty_bytes_at_end"), a, 32), num(r, "tail_s"),
              iec(num(mem, "writeback_tail_bytes"), d, 32));
    if (json_is_string(json_object_get(bz, "instance")))
        sb_printf(b, "Busiest core:   %s at %.1f %% (privileged %.1f %%); all CPUs %.1f %%\n",
                  str(bz, "instance"), num(bz, "avg_pct"), num(bz, "privileged_pct"),
                  num(cpu, "avg_pct"));
}

static void text_details(struct sbuf *b, const json_t *r)
{
    const json_t *pl = json_object_get(r, "payload"), *tcp = json_object_get(r, "tcp"), *v;
    char a[32], c[32], d[32], e[32], f[32];
    size_t i;

    if (isfinite(num(pl, "bytes")))
        sb_printf(b, "Payload:        %s, %.1f %% on disk at exit, write amplification %.2f\n",
                  iec(num(pl, "bytes"), a, 32), num(pl, "on_disk_at_end_pct"),
                  num(pl, "write_amplification"));
    if (isfinite(num(pl, "files")))
        sb_printf(b, "Files:          %.0f, %.2f ms/file, %.1f packets/file\n", num(pl, "files"),
                  num(pl, "ms_per_file"), num(pl, "packets_per_file"));
    sb_printf(b, "\n%-12s %12s %12s %12s %12s %12s %6s\n", "disk", "read", "written", "tail write",
              "avg write/s", "peak write/s", "busy%");
    json_array_foreach(json_object_get(r, "disks"), i, v)
    {
        sb_printf(b, "%-12s %12s %12s %12s %12s %12s %6.1f\n", str(v, "instance"),
                  iec(num(v, "read_bytes"), a, 32), iec(num(v, "write_bytes"), c, 32),
                  iec(num(v, "tail_write_bytes"), d, 32),
                  iec(num(v, "avg_write_bytes_per_s"), e, 32),
                  iec(num(v, "peak_write_bytes_per_s"), f, 32), num(v, "busy_pct"));
    }
    sb_printf(b, "\n%-12s %12s %12s %10s %10s %8s %8s %6s\n", "interface", "received", "sent",
              "rx pkts", "tx pkts", "rx B/pkt", "tx B/pkt", "errors");
    json_array_foreach(json_object_get(r, "interfaces"), i, v)
    {
        sb_printf(b, "%-12s %12s %12s %10.0f %10.0f %8.0f %8.0f %6.0f\n", str(v, "instance"),
                  iec(num(v, "rx_bytes"), a, 32), iec(num(v, "tx_bytes"), c, 32),
                  num(v, "rx_packets"), num(v, "tx_packets"), num(v, "rx_bytes_per_packet"),
                  num(v, "tx_bytes_per_packet"), num(v, "errors"));
    }
    sb_printf(b, "\nTCP: %.0f segments retransmitted of %.0f sent\n",
              num(tcp, "retransmitted_segments"), num(tcp, "sent_segments"));
}

char *report_text(const json_t *report)
{
    struct sbuf b = {0};

    if (!json_is_object(report))
        return NULL;
    text_head(&b, report);
    text_details(&b, report);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
