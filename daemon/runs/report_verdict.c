/*
 * report_verdict.c - what limited a copy run (report_verdict.h; docs/report.md, "The verdict").
 *
 * Every candidate resource gets a utilisation over the window (how close it ran to its limit,
 * 0..1) and a rule that says whether it was the limit. When several rules hold, the first in
 * `order` wins: per-file overhead and writeback throttling come before the disk, because they
 * explain why the disk is busy (a flush per file; the kernel making the writer wait for the
 * device), and the tool's CPU comes before its core for the same reason. Each tick is classified
 * by the per-second form of the same rules, and runs of equal ticks become the phases.
 */
#include "daemon/runs/report_verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define INST_MAX 128

struct cand {
    const char *limit; /* static; NULL: no candidate of this kind */
    char inst[INST_MAX];
    double util;      /* NAN: not measured */
    int hit;          /* the rule holds */
    const char *rule; /* static: which form of the rule */
    json_t *evidence; /* owned */
};

/* ---- the series ---- */

static int in_window(const struct verdict_in *in, size_t i)
{
    double iv = in->iv_s ? in->iv_s[i] : 1.0;

    return in->t_ms[i] > in->from_ms && (double)in->t_ms[i] - iv * 1000.0 < (double)in->to_ms;
}

/* The seconds of tick i inside the window: a tick that straddles the start or the end counts
 * for its part, so that the idle part of its second does not dilute a short run's averages. */
static double tick_s(const struct verdict_in *in, size_t i)
{
    double iv = in->iv_s && in->iv_s[i] > 0 ? in->iv_s[i] : 1.0;
    double to = (double)in->t_ms[i], from = to - iv * 1000.0;

    from = from < (double)in->from_ms ? (double)in->from_ms : from;
    to = to > (double)in->to_ms ? (double)in->to_ms : to;
    return to > from ? (to - from) / 1000.0 : 0.0;
}

/* The series of "\Object(inst)\counter" (inst NULL: a single-instance object), or NULL. */
static const double *find(const struct verdict_in *in, const char *obj, const char *inst,
                          const char *counter)
{
    char path[512];

    if (inst)
        snprintf(path, sizeof(path), "\\%s(%s)\\%s", obj, inst, counter);
    else
        snprintf(path, sizeof(path), "\\%s\\%s", obj, counter);
    for (size_t i = 0; i < in->ns; i++)
        if (strcmp(in->s[i].path, path) == 0)
            return in->s[i].v;
    return NULL;
}

/* The instance of series k if it is "\obj(INST)\counter", into buf; 0 when it is not. */
static int instance_of(const struct verdict_in *in, size_t k, const char *obj, const char *counter,
                       char *buf, size_t cap)
{
    const char *p = in->s[k].path, *open, *close;
    size_t olen = strlen(obj), clen = strlen(counter), plen = strlen(p);

    if (p[0] != '\\' || strncmp(p + 1, obj, olen) != 0 || p[1 + olen] != '(')
        return 0;
    open = p + 1 + olen;
    if (plen < clen + 2 || strcmp(p + plen - clen, counter) != 0 || p[plen - clen - 1] != '\\' ||
        p[plen - clen - 2] != ')')
        return 0;
    close = p + plen - clen - 2;
    if ((size_t)(close - open - 1) >= cap)
        return 0;
    memcpy(buf, open + 1, (size_t)(close - open - 1));
    buf[close - open - 1] = '\0';
    return strcmp(buf, "_Total") != 0;
}

/* What one series did over the window: interval-weighted mean, peak, seconds at or above `at`. */
struct stat {
    double avg, peak, integral, secs, secs_at;
};

static struct stat stat_of(const struct verdict_in *in, const double *v, double at)
{
    struct stat s = {NAN, NAN, 0, 0, 0};

    for (size_t i = 0; v && i < in->n; i++) {
        if (!in_window(in, i) || isnan(v[i]))
            continue;
        s.integral += v[i] * tick_s(in, i);
        s.secs += tick_s(in, i);
        s.peak = isnan(s.peak) || v[i] > s.peak ? v[i] : s.peak;
        if (v[i] >= at)
            s.secs_at += tick_s(in, i);
    }
    if (s.secs > 0)
        s.avg = s.integral / s.secs;
    return s;
}

/*
 * A time per operation over the window (Avg. Disk sec/Write, with rate its Disk Writes/sec): the
 * ticks' total time over their operations, a tick's operations being its rate times its seconds
 * in the window, as the roll-ups average it (docs/schema.md); 0 when no operation completed. A
 * mean over the ticks would count each second without a write as 0 s. secs: the seconds with a
 * value of both; peak: the highest tick. NAN without both series.
 */
static struct stat per_op_of(const struct verdict_in *in, const double *v, const double *rate)
{
    struct stat s = {NAN, NAN, 0, 0, 0};
    double ops = 0.0;

    for (size_t i = 0; v && rate && i < in->n; i++) {
        double o;

        if (!in_window(in, i) || isnan(v[i]) || isnan(rate[i]))
            continue;
        o = rate[i] * tick_s(in, i);
        s.integral += v[i] * o;
        ops += o;
        s.secs += tick_s(in, i);
        s.peak = isnan(s.peak) || v[i] > s.peak ? v[i] : s.peak;
    }
    if (s.secs > 0)
        s.avg = ops > 0 ? s.integral / ops : 0.0;
    return s;
}

static double window_s(const struct verdict_in *in)
{
    double s = 0;

    for (size_t i = 0; i < in->n; i++)
        if (in_window(in, i))
            s += tick_s(in, i);
    return s;
}

/* ---- evidence ---- */

static void evidence(struct cand *c, const char *figure, double value, const char *unit,
                     double seconds)
{
    json_t *e = json_object();

    if (!c->evidence)
        c->evidence = json_array();
    json_object_set_new(e, "figure", json_string(figure));
    json_object_set_new(e, "value", isfinite(value) ? json_real(value) : json_null());
    json_object_set_new(e, "unit", json_string(unit));
    json_object_set_new(e, "seconds", json_real(isfinite(seconds) ? seconds : 0));
    if (!isfinite(value))
        json_object_set_new(e, "note", json_string("not measured"));
    json_array_append_new(c->evidence, e);
}

static void cand_take(struct cand *best, struct cand *c)
{
    int better = c->limit && (!best->limit || (c->hit && !best->hit) ||
                              (c->hit == best->hit && isfinite(c->util) &&
                               (!isfinite(best->util) || c->util > best->util)));

    if (better) {
        json_decref(best->evidence);
        *best = *c;
    } else {
        json_decref(c->evidence);
    }
    *c = (struct cand){0};
}

/* ---- the rules ---- */

static void disk_one(const struct verdict_in *in, const char *d, struct cand *c)
{
    struct stat busy = stat_of(in, find(in, "PhysicalDisk", d, "% Disk Time"), 100 * VERDICT_BUSY);
    const double *qv = find(in, "PhysicalDisk", d, "Avg. Disk Queue Length");
    struct stat q = stat_of(in, qv, 0);
    struct stat rl = per_op_of(in, find(in, "PhysicalDisk", d, "Avg. Disk sec/Read"),
                               find(in, "PhysicalDisk", d, "Disk Reads/sec"));
    struct stat wl = per_op_of(in, find(in, "PhysicalDisk", d, "Avg. Disk sec/Write"),
                               find(in, "PhysicalDisk", d, "Disk Writes/sec"));
    struct stat fl = stat_of(in, find(in, "PhysicalDisk", d, "Disk Flushes/sec"), 0);
    struct stat psi = stat_of(in, find(in, "Pressure", NULL, "IO Some %"), 0);
    int at_ceiling;

    if (isnan(busy.avg))
        return;
    q = stat_of(in, qv, VERDICT_BUSY * q.peak);
    /* A queue held at its highest for most of the window (and for some seconds, so that one
     * tick is not a ceiling): the device took no more. */
    at_ceiling = q.peak >= 1.0 && q.secs_at >= VERDICT_QUEUE_S && q.secs_at >= 0.5 * q.secs;
    c->limit = "disk";
    snprintf(c->inst, sizeof(c->inst), "%s", d);
    c->util = busy.avg / 100.0;
    c->hit = c->util >= VERDICT_BUSY || at_ceiling;
    c->rule = c->util >= VERDICT_BUSY ? "busy" : "queue at its ceiling";
    evidence(c, "busy_pct", busy.avg, "%", busy.secs_at);
    evidence(c, "avg_queue_length", q.avg, "requests", q.secs_at);
    evidence(c, "avg_write_latency_s", wl.avg, "s", wl.secs);
    evidence(c, "avg_read_latency_s", rl.avg, "s", rl.secs);
    evidence(c, "flushes_per_s", fl.avg, "ops/s", fl.secs);
    evidence(c, "pressure_io_some_pct", psi.avg, "%", psi.secs);
}

/* The best candidate of `one` over every instance that has a series "\obj(INST)\counter". */
static void each_cand(const struct verdict_in *in, const char *obj, const char *counter,
                      void (*one)(const struct verdict_in *, const char *, struct cand *),
                      struct cand *best)
{
    char inst[INST_MAX];

    for (size_t k = 0; k < in->ns; k++) {
        struct cand c = {0};

        if (!instance_of(in, k, obj, counter, inst, sizeof(inst)))
            continue;
        one(in, inst, &c);
        cand_take(best, &c);
    }
}

/* An interface's ceiling in bytes/s: its link speed, else a calibration run's peak. */
static double wire_ceiling(const struct verdict_in *in, const char *nic, const char **source)
{
    struct stat bw = stat_of(in, find(in, "Network Interface", nic, "Current Bandwidth"), 0);

    if (isfinite(bw.peak) && bw.peak > 0) {
        *source = "Current Bandwidth";
        return bw.peak / 8.0;
    }
    for (size_t i = 0; i < in->nceil; i++)
        if (strcmp(in->ceil[i].inst, nic) == 0 && in->ceil[i].bytes_per_s > 0) {
            *source = in->ceil[i].source;
            return in->ceil[i].bytes_per_s;
        }
    *source = NULL;
    return NAN;
}

/* The busier direction of an interface in tick i, bytes/s (NAN: unknown). */
static double wire_tick(const double *rx, const double *tx, size_t i)
{
    double r = rx ? rx[i] : NAN, t = tx ? tx[i] : NAN;

    if (isnan(r))
        return t;
    return isnan(t) || r > t ? r : t;
}

static void wire_one(const struct verdict_in *in, const char *nic, struct cand *c)
{
    const double *rx = find(in, "Network Interface", nic, "Bytes Received/sec");
    const double *tx = find(in, "Network Interface", nic, "Bytes Sent/sec");
    const char *source;
    double ceil = wire_ceiling(in, nic, &source), sum = 0, secs = 0, at = 0, peak = 0;
    char fig[160];

    for (size_t i = 0; i < in->n; i++) {
        double b = wire_tick(rx, tx, i);

        if (!in_window(in, i) || isnan(b))
            continue;
        sum += b * tick_s(in, i);
        secs += tick_s(in, i);
        peak = b > peak ? b : peak;
        if (isfinite(ceil) && b >= VERDICT_BUSY * ceil)
            at += tick_s(in, i);
    }
    if (secs <= 0)
        return;
    c->limit = "wire";
    snprintf(c->inst, sizeof(c->inst), "%s", nic);
    c->util = isfinite(ceil) ? sum / secs / ceil : NAN;
    c->hit = isfinite(c->util) && c->util >= VERDICT_BUSY;
    c->rule = "share of the ceiling";
    evidence(c, "bytes_per_s", sum / secs, "bytes/s", secs);
    evidence(c, "peak_bytes_per_s", peak, "bytes/s", 1);
    snprintf(fig, sizeof(fig), "ceiling_bytes_per_s (%s)", source ? source : "no link speed");
    evidence(c, fig, ceil, "bytes/s", at);
}

/* The kind of a core's busy time, and for softirq which one (by the counters when present). */
static const char *core_kind(const struct verdict_in *in, const char *core, struct cand *c)
{
    static const char *const si[] = {"NET_RX", "NET_TX", "BLOCK", "TIMER"};
    struct stat u = stat_of(in, find(in, "Processor", core, "% User Time"), 0);
    struct stat p = stat_of(in, find(in, "Processor", core, "% Privileged Time"), 0);
    struct stat irq = stat_of(in, find(in, "Processor", core, "% Interrupt Time"), 0);
    struct stat dpc = stat_of(in, find(in, "Processor", core, "% DPC Time"), 0);
    double kernel = p.avg - (isnan(irq.avg) ? 0 : irq.avg) - (isnan(dpc.avg) ? 0 : dpc.avg);
    const char *kind = "user", *top = NULL;
    double best = -1, top_rate = NAN;
    char fig[64];

    evidence(c, "user_pct", u.avg, "%", u.secs);
    evidence(c, "kernel_pct", kernel, "%", p.secs);
    evidence(c, "irq_pct", irq.avg, "%", irq.secs);
    evidence(c, "softirq_pct", dpc.avg, "%", dpc.secs);
    if (!isnan(u.avg))
        best = u.avg;
    if (!isnan(kernel) && kernel > best)
        best = kernel, kind = "kernel";
    if (!isnan(irq.avg) && irq.avg > best)
        best = irq.avg, kind = "irq";
    if (!isnan(dpc.avg) && dpc.avg > best)
        kind = "softirq";
    if (strcmp(kind, "softirq") != 0)
        return kind;
    for (size_t i = 0; i < sizeof(si) / sizeof(si[0]); i++) {
        snprintf(fig, sizeof(fig), "%s Softirqs/sec", si[i]);
        struct stat r = stat_of(in, find(in, "Processor", core, fig), 0);

        if (!isnan(r.avg) && (isnan(top_rate) || r.avg > top_rate))
            top_rate = r.avg, top = si[i];
    }
    snprintf(fig, sizeof(fig), "dominant_softirq %s", top ? top : "-");
    evidence(c, fig, top_rate, "softirqs/s", 0);
    return top ? top : "softirq";
}

static void core_cand(const struct verdict_in *in, struct cand *best)
{
    char core[INST_MAX], other[INST_MAX];

    for (size_t k = 0; k < in->ns; k++) {
        struct cand c = {0};
        struct stat busy;
        double others = 0;

        if (!instance_of(in, k, "Processor", "% Processor Time", core, sizeof(core)))
            continue;
        busy = stat_of(in, in->s[k].v, 100 * VERDICT_BUSY);
        if (isnan(busy.avg))
            continue;
        for (size_t j = 0; j < in->ns; j++) {
            struct stat o;

            if (j == k ||
                !instance_of(in, j, "Processor", "% Processor Time", other, sizeof(other)))
                continue;
            o = stat_of(in, in->s[j].v, 0);
            others = !isnan(o.avg) && o.avg > others ? o.avg : others;
        }
        c.limit = "core";
        snprintf(c.inst, sizeof(c.inst), "%s", core);
        c.util = busy.avg / 100.0;
        c.hit = c.util >= VERDICT_BUSY && others < 100.0 * VERDICT_IDLE;
        evidence(&c, "busy_pct", busy.avg, "%", busy.secs_at);
        evidence(&c, "busiest_other_core_pct", others, "%", busy.secs);
        c.rule = core_kind(in, core, &c);
        cand_take(best, &c);
    }
}

static void tool_cand(const struct verdict_in *in, struct cand *c)
{
    struct stat cpu = stat_of(in, in->tree_cpu_pct, 100 * VERDICT_BUSY);

    if (isnan(cpu.avg))
        return;
    c->limit = "tool";
    snprintf(c->inst, sizeof(c->inst), "%s", in->tree_top ? in->tree_top : "");
    c->util = cpu.avg / 100.0;
    if (c->util >= VERDICT_BUSY) {
        c->hit = 1;
        c->rule = cpu.avg < 150.0 ? "CPU-bound at one thread" : "CPU-bound";
    } else if (cpu.avg < VERDICT_IDLE_TOOL_PCT && isfinite(in->tree_io_bytes) &&
               in->tree_io_bytes >= VERDICT_IDLE_TOOL_IO) {
        c->hit = 2; /* weaker: taken only when no resource is the limit */
        c->rule = "idle waiting";
    }
    evidence(c, "tree_cpu_pct", cpu.avg, "%", cpu.secs_at);
    evidence(c, "tree_peak_cpu_pct", cpu.peak, "%", 1);
    evidence(c, "tree_io_bytes", in->tree_io_bytes, "bytes", cpu.secs);
}

/* The dirty limit and the floor of the band in which the kernel holds writers, for tick i. */
static void dirty_limits(const struct verdict_in *in, size_t i, double *thresh, double *floor)
{
    const double *tv = find(in, "Memory", NULL, "Dirty Threshold Bytes");
    const double *bv = find(in, "Memory", NULL, "Dirty Background Threshold Bytes");
    double t = tv && !isnan(tv[i]) ? tv[i] : in->dirty_threshold_bytes;
    double b = bv && !isnan(bv[i]) ? bv[i] : in->dirty_background_threshold_bytes;

    /* mm/page-writeback.c, domain_dirty_limits(): a background limit at or above the limit is
     * halved. From the background limit up the flusher writes, and balance_dirty_pages()
     * pauses the writers from the midpoint of the two limits up: a writer faster than the
     * device holds the level in that band (measured: 8-14 MiB with limits of 8 and 16 MiB,
     * sampled every 100 ms). A tick within VERDICT_BUSY of the background limit or above
     * counts as throttled. */
    if (isfinite(t) && (!isfinite(b) || b >= t))
        b = t / 2.0;
    *thresh = t;
    *floor = isfinite(t) ? VERDICT_BUSY * b : NAN;
}

/* Whether tick i had Dirty + Writeback in the throttling band; -1: not known. */
static int throttled_tick(const struct verdict_in *in, size_t i, double *level, double *thresh)
{
    const double *d = find(in, "Memory", NULL, "Dirty Bytes");
    const double *w = find(in, "Memory", NULL, "Writeback Bytes");
    double floor;

    dirty_limits(in, i, thresh, &floor);
    if (!d || isnan(d[i]) || !isfinite(floor))
        return -1;
    *level = d[i] + (w && !isnan(w[i]) ? w[i] : 0);
    return *level >= floor;
}

static void writeback_cand(const struct verdict_in *in, struct cand *c)
{
    double secs = 0, at = 0, peak = NAN, thresh = NAN, level, th, run_s = window_s(in);
    struct stat psi = stat_of(in, find(in, "Pressure", NULL, "IO Some %"), 0);

    for (size_t i = 0; i < in->n; i++) {
        int t;

        if (!in_window(in, i) || (t = throttled_tick(in, i, &level, &th)) < 0)
            continue;
        secs += tick_s(in, i);
        at += t ? tick_s(in, i) : 0;
        if (isnan(peak) || level / th > peak)
            peak = level / th, thresh = th;
    }
    c->limit = "writeback";
    c->util = secs > 0 ? at / secs : NAN; /* the share of the window spent throttled */
    c->rule = "throttled at the dirty threshold";
    c->hit = secs > 0 && at >= VERDICT_THROTTLED * secs;
    if (!c->hit && isfinite(in->tail_ms) && in->tail_ms > run_s * 1000.0) {
        c->hit = 1;
        c->rule = "tail longer than the run";
    }
    evidence(c, "throttled_seconds", secs > 0 ? at : NAN, "s", at);
    evidence(c, "dirty_threshold_bytes", thresh, "bytes", secs);
    evidence(c, "peak_dirty_share_of_threshold", peak, "", secs);
    evidence(c, "tail_ms", in->tail_ms, "ms", isfinite(in->tail_ms) ? in->tail_ms / 1000.0 : 0);
    evidence(c, "pressure_io_some_pct", psi.avg, "%", psi.secs);
}

/* Softnet drops summed over the cores (NAN when no core has the counter). */
static double drops_of(const struct verdict_in *in, const char *counter, double *secs)
{
    char core[INST_MAX];
    double sum = NAN;

    for (size_t k = 0; k < in->ns; k++) {
        struct stat s;

        if (!instance_of(in, k, "Processor", counter, core, sizeof(core)))
            continue;
        s = stat_of(in, in->s[k].v, 0);
        if (s.secs > 0) {
            sum = (isnan(sum) ? 0 : sum) + s.integral;
            *secs = s.secs;
        }
    }
    return sum;
}

static void retrans_cand(const struct verdict_in *in, struct cand *c)
{
    struct stat re = stat_of(in, find(in, "TCP", NULL, "Segments Retransmitted/sec"), 0);
    struct stat se = stat_of(in, find(in, "TCP", NULL, "Segments Sent/sec"), 0);
    double dsecs = 0, qsecs = 0, drops = drops_of(in, "Packets Dropped/sec", &dsecs);
    double squeezes = drops_of(in, "Time Squeezes/sec", &qsecs);
    double share = se.secs > 0 && se.integral > 0 ? re.integral / se.integral : NAN;

    c->limit = "retransmits";
    c->util = share;
    c->rule = "retransmitted share";
    c->hit = isfinite(share) && se.integral >= VERDICT_MIN_SEGS && share >= VERDICT_RETRANS;
    if (!c->hit && isfinite(drops) && drops >= VERDICT_DROPS) {
        c->hit = 1;
        c->rule = "softnet drops";
    }
    evidence(c, "retransmitted_share", share, "", re.secs);
    evidence(c, "sent_segments", se.secs > 0 ? se.integral : NAN, "segments", se.secs);
    evidence(c, "softnet_drops", drops, "packets", dsecs);
    evidence(c, "softnet_time_squeezes", squeezes, "events", qsecs);
}

/* The busiest second (bytes/s) of the series a and b summed (add) or their larger (!add). */
static double busiest_pair(const struct verdict_in *in, const double *a, const double *b, int add)
{
    double best = 0;

    for (size_t i = 0; i < in->n; i++) {
        double x = a && !isnan(a[i]) ? a[i] : 0, y = b && !isnan(b[i]) ? b[i] : 0;
        double v = add ? x + y : (x > y ? x : y);

        if (in_window(in, i) && v > best)
            best = v;
    }
    return best;
}

/* The busiest second of any disk (read + write) or interface (busier direction), bytes/s. */
static double best_rate(const struct verdict_in *in)
{
    char inst[INST_MAX];
    double best = 0, v;

    for (size_t k = 0; k < in->ns; k++) {
        if (instance_of(in, k, "PhysicalDisk", "Disk Read Bytes/sec", inst, sizeof(inst)))
            v = busiest_pair(in, in->s[k].v, find(in, "PhysicalDisk", inst, "Disk Write Bytes/sec"),
                             1);
        else if (instance_of(in, k, "Network Interface", "Bytes Received/sec", inst, sizeof(inst)))
            v = busiest_pair(in, in->s[k].v, find(in, "Network Interface", inst, "Bytes Sent/sec"),
                             0);
        else
            continue;
        best = v > best ? v : best;
    }
    return best;
}

static void per_file_cand(const struct verdict_in *in, struct cand *c)
{
    double run_s = (double)(in->to_ms - in->from_ms) / 1000.0, rate, data_s;

    if (!isfinite(in->files) || !isfinite(in->payload_bytes) || in->files <= 0 || run_s <= 0)
        return;
    rate = best_rate(in);
    /* The payload at the run's own busiest second takes data_s; the rest of the run went to
     * the work each file costs whatever its size (open, create, fsync, close, a round trip). */
    data_s = rate > 0 ? in->payload_bytes / rate : 0;
    c->limit = "per_file";
    c->util = data_s < run_s ? 1.0 - data_s / run_s : 0.0;
    c->rule = "time not spent moving bytes";
    c->hit = in->files >= VERDICT_MIN_FILES && c->util >= VERDICT_PER_FILE;
    evidence(c, "ms_per_file", 1000.0 * run_s / in->files, "ms", run_s);
    evidence(c, "packets_per_file", isfinite(in->packets) ? in->packets / in->files : NAN,
             "packets", run_s);
    evidence(c, "bytes_per_file", in->payload_bytes / in->files, "bytes", 0);
    evidence(c, "data_s_at_busiest_second", data_s, "s", data_s);
}

/* ---- the verdict ---- */

enum { C_PER_FILE, C_WRITEBACK, C_RETRANS, C_WIRE, C_DISK, C_TOOL, C_CORE, C_N };

static void candidates(const struct verdict_in *in, struct cand *c)
{
    per_file_cand(in, &c[C_PER_FILE]);
    writeback_cand(in, &c[C_WRITEBACK]);
    retrans_cand(in, &c[C_RETRANS]);
    each_cand(in, "Network Interface", "Bytes Received/sec", wire_one, &c[C_WIRE]);
    each_cand(in, "PhysicalDisk", "% Disk Time", disk_one, &c[C_DISK]);
    tool_cand(in, &c[C_TOOL]);
    core_cand(in, &c[C_CORE]);
}

/* The first candidate in order whose rule holds (the tool's "idle waiting" last), or -1. */
static int pick(const struct cand *c)
{
    for (int k = 0; k < C_N; k++)
        if (c[k].limit && c[k].hit == 1)
            return k;
    return c[C_TOOL].limit && c[C_TOOL].hit == 2 ? C_TOOL : -1;
}

static json_t *inst_json(const char *inst)
{
    return inst && inst[0] ? json_string(inst) : json_null();
}

/* The three highest utilisations, as {"limit", "instance", "utilisation"}. */
static json_t *top_json(const struct cand *c)
{
    json_t *arr = json_array();
    int used[C_N] = {0};

    for (int r = 0; r < 3; r++) {
        int best = -1;

        for (int k = 0; k < C_N; k++)
            if (!used[k] && c[k].limit && isfinite(c[k].util) &&
                (best < 0 || c[k].util > c[best].util))
                best = k;
        if (best < 0)
            break;
        used[best] = 1;
        json_array_append_new(arr, json_pack("{s:s, s:o, s:f}", "limit", c[best].limit, "instance",
                                             inst_json(c[best].inst), "utilisation", c[best].util));
    }
    return arr;
}

/* Tick i's busiest core when it was at VERDICT_BUSY and every other core below VERDICT_IDLE. */
static void core_tick(const struct verdict_in *in, size_t i, const char **limit, char *inst,
                      size_t cap)
{
    char name[INST_MAX];
    double top = -1, second = 0;
    size_t at = 0;

    for (size_t k = 0; k < in->ns; k++) {
        double v;

        if (!instance_of(in, k, "Processor", "% Processor Time", name, sizeof(name)) ||
            isnan(v = in->s[k].v[i]))
            continue;
        if (v > top) {
            second = top > second ? top : second;
            top = v, at = k;
        } else if (v > second) {
            second = v;
        }
    }
    if (top >= 100 * VERDICT_BUSY && second < 100 * VERDICT_IDLE &&
        instance_of(in, at, "Processor", "% Processor Time", name, sizeof(name))) {
        *limit = "core";
        snprintf(inst, cap, "%s", name);
    }
}

/* Which limit tick i shows, by the per-second forms of the rules. */
static void tick_limit(const struct verdict_in *in, size_t i, const char **limit, char *inst,
                       size_t cap)
{
    char name[INST_MAX];
    double level, th, best = -1;

    *limit = "none";
    inst[0] = '\0';
    if (throttled_tick(in, i, &level, &th) == 1) {
        *limit = "writeback";
        return;
    }
    for (size_t k = 0; k < in->ns; k++) {
        double u = NAN;
        const char *l = NULL;

        if (instance_of(in, k, "Network Interface", "Bytes Received/sec", name, sizeof(name))) {
            const char *src;
            double ceil = wire_ceiling(in, name, &src);

            u = wire_tick(in->s[k].v, find(in, "Network Interface", name, "Bytes Sent/sec"), i) /
                ceil;
            l = "wire";
        } else if (instance_of(in, k, "PhysicalDisk", "% Disk Time", name, sizeof(name))) {
            u = in->s[k].v[i] / 100.0;
            l = "disk";
        }
        /* the wire before a disk, as in the window's order; the busiest of a kind */
        if (l && isfinite(u) && u >= VERDICT_BUSY &&
            ((strcmp(l, *limit) == 0 && u > best) ||
             (strcmp(l, "wire") == 0 && strcmp(*limit, "wire") != 0) ||
             strcmp(*limit, "none") == 0)) {
            best = u;
            *limit = l;
            snprintf(inst, cap, "%s", name);
        }
    }
    if (best >= 0)
        return;
    if (in->tree_cpu_pct && in->tree_cpu_pct[i] >= 100 * VERDICT_BUSY) {
        *limit = "tool";
        snprintf(inst, cap, "%s", in->tree_top ? in->tree_top : "");
        return;
    }
    core_tick(in, i, limit, inst, cap);
}

static json_t *phases_json(const struct verdict_in *in)
{
    json_t *arr = json_array(), *cur = NULL;
    char inst[INST_MAX], cur_inst[INST_MAX] = "";
    const char *limit, *cur_limit = NULL;

    for (size_t i = 0; i < in->n; i++) {
        int64_t from, to;

        if (!in_window(in, i))
            continue;
        from = in->t_ms[i] -
               (int64_t)llround((in->iv_s && in->iv_s[i] > 0 ? in->iv_s[i] : 1.0) * 1000.0);
        from = from < in->from_ms ? in->from_ms : from;
        to = in->t_ms[i] > in->to_ms ? in->to_ms : in->t_ms[i];
        tick_limit(in, i, &limit, inst, sizeof(inst));
        if (cur && strcmp(limit, cur_limit) == 0 && strcmp(inst, cur_inst) == 0) {
            json_object_set_new(cur, "to_ms", json_integer(to));
            continue;
        }
        cur = json_pack("{s:I, s:I, s:s, s:o}", "from_ms", (json_int_t)from, "to_ms",
                        (json_int_t)to, "limit", limit, "instance", inst_json(inst));
        json_array_append_new(arr, cur);
        cur_limit = limit;
        snprintf(cur_inst, sizeof(cur_inst), "%s", inst);
    }
    return arr;
}

json_t *verdict_compute(const struct verdict_in *in)
{
    struct cand c[C_N] = {{0}};
    json_t *v = json_object();
    int k;

    candidates(in, c);
    k = pick(c);
    json_object_set_new(v, "limit", json_string(k >= 0 ? c[k].limit : "none"));
    json_object_set_new(v, "instance", inst_json(k >= 0 ? c[k].inst : NULL));
    json_object_set_new(v, "utilisation",
                        k >= 0 && isfinite(c[k].util) ? json_real(c[k].util) : json_null());
    json_object_set_new(v, "rule",
                        k >= 0 ? json_string(c[k].rule) : json_string("no single limit"));
    json_object_set_new(v, "evidence",
                        k >= 0 && c[k].evidence ? json_incref(c[k].evidence) : json_array());
    json_object_set_new(v, "top", top_json(c));
    json_object_set_new(v, "phases", phases_json(in));
    for (int i = 0; i < C_N; i++)
        json_decref(c[i].evidence);
    return v;
}

json_t *verdict_with_peers(json_t *own, const json_t *peers)
{
    const json_t *p;
    size_t i;

    const char *own_limit = json_string_value(json_object_get(own, "limit"));
    const char *own_rule = json_string_value(json_object_get(own, "rule"));
    /* A tool that idled while it moved data was waiting for something: the peer's limit, when
     * the peer names one, is what it waited for. */
    int weak = own_limit &&
               (strcmp(own_limit, "none") == 0 || (strcmp(own_limit, "tool") == 0 && own_rule &&
                                                   strcmp(own_rule, "idle waiting") == 0));

    if (!weak)
        return json_incref(own);
    json_array_foreach(peers, i, p)
    {
        const json_t *pv = json_object_get(json_object_get(p, "report"), "verdict");
        const char *limit = json_string_value(json_object_get(pv, "limit"));
        const char *url = json_string_value(json_object_get(p, "url"));
        json_t *inst = json_object_get(pv, "instance"), *util = json_object_get(pv, "utilisation");
        json_t *v, *ev;

        if (!limit || strcmp(limit, "none") == 0 || strcmp(limit, "remote") == 0)
            continue;
        v = json_deep_copy(own);
        ev = json_pack("[{s:s, s:s, s:s, s:f}]", "figure", "peer_limit", "value", limit, "unit",
                       url ? url : "", "seconds", 0.0);
        json_object_set_new(v, "limit", json_string("remote"));
        json_object_set_new(v, "instance", inst ? json_incref(inst) : json_null());
        json_object_set_new(v, "utilisation", util ? json_incref(util) : json_null());
        json_object_set_new(v, "peer_url", url ? json_string(url) : json_null());
        json_object_set_new(v, "rule", json_string("the peer's limit"));
        json_array_extend(ev, json_object_get(pv, "evidence"));
        json_object_set_new(v, "evidence", ev);
        return v;
    }
    return json_incref(own);
}

void verdict_apply_peers(json_t *report)
{
    json_t *own = json_object_get(report, "verdict");

    if (json_is_object(own))
        json_object_set_new(report, "verdict",
                            verdict_with_peers(own, json_object_get(report, "peers")));
}
