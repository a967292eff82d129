/*
 * api_runs.c - the copy-run endpoints (docs/design.md §5): start, end, read,
 * list, delete and compare runs through the run manager (daemon/runs.h). Bodies are JSON objects
 * parsed by Jansson with strict types: a wrong type is 400 bad_body naming the field.
 */
#include "collectors/model/timeparse.h"
#include "daemon/runs/peer_url.h"
#include "daemon/runs/report_compare.h"
#include "daemon/runs/runs.h"
#include "web/api_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEXT_BYTES  4096      /* label, command, a peer URL */
#define MAX_TOOL_OUTPUT (1 << 20) /* tool_output */
#define MAX_PEERS       16
#define SETTLE_MIN_S    1
#define SETTLE_MAX_S    3600

/* Hand a JSON value (stolen) to *out with `status`. */
static int reply_json(struct api_response *out, int status, json_t *j)
{
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;

    json_decref(j);
    if (!s)
        return -ENOMEM;
    out->status = status;
    out->content_type = "application/json";
    out->body = s;
    out->body_len = strlen(s);
    return 0;
}

static int no_runs(struct api_response *out)
{
    return api_error(out, 503, "runs_unavailable", "this server does not keep runs");
}

static int bad_body(struct api_response *out, const char *field, const char *what)
{
    return api_error(out, 400, "bad_body", "%s: %s", field, what);
}

static json_t *int_or_null(int64_t v)
{
    return v == RUNS_DB_NULL ? json_null() : json_integer(v);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *utc_or_null(int64_t ms)
{
    char buf[40];

    return ms == RUNS_DB_NULL ? json_null() : json_string(tp_format_utc(ms, buf, sizeof(buf)));
}

/* The verdicts of a stored report for the list of runs, one row per run to compare (the limit
 * moving as a setting changes): {"limit", "instance", "utilisation", "tail_limit",
 * "tail_instance"}, or null for a run without a report or a report without a verdict. */
static json_t *verdict_summary(const char *report_json)
{
    json_t *rep = report_json ? json_loads(report_json, 0, NULL) : NULL, *out = NULL;
    const json_t *v = json_object_get(rep, "verdict"), *t = json_object_get(rep, "tail_verdict");
    const char *const keys[] = {"limit", "instance", "utilisation"};

    if (json_is_object(v)) {
        out = json_object();
        for (size_t i = 0; i < 3; i++) {
            json_t *x = json_object_get(v, keys[i]);

            json_object_set_new(out, keys[i], x ? json_incref(x) : json_null());
        }
        json_object_set_new(out, "tail_limit",
                            json_incref(json_is_object(t) && json_object_get(t, "limit")
                                            ? json_object_get(t, "limit")
                                            : json_null()));
        json_object_set_new(out, "tail_instance",
                            json_incref(json_is_object(t) && json_object_get(t, "instance")
                                            ? json_object_get(t, "instance")
                                            : json_null()));
    }
    json_decref(rep);
    return out ? out : json_null();
}

/* The run JSON of SPEC; with_report adds "report" (null until there is one), without it the
 * list's "verdict" summary. */
static json_t *run_json(const struct runs_db_row *r, int with_report)
{
    json_t *j = json_object(), *rep;

    if (!j)
        return NULL;
    json_object_set_new(j, "id", json_integer(r->id));
    json_object_set_new(j, "label", str_or_null(r->label));
    json_object_set_new(j, "command", str_or_null(r->command));
    json_object_set_new(j, "host", str_or_null(r->host));
    json_object_set_new(j, "pid", int_or_null(r->pid));
    json_object_set_new(j, "status", str_or_null(r->status));
    json_object_set_new(j, "start_utc", utc_or_null(r->start_ms));
    json_object_set_new(j, "end_utc", utc_or_null(r->end_ms));
    json_object_set_new(j, "settled_utc", utc_or_null(r->settled_ms));
    json_object_set_new(j, "start_ms", int_or_null(r->start_ms));
    json_object_set_new(j, "end_ms", int_or_null(r->end_ms));
    json_object_set_new(j, "settled_ms", int_or_null(r->settled_ms));
    json_object_set_new(j, "exit_code", int_or_null(r->exit_code));
    json_object_set_new(j, "payload_bytes", int_or_null(r->payload_bytes));
    json_object_set_new(j, "files", int_or_null(r->files));
    json_object_set_new(j, "settle_timeout_s", int_or_null(r->settle_timeout_s));
    json_object_set_new(j, "peers", r->peers ? json_loads(r->peers, 0, NULL) : json_array());
    if (with_report) {
        rep = r->report_json ? json_loads(r->report_json, 0, NULL) : NULL;
        json_object_set_new(j, "report", rep ? rep : json_null());
    } else {
        json_object_set_new(j, "verdict", verdict_summary(r->report_json));
    }
    return j;
}

/* The body as a JSON object (an empty body is {}), or NULL with a 400 in *out (*rc set). */
static json_t *body_object(const struct api_request *rq, struct api_response *out, int *rc)
{
    json_error_t jerr;
    json_t *j;

    if (!rq->body_len)
        return json_object();
    j = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!j) {
        *rc = api_error(out, 400, "bad_body", "the body is not JSON: %s (at byte %d)", jerr.text,
                        jerr.position);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        *rc = api_error(out, 400, "bad_body", "the body must be a JSON object");
        return NULL;
    }
    return j;
}

/* An optional integer field in [lo, hi]: 0 (absent: *v untouched), or 1 with a 400 in *out. */
static int get_int(json_t *o, const char *key, int64_t lo, int64_t hi, int64_t *v,
                   struct api_response *out, int *rc)
{
    json_t *f = json_object_get(o, key);

    if (!f)
        return 0;
    if (!json_is_integer(f) || json_integer_value(f) < lo || json_integer_value(f) > hi) {
        /* a range only where there is an upper bound to name (pid's is INT32_MAX) */
        if (hi < INT64_MAX)
            *rc = api_error(out, 400, "bad_body", "%s: must be an integer from %lld to %lld", key,
                            (long long)lo, (long long)hi);
        else
            *rc = bad_body(out, key, lo == 0 ? "must be an integer >= 0" : "must be an integer");
        return 1;
    }
    *v = json_integer_value(f);
    return 0;
}

/* An optional string field of at most `max` bytes. */
static int get_str(json_t *o, const char *key, size_t max, const char **v, struct api_response *out,
                   int *rc)
{
    json_t *f = json_object_get(o, key);

    if (!f)
        return 0;
    if (!json_is_string(f)) {
        *rc = bad_body(out, key, "must be a string");
        return 1;
    }
    if (json_string_length(f) > max) {
        *rc = api_error(out, 400, "bad_body", "%s: longer than %zu bytes", key, max);
        return 1;
    }
    *v = json_string_value(f);
    return 0;
}

/* "peers": an array of strings, stored as its JSON text in *peers (malloc'd). */
static int get_peers(json_t *o, char **peers, struct api_response *out, int *rc)
{
    json_t *f = json_object_get(o, "peers"), *e;
    size_t i;

    if (!f)
        return 0;
    if (!json_is_array(f) || json_array_size(f) > MAX_PEERS) {
        *rc = api_error(out, 400, "bad_body", "peers: must be an array of at most %d URLs",
                        MAX_PEERS);
        return 1;
    }
    json_array_foreach(f, i, e)
    {
        const char *why = NULL;

        if (!json_is_string(e) || json_string_length(e) > MAX_TEXT_BYTES) {
            *rc = bad_body(out, "peers", "every element must be a string (a URL)");
            return 1;
        }
        /* whoever prints the report fetches these: only what perflog run --peer writes */
        if (strlen(json_string_value(e)) != json_string_length(e) ||
            peer_url_parse(json_string_value(e), NULL, 0, NULL, &why) < 0) {
            *rc = api_error(out, 400, "bad_body",
                            "peers[%zu]: %s (expected http[s]://HOST[:PORT][/PATH], optionally "
                            "followed by " PEER_URL_RUNS_PATH "ID)",
                            i,
                            strlen(json_string_value(e)) != json_string_length(e)
                                ? "a NUL byte in the URL"
                                : why);
            return 1;
        }
    }
    *peers = json_dumps(f, JSON_COMPACT);
    if (!*peers) {
        *rc = -ENOMEM;
        return 1;
    }
    return 0;
}

int api_runs_create(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    const struct api_request *rq = c->rq;
    int64_t id = 0; /* the new run's */
    struct runs_db_row row;
    char *peers = NULL, why[RUNS_WHY_MAX];
    json_t *body, *procs, *edge = NULL, *kernel = NULL;
    int rc = 0;

    if (!env->runs)
        return no_runs(out);
    body = body_object(rq, out, &rc);
    if (!body)
        return rc;
    runs_db_row_init(&row);
    row.settle_timeout_s = RUNS_SETTLE_DEFAULT_S;
    if (get_str(body, "label", MAX_TEXT_BYTES, (const char **)&row.label, out, &rc) ||
        get_str(body, "command", MAX_TEXT_BYTES, (const char **)&row.command, out, &rc) ||
        get_int(body, "pid", 0, INT32_MAX, &row.pid, out, &rc) ||
        get_int(body, "payload_bytes", 0, INT64_MAX, &row.payload_bytes, out, &rc) ||
        get_int(body, "files", 0, INT64_MAX, &row.files, out, &rc) ||
        get_int(body, "settle_timeout_s", SETTLE_MIN_S, SETTLE_MAX_S, &row.settle_timeout_s, out,
                &rc) ||
        get_peers(body, &peers, out, &rc))
        goto out;
    row.peers = peers;
    row.host = (char *)env->host;
    row.status = "running";
    row.start_ms = api_now_ms(env);
    /* The start edge, taken before the insert: the reading is the run's first instant. */
    edge = runs_take_edge(env->runs, row.pid != RUNS_DB_NULL ? row.pid : 0, &kernel);
    rc = runs_db_insert(runs_table(env->runs), &row, &id);
    if (rc < 0) {
        rc = api_error(out, 503, "database_unavailable", "the run cannot be stored: %s",
                       runs_db_errmsg(runs_table(env->runs)));
        goto out;
    }
    runs_put_edge(env->runs, id, RUNS_EDGE_START, edge);
    runs_put_edge(env->runs, id, RUNS_EDGE_KERNEL, kernel);
    edge = kernel = NULL;
    runs_kick(env->runs); /* the manager sleeps while no run is open */
    /* "processes" tells the caller at once when its pid is not followed (a full set, no such
     * process), instead of a report with 0 processes at the end. */
    if (runs_follow(env->runs, id, row.pid, row.start_ms, why, sizeof(why)))
        procs = json_pack("{s:b}", "followed", 1);
    else
        procs = json_pack("{s:b, s:s}", "followed", 0, "reason", why);
    rc = reply_json(out, 201,
                    json_pack("{s:I, s:o, s:I, s:o}", "id", (json_int_t)id, "start_utc",
                              utc_or_null(row.start_ms), "start_ms", (json_int_t)row.start_ms,
                              "processes", procs));
out:
    json_decref(edge);
    json_decref(kernel);
    free(peers);
    json_decref(body); /* the row's strings are the body's */
    return rc;
}

/* Answer `id` as the run JSON with its report, with `status`. */
static int reply_run(const struct api_env *env, int64_t id, int status, struct api_response *out)
{
    struct runs_db_row row;
    int rc = runs_db_get(runs_table(env->runs), id, &row);

    if (rc == -ENOENT)
        return api_error(out, 404, "not_found", "no run %lld", (long long)id);
    if (rc < 0)
        return api_error(out, 503, "database_unavailable", "the runs cannot be read: %s",
                         runs_db_errmsg(runs_table(env->runs)));
    rc = reply_json(out, status, run_json(&row, 1));
    runs_db_row_release(&row);
    return rc;
}

int api_run_get(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;

    if (!env->runs)
        return no_runs(out);
    return reply_run(env, c->id, 200, out);
}

/* The pid run `id` follows (0: none, or no such run), for its end edge. */
static int64_t run_pid(const struct api_env *env, int64_t id)
{
    struct runs_db_row row;
    int64_t pid = 0;

    if (runs_db_get(runs_table(env->runs), id, &row) == 0) {
        pid = row.pid != RUNS_DB_NULL ? row.pid : 0;
        runs_db_row_release(&row);
    }
    return pid;
}

/* "process": the client's own /proc/self/io deltas. 1 with a 400 in *out when malformed. */
static int get_process(json_t *o, struct runs_db_end *end, struct api_response *out, int *rc)
{
    json_t *p = json_object_get(o, "process");

    if (!p)
        return 0;
    if (!json_is_object(p)) {
        *rc = bad_body(out, "process", "must be an object");
        return 1;
    }
    return get_int(p, "io_read_bytes", 0, INT64_MAX, &end->io_read_bytes, out, rc) ||
           get_int(p, "io_write_bytes", 0, INT64_MAX, &end->io_write_bytes, out, rc) ||
           get_int(p, "storage_read_bytes", 0, INT64_MAX, &end->storage_read_bytes, out, rc) ||
           get_int(p, "storage_write_bytes", 0, INT64_MAX, &end->storage_write_bytes, out, rc);
}

int api_run_end(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    const struct api_request *rq = c->rq;
    int64_t id = c->id;
    struct runs_db_end end = {.end_ms = api_now_ms(env),
                              .exit_code = RUNS_DB_NULL,
                              .status = "ending",
                              .io_read_bytes = RUNS_DB_NULL,
                              .io_write_bytes = RUNS_DB_NULL,
                              .storage_read_bytes = RUNS_DB_NULL,
                              .storage_write_bytes = RUNS_DB_NULL};
    json_t *body, *edge = NULL;
    int rc = 0;

    if (!env->runs)
        return no_runs(out);
    body = body_object(rq, out, &rc);
    if (!body)
        return rc;
    if (get_int(body, "exit_code", INT32_MIN, INT32_MAX, &end.exit_code, out, &rc) ||
        get_str(body, "tool_output", MAX_TOOL_OUTPUT, &end.tool_output, out, &rc) ||
        get_process(body, &end, out, &rc))
        goto out;
    /* 127: the shell's "command not found"; the command never ran, so there is no tail. */
    if (end.exit_code == 127)
        end.status = "failed";
    edge = runs_take_edge(env->runs, run_pid(env, id), NULL);
    rc = runs_db_end(runs_table(env->runs), id, &end);
    if (rc == -ENOENT)
        rc = api_error(out, 404, "not_found", "no run %lld", (long long)id);
    else if (rc == -EALREADY)
        rc = api_error(out, 409, "conflict", "run %lld has already ended", (long long)id);
    else if (rc < 0)
        rc = api_error(out, 503, "database_unavailable", "the run cannot be stored: %s",
                       runs_db_errmsg(runs_table(env->runs)));
    else {
        runs_put_edge(env->runs, id, RUNS_EDGE_END, edge);
        edge = NULL;
        runs_unfollow(env->runs, id);
        runs_kick(env->runs);
        rc = reply_run(env, id, 200, out);
    }
out:
    json_decref(edge);
    json_decref(body);
    return rc;
}

int api_run_delete(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    int64_t id = c->id;
    int rc;

    if (!env->runs)
        return no_runs(out);
    rc = runs_db_delete(runs_table(env->runs), id);
    if (rc == 0) {
        runs_unfollow(env->runs, id);
        runs_forget(env->runs, id);
    }
    if (rc == -ENOENT)
        return api_error(out, 404, "not_found", "no run %lld", (long long)id);
    if (rc < 0)
        return api_error(out, 503, "database_unavailable", "the run cannot be deleted: %s",
                         runs_db_errmsg(runs_table(env->runs)));
    return reply_json(out, 200, json_pack("{s:I}", "deleted", (json_int_t)id));
}

int api_runs_list(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    struct runs_db_row *rows;
    json_t *arr;
    size_t n;
    int rc;

    if (!env->runs)
        return no_runs(out);
    rc = runs_db_list(runs_table(env->runs), 0, &rows, &n);
    if (rc == -ENOMEM)
        return rc;
    if (rc < 0)
        return api_error(out, 503, "database_unavailable", "the runs cannot be read: %s",
                         runs_db_errmsg(runs_table(env->runs)));
    arr = json_array();
    for (size_t i = 0; i < n && arr; i++)
        if (json_array_append_new(arr, run_json(&rows[i], 0)) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    runs_db_rows_free(rows, n);
    if (!arr)
        return -ENOMEM;
    return reply_json(out, 200, json_pack("{s:o}", "runs", arr));
}

/*
 * Parse "ids=3,4,5" into ids[0..*n): 0, or 1 with a 400 in *out (*rc set). Every id is a whole
 * number from 1, given once; there are REPORT_COMPARE_MIN_RUNS to REPORT_COMPARE_MAX_RUNS.
 */
static int compare_ids(const struct query *q, int64_t *ids, size_t *n, struct api_response *out,
                       int *rc)
{
    const char *s = query_get(q, "ids"), *p;
    size_t pos = 0;

    *n = 0;
    query_next(q, "ids", &pos);
    if (query_next(q, "ids", &pos)) {
        *rc = api_error(out, 400, "bad_parameter", "ids: give it once, e.g. ids=3,4,5");
        return 1;
    }
    if (!s || !*s) {
        *rc = api_error(out, 400, "bad_parameter", "ids: give the runs, e.g. ids=3,4");
        return 1;
    }
    for (p = s; *p;) {
        char *end;
        long long v;

        if (*p < '1' || *p > '9' || (v = strtoll(p, &end, 10)) <= 0 || end - p > 15 ||
            (*end && *end != ',')) {
            *rc = api_error(out, 400, "bad_parameter",
                            "ids: '%.100s' is not a list of run ids (whole numbers from 1, "
                            "separated by commas)",
                            s);
            return 1;
        }
        if (*n == REPORT_COMPARE_MAX_RUNS) {
            *rc = api_error(out, 400, "bad_parameter", "ids: at most %d runs can be compared",
                            REPORT_COMPARE_MAX_RUNS);
            return 1;
        }
        for (size_t i = 0; i < *n; i++)
            if (ids[i] == v) {
                *rc = api_error(out, 400, "bad_parameter", "ids: run %lld is given twice", v);
                return 1;
            }
        ids[(*n)++] = v;
        p = *end ? end + 1 : end;
        if (*end && !*p) {
            *rc = api_error(out, 400, "bad_parameter", "ids: a trailing comma in '%.100s'", s);
            return 1;
        }
    }
    if (*n < REPORT_COMPARE_MIN_RUNS) {
        *rc = api_error(out, 400, "bad_parameter",
                        "compare needs two or more runs (ids=%.100s names one)", s);
        return 1;
    }
    return 0;
}

/* The report of run `id` (new), or NULL with a 404, 409 or 503 in *out (*rc set). */
static json_t *compare_report(const struct api_env *env, int64_t id, struct api_response *out,
                              int *rc)
{
    struct runs_db_row row;
    json_t *rep = NULL;
    int r = runs_db_get(runs_table(env->runs), id, &row);

    if (r == -ENOENT) {
        *rc = api_error(out, 404, "not_found", "no run %lld", (long long)id);
        return NULL;
    }
    if (r < 0) {
        *rc = api_error(out, 503, "database_unavailable", "the runs cannot be read: %s",
                        runs_db_errmsg(runs_table(env->runs)));
        return NULL;
    }
    if (row.report_json)
        rep = json_loads(row.report_json, 0, NULL);
    if (!json_is_object(rep)) {
        *rc = api_error(out, 409, "no_report", "run %lld has no report yet (status %s)",
                        (long long)id, row.status ? row.status : "unknown");
        json_decref(rep);
        rep = NULL;
    }
    runs_db_row_release(&row);
    return rep;
}

int api_runs_compare(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    const struct query *q = c->q;
    int64_t ids[REPORT_COMPARE_MAX_RUNS];
    json_t *reps[REPORT_COMPARE_MAX_RUNS];
    size_t n, got = 0;
    int rc = 0;

    if (!env->runs)
        return no_runs(out);
    if (compare_ids(q, ids, &n, out, &rc))
        return rc;
    while (got < n && (reps[got] = compare_report(env, ids[got], out, &rc)))
        got++;
    if (got == n)
        rc = reply_json(out, 200, report_compare(reps, n));
    while (got > 0)
        json_decref(reps[--got]);
    return rc;
}
