/*
 * test_report_verdict.c - the verdict's rules (web/report_verdict.c) on fixture series: each
 * candidate just under and just over its threshold, the order when several hold, "none" with its
 * top three, the counters a newer collector adds (softirqs, softnet drops, pressure, the dirty
 * threshold) taken by name and "not measured" without them, the phases, and a peer's limit.
 */
#include "daemon/runs/report_verdict.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T0     1796000000000LL
#define NT     10 /* ticks of a fixture window: 10 s */
#define NS_MAX 64
#define MIB    1048576.0

struct fx {
    int64_t t[NT];
    char path[NS_MAX][128];
    double v[NS_MAX][NT];
    struct verdict_series s[NS_MAX];
    double tree[NT];
    struct verdict_in in;
};

/* An empty 10 s window of ticks at T0 + 1 s .. T0 + 10 s. */
static void fx_init(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    for (int i = 0; i < NT; i++)
        f->t[i] = T0 + 1000 * (i + 1);
    f->in = (struct verdict_in){.t_ms = f->t,
                                .n = NT,
                                .from_ms = T0,
                                .to_ms = T0 + 1000 * NT,
                                .s = f->s,
                                .tree_io_bytes = NAN,
                                .files = NAN,
                                .payload_bytes = NAN,
                                .packets = NAN,
                                .tail_ms = NAN,
                                .dirty_threshold_bytes = NAN,
                                .dirty_background_threshold_bytes = NAN};
}

/* A series `path` with value v in every tick; returns its values to change single ticks. */
static double *fx_add(struct fx *f, const char *path, double v)
{
    size_t k = f->in.ns++;

    snprintf(f->path[k], sizeof(f->path[k]), "%s", path);
    for (int i = 0; i < NT; i++)
        f->v[k][i] = v;
    f->s[k] = (struct verdict_series){f->path[k], f->v[k]};
    return f->v[k];
}

static void fx_tree(struct fx *f, double pct)
{
    for (int i = 0; i < NT; i++)
        f->tree[i] = pct;
    f->in.tree_cpu_pct = f->tree;
    f->in.tree_top = "gzip:42";
}

/* Two cores, a disk and an interface, all quiet: the base of most cases. */
static void fx_quiet(struct fx *f)
{
    fx_init(f);
    fx_add(f, "\\Processor(0)\\% Processor Time", 5);
    fx_add(f, "\\Processor(1)\\% Processor Time", 5);
    fx_add(f, "\\Processor(_Total)\\% Processor Time", 5);
    fx_add(f, "\\PhysicalDisk(vda)\\% Disk Time", 2);
    fx_add(f, "\\PhysicalDisk(_Total)\\% Disk Time", 2);
    fx_add(f, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec", 0);
    fx_add(f, "\\PhysicalDisk(vda)\\Disk Write Bytes/sec", 4096);
    fx_add(f, "\\Network Interface(eth0)\\Bytes Received/sec", 100);
    fx_add(f, "\\Network Interface(eth0)\\Bytes Sent/sec", 100);
    fx_add(f, "\\Network Interface(eth0)\\Current Bandwidth", 1e9);
    fx_add(f, "\\Memory\\Dirty Bytes", 1 * MIB);
    fx_add(f, "\\Memory\\Writeback Bytes", 0);
    fx_add(f, "\\TCP\\Segments Sent/sec", 10);
    fx_add(f, "\\TCP\\Segments Retransmitted/sec", 0);
}

static const char *limit_of(const json_t *v)
{
    return json_string_value(json_object_get(v, "limit"));
}

static const char *inst_of(const json_t *v)
{
    return json_string_value(json_object_get(v, "instance"));
}

/* The evidence entry whose figure starts with `fig`, or NULL. */
static const json_t *ev(const json_t *v, const char *fig)
{
    const json_t *e;
    size_t i;

    json_array_foreach(json_object_get(v, "evidence"), i, e)
    {
        const char *f = json_string_value(json_object_get(e, "figure"));

        if (f && strncmp(f, fig, strlen(fig)) == 0)
            return e;
    }
    return NULL;
}

static int not_measured(const json_t *e)
{
    return e && json_is_null(json_object_get(e, "value")) &&
           json_string_value(json_object_get(e, "note")) &&
           strcmp(json_string_value(json_object_get(e, "note")), "not measured") == 0;
}

static json_t *run(struct fx *f)
{
    json_t *v = verdict_compute(&f->in);

    CHECK(v != NULL);
    return v;
}

static void test_none(void)
{
    struct fx f;
    json_t *v, *top;

    fx_quiet(&f);
    v = run(&f);
    CHECK_STR(limit_of(v), "none");
    CHECK(json_is_null(json_object_get(v, "instance")));
    CHECK(json_is_null(json_object_get(v, "utilisation")));
    top = json_object_get(v, "top");
    CHECK_INT(json_array_size(top), 3);
    /* the highest first: the cores' 5 %, then the disk's 2 % */
    CHECK_DBL(json_real_value(json_object_get(json_array_get(top, 0), "utilisation")), 0.05, 1e-9);
    CHECK(json_real_value(json_object_get(json_array_get(top, 1), "utilisation")) <=
          json_real_value(json_object_get(json_array_get(top, 0), "utilisation")));
    CHECK_INT(json_array_size(json_object_get(v, "phases")), 1);
    CHECK_STR(json_string_value(
                  json_object_get(json_array_get(json_object_get(v, "phases"), 0), "limit")),
              "none");
    json_decref(v);
}

static void test_disk(void)
{
    struct fx f;
    json_t *v;

    fx_quiet(&f);
    fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 89.9);
    v = run(&f);
    CHECK_STR(limit_of(v), "none"); /* just under */
    json_decref(v);

    fx_quiet(&f);
    fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 90.1);
    v = run(&f);
    CHECK_STR(limit_of(v), "disk");
    CHECK_STR(inst_of(v), "vdb");
    CHECK_DBL(json_real_value(json_object_get(v, "utilisation")), 0.901, 1e-9);
    CHECK_DBL(json_real_value(json_object_get(ev(v, "busy_pct"), "value")), 90.1, 1e-9);
    CHECK_DBL(json_real_value(json_object_get(ev(v, "busy_pct"), "seconds")), 10, 1e-9);
    /* no pressure counter in this input */
    CHECK(not_measured(ev(v, "pressure_io_some_pct")));
    json_decref(v);

    /* with the pressure counter it is evidence */
    fx_quiet(&f);
    fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 100);
    fx_add(&f, "\\Pressure\\IO Some %", 73);
    v = run(&f);
    CHECK_STR(limit_of(v), "disk");
    CHECK_DBL(json_real_value(json_object_get(ev(v, "pressure_io_some_pct"), "value")), 73, 1e-9);
    json_decref(v);

    /* The write latency over the window is the writes' time over their number: one second of
     * 100 writes of 5 ms each and nine without a write (0 s a write, per tick) average 5 ms, not
     * the ticks' 0.5 ms; two seconds of 10 writes at 2 ms and 30 at 10 ms average 8 ms. No read
     * at all: 0 s a read, over the seconds with both series. */
    fx_quiet(&f);
    fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 95);
    {
        double *wl = fx_add(&f, "\\PhysicalDisk(vdb)\\Avg. Disk sec/Write", 0);
        double *wr = fx_add(&f, "\\PhysicalDisk(vdb)\\Disk Writes/sec", 0);

        fx_add(&f, "\\PhysicalDisk(vdb)\\Avg. Disk sec/Read", 0);
        fx_add(&f, "\\PhysicalDisk(vdb)\\Disk Reads/sec", 0);
        wl[4] = 0.005;
        wr[4] = 100;
        v = run(&f);
        CHECK_DBL(json_real_value(json_object_get(ev(v, "avg_write_latency_s"), "value")), 0.005,
                  1e-12);
        CHECK_DBL(json_real_value(json_object_get(ev(v, "avg_write_latency_s"), "seconds")), 10,
                  1e-9);
        CHECK_DBL(json_real_value(json_object_get(ev(v, "avg_read_latency_s"), "value")), 0, 0);
        json_decref(v);
        wl[4] = 0.002;
        wr[4] = 10;
        wl[7] = 0.010;
        wr[7] = 30;
        v = run(&f);
        CHECK_DBL(json_real_value(json_object_get(ev(v, "avg_write_latency_s"), "value")), 0.008,
                  1e-12);
        json_decref(v);
    }
    /* without the rate, the latency is not measured */
    fx_quiet(&f);
    fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 95);
    fx_add(&f, "\\PhysicalDisk(vdb)\\Avg. Disk sec/Write", 0.001);
    v = run(&f);
    CHECK(not_measured(ev(v, "avg_write_latency_s")));
    json_decref(v);

    /* under 90 % busy but the queue held at its ceiling for most of the window */
    fx_quiet(&f);
    {
        double *b = fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 85);
        double *q = fx_add(&f, "\\PhysicalDisk(vdb)\\Avg. Disk Queue Length", 31.9);

        (void)b;
        q[0] = q[1] = q[2] = q[3] = 2; /* 6 of 10 s at the ceiling */
        v = run(&f);
        CHECK_STR(limit_of(v), "disk");
        CHECK_STR(json_string_value(json_object_get(v, "rule")), "queue at its ceiling");
        json_decref(v);
        q[4] = q[5] = 2; /* 4 of 10 s: not held */
        v = run(&f);
        CHECK_STR(limit_of(v), "none");
        json_decref(v);
    }
}

static void test_wire(void)
{
    struct fx f;
    struct verdict_ceiling c = {"lo", 12.5e6, "calibration run 3"};
    json_t *v;

    /* eth0 at 1 Gbit/s: 89.9 % and 90.1 % of 125e6 bytes/s */
    fx_quiet(&f);
    fx_add(&f, "\\Network Interface(eth1)\\Bytes Received/sec", 0.899 * 125e6);
    fx_add(&f, "\\Network Interface(eth1)\\Bytes Sent/sec", 1000);
    fx_add(&f, "\\Network Interface(eth1)\\Current Bandwidth", 1e9);
    v = run(&f);
    CHECK_STR(limit_of(v), "none");
    json_decref(v);
    f.v[f.in.ns - 3][0] = f.v[f.in.ns - 3][1] = 0.921 * 125e6; /* avg 0.9034 */
    v = run(&f);
    CHECK_STR(limit_of(v), "wire");
    CHECK_STR(inst_of(v), "eth1");
    CHECK_DBL(json_real_value(json_object_get(v, "utilisation")), 0.9034, 1e-6);
    json_decref(v);

    /* loopback has no link speed: no ceiling without a calibration */
    fx_quiet(&f);
    fx_add(&f, "\\Network Interface(lo)\\Bytes Received/sec", 12.4e6);
    fx_add(&f, "\\Network Interface(lo)\\Bytes Sent/sec", 12.4e6);
    v = run(&f);
    CHECK_STR(limit_of(v), "none");
    json_decref(v);
    f.in.ceil = &c;
    f.in.nceil = 1;
    v = run(&f);
    CHECK_STR(limit_of(v), "wire");
    CHECK_STR(inst_of(v), "lo");
    CHECK_DBL(json_real_value(json_object_get(v, "utilisation")), 12.4 / 12.5, 1e-9);
    CHECK(ev(v, "ceiling_bytes_per_s (calibration run 3)") != NULL);
    json_decref(v);
}

static void test_core(void)
{
    struct fx f;
    json_t *v;

    /* one core busy in softirq while the other idles; the softirq counters name NET_RX */
    fx_init(&f);
    fx_add(&f, "\\Processor(0)\\% Processor Time", 20);
    fx_add(&f, "\\Processor(1)\\% Processor Time", 95);
    fx_add(&f, "\\Processor(1)\\% User Time", 5);
    fx_add(&f, "\\Processor(1)\\% Privileged Time", 90);
    fx_add(&f, "\\Processor(1)\\% Interrupt Time", 2);
    fx_add(&f, "\\Processor(1)\\% DPC Time", 80);
    v = run(&f);
    CHECK_STR(limit_of(v), "core");
    CHECK_STR(inst_of(v), "1");
    CHECK_STR(json_string_value(json_object_get(v, "rule")), "softirq");
    CHECK(not_measured(ev(v, "dominant_softirq")));
    json_decref(v);
    fx_add(&f, "\\Processor(1)\\NET_RX Softirqs/sec", 50000);
    fx_add(&f, "\\Processor(1)\\TIMER Softirqs/sec", 250);
    v = run(&f);
    CHECK_STR(json_string_value(json_object_get(v, "rule")), "NET_RX");
    CHECK_DBL(json_real_value(json_object_get(ev(v, "dominant_softirq NET_RX"), "value")), 50000,
              1e-9);
    CHECK_INT(json_array_size(json_object_get(v, "phases")), 1);
    json_decref(v);

    /* the other core not idle (50 %): no single core */
    f.v[0][0] = 50;
    for (int i = 0; i < NT; i++)
        f.v[0][i] = 50;
    v = run(&f);
    CHECK_STR(limit_of(v), "none");
    json_decref(v);
    for (int i = 0; i < NT; i++)
        f.v[0][i] = 49.9;
    v = run(&f);
    CHECK_STR(limit_of(v), "core");
    json_decref(v);
    /* user time dominant */
    fx_init(&f);
    fx_add(&f, "\\Processor(0)\\% Processor Time", 90.1);
    fx_add(&f, "\\Processor(0)\\% User Time", 80);
    fx_add(&f, "\\Processor(0)\\% Privileged Time", 10.1);
    fx_add(&f, "\\Processor(1)\\% Processor Time", 3);
    v = run(&f);
    CHECK_STR(limit_of(v), "core");
    CHECK_STR(json_string_value(json_object_get(v, "rule")), "user");
    json_decref(v);
}

static void test_tool(void)
{
    struct fx f;
    json_t *v;

    fx_quiet(&f);
    f.v[0][0] = 0; /* nothing else */
    fx_tree(&f, 89.9);
    v = run(&f);
    CHECK_STR(limit_of(v), "none");
    json_decref(v);
    fx_tree(&f, 90.1);
    v = run(&f);
    CHECK_STR(limit_of(v), "tool");
    CHECK_STR(inst_of(v), "gzip:42");
    CHECK_STR(json_string_value(json_object_get(v, "rule")), "CPU-bound at one thread");
    json_decref(v);

    /* the tool's core is busy too: the tool explains it */
    fx_quiet(&f);
    for (int i = 0; i < NT; i++)
        f.v[0][i] = 99;
    fx_tree(&f, 98);
    v = run(&f);
    CHECK_STR(limit_of(v), "tool");
    json_decref(v);

    /* idle waiting: counts only while it moved data, and after every resource */
    fx_quiet(&f);
    fx_tree(&f, 9.9);
    v = run(&f);
    CHECK_STR(limit_of(v), "none"); /* no I/O known */
    json_decref(v);
    f.in.tree_io_bytes = 0.99 * MIB;
    v = run(&f);
    CHECK_STR(limit_of(v), "none");
    json_decref(v);
    f.in.tree_io_bytes = 64 * MIB;
    v = run(&f);
    CHECK_STR(limit_of(v), "tool");
    CHECK_STR(json_string_value(json_object_get(v, "rule")), "idle waiting");
    json_decref(v);
    fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 95);
    v = run(&f);
    CHECK_STR(limit_of(v), "disk");
    json_decref(v);
    fx_tree(&f, 10);
    fx_quiet(&f);
    f.in.tree_io_bytes = 64 * MIB;
    fx_tree(&f, 10.0);
    v = run(&f);
    CHECK_STR(limit_of(v), "none"); /* 10 % is not idle */
    json_decref(v);
}

static void test_per_file(void)
{
    struct fx f;
    json_t *v;
    double *w;

    /* 2000 files of 4 KiB in 10 s, the disk's busiest second 1.6 MiB/s and 95 % busy: the
     * payload at that rate takes 4.9 s of the 10 s, so 51 % went to per-file work */
    fx_quiet(&f);
    w = fx_add(&f, "\\PhysicalDisk(vdb)\\Disk Write Bytes/sec", 1.6 * MIB);
    fx_add(&f, "\\PhysicalDisk(vdb)\\Disk Read Bytes/sec", 0);
    fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 95);
    f.in.files = 2000;
    f.in.payload_bytes = 2000 * 4096.0;
    f.in.packets = 0;
    v = run(&f);
    CHECK_STR(limit_of(v), "per_file");
    CHECK(json_real_value(json_object_get(v, "utilisation")) >= 0.5);
    CHECK_DBL(json_real_value(json_object_get(ev(v, "ms_per_file"), "value")), 5.0, 1e-9);
    CHECK_DBL(json_real_value(json_object_get(ev(v, "packets_per_file"), "value")), 0, 1e-9);
    json_decref(v);
    /* 1.5 MiB/s: the payload's 7.8 MiB take 5.2 s, 48 % left: the disk */
    for (int i = 0; i < NT; i++)
        w[i] = 1.5 * MIB;
    v = run(&f);
    CHECK_STR(limit_of(v), "disk");
    json_decref(v);
    /* 99 files: too few to judge */
    for (int i = 0; i < NT; i++)
        w[i] = 100 * MIB;
    f.in.files = 99;
    v = run(&f);
    CHECK_STR(limit_of(v), "disk");
    json_decref(v);
    f.in.files = 100;
    v = run(&f);
    CHECK_STR(limit_of(v), "per_file");
    json_decref(v);
}

static void test_writeback(void)
{
    struct fx f;
    json_t *v;
    double *d;

    /* dirty_bytes 32 MiB, background 16 MiB: the band starts at 0.9 x 16 = 14.4 MiB */
    fx_quiet(&f);
    f.in.dirty_threshold_bytes = 32 * MIB;
    f.in.dirty_background_threshold_bytes = 16 * MIB;
    d = f.v[10]; /* \Memory\Dirty Bytes */
    CHECK_STR(f.path[10], "\\Memory\\Dirty Bytes");
    for (int i = 0; i < NT; i++)
        d[i] = i < 5 ? 14.5 * MIB : 14.3 * MIB;
    fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 99);
    v = run(&f);
    CHECK_STR(limit_of(v), "writeback"); /* 5 of 10 s throttled, before the busy disk */
    CHECK_DBL(json_real_value(json_object_get(ev(v, "throttled_seconds"), "value")), 5, 1e-9);
    CHECK(json_array_size(json_object_get(v, "phases")) == 2);
    json_decref(v);
    d[4] = 14.3 * MIB; /* 4 of 10 s */
    v = run(&f);
    CHECK_STR(limit_of(v), "disk");
    json_decref(v);

    /* the collector's per-second threshold wins over the start's kernel figure */
    fx_add(&f, "\\Memory\\Dirty Threshold Bytes", 20 * MIB);
    fx_add(&f, "\\Memory\\Dirty Background Threshold Bytes", 10 * MIB);
    v = run(&f); /* the band from 9 MiB: all 10 s throttled */
    CHECK_STR(limit_of(v), "writeback");
    CHECK_DBL(json_real_value(json_object_get(ev(v, "dirty_threshold_bytes"), "value")), 20 * MIB,
              1);
    json_decref(v);

    /* a background limit at or above the limit is halved (domain_dirty_limits) */
    fx_quiet(&f);
    f.in.dirty_threshold_bytes = 32 * MIB;
    f.in.dirty_background_threshold_bytes = 64 * MIB;
    for (int i = 0; i < NT; i++)
        f.v[10][i] = 14.5 * MIB; /* above 0.9 x 32 / 2 */
    v = run(&f);
    CHECK_STR(limit_of(v), "writeback");
    json_decref(v);

    /* no threshold known: not measured */
    fx_quiet(&f);
    v = run(&f);
    CHECK_STR(limit_of(v), "none");
    {
        const json_t *e;
        size_t i;

        json_array_foreach(json_object_get(v, "top"), i, e)
            CHECK(strcmp(json_string_value(json_object_get(e, "limit")), "writeback") != 0);
    }
    json_decref(v);

    /* the tail longer than the run */
    fx_quiet(&f);
    f.in.tail_ms = 10001;
    v = run(&f);
    CHECK_STR(limit_of(v), "writeback");
    CHECK_STR(json_string_value(json_object_get(v, "rule")), "tail longer than the run");
    json_decref(v);
    f.in.tail_ms = 9999;
    v = run(&f);
    CHECK_STR(limit_of(v), "none");
    json_decref(v);
}

static void test_retransmits(void)
{
    struct fx f;
    json_t *v;

    fx_quiet(&f);
    for (int i = 0; i < NT; i++) {
        f.v[12][i] = 1000; /* sent */
        f.v[13][i] = 9.99; /* retransmitted: 0.999 % */
    }
    CHECK_STR(f.path[13], "\\TCP\\Segments Retransmitted/sec");
    v = run(&f);
    CHECK_STR(limit_of(v), "none");
    CHECK(not_measured(ev(v, "softnet_drops")) || ev(v, "softnet_drops") == NULL);
    json_decref(v);
    for (int i = 0; i < NT; i++)
        f.v[13][i] = 10.1;
    v = run(&f);
    CHECK_STR(limit_of(v), "retransmits");
    CHECK_DBL(json_real_value(json_object_get(v, "utilisation")), 0.0101, 1e-9);
    CHECK(not_measured(ev(v, "softnet_drops")));
    json_decref(v);

    /* softnet drops, by the collector's per-core counter */
    fx_quiet(&f);
    fx_add(&f, "\\Processor(0)\\Packets Dropped/sec", 9.9);
    fx_add(&f, "\\Processor(0)\\Time Squeezes/sec", 3);
    v = run(&f);
    CHECK_STR(limit_of(v), "none"); /* 99 drops */
    json_decref(v);
    fx_add(&f, "\\Processor(1)\\Packets Dropped/sec", 0.1);
    v = run(&f);
    CHECK_STR(limit_of(v), "retransmits");
    CHECK_STR(json_string_value(json_object_get(v, "rule")), "softnet drops");
    CHECK_DBL(json_real_value(json_object_get(ev(v, "softnet_drops"), "value")), 100, 1e-9);
    CHECK_DBL(json_real_value(json_object_get(ev(v, "softnet_time_squeezes"), "value")), 30, 1e-9);
    json_decref(v);
}

/* Cache-served for 4 s, then the disk: two phases with their seconds. */
static void test_phases(void)
{
    struct fx f;
    json_t *v, *ph;
    double *b;

    fx_quiet(&f);
    b = f.v[3]; /* \PhysicalDisk(vda)\% Disk Time */
    for (int i = 4; i < NT; i++)
        b[i] = 100;
    f.in.from_ms = T0 + 200; /* the first tick counts from the start, not a whole second */
    v = run(&f);
    ph = json_object_get(v, "phases");
    CHECK_INT(json_array_size(ph), 2);
    CHECK_STR(json_string_value(json_object_get(json_array_get(ph, 0), "limit")), "none");
    CHECK_INT(json_integer_value(json_object_get(json_array_get(ph, 0), "from_ms")), T0 + 200);
    CHECK_INT(json_integer_value(json_object_get(json_array_get(ph, 0), "to_ms")), T0 + 4000);
    CHECK_STR(json_string_value(json_object_get(json_array_get(ph, 1), "limit")), "disk");
    CHECK_STR(json_string_value(json_object_get(json_array_get(ph, 1), "instance")), "vda");
    CHECK_INT(json_integer_value(json_object_get(json_array_get(ph, 1), "to_ms")), T0 + 10000);
    CHECK_STR(limit_of(v), "none"); /* 60 % busy over the window */
    json_decref(v);

    /* a second busier disk takes the seconds; the wire at its ceiling takes them from both */
    {
        double *b2 = fx_add(&f, "\\PhysicalDisk(vdb)\\% Disk Time", 95);
        double *rx = f.v[7];

        for (int i = 0; i < 4; i++)
            b2[i] = 0;
        CHECK_STR(f.path[7], "\\Network Interface(eth0)\\Bytes Received/sec");
        rx[NT - 1] = 0.95 * 125e6; /* eth0's Current Bandwidth is 1 Gbit/s */
        f.in.from_ms = T0;
        v = run(&f);
        ph = json_object_get(v, "phases");
        CHECK_INT(json_array_size(ph), 3);
        CHECK_STR(json_string_value(json_object_get(json_array_get(ph, 1), "instance")), "vda");
        CHECK_STR(json_string_value(json_object_get(json_array_get(ph, 2), "limit")), "wire");
        CHECK_INT(json_integer_value(json_object_get(json_array_get(ph, 2), "from_ms")), T0 + 9000);
        json_decref(v);
    }
}

static void test_peers(void)
{
    json_t *own = json_pack("{s:s, s:n, s:n, s:[], s:[]}", "limit", "none", "instance",
                            "utilisation", "evidence", "phases");
    json_t *peers =
        json_pack("[{s:s, s:{s:{s:s, s:s, s:f, s:[]}}}]", "url", "http://b/api/v1/runs/2", "report",
                  "verdict", "limit", "disk", "instance", "sdb", "utilisation", 0.97, "evidence");
    json_t *v = verdict_with_peers(own, peers);

    CHECK_STR(limit_of(v), "remote");
    CHECK_STR(inst_of(v), "sdb");
    CHECK_STR(json_string_value(
                  json_object_get(json_array_get(json_object_get(v, "evidence"), 0), "value")),
              "disk");
    json_decref(v);
    /* a tool that idled waiting was waiting for the peer */
    json_object_set_new(own, "limit", json_string("tool"));
    json_object_set_new(own, "rule", json_string("idle waiting"));
    v = verdict_with_peers(own, peers);
    CHECK_STR(limit_of(v), "remote");
    json_decref(v);
    json_object_set_new(own, "rule", json_string("CPU-bound at one thread"));
    v = verdict_with_peers(own, peers);
    CHECK_STR(limit_of(v), "tool");
    json_decref(v);
    /* a run with its own limit keeps it */
    json_object_set_new(own, "limit", json_string("wire"));
    v = verdict_with_peers(own, peers);
    CHECK(v == own);
    json_decref(v);
    json_decref(own);
    json_decref(peers);
}

int main(void)
{
    test_none();
    test_disk();
    test_wire();
    test_core();
    test_tool();
    test_per_file();
    test_writeback();
    test_retransmits();
    test_phases();
    test_peers();
    return tl_done();
}
