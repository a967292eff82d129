/*
 * test_pdh_extra.c - the extra PDH series of a Windows config (pdh_counters) end to end, on Linux
 * with real SQLite files: ticks carrying extras (delta.c, names shared between ticks) through the
 * writer (db.c, pdh_extra.c) into the counter_values view, bit for bit; then the reader, pattern
 * resolution and the API handlers (/counters, /data raw and roll-up tiers, /latest, /export,
 * /metrics), with the newest ticks from memory; gaps stay gaps; roll-ups against values computed
 * from the raw ones; retention and the size cap prune them with the rest; and a version-3
 * database (tests/fixtures/db/v3.sql) read as it is, then upgraded to the current version.
 */
#include "collectors/model/delta.h"
#include "storage/db.h"
#include "storage/query/series.h"
#include "testdb.h"
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

#define P_UP     "\\System\\System Up Time"
#define P_FREE   "\\LogicalDisk(C:)\\% Free Space"
#define P_COMMIT "\\Memory\\Committed Bytes"
#define P_NIC    "\\Network Adapter(Intel(R) Ethernet)\\Bytes Total/sec"
#define P_PROCS  "\\System\\Processes" /* from tick NDB on: only in memory */
#define NPATHS   5

static const char *const paths[NPATHS] = {P_UP, P_FREE, P_COMMIT, P_NIC, P_PROCS};

static char dir[] = "/tmp/perflog-test-pdh-XXXXXX";
static char db_file[256];
static struct tick *all[NALL];
static int64_t fixed_now = T0 + NALL * 1000;

static int64_t fixed_clock(void)
{
    return fixed_now;
}

/* ---- the values: some exact by hand, some with every bit of the mantissa in use ---- */

static int present(int p, int i)
{
    return p != 4 || i >= NDB;
}

static int valid(int p, int i)
{
    return present(p, i) && !(p == 1 && i % 5 == 3) && !(p == 3 && i % 7 == 2);
}

static double value(int p, int i)
{
    switch (p) {
    case 0:
        return 1000.5 + i;
    case 1:
        return 100.0 / 3.0 + i * 0.1234567891234567;
    case 2:
        return 4.0e9 + i * 4096.0;
    case 3:
        return (double)i / 7.0 * 1e6;
    default:
        return 100 + i % 3;
    }
}

static int path_index(const char *path)
{
    for (int p = 0; p < NPATHS; p++)
        if (!strcmp(paths[p], path))
            return p;
    return -1;
}

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

/* Tick i at T0 + i s: a Memory row (so the object roll-ups have something) and the extras, named
 * through one names block shared while the set of paths stays the same. */
static struct tick *mk_tick(int i, int64_t wall_ms, struct extra_names **cache)
{
    struct tick *t = calloc(1, sizeof(*t));
    struct raw_extra e[NPATHS];
    size_t n = 0;

    t->refs = 1;
    t->wall_ms = wall_ms;
    t->interval_ms = i ? 1000 : 0;
    t->obj[OBJ_MEMORY].rows = calloc(1, sizeof(struct tick_row));
    t->obj[OBJ_MEMORY].n = 1;
    t->obj[OBJ_MEMORY].rows[0].v[MEM_DIRTY_KB] = i;
    for (int p = 0; p < NPATHS; p++) {
        if (!present(p, i))
            continue;
        memset(&e[n], 0, sizeof(e[n]));
        snprintf(e[n].path, sizeof(e[n].path), "%s", paths[p]);
        e[n].valid = valid(p, i);
        e[n].value = e[n].valid ? value(p, i) : 12345.0; /* a gap's value must not leak */
        n++;
    }
    CHECK_INT(tick_set_extras(t, e, n, cache), 0);
    return t;
}

/* The extra of tick t with this path, or NULL. */
static const struct tick_extra *extra_of(const struct tick *t, const char *path)
{
    for (size_t i = 0; i < t->n_extras; i++)
        if (!strcmp(t->extras[i].path, path))
            return &t->extras[i];
    return NULL;
}

/* ---- requests ---- */

static const char *enc(const char *s, char *buf, size_t cap)
{
    size_t n = 0;

    for (; *s && n + 4 < cap; s++) {
        if (*s == ' ' || *s == '%' || *s == '&' || *s == '+' || *s == '#' || *s == '\\')
            n += (size_t)snprintf(buf + n, cap - n, "%%%02X", (unsigned char)*s);
        else
            buf[n++] = *s;
    }
    buf[n] = '\0';
    return buf;
}

static struct api_env base_env(struct live *live)
{
    struct api_env env = {.host = "testhost",
                          .version = "9.9.9-test",
                          .db_path = db_file,
                          .interval_ms = 1000,
                          .start_wall_ms = T0 - 3600000,
                          .max_points = 100000,
                          .live = live,
                          .now_ms = fixed_clock};

    return env;
}

/* GET path?query: the answer (caller frees body, or the stream is read into body). */
static void get(const struct api_env *env, struct reader *rd, const char *path, const char *query,
                struct api_response *out)
{
    struct api_request rq = {
        .method = "GET", .path = path, .query = query, .query_len = strlen(query)};
    struct sbuf b = {0};
    char buf[4096];
    ssize_t n;

    memset(out, 0, sizeof(*out));
    CHECK_INT(api_handle(env, rd, &rq, out), 0);
    if (!out->stream)
        return;
    while ((n = out->stream(out->stream_ctx, buf, sizeof(buf))) > 0)
        sbuf_append(&b, buf, (size_t)n);
    CHECK_INT(n, 0);
    out->stream_free(out->stream_ctx);
    out->stream = NULL;
    out->body_len = b.len;
    out->body = sbuf_take(&b);
}

static json_t *get_json(const struct api_env *env, struct reader *rd, const char *path,
                        const char *query)
{
    struct api_response out;
    json_t *j;

    get(env, rd, path, query, &out);
    CHECK_INT(out.status, 200);
    if (out.status != 200)
        fprintf(stderr, "  %s?%s: %.*s\n", path, query, (int)out.body_len, out.body);
    j = out.body ? json_loadb(out.body, out.body_len, 0, NULL) : NULL;
    CHECK(j != NULL);
    free(out.body);
    return j;
}

static json_t *find_by_path(json_t *arr, const char *path)
{
    for (size_t i = 0; i < json_array_size(arr); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(arr, i), "path")), path))
            return json_array_get(arr, i);
    return NULL;
}

/* ---- ticks through delta.c ---- */

static void test_delta(void)
{
    struct raw_sample raw = {0};
    struct delta_state *d = delta_new();
    struct tick *t1, *t2, *t3;
    struct raw_extra *x;

    x = raw_extra_add(&raw.extra, P_UP);
    x->value = 7.25;
    x->valid = 1;
    x = raw_extra_add(&raw.extra, P_FREE);
    x->value = 99.0;
    x->valid = 0;
    t1 = delta_tick(d, &raw, T0, 0, 0);
    CHECK_INT(t1->n_extras, 2);
    CHECK_STR(t1->extras[0].path, P_UP);
    CHECK(t1->extras[0].valid && t1->extras[0].value == 7.25);
    CHECK(!t1->extras[1].valid && t1->extras[1].value == 0.0);

    raw_sample_clear(&raw);
    CHECK_INT(raw.extra.n, 0);
    raw_extra_add(&raw.extra, P_UP)->valid = 1;
    x = raw_extra_add(&raw.extra, P_FREE);
    x->value = NAN; /* not a value, whatever PDH says */
    x->valid = 1;
    t2 = delta_tick(d, &raw, T0 + 1000, 1000, 0);
    CHECK(t2->extras[0].path == t1->extras[0].path); /* the same names block, not a copy */
    CHECK_INT(t2->extras[1].valid, 0);

    raw_sample_clear(&raw);
    raw_extra_add(&raw.extra, P_FREE)->valid = 1;
    t3 = delta_tick(d, &raw, T0 + 2000, 1000, 0);
    CHECK_INT(t3->n_extras, 1);
    CHECK_STR(t3->extras[0].path, P_FREE);
    CHECK(t3->extras[0].path != t1->extras[1].path); /* a new set, a new block */
    /* a path too long for a series is refused, not cut */
    {
        char longp[PDH_PATH_MAX + 10];

        memset(longp, 'x', sizeof(longp) - 1);
        longp[0] = '\\';
        longp[sizeof(longp) - 1] = '\0';
        CHECK(raw_extra_add(&raw.extra, longp) == NULL);
    }
    tick_free(t1); /* the block outlives the first holders */
    CHECK_STR(t2->extras[0].path, P_UP);
    tick_free(t2);
    tick_free(t3);
    delta_free(d);
    raw_sample_free(&raw);
}

/* ---- the database ---- */

static struct reader *make_db(void)
{
    struct db_retention keep = {7, 90, 1825, 0, 0};
    struct reader *rd = NULL;
    char err[512];
    struct db *d;
    int more, guard = 0;

    snprintf(db_file, sizeof(db_file), "%s/extra.db", dir);
    CHECK_INT(db_open(db_file, "testhost", &d, err, sizeof(err)), 0);
    for (int i = 0; i < NDB; i += 30)
        CHECK_INT(db_write_ticks(d, all + i, 30), 0);
    /* now = 3 minutes after T0: the three minutes of the database are rolled up */
    do
        more = db_maintain(d, T0 + 180000, &keep);
    while (more > 0 && ++guard < 100);
    CHECK_INT(more, 0);
    db_close(d);
    CHECK_INT(reader_open(db_file, &rd, err, sizeof(err)), 0);
    return rd;
}

/* Every counter_values row of an extra is the tick's value, bit for bit; a gap is NULL. */
static void test_view(void)
{
    sqlite3 *conn;
    sqlite3_stmt *st;
    int rows = 0, bad = 0, nulls = 0;

    CHECK_INT(sqlite3_open_v2(db_file, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT t_ms, path, object, instance, counter, value, interval_ms "
                                 "FROM counter_values WHERE object NOT IN ('Memory', 'TCP') OR "
                                 "counter = 'Committed Bytes'",
                                 -1, &st, NULL),
              SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int i = (int)((sqlite3_column_int64(st, 0) - T0) / 1000);
        const char *path = (const char *)sqlite3_column_text(st, 1);
        int p = path_index(path);

        rows++;
        if (p < 0 || i < 0 || i >= NDB) {
            bad++;
            continue;
        }
        if (!valid(p, i)) {
            nulls++;
            bad += sqlite3_column_type(st, 5) != SQLITE_NULL;
        } else if (sqlite3_column_type(st, 5) == SQLITE_NULL ||
                   !same_bits(sqlite3_column_double(st, 5), extra_of(all[i], path)->value)) {
            if (bad++ < 5)
                fprintf(stderr, "view %s tick %d: %.17g\n", path, i, sqlite3_column_double(st, 5));
        }
        if (p == 3 && i == 1) {
            CHECK_STR((const char *)sqlite3_column_text(st, 2), "Network Adapter");
            CHECK_STR((const char *)sqlite3_column_text(st, 3), "Intel(R) Ethernet");
            CHECK_STR((const char *)sqlite3_column_text(st, 4), "Bytes Total/sec");
            CHECK_INT(sqlite3_column_int64(st, 6), 1000);
        }
        if (p == 0 && i == 1) {
            CHECK_STR((const char *)sqlite3_column_text(st, 2), "System");
            CHECK_INT(sqlite3_column_type(st, 3), SQLITE_NULL); /* single-instance */
            CHECK_STR((const char *)sqlite3_column_text(st, 4), "System Up Time");
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(conn);
    CHECK_INT(rows, 4 * NDB);
    CHECK_INT(bad, 0);
    CHECK_INT(nulls, NDB / 5 + NDB / 7 + 1); /* P_FREE every 5th, P_NIC every 7th tick */
}

/* ---- /api/v1/counters ---- */

static json_t *counters(const struct api_env *env, struct reader *rd, const char *match, size_t *n)
{
    char q[600], e[500];
    json_t *j;

    snprintf(q, sizeof(q), "match=%s", enc(match, e, sizeof(e)));
    j = get_json(env, rd, "/api/v1/counters", q);
    *n = json_array_size(json_object_get(j, "counters"));
    return j;
}

static void test_counters(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live);
    json_t *j, *c, *list;
    size_t n;

    j = counters(&env, rd, "\\System\\*", &n);
    CHECK_INT(n, 2); /* Up Time from the database, Processes only in memory */
    c = find_by_path(json_object_get(j, "counters"), P_UP);
    CHECK(c != NULL);
    CHECK_STR(json_string_value(json_object_get(c, "object")), "System");
    CHECK(json_is_null(json_object_get(c, "instance")));
    CHECK_STR(json_string_value(json_object_get(c, "counter")), "System Up Time");
    CHECK_STR(json_string_value(json_object_get(c, "unit")), "");
    CHECK_STR(json_string_value(json_object_get(c, "kind")), "value");
    CHECK(find_by_path(json_object_get(j, "counters"), P_PROCS) != NULL);
    json_decref(j);

    j = counters(&env, rd, "\\LogicalDisk(*)\\% Free Space", &n);
    CHECK_INT(n, 1);
    c = json_array_get(json_object_get(j, "counters"), 0);
    CHECK_STR(json_string_value(json_object_get(c, "path")), P_FREE);
    CHECK_STR(json_string_value(json_object_get(c, "instance")), "C:");
    json_decref(j);

    /* an instance with parentheses, matched by a pattern that has them too */
    j = counters(&env, rd, "\\network adapter(intel(r) *)\\*", &n);
    CHECK_INT(n, 1);
    c = json_array_get(json_object_get(j, "counters"), 0);
    CHECK_STR(json_string_value(json_object_get(c, "instance")), "Intel(R) Ethernet");
    json_decref(j);

    /* perflog's own Memory counters first, then the extra one of the same object */
    j = counters(&env, rd, "\\Memory\\*", &n);
    list = json_object_get(j, "counters");
    CHECK_INT(n, counter_objects[OBJ_MEMORY].ncounters + 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(list, n - 1), "path")), P_COMMIT);
    json_decref(j);

    j = counters(&env, rd, "\\System(*)\\*", &n); /* "(*)" is not a single-instance object */
    CHECK_INT(n, 0);
    json_decref(j);
    j = counters(&env, rd, "\\*(*)\\*", &n);
    CHECK_INT(n, 2); /* the extras with an instance; the tick has no Processor or disk rows */
    json_decref(j);
}

/* ---- /api/v1/data ---- */

/* The counter_values of one path, by tick index (NAN for NULL); returns the row count. */
static int view_values(const char *path, double *out)
{
    sqlite3 *conn;
    sqlite3_stmt *st;
    int n = 0;

    for (int i = 0; i < NALL; i++)
        out[i] = -1.0; /* no row */
    CHECK_INT(sqlite3_open_v2(db_file, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(conn, "SELECT t_ms, value FROM counter_values WHERE path = ?", -1,
                                 &st, NULL),
              SQLITE_OK);
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int i = (int)((sqlite3_column_int64(st, 0) - T0) / 1000);

        if (i >= 0 && i < NALL)
            out[i] = sqlite3_column_type(st, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 1);
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_close(conn);
    return n;
}

static void test_data_raw(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live);
    char q[800], e1[200], e2[200], e3[200];
    double view[NALL];
    json_t *j, *ts;
    int mismatches = 0;

    snprintf(q, sizeof(q), "counter=%s&counter=%s&counter=%s&from=%lld&to=%lld",
             enc("\\System\\*", e1, sizeof(e1)), enc("\\LogicalDisk(*)\\*", e2, sizeof(e2)),
             enc("\\Network Adapter(*)\\*", e3, sizeof(e3)), (long long)(T0 / 1000),
             (long long)((T0 + (NALL - 1) * 1000) / 1000));
    j = get_json(&env, rd, "/api/v1/data", q);
    CHECK_STR(json_string_value(json_object_get(j, "tier")), "raw");
    ts = json_object_get(j, "timestamps");
    CHECK_INT(json_array_size(ts), NALL);
    CHECK_INT(json_array_size(json_object_get(j, "series")), 4);
    for (int p = 0; p < NPATHS; p++) {
        json_t *s = find_by_path(json_object_get(j, "series"), paths[p]), *vals;
        int rows = view_values(paths[p], view);

        if (p == 2) /* \Memory\... is not asked for */
            continue;
        CHECK(s != NULL);
        if (!s)
            continue;
        CHECK_STR(json_string_value(json_object_get(s, "unit")), "");
        CHECK_INT(rows, p == 4 ? 0 : NDB); /* P_PROCS exists only in memory */
        vals = json_object_get(s, "values");
        for (int i = 0; i < NALL && i < (int)json_array_size(vals); i++) {
            json_t *v = json_array_get(vals, i);

            CHECK_INT(json_integer_value(json_array_get(ts, i)), T0 + i * 1000LL);
            if (!valid(p, i)) {
                mismatches += !json_is_null(v);
                /* the view has a gap as NULL, and no row where the path was not read */
                mismatches += i < NDB && (present(p, i) ? !isnan(view[i]) : view[i] != -1.0);
                continue;
            }
            /* the API's number is the tick's, and the view's (from the database) too */
            mismatches += !json_is_number(v) || !same_bits(json_number_value(v), value(p, i));
            mismatches += i < NDB && !same_bits(view[i], json_number_value(v));
        }
    }
    CHECK_INT(mismatches, 0);
    json_decref(j);
}

/* min, avg and max of path p over ticks [a, b), from the raw values; 0 when none has a value. */
static int raw_stats(int p, int a, int b, double *mn, double *avg, double *mx)
{
    double sum = 0;
    int n = 0;

    *mn = INFINITY;
    *mx = -INFINITY;
    for (int i = a; i < b; i++) {
        if (!valid(p, i))
            continue;
        sum += value(p, i);
        n++;
        *mn = value(p, i) < *mn ? value(p, i) : *mn;
        *mx = value(p, i) > *mx ? value(p, i) : *mx;
    }
    *avg = n ? sum / n : NAN;
    return n;
}

/* step=60: minutes 0-2 from the minute roll-ups, minute 3 from memory. */
static void test_data_minutes(struct live *live, struct reader *rd)
{
    static const char *const aggs[] = {"avg", "min", "max"};
    struct api_env env = base_env(live);
    char q[800], e1[200], e2[200];

    for (int a = 0; a < 3; a++) {
        json_t *j;
        int bad = 0;

        snprintf(q, sizeof(q), "counter=%s&counter=%s&from=%lld&to=%lld&step=60&agg=%s",
                 enc(P_UP, e1, sizeof(e1)), enc("\\LogicalDisk(*)\\*", e2, sizeof(e2)),
                 (long long)(T0 / 1000), (long long)((T0 + (NALL - 1) * 1000) / 1000), aggs[a]);
        j = get_json(&env, rd, "/api/v1/data", q);
        CHECK_STR(json_string_value(json_object_get(j, "tier")), "1m");
        CHECK_INT(json_array_size(json_object_get(j, "timestamps")), 4);
        for (int p = 0; p < 2; p++) {
            json_t *vals =
                json_object_get(find_by_path(json_object_get(j, "series"), paths[p]), "values");

            CHECK_INT(json_array_size(vals), 4);
            for (int m = 0; m < 4 && m < (int)json_array_size(vals); m++) {
                double mn, avg, mx, want, got = json_number_value(json_array_get(vals, m));
                int end = (m + 1) * 60 < NALL ? (m + 1) * 60 : NALL;

                CHECK(raw_stats(p, m * 60, end, &mn, &avg, &mx) > 0);
                want = a == 0 ? avg : a == 1 ? mn : mx;
                if (a == 0 ? fabs(got - want) > 1e-12 * fabs(want) : got != want) {
                    if (bad++ < 3)
                        fprintf(stderr, "minute %d of %s (%s): %.17g, want %.17g\n", m, paths[p],
                                aggs[a], got, want);
                }
            }
        }
        CHECK_INT(bad, 0);
        json_decref(j);
    }
}

/* ---- /api/v1/latest, /api/v1/export and /metrics ---- */

static void test_latest(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live);
    char q[300], e[200];
    json_t *j, *vals, *v;

    snprintf(q, sizeof(q), "counter=%s&counter=%s", enc("\\System\\*", e, sizeof(e)),
             "%5CLogicalDisk(*)%5C*");
    j = get_json(&env, rd, "/api/v1/latest", q);
    CHECK_INT(json_integer_value(json_object_get(j, "t_ms")), T0 + (NALL - 1) * 1000LL);
    vals = json_object_get(j, "values");
    CHECK_INT(json_array_size(vals), 3);
    v = find_by_path(vals, P_UP);
    CHECK(v && json_number_value(json_object_get(v, "value")) == value(0, NALL - 1));
    CHECK_STR(json_string_value(json_object_get(v, "unit")), "");
    v = find_by_path(vals, P_PROCS);
    CHECK(v && json_number_value(json_object_get(v, "value")) == value(4, NALL - 1));
    v = find_by_path(vals, P_FREE); /* tick 183 is a gap of P_FREE */
    CHECK(!valid(1, NALL - 1) && v && json_is_null(json_object_get(v, "value")));
    json_decref(j);
}

static void test_export(struct live *live, struct reader *rd)
{
    static const char hdr[] = "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\","
                              "\"\\\\testhost\\System\\System Up Time\","
                              "\"\\\\testhost\\LogicalDisk(C:)\\% Free Space\"\r\n";
    struct api_env env = base_env(live);
    struct api_response out;
    char q[400], e1[200], e2[200], line[200];
    const char *row;
    int rows = 0;

    /* ticks 170..175 from the database, 176..183 from memory */
    snprintf(q, sizeof(q), "counter=%s&counter=%s&from=%lld&to=%lld&tz=utc",
             enc(P_UP, e1, sizeof(e1)), enc(P_FREE, e2, sizeof(e2)),
             (long long)((T0 + 170000) / 1000), (long long)((T0 + 183000) / 1000));
    get(&env, rd, "/api/v1/export", q, &out);
    CHECK_INT(out.status, 200);
    CHECK(out.body != NULL);
    if (!out.body)
        return;
    CHECK(strncmp(out.body, hdr, strlen(hdr)) == 0);
    /* a gap of P_FREE in the database (tick 173) and in memory (tick 178); both values at 181 */
    snprintf(line, sizeof(line), "\"11/29/2026 16:02:53.000\",\"%.6f\",\" \"\r\n", value(0, 173));
    CHECK(!valid(1, 173) && strstr(out.body, line) != NULL);
    snprintf(line, sizeof(line), "\"11/29/2026 16:02:58.000\",\"%.6f\",\" \"\r\n", value(0, 178));
    CHECK(!valid(1, 178) && strstr(out.body, line) != NULL);
    snprintf(line, sizeof(line), "\"11/29/2026 16:03:01.000\",\"%.6f\",\"%.6f\"\r\n", value(0, 181),
             value(1, 181));
    CHECK(strstr(out.body, line) != NULL);
    for (row = out.body; (row = strstr(row, "\r\n")); row += 2)
        rows++;
    CHECK_INT(rows, 1 + 14); /* the header and ticks 170..183 */
    free(out.body);
}

static void test_metrics(struct live *live, struct reader *rd)
{
    struct api_env env = base_env(live);
    struct api_response out;
    char line[200];

    get(&env, rd, "/metrics", "", &out);
    CHECK_INT(out.status, 200);
    if (!out.body)
        return;
    CHECK(strstr(out.body, "# TYPE perflog_pdh_value gauge\n") != NULL);
    snprintf(line, sizeof(line),
             "perflog_pdh_value{object=\"System\",counter=\"System Up Time\"} %.1f\n",
             value(0, NALL - 1));
    CHECK(strstr(out.body, line) != NULL);
    CHECK(strstr(out.body, "perflog_pdh_value{object=\"Network Adapter\",pdh_instance=\"Intel(R) "
                           "Ethernet\",counter=\"Bytes Total/sec\"} ") != NULL);
    CHECK(strstr(out.body, "counter=\"% Free Space\"") == NULL); /* a gap: no sample */
    free(out.body);
}

/* ---- roll-ups over hours, retention and the size cap (a database of their own) ---- */

static int64_t count(sqlite3 *conn, const char *sql)
{
    sqlite3_stmt *st;
    int64_t n = -1;

    if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    else
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(conn));
    sqlite3_finalize(st);
    return n;
}

/* Two hours of ticks every 10 s (tick k has the values of index k % NDB): the hour roll-up equals
 * what the raw values give; the API's step=1h reads it; retention and the size cap prune the
 * extras with the ticks. */
static void test_hours(void)
{
    enum { NT = 2 * 360 + 6 }; /* two hours and a minute */
    struct db_retention keep = {7, 90, 1825, 0, 0}, short_raw = {1, 2, 3, 0, 0},
                        tiny = {7, 90, 1825, 1, 0};
    struct extra_names *cache = NULL;
    struct api_env env = base_env(NULL);
    char path[300], err[512], q[400], e[200];
    struct tick *t[NT];
    struct reader *rd;
    sqlite3_stmt *st;
    sqlite3 *conn;
    struct db *d;
    int more, guard = 0;
    json_t *j;

    snprintf(path, sizeof(path), "%s/hours.db", dir);
    env.db_path = path;
    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    for (int k = 0; k < NT; k++)
        t[k] = mk_tick(k % NDB, T0 + k * 10000LL, &cache);
    CHECK_INT(db_write_ticks(d, t, NT), 0);
    do
        more = db_maintain(d, T0 + NT * 10000LL, &keep);
    while (more > 0 && ++guard < 100);
    CHECK_INT(more, 0);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(count(conn, "SELECT count(*) FROM pdh_values_1h"), 2 * 4);
    CHECK_INT(
        count(conn, "SELECT count(*) FROM counter_rollups WHERE tier = '1h' AND path = '" P_UP "'"),
        2);
    CHECK_INT(sqlite3_prepare_v2(conn,
                                 "SELECT bucket_ms, n, min, avg, max FROM counter_rollups WHERE "
                                 "tier = '1h' AND path = ? ORDER BY bucket_ms",
                                 -1, &st, NULL),
              SQLITE_OK);
    for (int p = 0; p < 4; p++) {
        sqlite3_bind_text(st, 1, paths[p], -1, SQLITE_STATIC);
        for (int h = 0; h < 2; h++) {
            double sum = 0, mn = INFINITY, mx = -INFINITY;
            int n = 0;

            for (int k = h * 360; k < (h + 1) * 360; k++)
                if (valid(p, k % NDB)) {
                    double v = value(p, k % NDB);

                    sum += v;
                    n++;
                    mn = v < mn ? v : mn;
                    mx = v > mx ? v : mx;
                }
            CHECK_INT(sqlite3_step(st), SQLITE_ROW);
            CHECK_INT(sqlite3_column_int64(st, 0), T0 + h * 3600000LL);
            CHECK_INT(sqlite3_column_int64(st, 1), n); /* values, not ticks */
            CHECK(sqlite3_column_double(st, 2) == mn);
            CHECK_DBL(sqlite3_column_double(st, 3), sum / n, 1e-9 * fabs(sum / n));
            CHECK(sqlite3_column_double(st, 4) == mx);
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);

    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);
    snprintf(q, sizeof(q), "counter=%s&from=%lld&to=%lld&step=1h&agg=max",
             enc(P_FREE, e, sizeof(e)), (long long)(T0 / 1000), (long long)(T0 / 1000 + 7199));
    j = get_json(&env, rd, "/api/v1/data", q);
    CHECK_STR(json_string_value(json_object_get(j, "tier")), "1h");
    {
        json_t *vals = json_object_get(json_array_get(json_object_get(j, "series"), 0), "values");
        double mx = -INFINITY;

        for (int k = 0; k < 360; k++)
            if (valid(1, k % NDB) && value(1, k % NDB) > mx)
                mx = value(1, k % NDB);
        CHECK_INT(json_array_size(vals), 2);
        CHECK(json_number_value(json_array_get(vals, 0)) == mx);
    }
    json_decref(j);
    reader_close(rd);

    /* The size cap prunes the oldest raw ticks, and their extras with them. */
    more = db_maintain(d, T0 + NT * 10000LL, &tiny);
    CHECK(more >= 0);
    CHECK(count(conn, "SELECT count(*) FROM ticks") < NT);
    CHECK_INT(count(conn, "SELECT count(*) FROM pdh_values WHERE tick NOT IN (SELECT id FROM "
                          "ticks)"),
              0);
    CHECK_INT(count(conn, "SELECT count(*) FROM pdh_values"),
              4 * count(conn, "SELECT count(*) FROM ticks"));

    /* A day and a half later the raw tier has gone past raw_days, roll-ups stay; ten days
     * later they have gone too. The names stay. */
    guard = 0;
    do
        more = db_maintain(d, T0 + 36 * 3600000LL, &short_raw);
    while (more > 0 && ++guard < 100);
    CHECK_INT(count(conn, "SELECT count(*) FROM pdh_values"), 0);
    CHECK_INT(count(conn, "SELECT count(*) FROM pdh_values_1m"), 4 * 121);
    CHECK_INT(count(conn, "SELECT count(*) FROM pdh_values_1h"),
              3 * 4); /* the hour of minute 120 */
    guard = 0;
    do
        more = db_maintain(d, T0 + 10 * 86400000LL, &short_raw);
    while (more > 0 && ++guard < 100);
    CHECK_INT(count(conn, "SELECT count(*) FROM pdh_values_1m"), 0);
    CHECK_INT(count(conn, "SELECT count(*) FROM pdh_values_1h"), 0);
    CHECK_INT(count(conn, "SELECT count(*) FROM pdh_paths"), 4);
    sqlite3_close(conn);
    db_close(d);
    for (int k = 0; k < NT; k++)
        tick_free(t[k]);
    extra_names_free(cache);
}

/* ---- a version-3 database ---- */

/* Read as it is (no extras, no error), then opened by the writer: upgraded to the current version,
 * its data kept, extras stored and shown by the views next to the old rows. */
static void test_v3(void)
{
    struct pattern pat;
    struct series_set set = {0};
    struct extra_names *cache = NULL;
    char path[300], err[512];
    struct reader *rd;
    struct tick *t;
    sqlite3 *conn;
    struct db *d;

    snprintf(path, sizeof(path), "%s/v3.db", dir);
    if (load_fixture("v3.sql", path) < 0)
        return;
    CHECK_INT(reader_open(path, &rd, err, sizeof(err)), 0);
    CHECK_INT(pattern_parse("\\*\\*", 4, &pat, NULL), 0);
    CHECK_INT(series_resolve(rd, NULL, &pat, 1, 1000, &set), 0);
    CHECK_INT(set.n, counter_objects[OBJ_MEMORY].ncounters + counter_objects[OBJ_TCP].ncounters);
    series_set_free(&set);
    reader_close(rd);

    CHECK_INT(db_open(path, "testhost", &d, err, sizeof(err)), 0);
    t = mk_tick(7, 1895974000000LL, &cache);
    CHECK_INT(db_write_ticks(d, &t, 1), 0);
    tick_free(t);
    extra_names_free(cache);
    db_close(d);
    CHECK_INT(sqlite3_open(path, &conn), SQLITE_OK);
    CHECK_INT(count(conn, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    CHECK(DB_SCHEMA_VERSION >= 4);
    CHECK_INT(count(conn, "SELECT count(DISTINCT t_ms) FROM counter_values"), 4 + 1);
    CHECK_INT(count(conn, "SELECT count(*) FROM counter_values WHERE object = 'PhysicalDisk' AND "
                          "t_ms < 1895974000000"),
              4 * 2 * (int64_t)counter_objects[OBJ_DISK].ncounters); /* vda and _Total */
    CHECK_INT(count(conn, "SELECT count(*) FROM counter_values WHERE path = '" P_UP
                          "' AND value = 1007.5"),
              1);
    sqlite3_close(conn);
}

int main(void)
{
    struct extra_names *cache = NULL;
    struct live *live;
    struct reader *rd;
    char cmd[300];

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_delta();
    for (int i = 0; i < NALL; i++)
        all[i] = mk_tick(i, T0 + i * 1000LL, &cache);
    CHECK(all[1]->extra_names == all[0]->extra_names);
    CHECK(all[NDB]->extra_names != all[NDB - 1]->extra_names); /* P_PROCS joins */
    rd = make_db();
    live = live_new(LIVE_CAP);
    for (int i = 0; i < NALL; i++)
        live_publish_ref(live, all[i]); /* keeps the last LIVE_CAP: ticks 176..183 */
    if (rd && live) {
        test_view();
        test_counters(live, rd);
        test_data_raw(live, rd);
        test_data_minutes(live, rd);
        test_latest(live, rd);
        test_export(live, rd);
        test_metrics(live, rd);
    }
    test_hours();
    test_v3();

    reader_close(rd);
    live_free(live);
    for (int i = 0; i < NALL; i++)
        tick_free(all[i]);
    extra_names_free(cache);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tl_done();
}
