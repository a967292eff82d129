/*
 * report_figures.c - the pure figures of the run report: when the run's written data was on the
 * device (durable_ms), the two phases of the tail, and which figure heads the report. See
 * report.h; docs/report.md defines each figure.
 */
#include "daemon/runs/report.h"

#include <math.h>
#include <stddef.h>

#define MIB 1048576.0

double report_level_slack(double peak_excess_bytes)
{
    /* The daemon's settle rule (daemon/runs.c): back to the start level within 8 MiB or 5 % of
     * the peak, whichever is larger, so that a neighbour's few dirty pages do not hold the
     * figure open. */
    double s = 0.05 * (isfinite(peak_excess_bytes) ? peak_excess_bytes : 0.0);

    return s > 8.0 * MIB ? s : 8.0 * MIB;
}

/*
 * The first point at or after end_ms whose excess is at or below slack is the first moment the
 * series saw the data on the device; the crossing lies between it and the point before, and the
 * excess falls about linearly while the kernel writes back at a steady rate, so interpolate.
 */
int64_t report_durable_at(const struct report_point *p, size_t n, int64_t end_ms, double slack)
{
    for (size_t i = 0; i < n; i++) {
        double prev = i ? p[i - 1].excess_bytes : NAN;
        int64_t at;

        if (p[i].t_ms < end_ms || isnan(p[i].excess_bytes) || p[i].excess_bytes > slack)
            continue;
        if (!isnan(prev) && prev > slack) {
            at = p[i - 1].t_ms + (int64_t)llround((double)(p[i].t_ms - p[i - 1].t_ms) *
                                                  (prev - slack) / (prev - p[i].excess_bytes));
            return at > end_ms ? at : end_ms;
        }
        /* down already when the command returned: its writes went straight to the device */
        if (p[i].t_ms == end_ms || (!isnan(prev) && p[i - 1].t_ms < end_ms))
            return end_ms;
        return p[i].t_ms;
    }
    return -1;
}

/*
 * The wait ends at the last point after end_ms (before durable_at_ms) whose excess is still
 * within slack of the highest excess since the end: until then the data sat there. The write
 * then began within the next interval, as long before that point as its drop takes at the
 * devices' peak write rate, and ended at the durable moment. The amount written is the excess
 * the wait ended with: the run's data, not the device bytes, which are everyone's.
 */
/* The devices' busiest write second among the ticks whose interval overlaps [from, to]. */
static double busiest_write(const struct report_point *p, size_t n, int64_t from_ms, int64_t to_ms)
{
    double best = NAN;

    for (size_t i = 0; i < n; i++)
        if (p[i].iv_s > 0 && !isnan(p[i].write_bytes_per_s) && p[i].t_ms > from_ms &&
            (double)p[i].t_ms - p[i].iv_s * 1000.0 < (double)to_ms)
            best = isnan(best) || p[i].write_bytes_per_s > best ? p[i].write_bytes_per_s : best;
    return best;
}

void report_tail_phases(const struct report_point *p, size_t n, int64_t end_ms,
                        int64_t durable_at_ms, double slack, struct report_tail *out)
{
    double top = NAN, rate;
    size_t flat = n, next = n, last = n;
    int64_t stop_ms, start_ms;

    *out = (struct report_tail){NAN, NAN, NAN, NAN, NAN};
    for (size_t i = 0; i < n; i++) {
        if (p[i].t_ms < end_ms || isnan(p[i].excess_bytes))
            continue;
        if (durable_at_ms >= 0 && i && p[i - 1].t_ms >= durable_at_ms)
            break;
        last = i;
        top = isnan(top) || p[i].excess_bytes > top ? p[i].excess_bytes : top;
        if (next != n)
            continue;
        if (p[i].excess_bytes >= top - slack)
            flat = i;
        else
            next = i;
    }
    if (last == n)
        return; /* nothing known after the end */
    stop_ms = durable_at_ms >= 0 ? durable_at_ms : p[last].t_ms;
    if (next == n) { /* flat to the last point: all wait */
        out->wait_ms = (double)(stop_ms - end_ms);
        out->write_ms = out->write_bytes = 0;
        return;
    }
    rate = busiest_write(p, n, p[flat].t_ms, stop_ms);
    start_ms =
        p[next].t_ms -
        (isfinite(rate) && rate > 0
             ? (int64_t)llround(1000.0 * (p[flat].excess_bytes - p[next].excess_bytes) / rate)
             : p[next].t_ms - p[flat].t_ms);
    start_ms = start_ms < p[flat].t_ms ? p[flat].t_ms : start_ms;
    start_ms = start_ms < end_ms ? end_ms : start_ms;
    stop_ms = stop_ms < start_ms ? start_ms : stop_ms;
    out->wait_ms = (double)(start_ms - end_ms);
    out->write_ms = (double)(stop_ms - start_ms);
    out->write_bytes = p[flat].excess_bytes;
    out->write_bytes_per_s = out->write_ms > 0 ? out->write_bytes * 1000.0 / out->write_ms : NAN;
    out->peak_write_bytes_per_s = busiest_write(p, n, start_ms, stop_ms);
}

void report_pick_headline(int writes, double durable, double device_read, double peak_second,
                          struct report_headline *out)
{
    out->kind = writes ? "durable" : "device_read";
    out->bytes_per_s = writes ? durable : device_read;
    out->capped = 0;
    /* A figure above the device's busiest second is arithmetic, not something the device did. */
    if (isfinite(out->bytes_per_s) && isfinite(peak_second) && out->bytes_per_s > peak_second) {
        out->bytes_per_s = peak_second;
        out->capped = 1;
    }
}
