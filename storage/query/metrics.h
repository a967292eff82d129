/*
 * metrics.h - the Prometheus text exposition format (version 0.0.4) of the newest tick, for
 * GET /metrics. Pure: it renders what it is given, reads no clock and no file.
 *
 * Cumulative kernel counters are exported as `_total` counters of their raw values (the tick's
 * raw[] readings, not per-tick deltas), levels as gauges. Names and labels follow node_exporter
 * where it has an equivalent, with the prefix `perflog_` (node_disk_read_bytes_total ->
 * perflog_disk_read_bytes_total{device="vda"}, node_cpu_seconds_total{cpu,mode} ->
 * perflog_cpu_seconds_total{cpu="0",mode="user"}). `_Total` instances are not exported:
 * Prometheus sums with sum(). The extra PDH series of a Windows config are one gauge family,
 * perflog_pdh_value{object, pdh_instance, counter}. Every family has HELP and TYPE lines; label
 * values are escaped (\\, \", \n).
 */
#ifndef PERFLOG_METRICS_H
#define PERFLOG_METRICS_H

#include "base/sbuf.h"
#include "collectors/model/sample.h"

#include <stdint.h>

/* The daemon's own state, exported as perflog_* self metrics. */
struct metrics_self {
    const char *version;
    const char *host;
    long clk_tck;              /* USER_HZ, sysconf(_SC_CLK_TCK): jiffies -> seconds */
    uint64_t ticks;            /* perflog_sampler_ticks_total */
    uint64_t missed;           /* perflog_sampler_missed_ticks_total */
    uint64_t dropped;          /* perflog_dropped_ticks_total (queue overflow) */
    uint64_t written;          /* perflog_written_ticks_total */
    uint64_t write_failures;   /* perflog_write_failures_total */
    uint64_t queued;           /* perflog_queued_ticks (gauge) */
    int64_t db_bytes;          /* perflog_database_size_bytes; < 0: unknown, not exported */
    int64_t start_wall_ms;     /* perflog_start_time_seconds */
    int64_t last_tick_wall_ms; /* perflog_last_tick_timestamp_seconds; 0: none yet */
    int64_t last_collect_ns;   /* perflog_collect_duration_seconds (gauge) */
};

/*
 * Append the exposition of tick `t` (may be NULL before the first tick: then only the self
 * metrics) and `self` to `out`. Returns 0 or -ENOMEM. Thread-safe (reads only its arguments).
 *
 * Only fields whose raw_mask bit is set are exported; a family without any sample is left out,
 * HELP and TYPE included, and so is perflog_cpu_seconds_total when self->clk_tck <= 0 (or self is
 * NULL, which also leaves out the self metrics). Integer results are printed exactly (byte counts
 * past 2^53 too); a byte of an instance name that is not valid UTF-8 becomes U+FFFD, as
 * Prometheus requires UTF-8 label values.
 */
int metrics_render(const struct tick *t, const struct metrics_self *self, struct sbuf *out);

#endif
