/*
 * api_data.c - GET /api/v1/data: parameters, then data.c, then the JSON answer.
 */
#include "collectors/model/timeparse.h"
#include "storage/query/data.h"
#include "storage/query/series.h"
#include "web/api_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FROM "-10m"
#define DEFAULT_TO   "now"

/* 1 when *out holds an error answer, -ENOMEM, or 0 with *ms set. */
static int time_param(const struct api_env *env, const struct query *q, const char *key,
                      const char *dflt, int64_t now, int64_t *ms, struct api_response *out)
{
    const char *v = query_get(q, key);
    int rc;

    if (!v)
        v = dflt;
    rc = tp_parse_time(v, strlen(v), now, ms);
    (void)env;
    if (rc == 0)
        return 0;
    return api_error(out, 400, "bad_time",
                     "%s: cannot read '%.100s' as a time%s (use RFC 3339 like "
                     "2026-11-29T18:00:00Z, Unix seconds, now, -10m or now-1h)",
                     key, v, rc == -ERANGE ? " between 1970 and 9999" : "") < 0
               ? -ENOMEM
               : 1;
}

int api_time_range(const struct api_env *env, const struct query *q, const char *dflt_from,
                   int64_t *from_ms, int64_t *to_ms, struct api_response *out)
{
    int64_t now = api_now_ms(env);
    int rc;

    if ((rc = time_param(env, q, "from", dflt_from, now, from_ms, out)) ||
        (rc = time_param(env, q, "to", DEFAULT_TO, now, to_ms, out)))
        return rc;
    if (*from_ms <= *to_ms)
        return 0;
    rc = api_error(out, 400, "bad_time", "from (%lld) is after to (%lld)", (long long)*from_ms,
                   (long long)*to_ms);
    return rc < 0 ? rc : 1;
}

static int parse_params(const struct api_env *env, const struct query *q, struct data_req *req,
                        struct api_response *out)
{
    const char *step = query_get(q, "step"), *agg = query_get(q, "agg");
    int rc;

    memset(req, 0, sizeof(*req));
    if ((rc = api_time_range(env, q, DEFAULT_FROM, &req->from_ms, &req->to_ms, out)))
        return rc;
    if (step && tp_parse_duration(step, strlen(step), &req->step_ms) < 0)
        rc = api_error(out, 400, "bad_step",
                       "step: cannot read '%.100s' as a duration (e.g. 60, 10s, 5m, 1h)", step);
    else if (agg && strcmp(agg, "avg") && strcmp(agg, "min") && strcmp(agg, "max"))
        rc = api_error(out, 400, "bad_parameter", "agg: '%.100s' is not avg, min or max", agg);
    else
        rc = 1; /* no error */
    if (rc != 1)
        return rc < 0 ? rc : 1; /* an error answer is in *out */
    req->agg = !agg || !strcmp(agg, "avg") ? DATA_AVG : !strcmp(agg, "min") ? DATA_MIN : DATA_MAX;
    req->max_points = env->max_points;
    req->interval_ms = env->interval_ms;
    return 0;
}

static void render(const struct api_env *env, const struct data_req *req,
                   const struct series_set *set, const struct data_result *res, struct sbuf *b)
{
    static const char *const aggs[] = {"avg", "min", "max"};
    char path[512];

    sbuf_printf(b, "{\"host\":");
    api_json_str(b, env->host);
    sbuf_printf(b, ",\"from\":%lld,\"to\":%lld,\"step_ms\":%lld,\"tier\":\"%s\",\"agg\":\"%s\"",
                (long long)req->from_ms, (long long)req->to_ms, (long long)res->step_ms, res->tier,
                aggs[req->agg]);
    sbuf_printf(b, ",\"timestamps\":[");
    for (size_t i = 0; i < res->npoints; i++) {
        if (i)
            sbuf_append(b, ",", 1);
        sbuf_int(b, res->ts[i]);
    }
    sbuf_printf(b, "],\"series\":[");
    for (size_t s = 0; s < set->n; s++) {
        const double *v = res->values + s * res->npoints;

        series_path(&set->s[s], path, sizeof(path));
        sbuf_printf(b, "%s{\"path\":", s ? "," : "");
        api_json_str(b, path);
        sbuf_printf(b, ",\"unit\":");
        api_json_str(b, series_unit(&set->s[s]));
        sbuf_printf(b, ",\"values\":[");
        for (size_t i = 0; i < res->npoints; i++) {
            if (i)
                sbuf_append(b, ",", 1);
            api_json_num(b, v[i]);
        }
        sbuf_printf(b, "]}");
    }
    sbuf_printf(b, "]}\n");
}

int api_data(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    struct reader *rd = c->rd;
    const struct query *q = c->q;
    struct pattern pats[API_MAX_PATTERNS];
    struct series_set set = {0};
    struct data_result res = {0};
    struct data_req req;
    struct tick *latest = NULL;
    struct sbuf b = {0};
    char why[512];
    size_t npat;
    int rc;

    if ((rc = api_patterns(q, "counter", 0, pats, &npat, out)) ||
        (rc = parse_params(env, q, &req, out)))
        return rc < 0 ? rc : 0;
    latest = env->live ? live_latest(env->live) : NULL;
    rc = series_resolve(rd, latest, pats, npat, API_MAX_SERIES, &set);
    tick_free(latest);
    if (rc == -E2BIG) {
        rc = api_error(out, 400, "too_many_series",
                       "the patterns match more than %d counters; narrow them", API_MAX_SERIES);
        goto out;
    }
    if (rc == -EIO) {
        rc = api_error(out, 503, "database_unavailable", "the database cannot be read: %s",
                       reader_errmsg(rd));
        goto out;
    }
    if (rc < 0)
        goto out;
    rc = data_query(rd, env->live, set.s, set.n, &req, &res, why, sizeof(why));
    if (rc == -E2BIG) {
        rc = api_error(out, 400, "too_many_points", "%s", why);
        goto out;
    }
    if (rc == -EIO) {
        rc = api_error(out, 503, "database_unavailable", "the database cannot be read: %s", why);
        goto out;
    }
    if (rc < 0)
        goto out;
    render(env, &req, &set, &res, &b);
    rc = api_reply(out, &b, NULL);
out:
    data_result_free(&res);
    series_set_free(&set);
    return rc < 0 ? rc : 0;
}
