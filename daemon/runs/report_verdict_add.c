/*
 * report_verdict_add.c - the report's verdicts from its series and figures; see
 * report_verdict_add.h. The rules themselves are in report_verdict.c.
 */
#include "daemon/runs/report_verdict_add.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const report_verdict_patterns[] = {
    "\\PhysicalDisk(*)\\Avg. Disk Queue Length",
    "\\PhysicalDisk(*)\\Avg. Disk sec/Read",
    "\\PhysicalDisk(*)\\Avg. Disk sec/Write",
    "\\PhysicalDisk(*)\\Disk Flushes/sec",
    "\\Processor(*)\\% User Time",
    "\\Processor(*)\\% Interrupt Time",
    "\\Processor(*)\\% DPC Time",
    "\\Processor(*)\\NET_RX Softirqs/sec",
    "\\Processor(*)\\NET_TX Softirqs/sec",
    "\\Processor(*)\\BLOCK Softirqs/sec",
    "\\Processor(*)\\TIMER Softirqs/sec",
    "\\Processor(*)\\Packets Dropped/sec",
    "\\Processor(*)\\Time Squeezes/sec",
    "\\Pressure\\IO Some %",
    "\\Memory\\Dirty Threshold Bytes",
    "\\Memory\\Dirty Background Threshold Bytes",
};
const size_t report_verdict_npatterns =
    sizeof(report_verdict_patterns) / sizeof(report_verdict_patterns[0]);

static double num(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(b ? json_object_get(o, a) : o, b ? b : a);

    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Packets of the interfaces but the loopback (perflog's own requests to its daemon). */
static double wire_packets(const json_t *r)
{
    const json_t *e;
    double sum = NAN;
    size_t i;

    json_array_foreach(json_object_get(r, "interfaces"), i, e)
    {
        const char *name = json_string_value(json_object_get(e, "instance"));
        double p = num(e, "rx_packets", NULL) + num(e, "tx_packets", NULL);

        if (name && strcmp(name, "lo") != 0 && isfinite(p))
            sum = (isnan(sum) ? 0 : sum) + p;
    }
    return sum;
}

/* The run's tail counts against it when the run wrote to a local disk: the durable moment
 * after the return. */
static double tail_ms_of(const json_t *r)
{
    const char *kind = json_string_value(json_object_get(json_object_get(r, "headline"), "kind"));
    double durable_ms = num(r, "throughput", "durable_ms"), duration_s = num(r, "duration_s", NULL);

    if (!kind || strcmp(kind, "durable") != 0 || !isfinite(durable_ms))
        return NAN;
    return durable_ms - 1000.0 * duration_s;
}

#define CEIL_MAX 64

/* The ceilings a calibration run measured: each interface's busier direction's peak second. */
static size_t ceilings(const struct report_verdict_src *src, struct verdict_ceiling *c,
                       char (*source)[64])
{
    const json_t *e;
    size_t i, n = 0;

    json_array_foreach(json_object_get(src->calibration, "interfaces"), i, e)
    {
        double rx = num(e, "peak_rx_bytes_per_s", NULL), tx = num(e, "peak_tx_bytes_per_s", NULL);
        double top = isnan(rx) || tx > rx ? tx : rx;
        const char *name = json_string_value(json_object_get(e, "instance"));

        if (n == CEIL_MAX || !name || !(top > 0))
            continue;
        snprintf(source[n], sizeof(source[n]), "calibration run %lld",
                 (long long)src->calibration_id);
        c[n] = (struct verdict_ceiling){name, top, source[n]};
        n++;
    }
    return n;
}

void report_verdict_add(json_t *r, const struct report_verdict_src *src)
{
    struct verdict_ceiling ceil[CEIL_MAX];
    char source[CEIL_MAX][64];
    size_t nceil = ceilings(src, ceil, source);
    struct verdict_series *vs = calloc(src->ns ? src->ns : 1, sizeof(*vs));
    char(*paths)[PDH_PATH_MAX] = calloc(src->ns ? src->ns : 1, sizeof(*paths));
    struct verdict_in in = {0};
    double io = num(r, "process", "io_read_bytes") + num(r, "process", "io_write_bytes");

    if (!vs || !paths) {
        json_object_set_new(r, "verdict", json_null());
        json_object_set_new(r, "tail_verdict", json_null());
        goto out;
    }
    for (size_t i = 0; i < src->ns; i++) {
        series_path(&src->s[i], paths[i], sizeof(paths[i]));
        vs[i] = (struct verdict_series){paths[i], src->res->values + i * src->res->npoints};
    }
    in = (struct verdict_in){.t_ms = src->res->ts,
                             .iv_s = src->iv_s,
                             .n = src->res->npoints,
                             .from_ms = src->start_ms,
                             .to_ms = src->end_ms,
                             .s = vs,
                             .ns = src->ns,
                             .tree_cpu_pct = src->tree_cpu_pct,
                             .tree_top = src->tree_top,
                             .tree_io_bytes = io,
                             .ceil = ceil,
                             .nceil = nceil,
                             .files = num(r, "payload", "files"),
                             .payload_bytes = num(r, "payload", "bytes"),
                             .packets = wire_packets(r),
                             .tail_ms = tail_ms_of(r),
                             .dirty_threshold_bytes = num(r, "kernel", "dirty_threshold_bytes"),
                             .dirty_background_threshold_bytes =
                                 num(r, "kernel", "dirty_background_threshold_bytes")};
    json_object_set_new(r, "verdict", verdict_compute(&in));
    if (!src->ended) {
        json_object_set_new(r, "tail_verdict", json_null());
        goto out;
    }
    /* The tail: no files or payload of its own, and no tail after it. */
    in.from_ms = src->end_ms;
    in.to_ms = src->tail_to_ms;
    in.files = in.payload_bytes = in.packets = in.tail_ms = in.tree_io_bytes = NAN;
    json_object_set_new(r, "tail_verdict", verdict_compute(&in));
out:
    free(paths);
    free(vs);
}
