/*
 * metrics.c - the Prometheus text exposition format 0.0.4 of the newest tick; see metrics.h.
 *
 * Format: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 * Names: node_exporter's diskstats, netdev, cpu and meminfo collectors, with `perflog_` for
 * `node_`.
 *
 * Every exported series is one row of metric_defs[]: a raw field of an object, scaled by an
 * integer multiplier and divisor. Consecutive rows with the same name are one family (the eight
 * CPU modes), so each family gets one HELP and one TYPE line and its samples stay together.
 * Values are printed exactly where they can be: integer products as integers (byte counts pass
 * 2^53), quotients by a power of ten as exact decimals; only an overflow or another divisor falls
 * back to the shortest round-trip double.
 */
#include "storage/query/metrics.h"

#include "base/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_MAX 48 /* "-18446744073709551615.0000000000000000000" and "%.17g" both fit */

enum metric_type { METRIC_COUNTER, METRIC_GAUGE };

static const char *const type_names[] = {
    [METRIC_COUNTER] = "counter",
    [METRIC_GAUGE] = "gauge",
};

#define DIV_CLK_TCK 0 /* divide by metrics_self.clk_tck (jiffies -> seconds) */

struct metric_def {
    enum object_id obj;
    unsigned field; /* index into tick_row.raw[] */
    const char *name;
    enum metric_type type;
    const char *help;
    uint64_t mul;      /* value = raw * mul / div */
    uint64_t div;      /* DIV_CLK_TCK: self->clk_tck */
    const char *label; /* instance label name; NULL for single-instance objects */
    const char *mode;  /* value of an extra mode="..." label (CPU), or NULL */
};

#define CPU_HELP "Seconds the CPUs spent in each mode."
#define CPU(f, m)                                                                                  \
    {                                                                                              \
        .obj = OBJ_PROCESSOR, .field = (f), .name = "perflog_cpu_seconds_total",                   \
        .type = METRIC_COUNTER, .help = CPU_HELP, .mul = 1, .div = DIV_CLK_TCK, .label = "cpu",    \
        .mode = (m)                                                                                \
    }
#define DISK(f, n, t, h, m, d)                                                                     \
    {                                                                                              \
        .obj = OBJ_DISK, .field = (f), .name = "perflog_disk_" n, .type = (t), .help = (h),        \
        .mul = (m), .div = (d), .label = "device"                                                  \
    }
#define NET(f, n, t, h, m)                                                                         \
    {                                                                                              \
        .obj = OBJ_NET, .field = (f), .name = "perflog_network_" n, .type = (t), .help = (h),      \
        .mul = (m), .div = 1, .label = "device"                                                    \
    }
#define MEM(f, n, t, h, m)                                                                         \
    {                                                                                              \
        .obj = OBJ_MEMORY, .field = (f), .name = "perflog_memory_" n, .type = (t), .help = (h),    \
        .mul = (m), .div = 1                                                                       \
    }
#define TCP(f, n, t, h)                                                                            \
    {                                                                                              \
        .obj = OBJ_TCP, .field = (f), .name = "perflog_tcp_" n, .type = (t), .help = (h),          \
        .mul = 1, .div = 1                                                                         \
    }

/* /proc/diskstats sectors are 512 bytes whatever the device (Documentation/admin-guide/
 * iostats.rst); /proc/meminfo and the collector's vmstat fields are KiB; speed is Mbit/s. */
static const struct metric_def metric_defs[] = {
    CPU(CPU_USER, "user"),
    CPU(CPU_NICE, "nice"),
    CPU(CPU_SYSTEM, "system"),
    CPU(CPU_IDLE, "idle"),
    CPU(CPU_IOWAIT, "iowait"),
    CPU(CPU_IRQ, "irq"),
    CPU(CPU_SOFTIRQ, "softirq"),
    CPU(CPU_STEAL, "steal"),

    DISK(DISK_RD_IOS, "reads_completed_total", METRIC_COUNTER,
         "The total number of reads completed successfully.", 1, 1),
    DISK(DISK_RD_MERGES, "reads_merged_total", METRIC_COUNTER, "The total number of reads merged.",
         1, 1),
    DISK(DISK_RD_SECTORS, "read_bytes_total", METRIC_COUNTER,
         "The total number of bytes read successfully.", 512, 1),
    DISK(DISK_RD_MS, "read_time_seconds_total", METRIC_COUNTER,
         "The total number of seconds spent by all reads.", 1, 1000),
    DISK(DISK_WR_IOS, "writes_completed_total", METRIC_COUNTER,
         "The total number of writes completed successfully.", 1, 1),
    DISK(DISK_WR_MERGES, "writes_merged_total", METRIC_COUNTER,
         "The total number of writes merged.", 1, 1),
    DISK(DISK_WR_SECTORS, "written_bytes_total", METRIC_COUNTER,
         "The total number of bytes written successfully.", 512, 1),
    DISK(DISK_WR_MS, "write_time_seconds_total", METRIC_COUNTER,
         "The total number of seconds spent by all writes.", 1, 1000),
    DISK(DISK_IN_FLIGHT, "io_now", METRIC_GAUGE, "The number of I/Os currently in progress.", 1, 1),
    DISK(DISK_IO_MS, "io_time_seconds_total", METRIC_COUNTER, "Total seconds spent doing I/Os.", 1,
         1000),
    DISK(DISK_QUEUE_MS, "io_time_weighted_seconds_total", METRIC_COUNTER,
         "The weighted number of seconds spent doing I/Os.", 1, 1000),

    NET(NET_RX_BYTES, "receive_bytes_total", METRIC_COUNTER, "Bytes received by the interface.", 1),
    NET(NET_RX_PACKETS, "receive_packets_total", METRIC_COUNTER,
        "Packets received by the interface.", 1),
    NET(NET_RX_ERRS, "receive_errs_total", METRIC_COUNTER, "Receive errors of the interface.", 1),
    NET(NET_RX_DROP, "receive_drop_total", METRIC_COUNTER,
        "Received packets dropped by the interface.", 1),
    NET(NET_TX_BYTES, "transmit_bytes_total", METRIC_COUNTER, "Bytes sent by the interface.", 1),
    NET(NET_TX_PACKETS, "transmit_packets_total", METRIC_COUNTER, "Packets sent by the interface.",
        1),
    NET(NET_TX_ERRS, "transmit_errs_total", METRIC_COUNTER, "Transmit errors of the interface.", 1),
    NET(NET_TX_DROP, "transmit_drop_total", METRIC_COUNTER,
        "Outbound packets dropped by the interface.", 1),
    NET(NET_SPEED_MBPS, "speed_bytes", METRIC_GAUGE, "Link speed of the interface in bytes/s.",
        1000000 / 8),
    NET(NET_MTU, "mtu_bytes", METRIC_GAUGE, "MTU of the interface.", 1),

    MEM(MEM_AVAILABLE_KB, "available_bytes", METRIC_GAUGE,
        "Memory available for new work without swapping (MemAvailable).", 1024),
    MEM(MEM_CACHED_KB, "cached_bytes", METRIC_GAUGE, "Page cache memory (Cached).", 1024),
    MEM(MEM_BUFFERS_KB, "buffers_bytes", METRIC_GAUGE, "Block device buffer memory (Buffers).",
        1024),
    MEM(MEM_DIRTY_KB, "dirty_bytes", METRIC_GAUGE, "Memory waiting to be written back (Dirty).",
        1024),
    MEM(MEM_WRITEBACK_KB, "writeback_bytes", METRIC_GAUGE, "Memory being written back (Writeback).",
        1024),
    MEM(MEM_DIRTIED_KB, "dirtied_bytes_total", METRIC_COUNTER,
        "Bytes of pages dirtied (nr_dirtied).", 1024),
    MEM(MEM_WRITTEN_KB, "written_back_bytes_total", METRIC_COUNTER,
        "Bytes of pages written back (nr_written).", 1024),
    MEM(MEM_PGPGIN_KB, "page_in_bytes_total", METRIC_COUNTER, "Bytes paged in (pgpgin).", 1024),
    MEM(MEM_PGPGOUT_KB, "page_out_bytes_total", METRIC_COUNTER, "Bytes paged out (pgpgout).", 1024),
    MEM(MEM_PGFAULT, "page_faults_total", METRIC_COUNTER, "Page faults (pgfault).", 1),
    MEM(MEM_PGMAJFAULT, "major_page_faults_total", METRIC_COUNTER,
        "Major page faults (pgmajfault).", 1),

    TCP(TCP_IN_SEGS, "segments_received_total", METRIC_COUNTER, "TCP segments received (InSegs)."),
    TCP(TCP_OUT_SEGS, "segments_sent_total", METRIC_COUNTER, "TCP segments sent (OutSegs)."),
    TCP(TCP_RETRANS_SEGS, "segments_retransmitted_total", METRIC_COUNTER,
        "TCP segments retransmitted (RetransSegs)."),
    TCP(TCP_CURR_ESTAB, "connections_established", METRIC_GAUGE,
        "TCP connections in state ESTABLISHED or CLOSE-WAIT (CurrEstab)."),
};

enum self_kind { SELF_U64, SELF_I64 };
enum self_when { SELF_ALWAYS, SELF_IF_NONNEG, SELF_IF_POSITIVE };

struct self_def {
    const char *name;
    enum metric_type type;
    const char *help;
    size_t off; /* offset of the value in struct metrics_self */
    enum self_kind kind;
    uint64_t div;
    enum self_when when;
};

#define SELF(n, t, h, member, k, d, w)                                                             \
    {                                                                                              \
        .name = "perflog_" n, .type = (t), .help = (h),                                            \
        .off = offsetof(struct metrics_self, member), .kind = (k), .div = (d), .when = (w)         \
    }

static const struct self_def self_defs[] = {
    SELF("sampler_ticks_total", METRIC_COUNTER, "Ticks sampled since start.", ticks, SELF_U64, 1,
         SELF_ALWAYS),
    SELF("sampler_missed_ticks_total", METRIC_COUNTER,
         "Ticks that should have been sampled and were not (late sampler).", missed, SELF_U64, 1,
         SELF_ALWAYS),
    SELF("dropped_ticks_total", METRIC_COUNTER, "Ticks dropped because the write queue was full.",
         dropped, SELF_U64, 1, SELF_ALWAYS),
    SELF("written_ticks_total", METRIC_COUNTER, "Ticks written to the database.", written, SELF_U64,
         1, SELF_ALWAYS),
    SELF("write_failures_total", METRIC_COUNTER, "Database writes that failed.", write_failures,
         SELF_U64, 1, SELF_ALWAYS),
    SELF("queued_ticks", METRIC_GAUGE, "Ticks waiting to be written.", queued, SELF_U64, 1,
         SELF_ALWAYS),
    SELF("database_size_bytes", METRIC_GAUGE, "Size of the database files.", db_bytes, SELF_I64, 1,
         SELF_IF_NONNEG),
    SELF("start_time_seconds", METRIC_GAUGE, "Start time of the daemon, seconds since the epoch.",
         start_wall_ms, SELF_I64, 1000, SELF_ALWAYS),
    SELF("last_tick_timestamp_seconds", METRIC_GAUGE,
         "Time of the newest tick, seconds since the epoch.", last_tick_wall_ms, SELF_I64, 1000,
         SELF_IF_POSITIVE),
    SELF("collect_duration_seconds", METRIC_GAUGE, "Time the newest collection took.",
         last_collect_ns, SELF_I64, 1000000000, SELF_ALWAYS),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The shortest "%.*g" that reads back as the same double; Prometheus spells the specials. */
static void fmt_double(char *buf, size_t cap, double x)
{
    if (isnan(x)) {
        snprintf(buf, cap, "NaN");
        return;
    }
    if (isinf(x)) {
        snprintf(buf, cap, x > 0 ? "+Inf" : "-Inf");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

/* Number of decimal digits k when div == 10^k, else -1. */
static int pow10_digits(uint64_t div)
{
    int k = 0;

    while (div > 1 && div % 10 == 0) {
        div /= 10;
        k++;
    }
    return div == 1 ? k : -1;
}

/*
 * Format mag * mul / div, negated when `neg`. Exact where the product fits in 64 bits and the
 * divisor is a power of ten (trailing zeros of the fraction dropped: 1.5, not 1.500); otherwise
 * the nearest double. div must not be 0.
 */
static void fmt_scaled(char *buf, size_t cap, int neg, uint64_t mag, uint64_t mul, uint64_t div)
{
    const char *sign = neg && mag ? "-" : "";
    int digits = pow10_digits(div);
    uint64_t p, frac;

    if ((mul && mag > UINT64_MAX / mul) || digits < 0) {
        double x = (double)mag * (double)mul / (double)div;
        fmt_double(buf, cap, neg ? -x : x);
        return;
    }
    p = mag * mul;
    frac = p % div;
    if (frac == 0) {
        snprintf(buf, cap, "%s%" PRIu64, sign, p / div);
        return;
    }
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    snprintf(buf, cap, "%s%" PRIu64 ".%0*" PRIu64, sign, p / div, digits, frac);
}

/*
 * Append s[0..len) escaped for a HELP line (\\ and \n) or, with `quote`, for a label value (also
 * \"). Prometheus rejects invalid UTF-8, and interface names are arbitrary bytes, so a byte that
 * starts no well-formed sequence becomes U+FFFD.
 */
static void put_escaped(struct sbuf *b, const char *s, size_t len, int quote)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t run = 0, i = 0;

    while (i < len) {
        const char *esc = NULL;
        size_t n = utf8_seq_len(p + i, len - i);

        if (n == 0)
            esc = "\xEF\xBF\xBD";
        else if (p[i] == '\\')
            esc = "\\\\";
        else if (p[i] == '\n')
            esc = "\\n";
        else if (p[i] == '"' && quote)
            esc = "\\\"";
        if (!esc) {
            run += n;
            i += n;
            continue;
        }
        sbuf_printf(b, "%.*s%s", (int)run, (const char *)p + i - run, esc);
        run = 0;
        i++;
    }
    sbuf_printf(b, "%.*s", (int)run, (const char *)p + i - run);
}

static void put_header(struct sbuf *b, const char *name, enum metric_type type, const char *help)
{
    sbuf_printf(b, "# HELP %s ", name);
    put_escaped(b, help, strlen(help), 0);
    sbuf_printf(b, "\n# TYPE %s %s\n", name, type_names[type]);
}

/* A row is exported unless it is the computed _Total: Prometheus users sum() instead. */
static int row_exported(const struct tick_row *r)
{
    return strncmp(r->name, "_Total", sizeof(r->name)) != 0;
}

static int has_sample(const struct tick *t, const struct metric_def *d, size_t nd)
{
    const struct tick_object *o = &t->obj[d->obj];

    for (size_t i = 0; i < o->n; i++)
        for (size_t j = 0; j < nd; j++)
            if (row_exported(&o->rows[i]) && (o->rows[i].raw_mask & (1ull << d[j].field)))
                return 1;
    return 0;
}

static void put_sample(struct sbuf *b, const struct metric_def *d, const struct tick_row *r,
                       uint64_t div)
{
    char val[VALUE_MAX];

    fmt_scaled(val, sizeof(val), 0, r->raw[d->field], d->mul, div);
    sbuf_printf(b, "%s", d->name);
    if (d->label) {
        sbuf_printf(b, "{%s=\"", d->label);
        put_escaped(b, r->name, strnlen(r->name, sizeof(r->name)), 1);
        sbuf_printf(b, "\"");
        if (d->mode)
            sbuf_printf(b, ",mode=\"%s\"", d->mode);
        sbuf_printf(b, "}");
    }
    sbuf_printf(b, " %s\n", val);
}

/* One family: the `nd` (at most 64) consecutive defs from `d` that share its name. Omitted when
 * it has no sample. */
static void put_family(struct sbuf *b, const struct tick *t, const struct metrics_self *self,
                       const struct metric_def *d, size_t nd)
{
    const struct tick_object *o = &t->obj[d->obj];
    uint64_t div = d->div, done = 0; /* bit j: def j of a label-less family was put */

    if (div == DIV_CLK_TCK) {
        if (!self || self->clk_tck <= 0)
            return; /* jiffies without USER_HZ have no meaning in seconds */
        div = (uint64_t)self->clk_tck;
    }
    if (!has_sample(t, d, nd))
        return;
    put_header(b, d->name, d->type, d->help);
    for (size_t i = 0; i < o->n; i++) {
        const struct tick_row *r = &o->rows[i];

        if (!row_exported(r))
            continue;
        for (size_t j = 0; j < nd; j++) {
            if (!(r->raw_mask & (1ull << d[j].field)) || (done & (1ull << j)))
                continue;
            put_sample(b, &d[j], r, div);
            /* Without an instance label a second row would repeat the series: the first wins. */
            if (!d[j].label)
                done |= 1ull << j;
        }
    }
}

static void put_tick(struct sbuf *b, const struct tick *t, const struct metrics_self *self)
{
    size_t i = 0;

    while (i < N(metric_defs)) {
        size_t n = 1;

        while (i + n < N(metric_defs) && strcmp(metric_defs[i + n].name, metric_defs[i].name) == 0)
            n++;
        put_family(b, t, self, &metric_defs[i], n);
        i += n;
    }
}

static void put_label(struct sbuf *b, const char *sep, const char *name, const char *value)
{
    sbuf_printf(b, "%s%s=\"", sep, name);
    put_escaped(b, value, strlen(value), 1);
    sbuf_printf(b, "\"");
}

/*
 * The extra PDH series of a Windows config (pdh_counters), one gauge family: PDH's formatted value
 * is already a rate or a level, and its raw counter is not kept, so there is no _total to give.
 * The instance label is pdh_instance: Prometheus itself sets `instance` on every scraped series.
 * A series without a value this tick is left out, as an unread field is.
 */
static void put_extras(struct sbuf *b, const struct tick *t)
{
    struct pdh_path_parts parts;
    char val[VALUE_MAX];
    int header = 0;

    for (size_t i = 0; i < t->n_extras; i++) {
        const struct tick_extra *x = &t->extras[i];

        if (!x->valid || pdh_path_split(x->path, &parts) < 0)
            continue;
        if (!header++)
            put_header(b, "perflog_pdh_value", METRIC_GAUGE,
                       "Value of an extra PDH counter of the configuration (pdh_counters), as "
                       "PDH formats it.");
        sbuf_printf(b, "perflog_pdh_value");
        put_label(b, "{", "object", parts.object);
        if (parts.instance[0])
            put_label(b, ",", "pdh_instance", parts.instance);
        put_label(b, ",", "counter", parts.counter);
        fmt_double(val, sizeof(val), x->value);
        sbuf_printf(b, "} %s\n", val);
    }
}

static void put_build_info(struct sbuf *b, const struct metrics_self *self)
{
    const char *version = self->version ? self->version : "";
    const char *host = self->host ? self->host : "";

    put_header(b, "perflog_build_info", METRIC_GAUGE,
               "A metric with a constant '1' value labeled by the version and host of perflogd.");
    sbuf_printf(b, "perflog_build_info{version=\"");
    put_escaped(b, version, strlen(version), 1);
    sbuf_printf(b, "\",host=\"");
    put_escaped(b, host, strlen(host), 1);
    sbuf_printf(b, "\"} 1\n");
}

static void put_self(struct sbuf *b, const struct metrics_self *self)
{
    put_build_info(b, self);
    for (size_t i = 0; i < N(self_defs); i++) {
        const struct self_def *d = &self_defs[i];
        const char *p = (const char *)self + d->off;
        char val[VALUE_MAX];
        uint64_t u = 0;
        int64_t s = 0;

        if (d->kind == SELF_U64) {
            memcpy(&u, p, sizeof(u));
            fmt_scaled(val, sizeof(val), 0, u, 1, d->div);
        } else {
            memcpy(&s, p, sizeof(s));
            if ((d->when == SELF_IF_NONNEG && s < 0) || (d->when == SELF_IF_POSITIVE && s <= 0))
                continue;
            /* The magnitude of INT64_MIN does not fit in int64_t; in uint64_t it does. */
            u = s < 0 ? 0 - (uint64_t)s : (uint64_t)s;
            fmt_scaled(val, sizeof(val), s < 0, u, 1, d->div);
        }
        put_header(b, d->name, d->type, d->help);
        sbuf_printf(b, "%s %s\n", d->name, val);
    }
}

int metrics_render(const struct tick *t, const struct metrics_self *self, struct sbuf *out)
{
    if (self)
        put_self(out, self);
    if (t) {
        put_tick(out, t, self);
        put_extras(out, t);
    }
    return sbuf_ok(out) ? 0 : -ENOMEM;
}
