/*
 * api.c - routing, authentication and errors of the HTTP API; see api.h.
 */
#include "api_internal.h"
#include "utf8.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * A route: an exact path, one with a numeric "{id}" segment, or one ending in a "{name}" segment
 * (a file name: letters, digits, '.', '_', '-', not starting with '.'). `fn` answers GET (and HEAD,
 * which libmicrohttpd answers without the body) of an exact path from the query alone; `get`,
 * `post` and `del` see the request and the id. `allow` is the Allow header of a 405 ("GET, HEAD"
 * when NULL). `open` routes need no token even with auth_read: the dashboard's page and files
 * hold no data, and the page must load to ask for the token.
 */
struct route {
    const char *path;
    api_handler_fn fn;
    const char *const *params; /* known query parameters, NULL-terminated */
    api_request_fn get, post, del;
    const char *allow;
    api_id_handler_fn get_q; /* a GET of an {id} path that reads the query and the database */
    int open;
};

static const char *const no_params[] = {NULL};
static const char *const match_params[] = {"match", NULL};
static const char *const latest_params[] = {"counter", NULL};
static const char *const data_params[] = {"counter", "from", "to", "step", "agg", NULL};
static const char *const export_params[] = {"counter", "from", "to", "format", "tz", "every", NULL};
static const char *const run_export_params[] = {"counter", "format", "tz", "every", NULL};
static const char *const compare_params[] = {"ids", NULL};
static const char *const asset_params[] = {"v", NULL}; /* the page's cache-busting version */

static const struct route routes[] = {
    {"/api/v1/health", api_health, no_params, NULL, NULL, NULL, NULL, NULL, 0},
    {"/api/v1/counters", api_counters, match_params, NULL, NULL, NULL, NULL, NULL, 0},
    {"/api/v1/data", api_data, data_params, NULL, NULL, NULL, NULL, NULL, 0},
    {"/api/v1/latest", api_latest, latest_params, NULL, NULL, NULL, NULL, NULL, 0},
    {"/api/v1/export", api_export, export_params, NULL, NULL, NULL, NULL, NULL, 0},
    {"/metrics", api_metrics, no_params, NULL, NULL, NULL, NULL, NULL, 0},
    {"/api/v1/runs", api_runs_list, no_params, NULL, api_runs_create, NULL, "GET, HEAD, POST", NULL,
     0},
    {"/api/v1/runs/compare", api_runs_compare, compare_params, NULL, NULL, NULL, NULL, NULL, 0},
    {.path = "/api/v1/runs/{id}",
     .params = no_params,
     .get = api_run_get,
     .del = api_run_delete,
     .allow = "GET, HEAD, DELETE"},
    {.path = "/api/v1/runs/{id}/end", .params = no_params, .post = api_run_end, .allow = "POST"},
    {.path = "/api/v1/runs/{id}/export", .params = run_export_params, .get_q = api_run_export},
    {"/", api_dashboard_page, no_params, NULL, NULL, NULL, NULL, NULL, 1},
    {.path = "/ui/{name}", .params = asset_params, .get = api_dashboard_file, .open = 1},
};

/* 1 when `s` is a file name of the "{name}" hole: [A-Za-z0-9._-]{1,64}, not starting with '.'
 * (so neither "." nor ".." nor a hidden name). */
static int route_name_ok(const char *s)
{
    size_t n = 0;

    if (*s == '.')
        return 0;
    for (; s[n]; n++)
        if (n == 64 || !(isalnum((unsigned char)s[n]) || s[n] == '.' || s[n] == '_' || s[n] == '-'))
            return 0;
    return n > 0;
}

/* 1 when `path` matches the route's pattern; *id gets the "{id}" segment (1..10^15, digits only,
 * no leading zero) or 0. */
static int route_match(const char *pattern, const char *path, int64_t *id)
{
    const char *hole = strstr(pattern, "{id}");
    const char *name = strstr(pattern, "{name}");
    size_t pre;
    int64_t v = 0;
    int digits = 0;

    *id = 0;
    if (name) {
        pre = (size_t)(name - pattern);
        return !strncmp(pattern, path, pre) && route_name_ok(path + pre);
    }
    if (!hole)
        return !strcmp(pattern, path);
    pre = (size_t)(hole - pattern);
    if (strncmp(pattern, path, pre) != 0)
        return 0;
    path += pre;
    if (*path == '0')
        return 0;
    for (; *path >= '0' && *path <= '9'; path++) {
        if (++digits > 15)
            return 0;
        v = v * 10 + (*path - '0');
    }
    if (!digits || strcmp(hole + 4, path) != 0)
        return 0;
    *id = v;
    return 1;
}

int64_t api_now_ms(const struct api_env *env)
{
    struct timespec ts;

    if (env->now_ms)
        return env->now_ms();
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int api_error(struct api_response *out, int status, const char *code, const char *fmt, ...)
{
    struct sbuf b = {0};
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sbuf_printf(&b, "{\"error\": {\"code\": ");
    api_json_str(&b, code);
    sbuf_printf(&b, ", \"message\": ");
    api_json_str(&b, msg);
    sbuf_printf(&b, "}}\n");
    if (api_reply(out, &b, NULL) < 0)
        return -ENOMEM;
    out->status = status;
    return 0;
}

int api_auth_ok(const char *authorization, const char *token)
{
    static const char prefix[] = "Bearer ";
    size_t tlen = token ? strlen(token) : 0, alen;
    unsigned char diff = 0;

    if (!authorization || !token || strncasecmp(authorization, prefix, sizeof(prefix) - 1) != 0)
        return 0;
    authorization += sizeof(prefix) - 1;
    alen = strlen(authorization);
    /* Walk the whole presented token whatever the lengths, so the time says nothing about where
     * a guess went wrong (the length of the configured token is not a secret worth the bother). */
    diff |= (unsigned char)(alen != tlen);
    for (size_t i = 0; i < alen; i++)
        diff |= (unsigned char)(authorization[i] ^ (tlen ? token[i % tlen] : 0));
    return diff == 0 && tlen > 0;
}

const char *api_auth_of(const struct api_env *env, int *read_too)
{
    const struct api_auth *a = env->auth ? atomic_load(env->auth) : NULL;
    const char *token = a ? a->token : env->auth_token;

    *read_too = a ? a->read : env->auth_read;
    return token && token[0] ? token : NULL;
}

static int needs_token(const char *token, int read_too, const char *method)
{
    int read = !strcmp(method, "GET") || !strcmp(method, "HEAD");

    return token && (!read || read_too);
}

/* The handler of `method` on route rt, or 1 when the route has none (405). */
static int method_of(const struct route *rt, const char *method, api_request_fn *req)
{
    *req = NULL;
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) {
        *req = rt->get;
        return rt->fn || rt->get || rt->get_q ? 0 : 1;
    }
    if (!strcmp(method, "POST"))
        *req = rt->post;
    else if (!strcmp(method, "DELETE"))
        *req = rt->del;
    return *req ? 0 : 1;
}

int api_handle(const struct api_env *env, struct reader *rd, const struct api_request *rq,
               struct api_response *out)
{
    const struct route *rt = NULL;
    api_request_fn req;
    struct query *q;
    const char *why, *unknown, *token, *allow;
    int64_t id = 0;
    int rc, read_too;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]) && !rt; i++)
        if (route_match(routes[i].path, rq->path, &id))
            rt = &routes[i];
    if (!rt)
        return api_error(out, 404, "not_found", "no such endpoint: %.200s", rq->path);
    if (method_of(rt, rq->method, &req)) {
        allow = rt->allow ? rt->allow : "GET, HEAD";
        rc = api_error(out, 405, "method_not_allowed", "%.200s does not accept %.16s; use %s",
                       rq->path, rq->method, allow);
        out->allow = allow;
        return rc;
    }
    token = api_auth_of(env, &read_too);
    /* With no token configured, anyone who can reach a non-loopback listener could create and
     * delete runs: writes are for local clients only then. */
    if (rq->remote && !token && strcmp(rq->method, "GET") && strcmp(rq->method, "HEAD"))
        return api_error(out, 403, "forbidden",
                         "%.16s from another host needs a token: set auth_token on the server",
                         rq->method);
    if (!rt->open && needs_token(token, read_too, rq->method) &&
        !api_auth_ok(rq->authorization, token))
        return api_error(out, 401, "unauthorized",
                         rq->authorization ? "wrong token"
                                           : "this server needs a token: send "
                                             "'Authorization: Bearer TOKEN'");
    q = malloc(sizeof(*q));
    if (!q)
        return -ENOMEM;
    if (query_parse(rq->query ? rq->query : "", rq->query_len, q, &why) < 0) {
        rc = api_error(out, 400, "bad_query", "bad query string: %s", why);
    } else if ((unknown = query_unknown_key(q, rt->params))) {
        rc = api_error(out, 400, "bad_parameter", "unknown parameter '%.100s' for %s", unknown,
                       rt->path);
    } else if (req) {
        rc = req(env, rq, id, out);
    } else if (rt->get_q) {
        rc = rt->get_q(env, rd, q, id, out);
    } else {
        rc = rt->fn(env, rd, q, out);
    }
    free(q);
    return rc;
}

int api_reply(struct api_response *out, struct sbuf *b, const char *content_type)
{
    size_t len = b->len;
    char *s = sbuf_take(b);

    if (!s)
        return -ENOMEM;
    out->status = 200;
    out->content_type = content_type ? content_type : "application/json";
    out->body = s;
    out->body_len = len;
    return 0;
}

void api_json_str(struct sbuf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p, *end = p + strlen(s);

    sbuf_append(b, "\"", 1);
    while (*p) {
        size_t n = utf8_seq_len(p, (size_t)(end - p));

        if (n && *p != '"' && *p != '\\' && *p >= 0x20) {
            p += n; /* part of a run copied as it is */
            continue;
        }
        sbuf_append(b, (const char *)run, (size_t)(p - run));
        if (*p == '"' || *p == '\\')
            sbuf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            sbuf_printf(b, "\\u%04x", *p);
        else
            sbuf_printf(b, "\\ufffd");
        p++;
        run = p;
    }
    sbuf_append(b, (const char *)run, (size_t)(p - run));
    sbuf_append(b, "\"", 1);
}

void api_json_num(struct sbuf *b, double v)
{
    char buf[40];

    if (!isfinite(v)) {
        sbuf_append(b, "null", 4);
        return;
    }
    /* the range test first: converting a double outside int64_t is undefined */
    if (fabs(v) < 9.007199254740992e15 && v == (double)(int64_t)v) {
        sbuf_int(b, (int64_t)v);
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    sbuf_append(b, buf, strlen(buf));
}

int api_patterns(const struct query *q, const char *key, int dflt_all, struct pattern *pats,
                 size_t *n, struct api_response *out)
{
    static const char *const all[] = {"\\*(*)\\*", "\\*\\*"};
    const char *v, *why = NULL;
    size_t pos = 0;

    *n = 0;
    while ((v = query_next(q, key, &pos))) {
        if (*n == API_MAX_PATTERNS)
            return api_error(out, 400, "bad_pattern", "at most %d '%s' parameters",
                             API_MAX_PATTERNS, key) < 0
                       ? -ENOMEM
                       : 1;
        if (pattern_parse(v, strlen(v), &pats[*n], &why) < 0)
            return api_error(out, 400, "bad_pattern",
                             "%s: bad counter path '%.200s': %s (expected "
                             "\\Object(Instance)\\Counter, '*' as a wildcard)",
                             key, v, why ? why : "invalid") < 0
                       ? -ENOMEM
                       : 1;
        (*n)++;
    }
    if (*n == 0 && dflt_all) {
        for (size_t i = 0; i < 2; i++)
            pattern_parse(all[i], strlen(all[i]), &pats[(*n)++], &why);
    } else if (*n == 0) {
        return api_error(out, 400, "bad_parameter",
                         "'%s' is required: a counter path such as "
                         "\\PhysicalDisk(*)\\Disk Bytes/sec",
                         key) < 0
                   ? -ENOMEM
                   : 1;
    }
    return 0;
}
