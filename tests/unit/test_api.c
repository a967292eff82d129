/*
 * test_api.c - the HTTP API handlers without sockets: api_handle() on hand-made requests, with a
 * fixed clock, a live store of hand-made ticks and a reader on a real SQLite file in a temp dir.
 * Answers are parsed with Jansson; numbers are compared with counter_eval of the same rows.
 */
#include "storage/db.h"
#include "testlib.h"
#include "web/api_internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T0       1795968000000LL /* 2026-11-29T16:00:00Z, a whole hour */
#define NDB      180             /* ticks 0..179 are in the database */
#define NALL     184             /* ticks 176..183 are in memory; 180..183 only there */
#define LIVE_CAP 8

static char dir[] = "/tmp/perflog-test-api-XXXXXX";
static char db_file[256];
static struct tick *all[NALL];
static int64_t fixed_now = T0 + NALL * 1000;

static int64_t fixed_clock(void)
{
    return fixed_now;
}

/* ---- ticks ---- */

static void fill_row(struct tick_row *row, int obj, const char *name, unsigned *seed)
{
    const struct object_def *od = &counter_objects[obj];

    snprintf(row->name, sizeof(row->name), "%s", name);
    for (size_t f = 0; f < od->nfields; f++) {
        *seed = *seed * 1103515245u + 12345u;
        row->v[f] = (*seed >> 8) % 1000u;
    }
}

/* Tick i at T0 + i s: Processor 0 and 1, PhysicalDisk vda (and nvme0n1 from tick 180 on), eth0,
 * Memory, TCP. vda reads (i % 10 + 1) sectors and Memory holds i KiB dirty, so a few values are
 * known by hand; the rest come from a seeded LCG. Tick 0 has no interval (first after a start). */
static struct tick *mk_tick(int i)
{
    struct tick *t = calloc(1, sizeof(*t));
    unsigned seed = 1000u + (unsigned)i;
    int ndisk = i >= NDB ? 2 : 1;

    t->refs = 1;
    t->wall_ms = T0 + i * 1000LL;
    t->interval_ms = i ? 1000 : 0;
    t->obj[OBJ_PROCESSOR].rows = calloc(2, sizeof(struct tick_row));
    t->obj[OBJ_PROCESSOR].n = 2;
    fill_row(&t->obj[OBJ_PROCESSOR].rows[0], OBJ_PROCESSOR, "0", &seed);
    fill_row(&t->obj[OBJ_PROCESSOR].rows[1], OBJ_PROCESSOR, "1", &seed);
    t->obj[OBJ_DISK].rows = calloc(2, sizeof(struct tick_row));
    t->obj[OBJ_DISK].n = (size_t)ndisk;
    fill_row(&t->obj[OBJ_DISK].rows[0], OBJ_DISK, "vda", &seed);
    t->obj[OBJ_DISK].rows[0].v[DISK_RD_SECTORS] = i % 10 + 1;
    if (ndisk == 2)
        fill_row(&t->obj[OBJ_DISK].rows[1], OBJ_DISK, "nvme0n1", &seed);
    t->obj[OBJ_NET].rows = calloc(1, sizeof(struct tick_row));
    t->obj[OBJ_NET].n = 1;
    fill_row(&t->obj[OBJ_NET].rows[0], OBJ_NET, "eth0", &seed);
    t->obj[OBJ_MEMORY].rows = calloc(1, sizeof(struct tick_row));
    t->obj[OBJ_MEMORY].n = 1;
    fill_row(&t->obj[OBJ_MEMORY].rows[0], OBJ_MEMORY, "", &seed);
    t->obj[OBJ_MEMORY].rows[0].v[MEM_DIRTY_KB] = i;
    t->obj[OBJ_TCP].rows = calloc(1, sizeof(struct tick_row));
    t->obj[OBJ_TCP].n = 1;
    fill_row(&t->obj[OBJ_TCP].rows[0], OBJ_TCP, "", &seed);
    return t;
}

/* counter_eval of counter `cname` of (obj, inst) in tick i; 0 when it has no value there. */
static int expect(int i, int obj, const char *inst, const char *cname, double *out)
{
    const struct object_def *od = &counter_objects[obj];
    const struct tick *t = all[i];

    for (size_t r = 0; r < t->obj[obj].n; r++) {
        if (strcmp(t->obj[obj].rows[r].name, inst))
            continue;
        for (size_t k = 0; k < od->ncounters; k++)
            if (!strcmp(od->counters[k].name, cname))
                return counter_eval(&od->counters[k], t->obj[obj].rows[r].v,
                                    t->obj[obj].rows[r].null_mask, t->interval_ms, out);
    }
    return 0;
}

/* Per-operation counter cname's numerator times its scale and its operations in tick i: what a
 * span's average sums (CF_PER_OP). 0 when the counter is not one, or has no value then. */
static int expect_op(int i, int obj, const char *inst, const char *cname, double *part, double *ops)
{
    const struct object_def *od = &counter_objects[obj];
    const struct tick *t = all[i];

    for (size_t r = 0; r < t->obj[obj].n; r++) {
        const struct tick_row *row = &t->obj[obj].rows[r];

        if (strcmp(row->name, inst))
            continue;
        for (size_t k = 0; k < od->ncounters; k++) {
            const struct counter_def *c = &od->counters[k];
            double num = 0, den = 0;

            if (strcmp(c->name, cname) || !(c->flags & CF_PER_OP))
                continue;
            for (size_t f = 0; f < od->nfields; f++) {
                if (!((c->num | c->den_fields) & (1u << f)))
                    continue;
                if (row->null_mask & (1ull << f))
                    return 0;
                if (c->num & (1u << f))
                    num += (double)row->v[f];
                else
                    den += (double)row->v[f];
            }
            *part = num * c->scale;
            *ops = den;
            return 1;
        }
    }
    return 0;
}

/* ---- requests ---- */

static int call(const struct api_env *env, struct reader *rd, const char *method, const char *path,
                const char *query, const char *auth, struct api_response *out)
{
    struct api_request rq = {.method = method,
                             .path = path,
                             .query = query,
                             .query_len = query ? strlen(query) : 0,
                             .authorization = auth};

    return api_handle(env, rd, &rq, out);
}

/* GET path?query; checks the status and returns the parsed body (NULL if it is not JSON). */
static json_t *get_json(const struct api_env *env, struct reader *rd, const char *path,
                        const char *query, int status)
{
    struct api_response out;
    json_error_t jerr;
    json_t *j = NULL;

    CHECK_INT(call(env, rd, "GET", path, query, NULL, &out), 0);
    CHECK_INT(out.status, status);
    if (out.status != status)
        fprintf(stderr, "  %s?%s: %.*s\n", path, query ? query : "", (int)out.body_len,
                out.body ? out.body : "");
    if (out.body) {
        CHECK_INT(strlen(out.body), out.body_len);
        j = json_loadb(out.body, out.body_len, 0, &jerr);
        CHECK(j != NULL);
    }
    free(out.body);
    return j;
}

/* The body must be exactly {"error": {"code": code, "message": "..."}}; the message is copied
 * into msg (may be NULL). */
static void check_error_body(const struct api_response *out, int status, const char *code,
                             char *msg, size_t msglen)
{
    json_error_t jerr;
    json_t *j = json_loadb(out->body ? out->body : "", out->body_len, 0, &jerr), *e;

    CHECK_INT(out->status, status);
    CHECK_STR(out->content_type, "application/json");
    CHECK(j != NULL);
    if (!j)
        return;
    CHECK_INT(json_object_size(j), 1);
    e = json_object_get(j, "error");
    CHECK(json_is_object(e));
    CHECK_INT(json_object_size(e), 2);
    CHECK_STR(json_string_value(json_object_get(e, "code")), code);
    CHECK(json_is_string(json_object_get(e, "message")));
    CHECK(json_string_length(json_object_get(e, "message")) > 0);
    if (msg)
        snprintf(msg, msglen, "%s", json_string_value(json_object_get(e, "message")));
    json_decref(j);
}

static void check_error(const struct api_env *env, struct reader *rd, const char *method,
                        const char *path, const char *query, const char *auth, int status,
                        const char *code, char *msg, size_t msglen)
{
    struct api_response out;

    CHECK_INT(call(env, rd, method, path, query, auth, &out), 0);
    check_error_body(&out, status, code, msg, msglen);
    free(out.body);
}

/* Query-encode a counter path into buf (space, %, &, + and # escaped). */
static const char *enc(const char *s, char *buf, size_t cap)
{
    size_t n = 0;

    for (; *s && n + 4 < cap; s++) {
        if (*s == ' ' || *s == '%' || *s == '&' || *s == '+' || *s == '#')
            n += (size_t)snprintf(buf + n, cap - n, "%%%02X", (unsigned char)*s);
        else
            buf[n++] = *s;
    }
    buf[n] = '\0';
    return buf;
}

/* The series of a /data answer with this path, or NULL. */
static json_t *find_series(json_t *j, const char *path)
{
    json_t *s = json_object_get(j, "series");

    for (size_t i = 0; i < json_array_size(s); i++) {
        json_t *v = json_array_get(s, i);
        const char *p = json_string_value(json_object_get(v, "path"));

        if (p && !strcmp(p, path))
            return v;
    }
    return NULL;
}

/* ---- the environment ---- */

struct fake_stats {
    struct api_stats st;
};

static void stats_cb(void *arg, struct api_stats *out)
{
    *out = ((struct fake_stats *)arg)->st;
}

static struct api_env base_env(struct live *live, struct fake_stats *fs)
{
    struct api_env env = {.host = "testhost",
                          .version = "9.9.9-test",
                          .db_path = db_file,
                          .interval_ms = 1000,
                          .start_wall_ms = T0 - 3600000,
                          .max_points = 1000,
                          .cpu_ticks_per_s = 100,
                          .live = live,
                          .stats = fs ? stats_cb : NULL,
                          .stats_arg = fs,
                          .now_ms = fixed_clock};

    return env;
}

/* ---- JSON text helpers ---- */

static void check_str(const char *in, const char *want)
{
    struct sbuf b = {0};
    char *s;

    api_json_str(&b, in);
    s = sbuf_take(&b);
    CHECK_STR(s, want);
    free(s);
}

static char *num(double v)
{
    struct sbuf b = {0};

    api_json_num(&b, v);
    return sbuf_take(&b);
}

static void check_num(double v, const char *want)
{
    char *s = num(v);

    CHECK_STR(s, want);
    free(s);
}

static void check_num_roundtrip(double v)
{
    char *s = num(v);
    json_error_t jerr;
    json_t *j = json_loads(s ? s : "", JSON_DECODE_ANY, &jerr);

    CHECK(s && strtod(s, NULL) == v);
    CHECK(j && json_number_value(j) == v);
    json_decref(j);
    free(s);
}

static void test_json_helpers(void)
{
    struct sbuf b = {0};
    json_error_t jerr;
    json_t *j;
    char *s;

    check_str("plain", "\"plain\"");
    check_str("", "\"\"");
    check_str("a\"b\\c", "\"a\\\"b\\\\c\"");
    check_str("\n\t\x01\x1f", "\"\\u000a\\u0009\\u0001\\u001f\"");
    check_str("\x7f", "\"\x7f\"");
    check_str("\xff", "\"\\ufffd\"");
    check_str("a\xc3(", "\"a\\ufffd(\"");                   /* lead byte, no continuation */
    check_str("\xc0\xaf", "\"\\ufffd\\ufffd\"");            /* overlong '/' */
    check_str("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* a surrogate */
    check_str("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* past U+10FFFF */
    check_str("x\xe2\x82", "\"x\\ufffd\\ufffd\"");                     /* cut short at the end */
    check_str("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
              "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    check_str("\x80", "\"\\ufffd\"");

    /* Whatever goes in, the output is JSON that Jansson reads back. */
    api_json_str(&b, "q\"\\\x01\xff\xc3\xa9\xed\xa0\x80z");
    s = sbuf_take(&b);
    j = json_loads(s ? s : "", JSON_DECODE_ANY, &jerr);
    CHECK(json_is_string(j));
    CHECK_STR(json_string_value(j), "q\"\\\x01\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf"
                                    "\xbdz");
    json_decref(j);
    free(s);

    check_num(0, "0");
    check_num(42, "42");
    check_num(-7, "-7");
    check_num(123456789012.0, "123456789012");
    check_num(4503599627370495.0, "4503599627370495");
    check_num(0.1, "0.1");
    check_num(-0.5, "-0.5");
    check_num(2.5e-7, "2.5e-07");
    check_num(NAN, "null");
    check_num(INFINITY, "null");
    check_num(-INFINITY, "null");
    check_num(1e300, "1e+300");
    check_num(-1e300, "-1e+300");
    check_num_roundtrip(1.0 / 3.0);
    check_num_roundtrip(2.0 / 3.0);
    check_num_roundtrip(0.1 + 0.2);
    check_num_roundtrip(1e300);
    check_num_roundtrip(9007199254740992.0);
    check_num_roundtrip(9223372036854775808.0);
    check_num_roundtrip(-9223372036854775808.0);
    check_num_roundtrip(1e19);
    check_num_roundtrip(5e-324);
    check_num_roundtrip(1.7976931348623157e308);
    s = num(1.0 / 3.0);
    CHECK(s && strlen(s) <= 18); /* the shortest that round-trips, not 17 digits and noise */
    free(s);
}

/* ---- routing and authentication ---- */

static void test_routing(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live, NULL);
    struct api_response out;

    check_error(&env, rd, "GET", "/api/v1/nope", "", NULL, 404, "not_found", NULL, 0);
    check_error(&env, rd, "GET", "/index.html", "", NULL, 404, "not_found", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/health/", "", NULL, 404, "not_found", NULL, 0);
    check_error(&env, rd, "GET", "/API/V1/HEALTH", "", NULL, 404, "not_found", NULL, 0);
    /* Routing happens before the query is read. */
    check_error(&env, rd, "GET", "/api/v1/nope", "%zz", NULL, 404, "not_found", NULL, 0);

    CHECK_INT(call(&env, rd, "POST", "/api/v1/data", "", NULL, &out), 0);
    check_error_body(&out, 405, "method_not_allowed", NULL, 0);
    CHECK_STR(out.allow, "GET, HEAD");
    free(out.body);
    CHECK_INT(call(&env, rd, "DELETE", "/metrics", "", NULL, &out), 0);
    check_error_body(&out, 405, "method_not_allowed", NULL, 0);
    CHECK_STR(out.allow, "GET, HEAD");
    free(out.body);
    CHECK_INT(call(&env, rd, "get", "/api/v1/health", "", NULL, &out), 0); /* methods are exact */
    CHECK_INT(out.status, 405);
    free(out.body);

    CHECK_INT(call(&env, rd, "HEAD", "/api/v1/health", "", NULL, &out), 0);
    CHECK_INT(out.status, 200);
    CHECK(out.allow == NULL);
    CHECK(out.body != NULL);
    free(out.body);
    /* A NULL query is the same as "". */
    CHECK_INT(call(&env, rd, "GET", "/api/v1/health", NULL, NULL, &out), 0);
    CHECK_INT(out.status, 200);
    CHECK(out.allow == NULL);
    free(out.body);

    /* query errors */
    check_error(&env, rd, "GET", "/api/v1/health", "%zz", NULL, 400, "bad_query", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/counters", "match=%4", NULL, 400, "bad_query", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/latest", "counter=%00", NULL, 400, "bad_query", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/health", "bogus=1", NULL, 400, "bad_parameter", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/latest", "match=%5CMemory%5C*", NULL, 400,
                "bad_parameter", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/data", "counter=%5CMemory%5C*&Step=1m", NULL, 400,
                "bad_parameter", NULL, 0);
    check_error(&env, rd, "GET", "/metrics", "x", NULL, 400, "bad_parameter", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/counters", "match=Memory", NULL, 400, "bad_pattern", NULL,
                0);
}

static void test_auth_ok(void)
{
    CHECK_INT(api_auth_ok(NULL, "tok"), 0);
    CHECK_INT(api_auth_ok("Bearer tok", "tok"), 1);
    CHECK_INT(api_auth_ok("bearer tok", "tok"), 1);
    CHECK_INT(api_auth_ok("BEARER tok", "tok"), 1);
    CHECK_INT(api_auth_ok("bEaReR tok", "tok"), 1);
    CHECK_INT(api_auth_ok("Bearer TOK", "tok"), 0); /* the token itself is case-sensitive */
    CHECK_INT(api_auth_ok("Bearer tom", "tok"), 0);
    CHECK_INT(api_auth_ok("Bearer tok2", "tok"), 0);
    CHECK_INT(api_auth_ok("Bearer toktok", "tok"), 0);
    CHECK_INT(api_auth_ok("Bearer to", "tok"), 0);
    CHECK_INT(api_auth_ok("Bearer ", "tok"), 0);
    CHECK_INT(api_auth_ok("Bearer", "tok"), 0);
    CHECK_INT(api_auth_ok("", "tok"), 0);
    CHECK_INT(api_auth_ok("Bearer tok ", "tok"), 0);
    CHECK_INT(api_auth_ok("Bearer  tok", "tok"), 0);
    CHECK_INT(api_auth_ok("Bearertok", "tok"), 0);
    CHECK_INT(api_auth_ok("Basic tok", "tok"), 0);
    CHECK_INT(api_auth_ok("tok", "tok"), 0);
    /* No token configured: nothing matches, not even an empty one. */
    CHECK_INT(api_auth_ok("Bearer ", ""), 0);
    CHECK_INT(api_auth_ok("Bearer x", ""), 0);
    CHECK_INT(api_auth_ok(NULL, ""), 0);
}

/* A client beyond loopback may read, but writes need a configured token; with one, the usual
 * 401 applies. Health warns while a listener beyond loopback has no token. */
static void test_remote_writes(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live, NULL);
    struct api_request rq = {.method = "POST", .path = "/api/v1/runs", .query = "", .remote = 1};
    struct api_response out;
    json_t *j;

    CHECK_INT(api_handle(&env, rd, &rq, &out), 0);
    check_error_body(&out, 403, "forbidden", NULL, 0);
    free(out.body);
    rq.method = "DELETE";
    rq.path = "/api/v1/runs/1";
    CHECK_INT(api_handle(&env, rd, &rq, &out), 0);
    check_error_body(&out, 403, "forbidden", NULL, 0);
    free(out.body);
    rq.method = "GET";
    rq.path = "/api/v1/health";
    CHECK_INT(api_handle(&env, rd, &rq, &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);
    env.auth_token = "s3cret";
    rq.method = "POST";
    rq.path = "/api/v1/runs";
    CHECK_INT(api_handle(&env, rd, &rq, &out), 0);
    check_error_body(&out, 401, "unauthorized", NULL, 0);
    free(out.body);

    env.listen_remote = 1;
    j = get_json(&env, rd, "/api/v1/health", "", 200);
    CHECK(j && json_array_size(json_object_get(j, "warnings")) == 0);
    json_decref(j);
    env.auth_token = NULL;
    j = get_json(&env, rd, "/api/v1/health", "", 200);
    CHECK(j && json_array_size(json_object_get(j, "warnings")) == 1);
    CHECK(j && !strcmp(json_string_value(json_object_get(j, "status")), "ok"));
    json_decref(j);
}

static void test_auth_handle(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live, NULL);
    struct api_response out;
    char msg[512];

    /* A token without auth_read: GETs are open, a wrong header is ignored. */
    env.auth_token = "s3cret";
    CHECK_INT(call(&env, rd, "GET", "/api/v1/health", "", NULL, &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);
    CHECK_INT(call(&env, rd, "GET", "/api/v1/health", "", "Bearer wrong", &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);
    /* No POST route exists yet: a POST is 405 whatever its token (routing comes first). */
    CHECK_INT(call(&env, rd, "POST", "/api/v1/health", "", NULL, &out), 0);
    CHECK_INT(out.status, 405);
    free(out.body);

    /* auth_read: GET and HEAD need the token. */
    env.auth_read = 1;
    check_error(&env, rd, "GET", "/api/v1/health", "", NULL, 401, "unauthorized", msg, sizeof(msg));
    CHECK(strstr(msg, "Bearer") != NULL);
    check_error(&env, rd, "HEAD", "/metrics", "", NULL, 401, "unauthorized", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/counters", "", "Bearer s3cre", 401, "unauthorized", msg,
                sizeof(msg));
    CHECK_STR(msg, "wrong token");
    check_error(&env, rd, "GET", "/api/v1/counters", "", "Bearer s3cret0", 401, "unauthorized",
                NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/counters", "", "Bearer ", 401, "unauthorized", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/counters", "", "s3cret", 401, "unauthorized", NULL, 0);
    /* The token is checked before the query string. */
    check_error(&env, rd, "GET", "/api/v1/health", "%zz", NULL, 401, "unauthorized", NULL, 0);
    CHECK_INT(call(&env, rd, "GET", "/api/v1/health", "", "Bearer s3cret", &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);
    CHECK_INT(call(&env, rd, "HEAD", "/api/v1/health", "", "bearer s3cret", &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);

    /* An empty or absent token means no authentication, even with auth_read. */
    env.auth_token = "";
    CHECK_INT(call(&env, rd, "GET", "/api/v1/health", "", NULL, &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);
    env.auth_token = NULL;
    CHECK_INT(call(&env, rd, "GET", "/api/v1/health", "", "Bearer whatever", &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);
    test_remote_writes(live, rd);
}

/* ---- health ---- */

static json_t *health(const struct api_env *env, struct reader *rd)
{
    return get_json(env, rd, "/api/v1/health", "", 200);
}

static void check_status(json_t *j, const char *status, size_t nproblems)
{
    CHECK_STR(json_string_value(json_object_get(j, "status")), status);
    CHECK_INT(json_array_size(json_object_get(j, "problems")), nproblems);
}

static void test_health(struct live *live, struct reader *rd)
{
    struct fake_stats fs = {.st = {.ticks = 1234,
                                   .missed = 3,
                                   .written = 1200,
                                   .queued = 5,
                                   .in_flight = 2,
                                   .last_tick_wall_ms = T0 + 183000}};
    struct api_env env = base_env(live, &fs);
    const char *problem;
    json_t *j, *db;

    j = health(&env, rd);
    check_status(j, "ok", 0);
    CHECK_STR(json_string_value(json_object_get(j, "version")), "9.9.9-test");
    CHECK_STR(json_string_value(json_object_get(j, "host")), "testhost");
    CHECK_INT(json_integer_value(json_object_get(j, "interval_ms")), 1000);
    CHECK_DBL(json_number_value(json_object_get(j, "uptime_s")), 3600 + NALL, 1e-9);
    CHECK_INT(json_integer_value(json_object_get(j, "last_sample_ms")), T0 + 183000);
    CHECK_STR(json_string_value(json_object_get(j, "last_sample_utc")), "2026-11-29T16:03:03.000Z");
    CHECK_STR(json_string_value(json_object_get(j, "start_utc")), "2026-11-29T15:00:00.000Z");
    CHECK_INT(json_integer_value(json_object_get(j, "ticks")), 1234);
    CHECK_INT(json_integer_value(json_object_get(j, "missed")), 3);
    CHECK_INT(json_integer_value(json_object_get(j, "queued")), 5);
    CHECK_INT(json_integer_value(json_object_get(j, "unwritten")), 7);
    CHECK_INT(json_integer_value(json_object_get(j, "dropped")), 0);
    CHECK(json_is_false(json_object_get(j, "writer_failing")));
    db = json_object_get(j, "database");
    CHECK_STR(json_string_value(json_object_get(db, "path")), db_file);
    CHECK(json_integer_value(json_object_get(db, "size_bytes")) > 0);
    json_decref(j);

    fs.st.writer_failing = 1;
    fs.st.last_error = -ENOSPC;
    fs.st.write_failures = 9;
    j = health(&env, rd);
    check_status(j, "degraded", 1);
    CHECK(json_is_true(json_object_get(j, "writer_failing")));
    CHECK_INT(json_integer_value(json_object_get(j, "write_failures")), 9);
    problem = json_string_value(json_array_get(json_object_get(j, "problems"), 0));
    CHECK(problem && strstr(problem, "No space left") != NULL);
    json_decref(j);
    fs.st.writer_failing = 0;

    fs.st.dropped = 4;
    j = health(&env, rd);
    check_status(j, "degraded", 1);
    CHECK_INT(json_integer_value(json_object_get(j, "dropped")), 4);
    json_decref(j);
    fs.st.dropped = 0;

    /* Too old: more than 3 intervals + 1 s. Exactly 4 s (3 x 1000 + 1000) is still fine. */
    fs.st.last_tick_wall_ms = fixed_now - 4000;
    j = health(&env, rd);
    check_status(j, "ok", 0);
    json_decref(j);
    fs.st.last_tick_wall_ms = fixed_now - 4001;
    j = health(&env, rd);
    check_status(j, "degraded", 1);
    json_decref(j);
    /* The interval in force (a reload) counts, not the one at start. */
    fs.st.interval_ms = 10000;
    j = health(&env, rd);
    check_status(j, "ok", 0);
    json_decref(j);
    fs.st.interval_ms = 0;
    fs.st.last_tick_wall_ms = T0 + 183000;

    j = health(&env, NULL);
    check_status(j, "degraded", 1);
    json_decref(j);

    /* Everything at once: four problems. */
    fs.st.writer_failing = 1;
    fs.st.last_error = -EBUSY;
    fs.st.dropped = 1;
    fs.st.last_tick_wall_ms = T0;
    j = health(&env, NULL);
    check_status(j, "degraded", 4);
    json_decref(j);

    /* No stats callback, no sample yet, no database file: nulls, not errors. */
    env = base_env(NULL, NULL);
    env.db_path = "/nonexistent/perflog.db";
    j = health(&env, rd);
    check_status(j, "ok", 0);
    CHECK(json_is_null(json_object_get(j, "last_sample_ms")));
    CHECK(json_is_null(json_object_get(j, "last_sample_utc")));
    CHECK(json_is_null(json_object_get(json_object_get(j, "database"), "size_bytes")));
    CHECK_INT(json_integer_value(json_object_get(j, "ticks")), 0);
    json_decref(j);
}

/* ---- counters ---- */

/* The entries of a /counters answer, and the one with this path (NULL if none). */
static json_t *counters(const struct api_env *env, struct reader *rd, const char *match, size_t *n)
{
    char q[512], e[400];
    json_t *j;

    if (match)
        snprintf(q, sizeof(q), "match=%s", enc(match, e, sizeof(e)));
    j = get_json(env, rd, "/api/v1/counters", match ? q : "", 200);
    *n = json_array_size(json_object_get(j, "counters"));
    return j;
}

static json_t *find_counter(json_t *j, const char *path)
{
    json_t *c = json_object_get(j, "counters");

    for (size_t i = 0; i < json_array_size(c); i++) {
        json_t *v = json_array_get(c, i);
        const char *p = json_string_value(json_object_get(v, "path"));

        if (p && !strcmp(p, path))
            return v;
    }
    return NULL;
}

static void test_counters(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live, NULL);
    size_t n, total = 0;
    json_t *j, *c;

    j = counters(&env, rd, "\\PhysicalDisk(*)\\Disk Read Bytes/sec", &n);
    CHECK_STR(json_string_value(json_object_get(j, "host")), "testhost");
    CHECK_INT(n, 2); /* vda from the database, nvme0n1 only in the newest tick */
    c = find_counter(j, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec");
    CHECK(c != NULL);
    CHECK_STR(json_string_value(json_object_get(c, "object")), "PhysicalDisk");
    CHECK_STR(json_string_value(json_object_get(c, "instance")), "vda");
    CHECK_STR(json_string_value(json_object_get(c, "counter")), "Disk Read Bytes/sec");
    CHECK_STR(json_string_value(json_object_get(c, "unit")), "bytes/s");
    CHECK_STR(json_string_value(json_object_get(c, "kind")), "rate");
    CHECK_INT(json_object_size(c), 6);
    c = find_counter(j, "\\PhysicalDisk(nvme0n1)\\Disk Read Bytes/sec");
    CHECK(c != NULL);
    CHECK_STR(json_string_value(json_object_get(c, "instance")), "nvme0n1");
    json_decref(j);

    j = counters(&env, rd, "\\Memory\\Dirty Bytes", &n);
    CHECK_INT(n, 1);
    c = find_counter(j, "\\Memory\\Dirty Bytes");
    CHECK(c != NULL);
    CHECK(json_is_null(json_object_get(c, "instance")));
    CHECK_STR(json_string_value(json_object_get(c, "kind")), "gauge");
    json_decref(j);

    j = counters(&env, rd, "\\Processor(*)\\% * Time", &n);
    CHECK_INT(n, 2 * 8);
    json_decref(j);
    j = counters(&env, rd, "\\processor(?)\\% user time", &n); /* case-insensitive, one char */
    CHECK_INT(n, 2);
    CHECK(find_counter(j, "\\Processor(1)\\% User Time") != NULL);
    json_decref(j);
    j = counters(&env, rd, "\\*\\*", &n); /* single-instance objects only */
    CHECK_INT(n, counter_objects[OBJ_MEMORY].ncounters + counter_objects[OBJ_TCP].ncounters);
    json_decref(j);
    j = counters(&env, rd, "\\Memory(*)\\*", &n); /* (*) does not match single-instance objects */
    CHECK_INT(n, 0);
    json_decref(j);
    j = counters(&env, rd, "\\Nope(*)\\Nothing", &n);
    CHECK_INT(n, 0);
    CHECK(json_is_array(json_object_get(j, "counters")));
    json_decref(j);

    /* No match parameter: everything. */
    /* No process was followed, no share or NFS mount is there, and the ticks have no Pressure:
     * those have no instance. */
    for (int o = 0; o < OBJ_COUNT; o++)
        total += o == OBJ_PROCESS || o == OBJ_SMB || o == OBJ_NFS || o == OBJ_PRESSURE
                     ? 0
                     : counter_objects[o].ncounters * (o == OBJ_PROCESSOR || o == OBJ_DISK ? 2 : 1);
    j = counters(&env, rd, NULL, &n);
    CHECK_INT(n, total);
    json_decref(j);

    /* Two match parameters: the union, without duplicates. */
    j = get_json(&env, rd, "/api/v1/counters",
                 "match=%5CMemory%5CDirty+Bytes&match=%5CMemory%5C*Bytes", 200);
    /* Available, Cache, Dirty, Writeback, and the two dirty thresholds */
    CHECK_INT(json_array_size(json_object_get(j, "counters")), 6);
    json_decref(j);

    /* Without a database: what the newest tick has. */
    j = counters(&env, NULL, "\\PhysicalDisk(*)\\Disk Read Bytes/sec", &n);
    CHECK_INT(n, 2);
    json_decref(j);
    /* Without the live store: what the database has. */
    env.live = NULL;
    j = counters(&env, rd, "\\PhysicalDisk(*)\\Disk Read Bytes/sec", &n);
    CHECK_INT(n, 1);
    json_decref(j);
}

/* ---- latest ---- */

static void test_latest(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live, NULL);
    struct live *empty = live_new(4);
    json_t *j, *vals, *v;
    size_t i;
    int matched = 0;

    j = get_json(&env, rd, "/api/v1/latest", "counter=%5CPhysicalDisk(*)%5C*", 200);
    CHECK_STR(json_string_value(json_object_get(j, "host")), "testhost");
    CHECK_INT(json_integer_value(json_object_get(j, "t_ms")), T0 + 183000);
    CHECK_STR(json_string_value(json_object_get(j, "time_utc")), "2026-11-29T16:03:03.000Z");
    CHECK_INT(json_integer_value(json_object_get(j, "interval_ms")), 1000);
    vals = json_object_get(j, "values");
    CHECK_INT(json_array_size(vals), 2 * counter_objects[OBJ_DISK].ncounters);
    json_array_foreach(vals, i, v)
    {
        const char *path = json_string_value(json_object_get(v, "path"));
        const struct object_def *od = &counter_objects[OBJ_DISK];
        json_t *val = json_object_get(v, "value");

        for (size_t k = 0; path && k < od->ncounters; k++)
            for (int d = 0; d < 2; d++) {
                const char *inst = d ? "nvme0n1" : "vda";
                char want[256];
                double x;

                pattern_format_path(want, sizeof(want), od->name, inst, od->counters[k].name);
                if (strcmp(want, path))
                    continue;
                matched++;
                CHECK_STR(json_string_value(json_object_get(v, "unit")), od->counters[k].unit);
                if (expect(NALL - 1, OBJ_DISK, inst, od->counters[k].name, &x))
                    CHECK(json_is_number(val) && json_number_value(val) == x);
                else
                    CHECK(json_is_null(val));
            }
    }
    CHECK_INT(matched, 2 * counter_objects[OBJ_DISK].ncounters);
    json_decref(j);

    /* A known value by hand: tick 183 reads 4 sectors in 1 s. */
    j = get_json(&env, rd, "/api/v1/latest", "counter=%5CPhysicalDisk(vda)%5CDisk+Read+Bytes/sec",
                 200);
    vals = json_object_get(j, "values");
    CHECK_INT(json_array_size(vals), 1);
    CHECK_DBL(json_number_value(json_object_get(json_array_get(vals, 0), "value")), 4 * 512.0, 0);
    json_decref(j);
    j = get_json(&env, rd, "/api/v1/latest", "counter=%5CMemory%5CDirty+Bytes", 200);
    CHECK_DBL(json_number_value(
                  json_object_get(json_array_get(json_object_get(j, "values"), 0), "value")),
              183 * 1024.0, 0);
    json_decref(j);

    /* The default: every counter of the newest tick. */
    j = get_json(&env, NULL, "/api/v1/latest", "", 200);
    CHECK(json_array_size(json_object_get(j, "values")) > 50);
    json_decref(j);
    /* A pattern that matches nothing: an empty list. */
    j = get_json(&env, rd, "/api/v1/latest", "counter=%5CNope%5CNothing", 200);
    CHECK(json_is_array(json_object_get(j, "values")));
    CHECK_INT(json_array_size(json_object_get(j, "values")), 0);
    json_decref(j);
    check_error(&env, rd, "GET", "/api/v1/latest", "counter=nope", NULL, 400, "bad_pattern", NULL,
                0);

    /* The first tick after a start has no interval, so no rates. */
    live_publish_ref(empty, all[0]);
    env.live = empty;
    j = get_json(
        &env, rd, "/api/v1/latest",
        "counter=%5CPhysicalDisk(vda)%5CDisk+Read+Bytes/sec&counter=%5CMemory%5CDirty+Bytes", 200);
    CHECK(json_is_null(json_object_get(j, "interval_ms")));
    vals = json_object_get(j, "values");
    CHECK_INT(json_array_size(vals), 2);
    CHECK(json_is_null(json_object_get(json_array_get(vals, 0), "value")));
    CHECK(json_is_number(json_object_get(json_array_get(vals, 1), "value")));
    json_decref(j);
    live_free(empty);
    empty = live_new(4);
    env.live = empty;
    check_error(&env, rd, "GET", "/api/v1/latest", "", NULL, 503, "no_sample", NULL, 0);
    env.live = NULL;
    check_error(&env, rd, "GET", "/api/v1/latest", "", NULL, 503, "no_sample", NULL, 0);
    live_free(empty);
}

/* ---- data ---- */

static json_t *data(const struct api_env *env, struct reader *rd, const char *counter,
                    const char *extra, int status)
{
    char q[1024], e[400];

    snprintf(q, sizeof(q), "counter=%s%s", enc(counter, e, sizeof(e)), extra);
    return get_json(env, rd, "/api/v1/data", q, status);
}

/* A raw answer: timestamps strictly increasing on the tick times, and every value of series
 * (obj, inst, cname) equal to counter_eval of the tick at that time. Returns the point count. */
static size_t check_raw(json_t *j, int obj, const char *inst, const char *cname)
{
    const struct object_def *od = &counter_objects[obj];
    json_t *ts = json_object_get(j, "timestamps"), *s, *vals;
    char path[256];
    size_t n = json_array_size(ts), bad = 0;

    pattern_format_path(path, sizeof(path), od->name, inst, cname);
    s = find_series(j, path);
    CHECK(s != NULL);
    vals = json_object_get(s, "values");
    CHECK_INT(json_array_size(vals), n);
    for (size_t p = 0; p < n && p < json_array_size(vals); p++) {
        int64_t t = json_integer_value(json_array_get(ts, p));
        int i = (int)((t - T0) / 1000);
        json_t *v = json_array_get(vals, p);
        double x;

        if (p && t <= json_integer_value(json_array_get(ts, p - 1)))
            bad++;
        if (i < 0 || i >= NALL || t != all[i]->wall_ms) {
            bad++;
            continue;
        }
        if (expect(i, obj, inst, cname, &x) ? !(json_is_number(v) && json_number_value(v) == x)
                                            : !json_is_null(v)) {
            if (bad++ < 3)
                fprintf(stderr, "  %s at tick %d: got %g, want %g\n", path, i, json_number_value(v),
                        x);
        }
    }
    CHECK_INT(bad, 0);
    return n;
}

static void check_ts_range(json_t *j, int first, int last)
{
    json_t *ts = json_object_get(j, "timestamps");

    CHECK_INT(json_array_size(ts), last - first + 1);
    CHECK_INT(json_integer_value(json_array_get(ts, 0)), T0 + first * 1000LL);
    CHECK_INT(json_integer_value(json_array_get(ts, json_array_size(ts) - 1)), T0 + last * 1000LL);
}

static void range(char *buf, size_t cap, int from_s, int to_s, const char *more)
{
    snprintf(buf, cap, "&from=%lld&to=%lld%s", (long long)(T0 / 1000 + from_s),
             (long long)(T0 / 1000 + to_s), more);
}

static void test_data_raw(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live, NULL);
    char r[200], msg[512];
    json_t *j;

    /* Across the database and memory: 170..175 from the file, 176..183 from memory (176..179
     * are in both and come once), 180..183 only in memory. */
    range(r, sizeof(r), 170, 183,
          "&counter=%5CMemory%5CDirty+Bytes&counter="
          "%5CPhysicalDisk(nvme0n1)%5CDisk+Read+Bytes%2Fsec");
    j = data(&env, rd, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec", r, 200);
    CHECK_STR(json_string_value(json_object_get(j, "tier")), "raw");
    CHECK_INT(json_integer_value(json_object_get(j, "step_ms")), 1000);
    CHECK_STR(json_string_value(json_object_get(j, "agg")), "avg");
    CHECK_INT(json_integer_value(json_object_get(j, "from")), T0 + 170000);
    CHECK_INT(json_integer_value(json_object_get(j, "to")), T0 + 183000);
    CHECK_INT(json_array_size(json_object_get(j, "series")), 3);
    check_ts_range(j, 170, 183);
    check_raw(j, OBJ_DISK, "vda", "Disk Read Bytes/sec");
    check_raw(j, OBJ_MEMORY, "", "Dirty Bytes");
    check_raw(j, OBJ_DISK, "nvme0n1", "Disk Read Bytes/sec"); /* null before tick 180 */
    CHECK_DBL(json_number_value(json_array_get(
                  json_object_get(json_array_get(json_object_get(j, "series"), 0), "values"), 0)),
              512.0 * (170 % 10 + 1), 0);
    json_decref(j);

    /* Every counter of vda and eth0 over the whole log: tick 0 has no rates. */
    range(r, sizeof(r), 0, 183, "&counter=%5CNetwork+Interface(eth0)%5C*");
    j = data(&env, rd, "\\PhysicalDisk(vda)\\*", r, 200);
    check_ts_range(j, 0, 183);
    for (size_t k = 0; k < counter_objects[OBJ_DISK].ncounters; k++)
        check_raw(j, OBJ_DISK, "vda", counter_objects[OBJ_DISK].counters[k].name);
    for (size_t k = 0; k < counter_objects[OBJ_NET].ncounters; k++)
        check_raw(j, OBJ_NET, "eth0", counter_objects[OBJ_NET].counters[k].name);
    CHECK(json_is_null(json_array_get(
        json_object_get(find_series(j, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec"), "values"), 0)));
    json_decref(j);

    /* A range wholly before the ticks in memory: from the database, and only the range. */
    range(r, sizeof(r), 10, 20, "");
    j = data(&env, rd, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec", r, 200);
    check_ts_range(j, 10, 20);
    check_raw(j, OBJ_DISK, "vda", "Disk Read Bytes/sec");
    json_decref(j);
    /* A range wholly in memory. */
    range(r, sizeof(r), 181, 183, "");
    j = data(&env, rd, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec", r, 200);
    check_ts_range(j, 181, 183);
    check_raw(j, OBJ_DISK, "vda", "Disk Read Bytes/sec");
    json_decref(j);
    /* A range with no ticks: empty arrays. */
    range(r, sizeof(r), 500, 510, "");
    j = data(&env, rd, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec", r, 200);
    CHECK_INT(json_array_size(json_object_get(j, "timestamps")), 0);
    CHECK_INT(
        json_array_size(json_object_get(json_array_get(json_object_get(j, "series"), 0), "values")),
        0);
    json_decref(j);

    /* No live store: all from the file. No database: only memory. */
    env.live = NULL;
    range(r, sizeof(r), 170, 183, "");
    j = data(&env, rd, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec", r, 200);
    check_ts_range(j, 170, 179);
    check_raw(j, OBJ_DISK, "vda", "Disk Read Bytes/sec");
    json_decref(j);
    env.live = live;
    j = data(&env, NULL, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec", r, 200);
    check_ts_range(j, 176, 183);
    check_raw(j, OBJ_DISK, "vda", "Disk Read Bytes/sec");
    json_decref(j);

    /* Relative times use the fixed clock: the last 10 s are ticks 174..183. */
    j = data(&env, rd, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec", "&from=-10s", 200);
    CHECK_INT(json_integer_value(json_object_get(j, "to")), fixed_now);
    check_ts_range(j, 174, 183);
    json_decref(j);

    /* Errors. */
    check_error(&env, rd, "GET", "/api/v1/data",
                "counter=%5CMemory%5CDirty+Bytes&from=1795968020&to=1795968010", NULL, 400,
                "bad_time", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/data", "counter=%5CMemory%5CDirty+Bytes&from=yesterday",
                NULL, 400, "bad_time", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/data", "from=-1m", NULL, 400, "bad_parameter", msg,
                sizeof(msg));
    CHECK(strstr(msg, "counter") != NULL);
    check_error(&env, rd, "GET", "/api/v1/data", "", NULL, 400, "bad_parameter", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/data", "counter=%5CMemory%5CDirty+Bytes&step=soon", NULL,
                400, "bad_step", NULL, 0);
    check_error(&env, rd, "GET", "/api/v1/data", "counter=%5CMemory%5CDirty+Bytes&agg=median", NULL,
                400, "bad_parameter", NULL, 0);

    /* The point limit names itself, for raw ticks and for steps. */
    env.max_points = 100;
    check_error(&env, rd, "GET", "/api/v1/data",
                "counter=%5CMemory%5CDirty+Bytes&from=1795968000&to=1795968183", NULL, 400,
                "too_many_points", msg, sizeof(msg));
    CHECK(strstr(msg, "100") != NULL);
    check_error(&env, rd, "GET", "/api/v1/data",
                "counter=%5CMemory%5CDirty+Bytes&from=-1d&to=now&step=10m", NULL, 400,
                "too_many_points", msg, sizeof(msg));
    CHECK(strstr(msg, "limit of 100") != NULL);
    /* And DATA_MAX_CELLS values in all, whatever max_points allows: 52 series of a day of
     * seconds are 4.5 million values, raw or in 1 s buckets. */
    env.max_points = 100000;
    check_error(&env, rd, "GET", "/api/v1/data",
                "counter=%5CPhysicalDisk(*)%5C*&counter=%5CProcessor(*)%5C*&counter=%5CNetwork+"
                "Interface(*)%5C*&from=-1d",
                NULL, 400, "too_many_points", msg, sizeof(msg));
    CHECK(strstr(msg, "limit of 4000000") != NULL);
    check_error(&env, rd, "GET", "/api/v1/data",
                "counter=%5CPhysicalDisk(*)%5C*&counter=%5CProcessor(*)%5C*&counter=%5CNetwork+"
                "Interface(*)%5C*&from=-2d&step=2s",
                NULL, 400, "too_many_points", msg, sizeof(msg));
    CHECK(strstr(msg, "limit of 4000000") != NULL);
    /* At most API_MAX_PATTERNS counter parameters. */
    {
        char q[2048];
        size_t n = 0;

        for (int i = 0; i <= API_MAX_PATTERNS; i++)
            n += (size_t)snprintf(q + n, sizeof(q) - n, "%scounter=%%5CMemory%%5CDirty+Bytes",
                                  i ? "&" : "");
        check_error(&env, rd, "GET", "/api/v1/data", q, NULL, 400, "bad_pattern", NULL, 0);
    }
    env.max_points = 100;
    /* 100 points exactly are fine. */
    j = data(&env, rd, "\\Memory\\Dirty Bytes", "&from=1795968000&to=1795968099", 200);
    check_ts_range(j, 0, 99);
    json_decref(j);
}

/* Hand-computed buckets of series (obj, inst, cname) from the ticks in [first_s + k * step_s,
 * first_s + (k + 1) * step_s), compared with the answer. */
static void check_buckets(json_t *j, int obj, const char *inst, const char *cname, int first_s,
                          int step_s, const char *agg, double rel_tol)
{
    const struct object_def *od = &counter_objects[obj];
    json_t *ts = json_object_get(j, "timestamps"), *s, *vals;
    char path[256];
    size_t n = json_array_size(ts), bad = 0;

    pattern_format_path(path, sizeof(path), od->name, inst, cname);
    s = find_series(j, path);
    CHECK(s != NULL);
    vals = json_object_get(s, "values");
    CHECK_INT(json_array_size(vals), n);
    for (size_t p = 0; p < n; p++) {
        int b0 = first_s + (int)p * step_s;
        double sum = 0, cnt = 0, mn = INFINITY, mx = -INFINITY, want, got;
        double part_sum = 0, ops_sum = 0, part, ops;
        int op = 0;
        json_t *v = json_array_get(vals, p);

        CHECK_INT(json_integer_value(json_array_get(ts, p)), T0 + b0 * 1000LL);
        for (int i = b0; i < b0 + step_s && i < NALL; i++) {
            double x;

            if (i < 0 || !expect(i, obj, inst, cname, &x))
                continue;
            sum += x;
            cnt++;
            mn = x < mn ? x : mn;
            mx = x > mx ? x : mx;
            if (expect_op(i, obj, inst, cname, &part, &ops)) {
                /* a time per operation: the span's total time over its operations */
                op = 1;
                part_sum += part;
                ops_sum += ops;
            }
        }
        if (cnt == 0) {
            bad += !json_is_null(v);
            continue;
        }
        want = !strcmp(agg, "min")   ? mn
               : !strcmp(agg, "max") ? mx
               : op                  ? (ops_sum > 0 ? part_sum / ops_sum : 0.0)
                                     : sum / cnt;
        got = json_number_value(v);
        if (!json_is_number(v) || fabs(got - want) > rel_tol * fabs(want)) {
            if (bad++ < 3)
                fprintf(stderr, "  %s %s bucket %zu: got %.17g, want %.17g\n", path, agg, p, got,
                        want);
        }
    }
    CHECK_INT(bad, 0);
}

static void test_data_buckets(struct live *live, struct reader *rd)
{
    static const char *const aggs[] = {"avg", "min", "max"};
    struct api_env env = base_env(live, NULL);
    char r[200], more[64];
    json_t *j;

    /* 10 s buckets over the database and memory: computed from raw ticks. */
    for (int a = 0; a < 3; a++) {
        snprintf(more, sizeof(more), "&step=10s&agg=%s&counter=%%5CMemory%%5CDirty+Bytes", aggs[a]);
        range(r, sizeof(r), 100, 183, more);
        j = data(&env, rd, "\\PhysicalDisk(*)\\Disk Read Bytes/sec", r, 200);
        CHECK_STR(json_string_value(json_object_get(j, "tier")), "raw");
        CHECK_STR(json_string_value(json_object_get(j, "agg")), aggs[a]);
        CHECK_INT(json_integer_value(json_object_get(j, "step_ms")), 10000);
        CHECK_INT(json_array_size(json_object_get(j, "timestamps")), 9);
        check_buckets(j, OBJ_DISK, "vda", "Disk Read Bytes/sec", 100, 10, aggs[a], 1e-12);
        check_buckets(j, OBJ_DISK, "nvme0n1", "Disk Read Bytes/sec", 100, 10, aggs[a], 1e-12);
        check_buckets(j, OBJ_MEMORY, "", "Dirty Bytes", 100, 10, aggs[a], 1e-12);
        json_decref(j);
    }
    /* By hand: ticks 100..109 read 1..10 sectors, so 512 * 5.5, 512 and 5120. */
    j = data(&env, rd, "\\PhysicalDisk(vda)\\Disk Read Bytes/sec",
             "&from=1795968100&to=1795968109"
             "&step=10s",
             200);
    CHECK_DBL(json_number_value(json_array_get(
                  json_object_get(json_array_get(json_object_get(j, "series"), 0), "values"), 0)),
              512 * 5.5, 0);
    json_decref(j);

    /* Minute steps read the minute roll-ups for minutes 0 and 1 (db_maintain ran at 2.5 min),
     * and compute minute 2, past the watermark, from raw ticks (file, then memory). */
    for (int a = 0; a < 3; a++) {
        snprintf(more, sizeof(more), "&step=1m&agg=%s&counter=%%5CMemory%%5CDirty+Bytes", aggs[a]);
        range(r, sizeof(r), 0, 179, more);
        j = data(&env, rd, "\\PhysicalDisk(vda)\\*", r, 200);
        CHECK_STR(json_string_value(json_object_get(j, "tier")), "1m");
        CHECK_INT(json_integer_value(json_object_get(j, "step_ms")), 60000);
        CHECK_INT(json_array_size(json_object_get(j, "timestamps")), 3);
        for (size_t k = 0; k < counter_objects[OBJ_DISK].ncounters; k++)
            check_buckets(j, OBJ_DISK, "vda", counter_objects[OBJ_DISK].counters[k].name, 0, 60,
                          aggs[a], 1e-12);
        check_buckets(j, OBJ_MEMORY, "", "Dirty Bytes", 0, 60, aggs[a], 1e-12);
        json_decref(j);
    }
    /* Two-minute steps: minutes 0 and 1 from two roll-up rows, minutes 2 and 3 from raw ticks
     * and memory (nvme0n1 is only there). */
    range(r, sizeof(r), 0, 183, "&step=2m&counter=%5CPhysicalDisk(*)%5CDisk+Bytes%2Fsec");
    j = data(&env, rd, "\\Memory\\Dirty Bytes", r, 200);
    CHECK_STR(json_string_value(json_object_get(j, "tier")), "1m");
    check_buckets(j, OBJ_MEMORY, "", "Dirty Bytes", 0, 120, "avg", 1e-12);
    check_buckets(j, OBJ_DISK, "nvme0n1", "Disk Bytes/sec", 0, 120, "avg", 1e-12);
    json_decref(j);
    /* Hour steps: no hour roll-up yet, so the minute tier and raw ticks fill the hour. */
    for (int a = 0; a < 3; a++) {
        snprintf(more, sizeof(more), "&step=1h&agg=%s", aggs[a]);
        range(r, sizeof(r), 0, 183, more);
        j = data(&env, rd, "\\Memory\\*", r, 200);
        CHECK_STR(json_string_value(json_object_get(j, "tier")), "1h");
        CHECK_INT(json_array_size(json_object_get(j, "timestamps")), 1);
        check_buckets(j, OBJ_MEMORY, "", "Dirty Bytes", 0, 3600, aggs[a], 1e-12);
        check_buckets(j, OBJ_MEMORY, "", "Available Bytes", 0, 3600, aggs[a], 1e-12);
        json_decref(j);
    }
}

/* The minute answer really comes from the roll-up table: change a stored maximum and see it. */
static void test_rollup_source(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live, NULL);
    sqlite3 *conn;
    json_t *j, *v;
    char r[200];

    CHECK_INT(sqlite3_open(db_file, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn,
                           "UPDATE obj_memory_1m SET c2_max = 1e12 WHERE bucket_ms = 1795968000000;"
                           "UPDATE obj_memory_1m SET c2_max = 1e12 WHERE bucket_ms = 1795968120000",
                           NULL, NULL, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_changes(conn), 0); /* minute 2 has no roll-up row: past the watermark */
    sqlite3_close(conn);
    CHECK_STR(counter_objects[OBJ_MEMORY].counters[2].name, "Dirty Bytes");
    range(r, sizeof(r), 0, 179, "&step=1m&agg=max");
    j = data(&env, rd, "\\Memory\\Dirty Bytes", r, 200);
    v = json_object_get(json_array_get(json_object_get(j, "series"), 0), "values");
    CHECK_DBL(json_number_value(json_array_get(v, 0)), 1e12, 0);
    CHECK_DBL(json_number_value(json_array_get(v, 1)), 119 * 1024.0, 0);
    CHECK_DBL(json_number_value(json_array_get(v, 2)), 179 * 1024.0, 0);
    json_decref(j);
    /* put the real maximum back: the hour roll-up is built from this row later */
    CHECK_INT(sqlite3_open(db_file, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn,
                           "UPDATE obj_memory_1m SET c2_max = 59 * 1024.0 WHERE bucket_ms = "
                           "1795968000000",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(conn);
}

/* After an hour is complete (every tick written, maintenance two hours on): the hour tier answers
 * hour steps, the minute tier covers minute 3 too, and raw answers stay the same. */
static void test_hour_tier(struct live *live, struct reader *rd)
{
    static const char *const aggs[] = {"avg", "min", "max"};
    struct db_retention keep = {7, 90, 1825, 0, 0};
    struct api_env env = base_env(live, NULL);
    char r[200], more[64], err[512];
    int more_work, guard = 0;
    struct db *d;
    sqlite3 *conn;
    json_t *j, *v;

    CHECK_INT(db_open(db_file, "testhost", &d, err, sizeof(err)), 0);
    CHECK_INT(db_write_ticks(d, all + NDB, NALL - NDB), 0);
    do
        more_work = db_maintain(d, T0 + 2 * 3600000LL, &keep);
    while (more_work > 0 && ++guard < 100);
    CHECK_INT(more_work, 0);
    db_close(d);

    for (int a = 0; a < 3; a++) {
        snprintf(more, sizeof(more), "&step=1h&agg=%s", aggs[a]);
        range(r, sizeof(r), 0, 183, more);
        j = data(&env, rd, "\\Memory\\*", r, 200);
        CHECK_STR(json_string_value(json_object_get(j, "tier")), "1h");
        check_buckets(j, OBJ_MEMORY, "", "Dirty Bytes", 0, 3600, aggs[a], 1e-12);
        check_buckets(j, OBJ_MEMORY, "", "Available Bytes", 0, 3600, aggs[a], 1e-12);
        json_decref(j);
        snprintf(more, sizeof(more), "&step=1m&agg=%s", aggs[a]);
        range(r, sizeof(r), 0, 183, more);
        j = data(&env, rd, "\\PhysicalDisk(*)\\*", r, 200);
        CHECK_INT(json_array_size(json_object_get(j, "timestamps")), 4);
        for (size_t k = 0; k < counter_objects[OBJ_DISK].ncounters; k++) {
            check_buckets(j, OBJ_DISK, "vda", counter_objects[OBJ_DISK].counters[k].name, 0, 60,
                          aggs[a], 1e-12);
            check_buckets(j, OBJ_DISK, "nvme0n1", counter_objects[OBJ_DISK].counters[k].name, 0, 60,
                          aggs[a], 1e-12);
        }
        json_decref(j);
    }
    /* Ticks in both the file and memory come once. */
    range(r, sizeof(r), 170, 183, "");
    j = data(&env, rd, "\\PhysicalDisk(*)\\Disk Read Bytes/sec", r, 200);
    check_ts_range(j, 170, 183);
    check_raw(j, OBJ_DISK, "vda", "Disk Read Bytes/sec");
    check_raw(j, OBJ_DISK, "nvme0n1", "Disk Read Bytes/sec");
    json_decref(j);

    /* The hour answer comes from the hour table. */
    CHECK_INT(sqlite3_open(db_file, &conn), SQLITE_OK);
    CHECK_INT(sqlite3_exec(conn,
                           "UPDATE obj_memory_1h SET c2_max = 1e13 WHERE bucket_ms = "
                           "1795968000000",
                           NULL, NULL, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_changes(conn), 1);
    sqlite3_close(conn);
    range(r, sizeof(r), 0, 183, "&step=1h&agg=max");
    j = data(&env, rd, "\\Memory\\Dirty Bytes", r, 200);
    v = json_object_get(json_array_get(json_object_get(j, "series"), 0), "values");
    CHECK_DBL(json_number_value(json_array_get(v, 0)), 1e13, 0);
    json_decref(j);
}

/* ---- /metrics ---- */

static void test_metrics(struct live *live, struct reader *rd)
{
    struct fake_stats fs = {.st = {.ticks = 77, .last_tick_wall_ms = T0 + 183000}};
    struct api_env env = base_env(live, &fs);
    struct api_response out;

    CHECK_INT(call(&env, rd, "GET", "/metrics", "", NULL, &out), 0);
    CHECK_INT(out.status, 200);
    CHECK_STR(out.content_type, "text/plain; version=0.0.4; charset=utf-8");
    CHECK(out.body && strlen(out.body) == out.body_len);
    CHECK(out.body && strstr(out.body, "perflog_build_info") != NULL);
    CHECK(out.body && strstr(out.body, "# TYPE ") != NULL);
    free(out.body);
    env.live = NULL;
    CHECK_INT(call(&env, NULL, "GET", "/metrics", "", NULL, &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);
}

/* ---- set-up ---- */

static struct reader *make_db(void)
{
    struct db_retention keep = {7, 90, 1825, 0, 0};
    struct reader *rd = NULL;
    char err[512];
    struct db *d;
    int more, guard = 0;

    snprintf(db_file, sizeof(db_file), "%s/api.db", dir);
    CHECK_INT(db_open(db_file, "testhost", &d, err, sizeof(err)), 0);
    for (int i = 0; i < NDB; i += 30)
        CHECK_INT(db_write_ticks(d, all + i, 30), 0);
    /* "now" is 2.5 minutes after T0: minutes 0 and 1 are rolled up, minute 2 is not. */
    do
        more = db_maintain(d, T0 + 150000, &keep);
    while (more > 0 && ++guard < 100);
    CHECK_INT(more, 0);
    db_close(d);
    CHECK_INT(reader_open(db_file, &rd, err, sizeof(err)), 0);
    return rd;
}

/*
 * The wall clock stepped back 2.5 s after tick 3: the ticks stored next (ids 4..6) have times
 * between the earlier ones, so time order is no longer id order. Raw /data must still pair every
 * timestamp with its own tick's values.
 */
static void test_clock_back(void)
{
    struct tick *tk[6];
    struct reader *rd = NULL;
    struct api_env env = {
        .host = "h", .version = "v", .interval_ms = 1000, .max_points = 100, .now_ms = fixed_clock};
    char path[300], err[512], q[600];
    struct db *d;
    json_t *j;

    snprintf(path, sizeof(path), "%s/back.db", dir);
    CHECK_INT(db_open(path, "h", &d, err, sizeof(err)), 0);
    for (int i = 0; i < 6; i++) {
        tk[i] = mk_tick(10 + i);
        tk[i]->wall_ms = T0 + (i < 3 ? i * 1000 : (i - 3) * 1000 + 500);
        tk[i]->interval_ms = 1000;
        tk[i]->obj[OBJ_MEMORY].rows[0].v[MEM_DIRTY_KB] = 100 + i; /* 100 + id - 1 */
    }
    CHECK_INT(db_write_ticks(d, tk, 6), 0);
    db_close(d);
    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);
    snprintf(q, sizeof(q), "counter=%%5CMemory%%5CDirty%%20Bytes&from=%lld&to=%lld",
             (long long)(T0 / 1000), (long long)(T0 / 1000 + 10));
    j = get_json(&env, rd, "/api/v1/data", q, 200);
    if (j) {
        static const int64_t want_ts[6] = {0, 500, 1000, 1500, 2000, 2500};
        static const int want_kb[6] = {100, 103, 101, 104, 102, 105};
        json_t *ts = json_object_get(j, "timestamps");
        json_t *vals = json_object_get(json_array_get(json_object_get(j, "series"), 0), "values");

        CHECK_INT(json_array_size(ts), 6);
        for (size_t i = 0; i < 6 && i < json_array_size(ts); i++) {
            CHECK_INT(json_integer_value(json_array_get(ts, i)), T0 + want_ts[i]);
            CHECK_DBL(json_number_value(json_array_get(vals, i)), want_kb[i] * 1024.0, 0);
        }
        json_decref(j);
    }
    reader_close(rd);
    for (int i = 0; i < 6; i++)
        tick_free(tk[i]);
}

int main(void)
{
    struct live *live;
    struct reader *rd;
    char cmd[300];

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    for (int i = 0; i < NALL; i++)
        all[i] = mk_tick(i);
    rd = make_db();
    live = live_new(LIVE_CAP);
    for (int i = 0; i < NALL; i++)
        live_publish_ref(live, all[i]); /* keeps the last LIVE_CAP: ticks 176..183 */

    test_json_helpers();
    test_auth_ok();
    if (rd && live) {
        test_routing(live, rd);
        test_auth_handle(live, rd);
        test_health(live, rd);
        test_counters(live, rd);
        test_latest(live, rd);
        test_data_raw(live, rd);
        test_data_buckets(live, rd);
        test_rollup_source(live, rd);
        test_hour_tier(live, rd);
        test_metrics(live, rd);
    }
    test_clock_back();

    reader_close(rd);
    live_free(live);
    for (int i = 0; i < NALL; i++)
        tick_free(all[i]);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tl_done();
}
