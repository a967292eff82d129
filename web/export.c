/*
 * export.c - a PDH-CSV export as a pull stream; see export.h.
 *
 * The range is read a window of ticks at a time through data_query (raw ticks, the same values as
 * /api/v1/data), each window formatted into a buffer that export_read drains. Memory holds one
 * window: at most WINDOW_TICKS rows of the series, fewer with many series (WINDOW_CELLS).
 *
 * Each window starts at the next tick that exists (the index finds it in one step), so a range
 * with years of nothing in it costs one lookup, not one query per empty hour. export_read formats
 * at most one window per call before it returns what it has, so the HTTP worker that pulls it
 * gets back to its other connections (and notices a client that has gone) between windows.
 */
#include "export.h"

#include "clock.h"
#include "data.h"
#include "report_proc.h"
#include "tz.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW_TICKS 3600   /* rows read and formatted per step at most */
#define WINDOW_CELLS 360000 /* values per step at most (100 series of WINDOW_TICKS rows) */
#define WINDOW_MIN   60     /* rows per step at least, however many series */

struct export_stream {
    struct reader *rd;
    struct live *live;
    struct series *s;
    size_t ns;
    struct export_opts o;
    int64_t next_ms;     /* start of the next window */
    int64_t span_ms;     /* length of a window */
    int64_t deadline_ns; /* clock_mono_ns() after which export_read fails; 0: none */
    uint64_t row_no;     /* rows seen, for `every` */
    int header_done;
    int done;
    struct sbuf out; /* formatted, not yet read */
    size_t out_pos;
    char err[256];
};

/* Rows per window for ns series: the work of one export_read stays about the same however wide. */
static int64_t window_ticks(size_t ns)
{
    size_t n = WINDOW_CELLS / (ns ? ns : 1);

    return n > WINDOW_TICKS ? WINDOW_TICKS : n < WINDOW_MIN ? WINDOW_MIN : (int64_t)n;
}

int export_open(struct reader *rd, struct live *live, const struct series *s, size_t ns,
                const struct export_opts *o, struct export_stream **out)
{
    struct export_stream *x = calloc(1, sizeof(*x));

    if (!x)
        return -ENOMEM;
    x->s = malloc((ns ? ns : 1) * sizeof(*s));
    if (!x->s) {
        free(x);
        return -ENOMEM;
    }
    if (ns) /* s may be NULL when nothing matched */
        memcpy(x->s, s, ns * sizeof(*s));
    x->ns = ns;
    x->rd = rd;
    x->live = live;
    x->o = *o;
    /* the stream's own copy: it may outlive the caller's options (an HTTP answer streams on) */
    x->o.zone = o->zone ? tz_copy(o->zone) : NULL;
    if (o->zone && !x->o.zone) {
        free(x->s);
        free(x);
        return -ENOMEM;
    }
    if (x->o.every < 1)
        x->o.every = 1;
    if (x->o.interval_ms <= 0)
        x->o.interval_ms = 1000;
    x->next_ms = o->from_ms;
    x->span_ms = x->o.interval_ms * window_ticks(ns);
    if (o->timeout_ms > 0)
        x->deadline_ns = clock_mono_ns() + o->timeout_ms * 1000000;
    *out = x;
    return 0;
}

/* The header, its zone cell for first_ms: the first row's time (csv.h), or `from` with no rows. */
static void header(struct export_stream *x, int64_t first_ms)
{
    struct csv_zone zone;
    char path[512];

    if (x->o.zone)
        csv_zone_in(x->o.zone, first_ms, &zone);
    else
        csv_zone_at(x->o.utc, first_ms, &zone);
    csv_first_cell(&x->out, x->o.format, &zone);
    for (size_t i = 0; i < x->ns; i++) {
        series_path(&x->s[i], path, sizeof(path));
        csv_path_cell(&x->out, x->o.format, x->o.host, path);
    }
    csv_end_line(&x->out);
}

/* Move next_ms to the first tick at or after it, in the database or in memory; done when there
 * is none up to to_ms. Returns 0, or -EIO. */
static int skip_gap(struct export_stream *x)
{
    int64_t next = INT64_MAX, t, oldest;
    struct tick *lt = NULL;
    int rc = x->rd ? reader_next_tick(x->rd, x->next_ms, &t) : -ENOENT;

    if (rc == 0)
        next = t;
    else if (rc != -ENOENT) {
        snprintf(x->err, sizeof(x->err), "%s", reader_errmsg(x->rd));
        return -EIO;
    }
    if (x->live && live_range(x->live, x->next_ms, x->o.to_ms, &lt, 1, &oldest) == 1) {
        next = lt->wall_ms < next ? lt->wall_ms : next;
        tick_free(lt);
    }
    if (next > x->o.to_ms)
        x->done = 1;
    else if (next > x->next_ms)
        x->next_ms = next;
    return 0;
}

/* Read and format the next window. Returns 0, or a negative errno. */
static int next_window(struct export_stream *x)
{
    int64_t span = x->span_ms, to;
    struct data_req req = {
        .agg = DATA_AVG, .max_points = WINDOW_TICKS * 4, .interval_ms = x->o.interval_ms};
    struct data_result res = {0};
    int rc = skip_gap(x);

    if (rc < 0)
        return rc;
    if (!x->done) {
        to = x->next_ms > x->o.to_ms - span + 1 ? x->o.to_ms : x->next_ms + span - 1;
        req.from_ms = x->next_ms;
        req.to_ms = to;
        rc = data_query(x->rd, x->live, x->s, x->ns, &req, &res, x->err, sizeof(x->err));
        if (rc < 0)
            return rc;
        x->next_ms = to + 1;
        if (to >= x->o.to_ms)
            x->done = 1;
    }
    /* The header waits for the first row, whose instant names the zone (a DST change may lie
     * between `from` and the first tick); with no row at all it is written at the end. */
    if (!x->header_done && (res.npoints || x->done)) {
        header(x, res.npoints ? res.ts[0] : x->o.from_ms);
        x->header_done = 1;
    }
    for (size_t p = 0; p < res.npoints; p++) {
        if (x->row_no++ % (uint64_t)x->o.every)
            continue;
        if (x->o.zone)
            csv_time_cell_in(&x->out, res.ts[p], x->o.zone);
        else
            csv_time_cell(&x->out, res.ts[p], x->o.utc);
        for (size_t i = 0; i < x->ns; i++)
            csv_value_cell(&x->out, x->o.format, res.values[i * res.npoints + p]);
        csv_end_line(&x->out);
    }
    data_result_free(&res);
    return sbuf_ok(&x->out) ? 0 : -ENOMEM;
}

/* Whether the timeout has passed; then the message is set. */
static int past_deadline(struct export_stream *x)
{
    if (!x->deadline_ns || clock_mono_ns() <= x->deadline_ns)
        return 0;
    snprintf(x->err, sizeof(x->err), "stopped after %lld s (the request timeout), %llu rows in",
             (long long)(x->o.timeout_ms / 1000), (unsigned long long)x->row_no);
    return 1;
}

ssize_t export_read(struct export_stream *x, char *buf, size_t max)
{
    size_t n;
    int rc;

    /* checked at every call: a slow reader may take longer than the timeout to drain one window */
    if ((x->out_pos < x->out.len || !x->done) && past_deadline(x))
        return -ETIMEDOUT;
    while (x->out_pos == x->out.len) {
        x->out.len = 0;
        x->out_pos = 0;
        if (x->done)
            return 0;
        /* and between windows: with `every`, many may pass before one gives a row */
        if ((rc = next_window(x)) < 0 || (x->out.len == 0 && !x->done && past_deadline(x)))
            return rc < 0 ? rc : -ETIMEDOUT;
        if (!sbuf_ok(&x->out))
            return -ENOMEM;
    }
    n = x->out.len - x->out_pos;
    if (n > max)
        n = max;
    memcpy(buf, x->out.s + x->out_pos, n);
    x->out_pos += n;
    return (ssize_t)n;
}

int export_parse_opts(const char *format, const char *tz, const char *every,
                      const char *const names[3], struct export_opts *o, char *why, size_t whylen)
{
    char *end = NULL;
    long n = 1;
    struct tz_zone *zone = NULL;
    int rc;

    if (every) {
        errno = 0;
        n = strtol(every, &end, 10);
    }
    if (format && strcmp(format, "csv") && strcmp(format, "tsv"))
        snprintf(why, whylen, "%s: '%.50s' is not csv or tsv", names[0], format);
    else if (tz && strcmp(tz, "local") && strcmp(tz, "utc") && (rc = tz_load(tz, &zone)) < 0) {
        if (rc == -ENOMEM)
            return -ENOMEM;
        snprintf(why, whylen,
                 "%s: '%.50s' is not local, utc, +HH:MM, -HH:MM or a zone of the tz database "
                 "(Europe/Paris)",
                 names[1], tz);
    } else if (every && (!*every || *end || errno || n < 1 || n > EXPORT_MAX_EVERY))
        snprintf(why, whylen, "%s: '%.50s' is not a whole number from 1 to %d (keep every Nth row)",
                 names[2], every, EXPORT_MAX_EVERY);
    else {
        o->format = format && !strcmp(format, "tsv") ? CSV_TAB : CSV_COMMA;
        o->utc = tz && !strcmp(tz, "utc");
        o->zone = zone;
        o->every = (int)n;
        return 0;
    }
    tz_free(zone);
    return -EINVAL;
}

void export_opts_clear(struct export_opts *o)
{
    tz_free(o->zone);
    o->zone = NULL;
}

int export_columns(struct reader *rd, struct live *live, const struct pattern *pats, size_t npat,
                   int64_t run_pid, const struct export_opts *o, struct series_set *set)
{
    struct tick *latest = live ? live_latest(live) : NULL;
    int rc = series_resolve(rd, latest, pats, npat, EXPORT_MAX_SERIES, set);

    tick_free(latest);
    if (rc == 0 && run_pid)
        rc = report_proc_restrict(rd, live, run_pid > 0 && run_pid <= INT32_MAX ? (int)run_pid : -1,
                                  o->from_ms - o->interval_ms, o->to_ms, set);
    return rc;
}

void export_run_window(const struct reader_run *r, int64_t now_ms, int64_t *from_ms, int64_t *to_ms)
{
    int open = !strcmp(r->status, "running") || !strcmp(r->status, "ending");

    *from_ms = r->start_ms;
    *to_ms = r->settled_ms > 0 ? r->settled_ms : !open && r->end_ms > 0 ? r->end_ms : now_ms;
    if (*to_ms < *from_ms)
        *to_ms = *from_ms;
}

const char *export_error(const struct export_stream *x)
{
    return x->err;
}

void export_close(struct export_stream *x)
{
    if (!x)
        return;
    sbuf_free(&x->out);
    tz_free(x->o.zone);
    free(x->s);
    free(x);
}
