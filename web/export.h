/*
 * export.h - a PDH-CSV export as a stream: rows are produced as the database is read, a window of
 * ticks at a time, so memory does not grow with the time range. Used by GET /api/v1/export (the
 * HTTP server pulls bytes with export_read) and by `perflog export --db` (reading a file directly).
 */
#ifndef PERFLOG_EXPORT_H
#define PERFLOG_EXPORT_H

#include "csv.h"
#include "live.h"
#include "pattern.h"
#include "reader.h"
#include "series.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The limits of one export, the same through the daemon and from a file. */
#define EXPORT_MAX_PATTERNS 32      /* counter patterns */
#define EXPORT_MAX_SERIES   1000    /* columns */
#define EXPORT_MAX_EVERY    1000000 /* keep every Nth row: N at most */

struct export_opts {
    int64_t from_ms, to_ms; /* inclusive */
    enum csv_format format;
    int utc; /* timestamps and header zone in UTC, else local time */
    struct tz_zone
        *zone;           /* tz=NAME or tz=+HH:MM: this zone (owned; export_opts_clear), else NULL */
    int every;           /* keep every Nth row (relog -t N); 1 = all */
    const char *host;    /* for the \\HOST part of the column names */
    int64_t interval_ms; /* the sampling interval, to size the windows */
    int64_t
        timeout_ms; /* export_read fails with -ETIMEDOUT this long after export_open; 0: never */
};

struct export_stream;

struct tz_zone;

/*
 * The options format (csv, tsv), tz (local, utc, +HH:MM/-HH:MM, or a zone of the tz database:
 * tz_load) and every (1..EXPORT_MAX_EVERY) as the user gave
 * them (NULL: csv, local, 1) into *o. names[3] are what the caller calls the three ("format", "tz",
 * "every" in a URL; "--format", "--tz", "-t" on a command line). Returns 0, or -EINVAL with one
 * line in why (e.g. "tz: 'x' is not local or utc") and *o untouched.
 */
int export_parse_opts(const char *format, const char *tz, const char *every,
                      const char *const names[3], struct export_opts *o, char *why, size_t whylen);

/* Release what export_parse_opts put in *o (its zone); accepts one it did not fill. */
void export_opts_clear(struct export_opts *o);

/*
 * The columns of an export into *set (the caller frees it): the series of pats[0..npat) that the
 * log (rd) or memory (live, may be NULL) knows. For a run's export (run_pid != 0), the Process
 * columns are only the run's own processes: run_pid and its descendants in [o->from_ms - one
 * interval, o->to_ms] (run_pid -1: a run without a pid, none). Returns 0, -E2BIG (more than
 * EXPORT_MAX_SERIES), -EIO (reader_errmsg has it) or -ENOMEM.
 */
int export_columns(struct reader *rd, struct live *live, const struct pattern *pats, size_t npat,
                   int64_t run_pid, const struct export_opts *o, struct series_set *set);

/*
 * The window of run r's export, [*from_ms, *to_ms]: from its start to the end of its settle tail
 * once settled; while it runs or settles (running, ending) up to now_ms, since its tail is still
 * being recorded; a run with no tail (interrupted, failed) up to its end; up to now_ms when no end
 * is recorded. Never before the start. Pure: the daemon's GET /api/v1/runs/{id}/export and
 * `perflog export --db --run` both call it, so both export the same rows.
 */
void export_run_window(const struct reader_run *r, int64_t now_ms, int64_t *from_ms,
                       int64_t *to_ms);

/*
 * Start an export of series s[0..ns) (copied) over the raw ticks of the range. `rd` (may be NULL)
 * and `live` (may be NULL) must outlive the stream; `rd` is used only inside export_read, by the
 * calling thread. Returns 0 and sets *out, or -ENOMEM.
 */
int export_open(struct reader *rd, struct live *live, const struct series *s, size_t ns,
                const struct export_opts *o, struct export_stream **out);

/* Copy up to max bytes of the export into buf, reading at most one window of ticks to get them
 * (with `every` > 1, as many windows as it takes to produce a row). Returns the count, 0 at the
 * end, or a negative errno (-EIO: the database failed, -ETIMEDOUT: past the timeout; the message
 * is in export_error). */
ssize_t export_read(struct export_stream *x, char *buf, size_t max);

const char *export_error(const struct export_stream *x);
void export_close(struct export_stream *x); /* accepts NULL */

#endif
