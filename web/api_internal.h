/*
 * api_internal.h - what the handler files of the API share: the handler type, JSON text helpers
 * and the parameter parsers. Not for use outside web/.
 */
#ifndef PERFLOG_API_INTERNAL_H
#define PERFLOG_API_INTERNAL_H

#include "base/sbuf.h"
#include "collectors/model/pattern.h"
#include "web/api.h"
#include "web/query.h"

#define API_MAX_PATTERNS 32   /* counter= parameters in one request */
#define API_MAX_SERIES   1000 /* series one request may name */

/*
 * What a handler is called with: every route's handler has the one signature api_handler_fn, and
 * takes from the call what it needs. All of it is borrowed for the call.
 */
struct api_call {
    const struct api_env *env;
    struct reader *rd;            /* the request's reader of the database */
    const struct api_request *rq; /* method, path, headers, body */
    const struct query *q; /* the parsed query string, its keys checked against the route's */
    int64_t id;            /* the {id} segment of the path, 0 when it has none */
};

/* A route's handler: fills *out (a 4xx JSON error is an answer too, returning 0); a negative errno
 * only when no answer could be made (-ENOMEM). */
typedef int (*api_handler_fn)(const struct api_call *c, struct api_response *out);

/* GET /api/v1/health, /counters, /latest, /data, /export, /metrics (api_read.c, api_data.c,
 * api_export.c). */
int api_health(const struct api_call *c, struct api_response *out);
int api_counters(const struct api_call *c, struct api_response *out);
int api_latest(const struct api_call *c, struct api_response *out);
int api_data(const struct api_call *c, struct api_response *out);
int api_export(const struct api_call *c, struct api_response *out);
int api_metrics(const struct api_call *c, struct api_response *out);
/* GET /api/v1/runs/{id}/export: the run and its settle tail as PDH-CSV. */
int api_run_export(const struct api_call *c, struct api_response *out);

/* The copy runs (api_runs.c). */
int api_runs_list(const struct api_call *c, struct api_response *out);
int api_runs_create(const struct api_call *c, struct api_response *out);
int api_run_get(const struct api_call *c, struct api_response *out);
int api_run_end(const struct api_call *c, struct api_response *out);
int api_run_delete(const struct api_call *c, struct api_response *out);
/* GET /api/v1/runs/compare?ids=A,B,...: the runs' reports and their figures side by side. */
int api_runs_compare(const struct api_call *c, struct api_response *out);

/* The web dashboard (dashboard.c): GET / (the page) and GET /ui/{name} (its scripts and styles),
 * served from the copies embedded at build time. */
int api_dashboard_page(const struct api_call *c, struct api_response *out);
int api_dashboard_file(const struct api_call *c, struct api_response *out);

/* The token in force (NULL: none) and whether reads need it. */
const char *api_auth_of(const struct api_env *env, int *read_too);

/* Parse from= and to= (defaults dflt_from and "now") into *from_ms, *to_ms, from <= to. Returns
 * 0, or 1 with a 400 answer in *out, or -ENOMEM. */
int api_time_range(const struct api_env *env, const struct query *q, const char *dflt_from,
                   int64_t *from_ms, int64_t *to_ms, struct api_response *out);

/* Append a JSON string literal (quoted, escaped; invalid UTF-8 bytes become U+FFFD). */
void api_json_str(struct sbuf *b, const char *s);
/* Append a JSON number: the shortest decimal that reads back as the same double; NaN -> null. */
void api_json_num(struct sbuf *b, double v);
/* Hand a finished sbuf to *out as a 200 JSON (or `content_type`) answer. -ENOMEM on failure. */
int api_reply(struct api_response *out, struct sbuf *b, const char *content_type);

/*
 * Parse every value of parameter `key` as a counter pattern into pats[0..*n). With none given,
 * `dflt_all` non-zero yields the patterns of every counter, else a 400. Returns 0, or fills *out
 * with a 400 error and returns 1 (-ENOMEM on allocation failure).
 */
int api_patterns(const struct query *q, const char *key, int dflt_all, struct pattern *pats,
                 size_t *n, struct api_response *out);

#endif
