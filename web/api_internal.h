/*
 * api_internal.h - what the handler files of the API share: the handler type, JSON text helpers
 * and the parameter parsers. Not for use outside web/.
 */
#ifndef PERFLOG_API_INTERNAL_H
#define PERFLOG_API_INTERNAL_H

#include "api.h"
#include "pattern.h"
#include "query.h"
#include "sbuf.h"

#define API_MAX_PATTERNS 32   /* counter= parameters in one request */
#define API_MAX_SERIES   1000 /* series one request may name */

typedef int (*api_handler_fn)(const struct api_env *env, struct reader *rd, const struct query *q,
                              struct api_response *out);

/* A handler that sees the request (its body) and the {id} of its path (0 when it has none). */
typedef int (*api_request_fn)(const struct api_env *env, const struct api_request *rq, int64_t id,
                              struct api_response *out);

int api_health(const struct api_env *env, struct reader *rd, const struct query *q,
               struct api_response *out);
int api_counters(const struct api_env *env, struct reader *rd, const struct query *q,
                 struct api_response *out);
int api_latest(const struct api_env *env, struct reader *rd, const struct query *q,
               struct api_response *out);
int api_data(const struct api_env *env, struct reader *rd, const struct query *q,
             struct api_response *out);
int api_export(const struct api_env *env, struct reader *rd, const struct query *q,
               struct api_response *out);

/* A GET handler that also sees the {id} of its path. */
typedef int (*api_id_handler_fn)(const struct api_env *env, struct reader *rd,
                                 const struct query *q, int64_t id, struct api_response *out);

/* GET /api/v1/runs/{id}/export: the run and its settle tail as PDH-CSV. */
int api_run_export(const struct api_env *env, struct reader *rd, const struct query *q, int64_t id,
                   struct api_response *out);
int api_metrics(const struct api_env *env, struct reader *rd, const struct query *q,
                struct api_response *out);

/* The copy runs (api_runs.c). */
int api_runs_list(const struct api_env *env, struct reader *rd, const struct query *q,
                  struct api_response *out);
int api_runs_create(const struct api_env *env, const struct api_request *rq, int64_t id,
                    struct api_response *out);
int api_run_get(const struct api_env *env, const struct api_request *rq, int64_t id,
                struct api_response *out);
int api_run_end(const struct api_env *env, const struct api_request *rq, int64_t id,
                struct api_response *out);
/* GET /api/v1/runs/compare?ids=A,B,...: the runs' reports and their figures side by side. */
int api_runs_compare(const struct api_env *env, struct reader *rd, const struct query *q,
                     struct api_response *out);
int api_run_delete(const struct api_env *env, const struct api_request *rq, int64_t id,
                   struct api_response *out);

/* The web dashboard (dashboard.c): GET / (the page) and GET /ui/{name} (its scripts and styles),
 * served from the copies embedded at build time. */
int api_dashboard_page(const struct api_env *env, struct reader *rd, const struct query *q,
                       struct api_response *out);
int api_dashboard_file(const struct api_env *env, const struct api_request *rq, int64_t id,
                       struct api_response *out);

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
