/*
 * report.c - the run report of docs/design.md §7; see report.h.
 *
 * One raw data_query fetches every counter the report needs over [start - interval, tail end]:
 * points at or before start only give the gauges their level at start (the tick at or just before
 * start_ms, as the settle rule of the runs spec reads it). A tick's rates cover the interval before
 * it, (t - interval, t], so each tick counts in the run (start, end] and in the tail (end, tail
 * end] for the share of its interval inside them: a 1.5 s copy gets the right parts of the two or
 * three ticks around it, and run + tail add up with nothing counted twice. Byte and packet counts
 * integrate rate x that share of the tick's real interval, which gives back the stored deltas over
 * whole ticks; averages are weighted the same way.
 *
 * When the run has its edge readings (report_run.edges: raw counters read at the start, end and
 * settle instants), its totals are their differences instead, exact to the millisecond; rates and
 * peaks stay the ticks'. Levels are changes from the start. The figures of docs/report.md that
 * need a series (the durable moment, the tail's phases) run on the ticks and the edge readings
 * merged into one list of points, in report_figures.c.
 */
#include "daemon/runs/report.h"

#include "base/grow.h"
#include "collectors/model/timeparse.h"
#include "daemon/runs/claims.h"
#include "daemon/runs/report_io.h"
#include "daemon/runs/report_verdict_add.h"
#include "storage/query/data.h"
#include "storage/query/report_proc.h"
#include "storage/query/series.h"

#include <errno.h>
#include <math.h>
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
    "\\SMB Client Shares(*)\\Read Bytes/sec",
    "\\SMB Client Shares(*)\\Write Bytes/sec",
    "\\SMB Client Shares(*)\\Read Requests/sec",
    "\\SMB Client Shares(*)\\Write Requests/sec",
    "\\NFS Client(*)\\Read Bytes/sec",
    "\\NFS Client(*)\\Write Bytes/sec",
    "\\NFS Client(*)\\Ops/sec",
    "\\NFS Client(*)\\Avg. RTT sec/Op",
    "\\NFS Client(*)\\Avg. Execute sec/Op",
    "\\Memory\\Dirty Threshold Bytes",
    "\\Processor(*)\\NET_RX Softirqs/sec",
    "\\Processor(*)\\NET_TX Softirqs/sec",
    "\\Processor(*)\\BLOCK Softirqs/sec",
    "\\Processor(*)\\TIMER Softirqs/sec",
    "\\Processor(*)\\Packets Dropped/sec",
    "\\Processor(*)\\Time Squeezes/sec",
    "\\Pressure\\*",
    "\\PhysicalDisk(*)\\Disk Flushes/sec",
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
    /* The edge readings (report.h): the run's totals come from start -> end (and the tail's from
     * end -> settle) when both readings are there; NULL when absent. */
    const json_t *e_start, *e_end, *e_settle;
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
    if (grow_array(&l->v, &l->cap, l->n, sizeof(*l->v), 256) < 0)
        return -ENOMEM;
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

/* A number member, or NAN when absent or null. */
static double json_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_number(v) ? json_number_value(v) : NAN;
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

/* ---- the edge readings ---- */

/* edge.group[inst].key (inst NULL: edge.group.key) as a double, or NAN when absent. */
static double edge_num(const json_t *edge, const char *group, const char *inst, const char *key)
{
    const json_t *g = json_object_get(edge, group), *v;

    if (inst)
        g = json_object_get(g, inst);
    v = json_object_get(g, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The growth of a raw counter between two readings, NAN when either lacks it or it went down
 * (a reset: the device was replaced between the edges). */
static double edge_delta(const json_t *a, const json_t *b, const char *group, const char *inst,
                         const char *key)
{
    double x = edge_num(a, group, inst, key), y = edge_num(b, group, inst, key);

    return isnan(x) || isnan(y) || y < x ? NAN : y - x;
}

/* Whether the run's totals come from the edges: both the start and the end reading are there. */
static int run_edges(const struct ctx *x)
{
    return x->e_start && x->e_end;
}

/* The tail's totals come from the edges only when the settle reading is there too. */
static int tail_edges(const struct ctx *x)
{
    return x->e_end && x->e_settle;
}

/* An edge total when the window has its readings, else the ticks' integral. */
static double run_total(const struct ctx *x, const char *group, const char *inst, const char *key,
                        const struct agg *ticks)
{
    double v = run_edges(x) ? edge_delta(x->e_start, x->e_end, group, inst, key) : NAN;

    return isnan(v) ? total(ticks) : v;
}

static double tail_total(const struct ctx *x, const char *group, const char *inst, const char *key,
                         const struct agg *ticks)
{
    double v = tail_edges(x) ? edge_delta(x->e_end, x->e_settle, group, inst, key) : NAN;

    return isnan(v) ? total(ticks) : v;
}

/* ---- disks ---- */

struct disk_totals {
    json_t *arr;
    double read, write, tail_write; /* sums over disks, NAN until one has a value */
    double peak_second;             /* the busiest second of the devices (read + write), bytes/s */
    double flushes;                 /* cache flushes of the whole disks in the run; NAN unknown */
    double read_avg; /* without edges: the ticks' average read rate over their own seconds */
};

static double add_known(double sum, double v)
{
    if (isnan(v))
        return sum;
    return isnan(sum) ? v : sum + v;
}

/* The busiest second of read + write on one device over run and tail: the largest sum of the two
 * rates in one tick. */
static double peak_second(const struct ctx *x, long rs, long ws)
{
    double best = NAN;

    for (size_t p = 0; p < x->res->npoints; p++) {
        double v = add_known(rs >= 0 ? value(x, rs, p) : NAN, ws >= 0 ? value(x, ws, p) : NAN);
        int in_run, in_tail;

        overlap_s(x, p, W_RUN, &in_run);
        overlap_s(x, p, W_TAIL, &in_tail);
        if (!isnan(v) && (in_run || in_tail))
            best = isnan(best) || v > best ? v : best;
    }
    return best;
}

/* Stacked devices (device mapper, md RAID) carry the bytes of the disks below them again: the
 * kernel names them dm-N and mdN, and the ticks' _Total leaves them out, as the edge totals do. */
static int stacked(const char *inst)
{
    return strncmp(inst, "dm-", 3) == 0 ||
           (strncmp(inst, "md", 2) == 0 && inst[2] >= '0' && inst[2] <= '9');
}

/* Whether a device counts in the totals: the edge reading says (in_total, as the collector
 * decided for _Total), else its name does. */
static int in_total(const struct ctx *x, const char *inst)
{
    double v = edge_num(x->e_start, "disks", inst, "in_total");

    return isnan(v) ? !stacked(inst) : v == 1;
}

static void disk_one(const struct ctx *x, const char *inst, void *arg)
{
    struct disk_totals *t = arg;
    long rs = find_series(x, OBJ_DISK, inst, "Disk Read Bytes/sec");
    long ws = find_series(x, OBJ_DISK, inst, "Disk Write Bytes/sec");
    long bs = find_series(x, OBJ_DISK, inst, "% Disk Time");
    struct agg rd = aggregate(x, rs, W_RUN), wr = aggregate(x, ws, W_RUN);
    struct agg trd = aggregate(x, rs, W_TAIL), tw = aggregate(x, ws, W_TAIL);
    struct agg ro = aggregate(x, find_series(x, OBJ_DISK, inst, "Disk Reads/sec"), W_RUN);
    struct agg wo = aggregate(x, find_series(x, OBJ_DISK, inst, "Disk Writes/sec"), W_RUN);
    struct agg busy = aggregate(x, bs, W_RUN), tbusy = aggregate(x, bs, W_TAIL);
    struct agg fl = aggregate(x, find_series(x, OBJ_DISK, inst, "Disk Flushes/sec"), W_RUN);
    double r_b, w_b, tw_b, tr_b, busy_ms, tbusy_ms, moved, busy_pct = agg_avg(&busy);
    json_t *d;

    if (!rd.n && !wr.n && !tw.n)
        return; /* a device the log knows but that was not there for this run */
    r_b = run_total(x, "disks", inst, "read_bytes", &rd);
    w_b = run_total(x, "disks", inst, "write_bytes", &wr);
    tw_b = tail_total(x, "disks", inst, "write_bytes", &tw);
    tr_b = tail_total(x, "disks", inst, "read_bytes", &trd);
    /* % Disk Time x seconds / 100 = the seconds the device had I/O in flight */
    busy.integral *= 10.0;
    tbusy.integral *= 10.0;
    busy_ms = run_total(x, "disks", inst, "busy_ms", &busy);
    tbusy_ms = tail_total(x, "disks", inst, "busy_ms", &tbusy);
    moved = add_known(add_known(r_b, w_b), add_known(tw_b, tr_b));
    d = json_object();
    set_str(d, "instance", inst);
    set_count(d, "read_bytes", r_b);
    set_count(d, "write_bytes", w_b);
    set_count(d, "tail_write_bytes", tw_b);
    set_count(d, "tail_read_bytes", tr_b);
    set_num(d, "avg_read_bytes_per_s", agg_avg(&rd));
    set_num(d, "peak_read_bytes_per_s", peak(&rd));
    set_num(d, "avg_write_bytes_per_s", agg_avg(&wr));
    set_num(d, "peak_write_bytes_per_s", peak(&wr));
    set_count(d, "read_ops", run_total(x, "disks", inst, "read_ops", &ro));
    set_count(d, "write_ops", run_total(x, "disks", inst, "write_ops", &wo));
    set_num(d, "busy_pct", busy_pct);
    set_num(d, "busy_s", add_known(busy_ms, tbusy_ms) / 1000.0);
    set_num(d, "device_bytes_per_s",
            add_known(busy_ms, tbusy_ms) > 0 ? moved * 1000.0 / add_known(busy_ms, tbusy_ms) : NAN);
    set_num(d, "peak_second_bytes_per_s", peak_second(x, rs, ws));
    set_count(d, "flushes", total(&fl));
    json_array_append_new(t->arr, d);
    if (!in_total(x, inst))
        return;
    t->flushes = add_known(t->flushes, total(&fl));
    t->read = add_known(t->read, r_b);
    t->write = add_known(t->write, w_b);
    t->tail_write = add_known(t->tail_write, tw_b);
}

/*
 * Disks, and the device totals. With edge readings the totals are the sum of the whole disks'
 * exact edge deltas; from the ticks alone, _Total (whole disks only, so stacked dm/md devices do
 * not count twice) when the log has it, else the sum of the listed devices.
 */
static json_t *disks_json(const struct ctx *x, struct disk_totals *t)
{
    long tr = find_series(x, OBJ_DISK, "_Total", "Disk Read Bytes/sec");
    long tw = find_series(x, OBJ_DISK, "_Total", "Disk Write Bytes/sec");
    struct agg a = aggregate(x, tr, W_RUN), b = aggregate(x, tw, W_RUN),
               c = aggregate(x, tw, W_TAIL);
    size_t i;
    json_t *d;

    t->arr = json_array();
    t->read = t->write = t->tail_write = t->flushes = NAN;
    each_instance(x, OBJ_DISK, disk_one, t);
    t->peak_second = peak_second(x, tr, tw);
    if (isnan(t->peak_second)) /* no _Total: the busiest single device */
        json_array_foreach(t->arr, i, d)
        {
            double v = json_number_value(json_object_get(d, "peak_second_bytes_per_s"));

            if (!stacked(json_string_value(json_object_get(d, "instance"))))
                t->peak_second = isnan(t->peak_second) || v > t->peak_second ? v : t->peak_second;
        }
    /* Whole ticks' bytes over the exact duration would overstate a short run: without edges the
     * read rate is the ticks' bytes over the ticks' own seconds. */
    t->read_avg = !run_edges(x) && a.n ? agg_avg(&a) : NAN;
    if (!run_edges(x) && (a.n || b.n)) {
        t->read = total(&a);
        t->write = total(&b);
    }
    if (!tail_edges(x) && (a.n || b.n))
        t->tail_write = c.n ? c.integral : 0.0;
    return t->arr;
}

/* ---- interfaces ---- */

struct net_totals {
    json_t *arr;
    double packets; /* rx + tx over all listed interfaces, NAN without any */
    double bytes;   /* rx + tx over the interfaces but lo, NAN without any */
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
    double rx = run_total(x, "nics", inst, "rx_bytes", &rb);
    double tx = run_total(x, "nics", inst, "tx_bytes", &tb);
    double rxp = run_total(x, "nics", inst, "rx_packets", &rp);
    double txp = run_total(x, "nics", inst, "tx_packets", &tp);
    double rxp_i = round(rxp), txp_i = round(txp), top, errs, drops;
    json_t *n;

    if (!rb.n && !tb.n)
        return;
    errs = sum2(count_delta(x, find_series(x, OBJ_NET, inst, "Packets Received Errors")),
                count_delta(x, find_series(x, OBJ_NET, inst, "Packets Outbound Errors")));
    drops = sum2(count_delta(x, find_series(x, OBJ_NET, inst, "Packets Received Discarded")),
                 count_delta(x, find_series(x, OBJ_NET, inst, "Packets Outbound Discarded")));
    if (run_edges(x)) {
        double e = sum2(edge_delta(x->e_start, x->e_end, "nics", inst, "rx_errors"),
                        edge_delta(x->e_start, x->e_end, "nics", inst, "tx_errors"));
        double dr = sum2(edge_delta(x->e_start, x->e_end, "nics", inst, "rx_drops"),
                         edge_delta(x->e_start, x->e_end, "nics", inst, "tx_drops"));

        errs = isnan(e) ? errs : e;
        drops = isnan(dr) ? drops : dr;
    }
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
    set_count(n, "errors", errs);
    set_count(n, "discards", drops);
    /* the busier direction's peak against the link speed (full duplex: each way has it all) */
    top = fmax(peak(&rb), peak(&tb));
    set_num(n, "bandwidth_bits_per_s", bw.n && bw.peak > 0 ? bw.peak : NAN);
    set_num(n, "peak_bandwidth_pct", bw.n && bw.peak > 0 ? 100.0 * top * 8.0 / bw.peak : NAN);
    json_array_append_new(t->arr, n);
    /* Packets per file count the wire: the loopback carries perflog's own requests to its
     * daemon (the live line, the settle polls); \Network Interface(_Total) leaves it out too. */
    if (strcmp(inst, "lo") != 0) {
        t->packets = add_known(t->packets, sum2(rxp_i, txp_i));
        t->bytes = add_known(t->bytes, sum2(rx, tx));
    }
}

/* ---- network file systems ---- */

/* The counters of one client object: requests are one or two rates, latencies NFS's only. */
struct netfs_kind {
    int obj;
    const char *kind;
    const char *requests[2]; /* summed; [1] may be NULL */
    const char *rtt, *execute;
};

static const struct netfs_kind netfs_kinds[] = {
    {OBJ_SMB, "smb", {"Read Requests/sec", "Write Requests/sec"}, NULL, NULL},
    {OBJ_NFS, "nfs", {"Ops/sec", NULL}, "Avg. RTT sec/Op", "Avg. Execute sec/Op"},
};

struct netfs_totals {
    json_t *arr;
    const struct netfs_kind *k;
    double nic_bytes; /* the run's bytes on the interfaces but lo */
};

/* The run's mean of a per-operation time: each tick's mean weighted by its operations (rate x
 * interval), so a busy second counts for its calls, not for one second. NAN without calls. */
static double per_op_mean(const struct ctx *x, long s_mean, long s_ops)
{
    double ops = 0, sum = 0;

    if (s_mean < 0 || s_ops < 0)
        return NAN;
    for (size_t p = 0; p < x->res->npoints; p++) {
        double m = value(x, s_mean, p), r = value(x, s_ops, p), ov, n;
        int in;

        ov = overlap_s(x, p, W_RUN, &in);
        if (!in || isnan(m) || isnan(r) || (n = r * ov) <= 0)
            continue;
        ops += n;
        sum += m * n;
    }
    return ops > 0 ? sum / ops : NAN;
}

static void netfs_one(const struct ctx *x, const char *inst, void *arg)
{
    struct netfs_totals *t = arg;
    const struct netfs_kind *k = t->k;
    struct agg rb = aggregate(x, find_series(x, k->obj, inst, "Read Bytes/sec"), W_RUN);
    struct agg wb = aggregate(x, find_series(x, k->obj, inst, "Write Bytes/sec"), W_RUN);
    struct agg rq = aggregate(x, find_series(x, k->obj, inst, k->requests[0]), W_RUN);
    double reqs = total(&rq), bytes;
    long ops = find_series(x, k->obj, inst, k->requests[0]);
    json_t *n;

    if (!rb.n && !wb.n)
        return;
    if (k->requests[1]) {
        struct agg rq2 = aggregate(x, find_series(x, k->obj, inst, k->requests[1]), W_RUN);
        reqs = sum2(reqs, total(&rq2));
    }
    bytes = sum2(total(&rb), total(&wb));
    n = json_object();
    set_str(n, "kind", k->kind);
    set_str(n, "instance", inst);
    set_count(n, "read_bytes", total(&rb));
    set_count(n, "write_bytes", total(&wb));
    set_count(n, "requests", reqs);
    set_num(n, "avg_bytes_per_s", sum2(agg_avg(&rb), agg_avg(&wb)));
    set_num(n, "peak_read_bytes_per_s", peak(&rb));
    set_num(n, "peak_write_bytes_per_s", peak(&wb));
    set_num(n, "bytes_per_request", reqs > 0 ? bytes / reqs : NAN);
    set_num(n, "avg_rtt_s",
            k->rtt ? per_op_mean(x, find_series(x, k->obj, inst, k->rtt), ops) : NAN);
    set_num(n, "avg_execute_s",
            k->execute ? per_op_mean(x, find_series(x, k->obj, inst, k->execute), ops) : NAN);
    set_num(n, "bytes_per_nic_byte", t->nic_bytes > 0 ? bytes / t->nic_bytes : NAN);
    json_array_append_new(t->arr, n);
}

/* Every share and NFS mount with data in the run, its bytes next to the interfaces'. */
static json_t *netfs_json(const struct ctx *x, double nic_bytes)
{
    struct netfs_totals t = {json_array(), NULL, nic_bytes};

    for (size_t i = 0; i < sizeof(netfs_kinds) / sizeof(netfs_kinds[0]); i++) {
        t.k = &netfs_kinds[i];
        each_instance(x, netfs_kinds[i].obj, netfs_one, &t);
    }
    return t.arr;
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

/* CPU seconds of every core but the idle ones (idle, iowait) and steal, which the hypervisor
 * gave to someone else, between two edge readings. */
static double edge_cpu_s(const json_t *a, const json_t *b)
{
    static const char *const busy[] = {"user_ms", "nice_ms", "system_ms", "irq_ms", "softirq_ms"};
    double ms = NAN;

    for (size_t i = 0; i < sizeof(busy) / sizeof(busy[0]); i++)
        ms = add_known(ms, edge_delta(a, b, "cpu", NULL, busy[i]));
    return ms / 1000.0;
}

static void cpu_sum(const struct ctx *x, const char *inst, void *arg)
{
    double *s = arg;
    struct agg a = aggregate(x, find_series(x, OBJ_PROCESSOR, inst, "% Processor Time"), W_RUN);

    if (a.n)
        *s = add_known(*s, a.integral / 100.0);
}

/* The softirqs of the Processor object, in the order of the report's fields. */
static const char *const softirq_names[] = {"NET_RX", "NET_TX", "BLOCK", "TIMER"};
#define NSOFTIRQS (sizeof(softirq_names) / sizeof(softirq_names[0]))

/*
 * The busiest core's softirqs: the kind it raised most in the run (its average per second), and
 * the packets dropped and receive passes squeezed on it. Without the counters (Windows, an older
 * log) the fields are null.
 */
static void softirq_json(const struct ctx *x, const char *inst, json_t *bj)
{
    struct agg drop =
        aggregate(x, find_series(x, OBJ_PROCESSOR, inst, "Packets Dropped/sec"), W_RUN);
    struct agg sq = aggregate(x, find_series(x, OBJ_PROCESSOR, inst, "Time Squeezes/sec"), W_RUN);
    double best = NAN;
    const char *dominant = NULL;

    for (size_t k = 0; k < NSOFTIRQS; k++) {
        char counter[64];
        struct agg a;
        double avg;

        snprintf(counter, sizeof(counter), "%s Softirqs/sec", softirq_names[k]);
        a = aggregate(x, find_series(x, OBJ_PROCESSOR, inst, counter), W_RUN);
        avg = agg_avg(&a);
        if (!isnan(avg) && (!dominant || avg > best)) {
            best = avg;
            dominant = softirq_names[k];
        }
    }
    set_str(bj, "dominant_softirq", dominant);
    set_num(bj, "dominant_softirqs_per_s", best);
    set_count(bj, "dropped_packets", total(&drop));
    set_count(bj, "time_squeezes", total(&sq));
}

static json_t *cpu_json(const struct ctx *x)
{
    struct agg all =
        aggregate(x, find_series(x, OBJ_PROCESSOR, "_Total", "% Processor Time"), W_RUN);
    struct busiest b = {NAN, NAN, NULL};
    json_t *c = json_object(), *bj = json_object();
    double cpu_s = run_edges(x) ? edge_cpu_s(x->e_start, x->e_end) : NAN;

    each_instance(x, OBJ_PROCESSOR, cpu_one, &b);
    if (isnan(cpu_s))
        each_instance(x, OBJ_PROCESSOR, cpu_sum, &cpu_s);
    set_num(c, "avg_pct", agg_avg(&all));
    set_num(c, "cpu_s", cpu_s);
    set_str(bj, "instance", b.inst);
    set_num(bj, "avg_pct", b.avg);
    set_num(bj, "privileged_pct", b.priv);
    if (b.inst)
        softirq_json(x, b.inst, bj);
    json_object_set_new(c, "busiest", bj);
    return c;
}

/* ---- memory: levels relative to the start ---- */

/* A level at the start this high (half the background threshold, else 64 MiB) is someone else's
 * data the kernel has not written yet: the run's figures are changes from it, and say so. */
#define HIGH_START_BYTES (64.0 * 1048576.0)

/* The levels of the run: absolute at the start, the rest relative to it. */
struct levels {
    double start, end;    /* dirty + writeback: absolute at the start, change at the end */
    double peak_excess;   /* largest change over run + tail */
    double peak_dirty;    /* largest absolute dirty + writeback over run + tail */
    double max_run_dirty; /* largest absolute Dirty (without writeback) during the run */
    double threshold, background_threshold; /* the kernel's, bytes; NAN unknown */
    int high_at_start;
    const char *window; /* "edges" or "ticks": where start and end came from */
};

/* Dirty + writeback of an edge reading, or NAN. */
static double edge_dirty(const json_t *e)
{
    return sum2(edge_num(e, "mem", NULL, "dirty_bytes"),
                edge_num(e, "mem", NULL, "writeback_bytes"));
}

/* A threshold of the kernel: the edges' "kernel", else the start reading's "mem". */
static double kernel_num(const struct ctx *x, const json_t *kernel, const char *key)
{
    const json_t *v = json_object_get(kernel, key);

    return json_is_number(v) ? json_number_value(v) : edge_num(x->e_start, "mem", NULL, key);
}

static void levels_find(const struct ctx *x, const json_t *kernel, struct levels *l)
{
    long dirty = find_series(x, OBJ_MEMORY, "", "Dirty Bytes");
    long wb = find_series(x, OBJ_MEMORY, "", "Writeback Bytes");
    double s = edge_dirty(x->e_start), e = edge_dirty(x->e_end);

    l->window = !isnan(s) ? "edges" : "ticks";
    l->start = !isnan(s) ? s : sum2(value_at_start(x, dirty), value_at_start(x, wb));
    e = !isnan(e) && !isnan(s) ? e : sum2(value_at_end(x, dirty), value_at_end(x, wb));
    l->end = e - l->start;
    l->peak_dirty = NAN;
    l->max_run_dirty = edge_num(x->e_end, "mem", NULL, "dirty_bytes");
    for (size_t p = 0; dirty >= 0 && wb >= 0 && p < x->res->npoints; p++) {
        int in_run = in_window(x, x->res->ts[p], W_RUN);

        if (in_run || in_window(x, x->res->ts[p], W_TAIL))
            l->peak_dirty = fmax(l->peak_dirty, sum2(value(x, dirty, p), value(x, wb, p)));
        if (in_run && !isnan(value(x, dirty, p)))
            l->max_run_dirty = fmax(l->max_run_dirty, value(x, dirty, p));
    }
    l->peak_dirty = fmax(l->peak_dirty, fmax(e, edge_dirty(x->e_settle)));
    l->peak_excess = l->peak_dirty - l->start;
    l->threshold = kernel_num(x, kernel, "dirty_threshold_bytes");
    l->background_threshold = kernel_num(x, kernel, "dirty_background_threshold_bytes");
    l->high_at_start = isfinite(l->start) && l->start >= (isfinite(l->background_threshold)
                                                              ? 0.5 * l->background_threshold
                                                              : HIGH_START_BYTES);
}

/* "memory": the levels of the run, and the bytes the kernel wrote back in run and tail. */
static json_t *memory_json(const struct ctx *x, const struct levels *l)
{
    long cache = find_series(x, OBJ_MEMORY, "", "Cache Bytes");
    long wrs = find_series(x, OBJ_MEMORY, "", "Written Back Bytes/sec");
    struct agg tail = aggregate(x, wrs, W_TAIL), run = aggregate(x, wrs, W_RUN);
    double cs = edge_num(x->e_start, "mem", NULL, "cached_bytes");
    double ce = edge_num(x->e_end, "mem", NULL, "cached_bytes");
    json_t *m = json_object();

    /* a level, not a counter: it may go down, so not edge_delta */
    set_count(m, "cache_growth_bytes",
              !isnan(cs) && !isnan(ce) ? ce - cs
                                       : value_at_end(x, cache) - value_at_start(x, cache));
    set_count(m, "dirty_bytes_at_start", l->start);
    json_object_set_new(m, "dirty_high_at_start",
                        isfinite(l->start) ? json_boolean(l->high_at_start) : json_null());
    set_count(m, "dirty_bytes_at_end", l->end);
    set_count(m, "dirty_level_at_end_bytes", l->end + l->start);
    set_count(m, "peak_dirty_bytes", l->peak_dirty);
    set_count(m, "peak_dirty_growth_bytes", l->peak_excess);
    set_count(m, "writeback_run_bytes", run_total(x, "mem", NULL, "written_bytes", &run));
    /* with the counter logged, a tail without a value of it wrote back nothing */
    set_count(m, "writeback_tail_bytes",
              tail_edges(x) ? tail_total(x, "mem", NULL, "written_bytes", &tail)
              : tail.n      ? tail.integral
              : wrs >= 0    ? 0.0
                            : NAN);
    return m;
}

/* ---- stalls: pressure, dirty threshold, flushes ---- */

/*
 * "stalls": the share of the run's time in which some (or all non-idle) tasks waited for I/O,
 * memory or CPU (Linux pressure stall information, interval-weighted over the run's ticks), and
 * the cache flushes the whole disks completed in the run (what fsync costs a small-file copy).
 */
static json_t *stalls_json(const struct ctx *x, const struct disk_totals *d)
{
    static const struct {
        const char *key, *counter;
    } psi[] = {
        {"io_some_pct", "IO Some %"},         {"io_full_pct", "IO Full %"},
        {"memory_some_pct", "Memory Some %"}, {"memory_full_pct", "Memory Full %"},
        {"cpu_some_pct", "CPU Some %"},
    };
    json_t *j = json_object();

    for (size_t i = 0; i < sizeof(psi) / sizeof(psi[0]); i++) {
        struct agg a = aggregate(x, find_series(x, OBJ_PRESSURE, "", psi[i].counter), W_RUN);

        set_num(j, psi[i].key, agg_avg(&a));
    }
    set_count(j, "disk_flushes", d->flushes);
    return j;
}

/* Ticks of the run in which Dirty reached that tick's dirty threshold; -1 without the counters. */
static long throttled_ticks(const struct ctx *x)
{
    long dirty = find_series(x, OBJ_MEMORY, "", "Dirty Bytes");
    long thr = find_series(x, OBJ_MEMORY, "", "Dirty Threshold Bytes");
    long n = -1;

    for (size_t p = 0; dirty >= 0 && thr >= 0 && p < x->res->npoints; p++) {
        double dv = value(x, dirty, p), tv = value(x, thr, p);

        if (!in_window(x, x->res->ts[p], W_RUN) || isnan(dv) || isnan(tv) || tv <= 0)
            continue;
        n = n < 0 ? 0 : n;
        n += dv >= tv;
    }
    return n;
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

/* The run's process tree for the verdict: its summed CPU % at each point of the report's main
 * series (NAN where no process of it had a value), and its busiest process by CPU seconds. */
struct tree_cpu {
    const struct data_result *main;
    double *pct; /* main->npoints, malloc'd; NULL when the run followed no process */
    char top[COUNTER_NAME_MAX];
};

/* Sum the PC_CPU series of the processes (every PC_N-th of res) onto the main points: both
 * queries read the same ticks, so equal timestamps are the same tick. */
static void tree_cpu_sum(const struct data_result *res, size_t nseries, struct tree_cpu *tc)
{
    size_t m = 0;

    if (!tc || !tc->main || !(tc->pct = malloc((tc->main->npoints + 1) * sizeof(double))))
        return;
    for (size_t i = 0; i < tc->main->npoints; i++)
        tc->pct[i] = NAN;
    for (size_t p = 0; p < res->npoints; p++) {
        while (m < tc->main->npoints && tc->main->ts[m] < res->ts[p])
            m++;
        if (m == tc->main->npoints || tc->main->ts[m] != res->ts[p])
            continue;
        for (size_t i = PC_CPU; i < nseries; i += PC_N) {
            double v = res->values[i * res->npoints + p];

            if (!isnan(v))
                tc->pct[m] = (isnan(tc->pct[m]) ? 0 : tc->pct[m]) + v;
        }
    }
}

/*
 * "processes": the run's process tree from the stored Process rows, busiest first. *root gets
 * the root process's totals (its I/O includes what its children did once it reaped them), for a
 * run whose client sent no I/O numbers of its own. A database without Process rows (an older
 * schema) gives an empty list.
 */
static json_t *processes_json(struct reader *rd, struct live *live, int64_t interval_ms,
                              const struct report_run *run, int64_t to_ms, size_t *nproc,
                              struct proc_totals *root, struct tree_cpu *tc)
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
    double tc_best = -1;

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
    tree_cpu_sum(&res, set.n, tc);
    {
        struct ctx x = {
            set.s, set.n, &res, iv,  run->start_ms, run->end_ms >= 0 ? run->end_ms : to_ms,
            to_ms, NULL,  NULL, NULL};

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
            if (tc && pt[n].v[PC_CPU] > tc_best) {
                tc_best = pt[n].v[PC_CPU];
                snprintf(tc->top, sizeof(tc->top), "%s", pt[n].inst);
            }
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

static json_t *tool_json(const struct report_run *run, struct tool_claim *c)
{
    json_t *t = json_object();
    int have = run->tool_output && claims_parse(run->tool_output, strlen(run->tool_output), c);

    if (!have)
        c->claimed_bytes_per_s = -1;
    set_str(t, "name", have ? c->name : NULL);
    set_num(t, "claimed_bytes_per_s",
            have && c->claimed_bytes_per_s >= 0 ? c->claimed_bytes_per_s : NAN);
    set_count(t, "claimed_bytes", have && c->claimed_bytes >= 0 ? (double)c->claimed_bytes : NAN);
    set_num(t, "claimed_seconds", have && c->claimed_seconds >= 0 ? c->claimed_seconds : NAN);
    return t;
}

/* ---- throughput, the tail, the kernel, the headline ---- */

static int by_point_time(const void *a, const void *b)
{
    int64_t x = ((const struct report_point *)a)->t_ms, y = ((const struct report_point *)b)->t_ms;

    return (x > y) - (x < y);
}

/* The devices' write rate of point p: _Total's, else the sum of the whole disks'. */
static double write_rate(const struct ctx *x, long total_ws, size_t p)
{
    double sum = NAN;

    if (total_ws >= 0)
        return value(x, total_ws, p);
    for (size_t i = 0; i < x->ns; i++)
        if (x->s[i].obj == OBJ_DISK && !stacked(x->s[i].inst) &&
            strcmp(counter_objects[OBJ_DISK].counters[x->s[i].counter].name,
                   "Disk Write Bytes/sec") == 0)
            sum = add_known(sum, value(x, (long)i, p));
    return sum;
}

static void add_edge_point(struct report_point *pts, size_t *n, const json_t *e, double start)
{
    const json_t *t = json_object_get(e, "t_ms");

    if (json_is_integer(t) && !isnan(edge_dirty(e)))
        pts[(*n)++] = (struct report_point){json_integer_value(t), edge_dirty(e) - start, NAN, 0};
}

/* The run and its tail as points (ticks after the start, and the end and settle readings),
 * sorted by time; malloc'd, count in *n. */
static struct report_point *points_of(const struct ctx *x, const struct levels *l, size_t *n)
{
    long dirty = find_series(x, OBJ_MEMORY, "", "Dirty Bytes");
    long wb = find_series(x, OBJ_MEMORY, "", "Writeback Bytes");
    long ws = find_series(x, OBJ_DISK, "_Total", "Disk Write Bytes/sec");
    struct report_point *pts = malloc((x->res->npoints + 2) * sizeof(*pts));

    *n = 0;
    if (!pts)
        return NULL;
    for (size_t p = 0; p < x->res->npoints; p++) {
        if (x->res->ts[p] <= x->start_ms || x->res->ts[p] > x->tail_to_ms)
            continue;
        pts[(*n)++] = (struct report_point){
            x->res->ts[p],
            dirty >= 0 && wb >= 0 ? sum2(value(x, dirty, p), value(x, wb, p)) - l->start : NAN,
            write_rate(x, ws, p), x->iv_s[p]};
    }
    add_edge_point(pts, n, x->e_end, l->start);
    add_edge_point(pts, n, x->e_settle, l->start);
    qsort(pts, *n, sizeof(*pts), by_point_time);
    return pts;
}

/* Whether the run wrote to a local disk: its own storage writes when known (the client's, else
 * the followed root process's), else its dirty data rising above the start level. */
static int run_writes(const json_t *process, const struct levels *l)
{
    const json_t *w = json_object_get(process, "storage_write_bytes");

    if (json_is_number(w))
        return json_number_value(w) >= 1048576.0;
    return isfinite(l->peak_excess) && l->peak_excess > report_level_slack(l->peak_excess);
}

struct figures {
    int64_t durable_at_ms;      /* -1 unknown */
    const char *durable_window; /* "edges" when an edge reading bracketed the moment */
    struct report_tail tail;
};

/*
 * When another writer's dirty data keeps the system's level up, the excess never comes back down,
 * but the settle reading may still say the run's own data is on the device (ended_by
 * own_written: the disks wrote the run's storage bytes). Trust it only when the cache agrees: the
 * excess at that reading has fallen from its peak by the run's own bytes, less the slack; the
 * devices' bytes alone may have been someone else's. The settle instant, or -1.
 */
static int64_t durable_by_own(const struct ctx *x, const struct levels *l, double own_bytes,
                              double slack)
{
    const char *by = json_string_value(json_object_get(x->e_settle, "ended_by"));
    const json_t *t = json_object_get(x->e_settle, "t_ms");
    double fell = l->peak_dirty - edge_dirty(x->e_settle);

    if (!by || strcmp(by, "own_written") != 0 || !json_is_integer(t) || !(own_bytes > 0) ||
        !(fell >= own_bytes - slack))
        return -1;
    return json_integer_value(t);
}

static void figures_find(const struct ctx *x, const struct levels *l, int ended, double own_bytes,
                         struct figures *f)
{
    size_t n = 0;
    struct report_point *pts = points_of(x, l, &n);
    double slack;

    f->durable_at_ms = -1;
    f->durable_window = "ticks";
    f->tail = (struct report_tail){NAN, NAN, NAN, NAN, NAN};
    if (!pts)
        return;
    slack = report_level_slack(l->peak_excess);
    if (ended && isfinite(l->start)) {
        f->durable_at_ms = report_durable_at(pts, n, x->end_ms, slack);
        /* an edge reading on either side of the moment bounds it to its own instant */
        for (size_t i = 0; i < n && f->durable_at_ms >= 0; i++)
            if (pts[i].t_ms >= f->durable_at_ms) {
                if (pts[i].iv_s == 0 || (i && pts[i - 1].iv_s == 0))
                    f->durable_window = "edges";
                break;
            }
        if (f->durable_at_ms < 0 &&
            (f->durable_at_ms = durable_by_own(x, l, own_bytes, slack)) >= 0)
            f->durable_window = "edges";
    }
    if (ended)
        report_tail_phases(pts, n, x->end_ms, f->durable_at_ms, slack, &f->tail);
    free(pts);
}

static json_t *throughput_json(const struct report_run *run, const struct tool_claim *c,
                               const struct figures *f, double duration_s)
{
    json_t *t = json_object();
    double bytes = run->payload_bytes > 0 ? (double)run->payload_bytes : NAN;
    double durable_ms = f->durable_at_ms >= 0 ? (double)(f->durable_at_ms - run->start_ms) : NAN;

    set_num(t, "claimed", c->claimed_bytes_per_s >= 0 ? c->claimed_bytes_per_s : NAN);
    set_num(t, "returned", duration_s > 0 ? bytes / duration_s : NAN);
    set_num(t, "durable", durable_ms > 0 ? bytes * 1000.0 / durable_ms : NAN);
    set_count(t, "durable_ms", durable_ms);
    return t;
}

static json_t *tail_json(const struct report_tail *t)
{
    json_t *j = json_object();

    set_count(j, "wait_ms", t->wait_ms);
    set_count(j, "write_ms", t->write_ms);
    set_count(j, "write_bytes", t->write_bytes);
    set_num(j, "write_bytes_per_s", t->write_bytes_per_s);
    set_num(j, "peak_write_bytes_per_s", t->peak_write_bytes_per_s);
    return j;
}

/* "kernel": the writeback settings read at the start edge, and whether the run's writers met the
 * dirty threshold, where the kernel makes writers wait (balance_dirty_pages): in some tick, against
 * that tick's threshold (it moves with free memory), where the log has it; else the run's highest
 * Dirty against the start edge's threshold. */
static json_t *kernel_json(const struct ctx *x, const json_t *kernel, const struct levels *l)
{
    json_t *k = json_is_object(kernel) ? json_deep_copy(kernel) : json_object();
    long ticks = throttled_ticks(x);

    json_object_set_new(k, "throttled_ticks", ticks >= 0 ? json_integer(ticks) : json_null());
    if (ticks > 0)
        json_object_set_new(k, "throttled", json_true());
    else if (isfinite(l->threshold) && l->threshold > 0 && isfinite(l->max_run_dirty))
        json_object_set_new(k, "throttled", json_boolean(l->max_run_dirty >= l->threshold));
    else
        json_object_set_new(k, "throttled", json_null());
    return k;
}

static json_t *headline_json(int writes, const json_t *throughput, const json_t *process,
                             const struct disk_totals *d, double duration_s)
{
    struct report_headline h;
    json_t *j = json_object();

    report_pick_headline(writes, json_num(throughput, "durable"),
                         !isnan(d->read_avg) ? d->read_avg
                         : duration_s > 0    ? d->read / duration_s
                                             : NAN,
                         d->peak_second, &h);
    set_str(j, "kind", h.kind);
    set_num(j, "bytes_per_s", h.bytes_per_s);
    json_object_set_new(j, "capped_at_peak_second", json_boolean(h.capped));
    set_num(j, "device_peak_second_bytes_per_s", d->peak_second);
    set_num(j, "cache_served_read_pct", json_num(process, "cache_served_read_pct"));
    return j;
}

static json_t *windows_json(const struct ctx *x, const struct levels *l, const struct figures *f)
{
    json_t *w = json_object();

    set_str(w, "totals", run_edges(x) ? "edges" : "ticks");
    set_str(w, "tail_totals", tail_edges(x) ? "edges" : "ticks");
    set_str(w, "rates", "ticks");
    set_str(w, "levels", l->window);
    set_str(w, "durable_ms", f->durable_window);
    set_str(w, "tail", "ticks");
    return w;
}

/* ---- the report ---- */

static int fetch(struct reader *rd, struct live *live, int64_t interval_ms, int64_t from_ms,
                 int64_t to_ms, struct series_set *set, struct data_result *res, double **iv,
                 char *err, size_t errlen)
{
    struct pattern pats[NPATTERNS + 32];
    size_t npat = NPATTERNS + report_verdict_npatterns;
    struct tick *latest = live ? live_latest(live) : NULL;
    struct data_req req = {
        .from_ms = from_ms, .to_ms = to_ms, .agg = DATA_AVG, .interval_ms = interval_ms};
    int rc;

    if (npat > sizeof(pats) / sizeof(pats[0]))
        npat = sizeof(pats) / sizeof(pats[0]);
    for (size_t i = 0; i < npat; i++) {
        const char *p = i < NPATTERNS ? report_patterns[i] : report_verdict_patterns[i - NPATTERNS];

        pattern_parse(p, strlen(p), &pats[i], NULL);
    }
    rc = series_resolve(rd, latest, pats, npat, 100000, set);
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
    struct net_totals nt = {NULL, NAN, NAN};
    int64_t newest, end_ms, tail_to_ms;
    double duration_s, tail_s;
    struct levels lv;
    struct figures fig;
    struct tool_claim claim;
    const json_t *kernel;
    json_t *r = NULL, *tp;
    char host[256];
    struct tree_cpu tc = {&res, NULL, ""};

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
    x = (struct ctx){set.s, set.n, &res, iv, run->start_ms, end_ms, tail_to_ms, NULL, NULL, NULL};
    if (json_is_object(run->edges)) {
        x.e_start = json_object_get(run->edges, "start");
        x.e_end = run->end_ms >= 0 ? json_object_get(run->edges, "end") : NULL;
        x.e_settle = x.e_end && run->settled_ms >= 0 ? json_object_get(run->edges, "settle") : NULL;
    }
    kernel = json_object_get(run->edges, "kernel");
    levels_find(&x, kernel, &lv);
    figures_find(&x, &lv, run->end_ms >= 0,
                 run->storage_write_bytes >= 0 ? (double)run->storage_write_bytes : NAN, &fig);
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
    json_object_set_new(r, "netfs", netfs_json(&x, nt.bytes));
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
    json_object_set_new(r, "memory", memory_json(&x, &lv));
    {
        struct proc_totals root = {0};
        size_t nproc;
        json_t *procs = processes_json(rd, live, interval_ms, run, tail_to_ms, &nproc, &root, &tc);

        json_t *pj = process_json(run, &root);

        followed_json(pj, run);
        json_object_set_new(r, "process", pj);
        json_object_set_new(r, "processes_followed", json_integer((json_int_t)nproc));
        json_object_set_new(r, "processes", procs);
    }
    json_object_set_new(r, "payload", payload_json(run, &dt, nt.packets, duration_s));
    json_object_set_new(r, "tool", tool_json(run, &claim));
    tp = throughput_json(run, &claim, &fig, duration_s);
    json_object_set_new(r, "headline",
                        headline_json(run_writes(json_object_get(r, "process"), &lv), tp,
                                      json_object_get(r, "process"), &dt, duration_s));
    json_object_set_new(r, "throughput", tp);
    json_object_set_new(r, "tail", tail_json(&fig.tail));
    json_object_set_new(r, "kernel", kernel_json(&x, kernel, &lv));
    json_object_set_new(r, "stalls", stalls_json(&x, &dt));
    json_object_set_new(r, "windows", windows_json(&x, &lv, &fig));
    set_count(r, "disk_read_bytes", dt.read);
    set_count(r, "disk_write_bytes", dt.write);
    set_count(r, "disk_tail_write_bytes", dt.tail_write);
    report_io_add(r, run);
    json_object_set_new(r, "peers", json_array());
    {
        int64_t cal_id = -1;
        char *cal_text = NULL;
        json_t *cal = rd && reader_labelled_report(rd, REPORT_CALIBRATION_LABEL, run->start_ms,
                                                   &cal_id, &cal_text) == 0
                          ? json_loads(cal_text, 0, NULL)
                          : NULL;
        struct report_verdict_src vs = {.s = set.s,
                                        .ns = set.n,
                                        .res = &res,
                                        .iv_s = iv,
                                        .tree_cpu_pct = tc.pct,
                                        .tree_top = tc.top[0] ? tc.top : NULL,
                                        .start_ms = run->start_ms,
                                        .end_ms = end_ms,
                                        .tail_to_ms = tail_to_ms,
                                        .ended = run->end_ms >= 0,
                                        .calibration = cal,
                                        .calibration_id = cal_id};

        report_verdict_add(r, &vs);
        json_decref(cal);
        free(cal_text);
    }
out:
    free(tc.pct);
    free(iv);
    data_result_free(&res);
    series_set_free(&set);
    return r;
}
