/*
 * api_export.c - GET /api/v1/export: a PDH-CSV (or TSV) counter log, streamed (export.c).
 */
#include "api_internal.h"
#include "export.h"
#include "log.h"
#include "series.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_FROM "-1h"

struct export_job {
    struct export_stream *x;
};

static ssize_t job_read(void *ctx, char *buf, size_t max)
{
    struct export_job *j = ctx;
    ssize_t n = export_read(j->x, buf, max);

    /* The client sees only a cut connection; the log says why. */
    if (n == -ETIMEDOUT)
        log_warnx("export: %s; the connection is closed (request_timeout_s)", export_error(j->x));
    return n;
}

static void job_free(void *ctx)
{
    struct export_job *j = ctx;

    export_close(j->x);
    free(j);
}

_Static_assert(EXPORT_MAX_PATTERNS == API_MAX_PATTERNS && EXPORT_MAX_SERIES == API_MAX_SERIES,
               "an export takes what every request takes");

/* format=, tz= and every= into *o; 1 with a 400 in *out, -ENOMEM, or 0. */
static int parse_opts(const struct query *q, struct export_opts *o, struct api_response *out)
{
    static const char *const names[3] = {"format", "tz", "every"};
    char why[160];

    if (export_parse_opts(query_get(q, "format"), query_get(q, "tz"), query_get(q, "every"), names,
                          o, why, sizeof(why)) == 0)
        return 0;
    return api_error(out, 400, "bad_parameter", "%s", why) < 0 ? -ENOMEM : 1;
}

static void disposition(const struct api_env *env, const struct export_opts *o,
                        struct api_response *out)
{
    time_t t = (time_t)(o->from_ms / 1000);
    char stamp[32] = "";
    struct tm tm;

    if (gmtime_r(&t, &tm))
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    snprintf(out->disposition, sizeof(out->disposition),
             "attachment; filename=\"perflog-%.60s-%s.%s\"", env->host, stamp,
             o->format == CSV_TAB ? "tsv" : "csv");
    for (char *p = out->disposition + 31; *p; p++)
        if (*p == '"' || *p == '\\' || *p == '/' || (unsigned char)*p < 0x20)
            *p = '_'; /* a host name never has these; keep the header well-formed anyway */
    out->disposition[strlen(out->disposition) - 1] = '"';
}

/* The export of `o` (range and options set) for the patterns of q (all counters when dflt_all and
 * none are given): a streamed answer in *out. */
static int export_answer(const struct api_env *env, struct reader *rd, const struct query *q,
                         int64_t run_pid, struct export_opts *o, struct api_response *out)
{
    struct pattern pats[API_MAX_PATTERNS];
    struct series_set set = {0};
    struct export_job *job = NULL;
    size_t npat;
    int rc;

    if ((rc = api_patterns(q, "counter", run_pid != 0, pats, &npat, out)) ||
        (rc = parse_opts(q, o, out)))
        return rc < 0 ? rc : 0;
    rc = export_columns(rd, env->live, pats, npat, run_pid, o, &set);
    if (rc == -E2BIG || rc == -EIO) {
        rc = rc == -E2BIG ? api_error(out, 400, "too_many_series",
                                      "the patterns match more than %d counters; narrow them",
                                      API_MAX_SERIES)
                          : api_error(out, 503, "database_unavailable",
                                      "the database cannot be read: %s", reader_errmsg(rd));
        goto out;
    }
    job = rc == 0 ? calloc(1, sizeof(*job)) : NULL;
    if (!job || export_open(rd, env->live, set.s, set.n, o, &job->x) < 0) {
        free(job);
        rc = -ENOMEM;
        goto out;
    }
    out->status = 200;
    out->content_type = o->format == CSV_TAB ? "text/tab-separated-values; charset=utf-8"
                                             : "text/csv; charset=utf-8";
    out->stream = job_read;
    out->stream_free = job_free;
    out->stream_ctx = job;
    disposition(env, o, out);
out:
    series_set_free(&set);
    export_opts_clear(o); /* the stream has its own copy of the zone */
    return rc < 0 ? rc : 0;
}

int api_export(const struct api_env *env, struct reader *rd, const struct query *q,
               struct api_response *out)
{
    struct export_opts o = {
        .host = env->host, .interval_ms = env->interval_ms, .timeout_ms = env->request_timeout_ms};
    int rc = api_time_range(env, q, DEFAULT_FROM, &o.from_ms, &o.to_ms, out);

    if (rc)
        return rc < 0 ? rc : 0;
    return export_answer(env, rd, q, 0, &o, out);
}

int api_run_export(const struct api_env *env, struct reader *rd, const struct query *q, int64_t id,
                   struct api_response *out)
{
    struct export_opts o = {
        .host = env->host, .interval_ms = env->interval_ms, .timeout_ms = env->request_timeout_ms};
    struct reader_run run = {.pid = -1};
    int rc;

    if (!env->run_window)
        return api_error(out, 503, "runs_unavailable", "this server keeps no runs");
    rc = env->run_window(env->run_window_arg, id, &run);
    if (rc == -ENOENT)
        return api_error(out, 404, "not_found", "no run %lld", (long long)id);
    if (rc < 0)
        return api_error(out, 503, "database_unavailable", "the run cannot be read");
    export_run_window(&run, api_now_ms(env), &o.from_ms, &o.to_ms);
    return export_answer(env, rd, q, run.pid > 0 ? run.pid : -1, &o, out);
}
