/*
 * api_read.c - the small GET handlers: health, counters, latest and /metrics.
 */
#include "base/mem.h"
#include "collectors/model/timeparse.h"
#include "storage/query/metrics.h"
#include "storage/query/series.h"
#include "storage/query/tz.h"
#include "web/api_internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void get_stats(const struct api_env *env, struct api_stats *st)
{
    memset(st, 0, sizeof(*st));
    if (env->stats)
        env->stats(env->stats_arg, st);
    if (st->interval_ms <= 0)
        st->interval_ms = env->interval_ms;
}

/* The database file and its WAL, in bytes; -1 when the file cannot be seen. */
static int64_t db_bytes(const char *path)
{
    char wal[4200];
    struct stat sb;
    int64_t n;

    if (!path || stat(path, &sb) != 0)
        return -1;
    n = sb.st_size;
    snprintf(wal, sizeof(wal), "%s-wal", path);
    if (stat(wal, &sb) == 0)
        n += sb.st_size;
    return n;
}

static json_t *health_problems(const struct api_stats *st, int64_t now_ms, struct reader *rd)
{
    json_t *p = json_array();

    if (st->writer_failing)
        json_array_append_new(p, json_sprintf("the database refuses writes (%s); %llu ticks held",
                                              strerror(-st->last_error),
                                              (unsigned long long)(st->queued + st->in_flight)));
    if (st->dropped)
        json_array_append_new(p, json_sprintf("%llu ticks were lost because the database could "
                                              "not take them",
                                              (unsigned long long)st->dropped));
    if (st->last_tick_wall_ms && now_ms - st->last_tick_wall_ms > 3 * st->interval_ms + 1000)
        json_array_append_new(p, json_sprintf("no sample for %.1f s",
                                              (double)(now_ms - st->last_tick_wall_ms) / 1000));
    if (!rd)
        json_array_append_new(p, json_string("the database cannot be opened for reading"));
    if (st->db_over_cap)
        json_array_append_new(
            p, json_sprintf("the database uses %lld bytes, over max_db_bytes %lld, with only the "
                            "newest data left to prune",
                            (long long)st->db_used_bytes, (long long)st->max_db_bytes));
    return p;
}

/* What is not wrong but risky: an open listener without a token. Does not degrade status. */
static json_t *health_warnings(const struct api_env *env)
{
    json_t *w = json_array();
    int read_too;

    if (env->listen_remote && !api_auth_of(env, &read_too))
        json_array_append_new(w, json_string(HTTP_OPEN_WARNING));
    return w;
}

/* Whether export's tz= can name zones here: the tz database answers for Etc/UTC. */

/* The writer's work by kind (storage/db.h db_work_get): calls, CPU time all told and the longest
 * call, in ms; the longest is what bench/writer_burst.py's bursts are made of. */
static int health_work(json_t *j, const struct api_stats *st)
{
    json_t *w = json_object();

    if (!w || json_object_set_new(j, "writer_work", w) < 0)
        return -ENOMEM;
    for (int k = 0; k < DB_WORK_KINDS; k++) {
        const struct db_work *x = &st->writer_work[k];
        json_t *o = json_pack("{s:I, s:f, s:f}", "n", (json_int_t)x->n, "cpu_ms",
                              (double)x->cpu_ns / 1e6, "max_ms", (double)x->max_ns / 1e6);

        if (!o || json_object_set_new(w, db_work_name(k), o) < 0)
            return -ENOMEM;
    }
    return 0;
}

static int tz_database_here(void)
{
    struct tz_zone *z = NULL;
    int ok = tz_load("Etc/UTC", &z) == 0;

    tz_free(z);
    return ok;
}

int api_health(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    struct reader *rd = c->rd;
    struct api_stats st;
    int64_t now = api_now_ms(env);
    char start[40], last[40];
    int64_t heap = mem_heap_in_use();
    json_t *j, *problems;
    char *s;

    get_stats(env, &st);
    problems = health_problems(&st, now, rd);
    tp_format_utc(env->start_wall_ms, start, sizeof(start));
    tp_format_utc(st.last_tick_wall_ms, last, sizeof(last));
    j = json_pack(
        "{s:s, s:s, s:s, s:I, s:f, s:s, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:b, "
        "s:{s:s, s:o, s:I, s:I, s:{s:I, s:I, s:I}, s:{s:I, s:I}}, s:o, s:o, s:{s:I, s:I, s:I, "
        "s:I, s:I}, "
        "s:b, s:{s:o, s:{s:I, s:I, s:I}, s:I, "
        "s:b, "
        "s:i}}",
        "status", json_array_size(problems) ? "degraded" : "ok", "version", env->version, "host",
        env->host, "interval_ms", (json_int_t)st.interval_ms, "uptime_s",
        (double)(now - env->start_wall_ms) / 1000.0, "start_utc", start, "last_sample_utc",
        st.last_tick_wall_ms ? json_string(last) : json_null(), "last_sample_ms",
        st.last_tick_wall_ms ? json_integer(st.last_tick_wall_ms) : json_null(), "ticks",
        (json_int_t)st.ticks, "missed", (json_int_t)st.missed, "queued", (json_int_t)st.queued,
        "unwritten", (json_int_t)(st.queued + st.in_flight), "dropped", (json_int_t)st.dropped,
        "write_failures", (json_int_t)st.write_failures, "writer_failing", st.writer_failing,
        "database", "path", env->db_path ? env->db_path : "", "size_bytes",
        db_bytes(env->db_path) >= 0 ? json_integer(db_bytes(env->db_path)) : json_null(),
        "used_bytes", (json_int_t)st.db_used_bytes, "max_bytes", (json_int_t)st.max_db_bytes,
        "wal_writes", "sqlite_writes", (json_int_t)st.wal_writes_in, "file_writes",
        (json_int_t)st.wal_writes_out, "bytes", (json_int_t)st.wal_bytes, "chunk_slices", "cached",
        (json_int_t)st.chunk_slices_cached, "read", (json_int_t)st.chunk_slices_read, "problems",
        problems, "warnings", health_warnings(env), "wakeups", "runs", (json_int_t)st.wakeups_runs,
        "main", (json_int_t)st.wakeups_main, "writer_rests", (json_int_t)st.writer_rests,
        "writer_resumes", (json_int_t)st.writer_resumes, "writer_tick_rests",
        (json_int_t)st.writer_tick_rests, "tz_database", tz_database_here(), "memory",
        "heap_in_use_bytes", heap >= 0 ? json_integer(heap) : json_null(), "writer_sqlite",
        "statements_bytes", (json_int_t)st.writer_stmt_bytes, "schema_bytes",
        (json_int_t)st.writer_schema_bytes, "cache_bytes", (json_int_t)st.writer_cache_bytes,
        "writer_span_cache_bytes", (json_int_t)st.writer_span_cache_bytes, "runs_table_open",
        st.runs_table_open, "http_readers_opened", (json_int_t)st.http_readers_opened);
    if (!j)
        return -ENOMEM;
    if (health_work(j, &st) < 0) {
        json_decref(j);
        return -ENOMEM;
    }
    s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(j);
    if (!s)
        return -ENOMEM;
    out->status = 200;
    out->content_type = "application/json";
    out->body = s;
    out->body_len = strlen(s);
    return 0;
}

static void counter_json(struct sbuf *b, const struct series *s)
{
    struct pdh_path_parts parts;
    char path[512];

    series_path(s, path, sizeof(path));
    series_parts(s, &parts);
    sbuf_printf(b, "{\"path\":");
    api_json_str(b, path);
    sbuf_printf(b, ",\"object\":");
    api_json_str(b, parts.object);
    sbuf_printf(b, ",\"instance\":");
    if (!parts.instance[0])
        sbuf_printf(b, "null");
    else
        api_json_str(b, parts.instance);
    sbuf_printf(b, ",\"counter\":");
    api_json_str(b, parts.counter);
    sbuf_printf(b, ",\"unit\":");
    api_json_str(b, series_unit(s));
    sbuf_printf(b, ",\"kind\":");
    api_json_str(b, series_kind(s));
    sbuf_printf(b, "}");
}

/* Resolve the patterns of `key`; 1 when *out already holds an error answer. */
static int resolve(const struct api_env *env, struct reader *rd, const struct tick *latest,
                   const struct query *q, const char *key, struct series_set *set,
                   struct api_response *out)
{
    struct pattern pats[API_MAX_PATTERNS];
    size_t npat;
    int rc = api_patterns(q, key, 1, pats, &npat, out);

    (void)env;
    if (rc)
        return rc;
    rc = series_resolve(rd, latest, pats, npat, API_MAX_SERIES * 10, set);
    if (rc == -E2BIG)
        return api_error(out, 400, "too_many_series", "the patterns match more than %d counters",
                         API_MAX_SERIES * 10) < 0
                   ? -ENOMEM
                   : 1;
    if (rc == -EIO)
        return api_error(out, 503, "database_unavailable", "the database cannot be read: %s",
                         reader_errmsg(rd)) < 0
                   ? -ENOMEM
                   : 1;
    return rc;
}

int api_counters(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    struct reader *rd = c->rd;
    const struct query *q = c->q;
    struct tick *latest = env->live ? live_latest(env->live) : NULL;
    struct series_set set = {0};
    struct sbuf b = {0};
    int rc = resolve(env, rd, latest, q, "match", &set, out);

    tick_free(latest);
    if (rc)
        goto out;
    sbuf_printf(&b, "{\"host\":");
    api_json_str(&b, env->host);
    sbuf_printf(&b, ",\"counters\":[");
    for (size_t i = 0; i < set.n; i++) {
        if (i)
            sbuf_printf(&b, ",");
        counter_json(&b, &set.s[i]);
    }
    sbuf_printf(&b, "]}\n");
    rc = api_reply(out, &b, NULL);
out:
    series_set_free(&set);
    return rc < 0 ? rc : 0;
}

static const struct tick_row *find_row(const struct tick *t, int obj, const char *inst)
{
    for (size_t r = 0; r < t->obj[obj].n; r++)
        if (!strcmp(t->obj[obj].rows[r].name, inst))
            return &t->obj[obj].rows[r];
    return NULL;
}

/* The value of series s in tick t, NaN when it has none. */
static double latest_value(const struct tick *t, const struct series *s)
{
    const struct tick_row *row;
    double v;

    if (s->obj == SERIES_PDH) {
        for (size_t i = 0; i < t->n_extras; i++)
            if (!strcmp(t->extras[i].path, s->pdh_path))
                return t->extras[i].valid ? t->extras[i].value : NAN;
        return NAN;
    }
    row = find_row(t, s->obj, s->inst);
    if (!row || !counter_eval(&counter_objects[s->obj].counters[s->counter], row->v, row->null_mask,
                              t->interval_ms, &v))
        return NAN;
    return v;
}

int api_latest(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    const struct query *q = c->q;
    struct tick *t = env->live ? live_latest(env->live) : NULL;
    struct series_set set = {0};
    struct sbuf b = {0};
    char ts[40], path[512];
    int rc;

    if (!t)
        return api_error(out, 503, "no_sample",
                         "no sample has been taken yet; try again in a "
                         "second");
    /* Only the instances of the newest tick: the answer never touches the database. */
    rc = resolve(env, NULL, t, q, "counter", &set, out);
    if (rc)
        goto out;
    sbuf_printf(&b, "{\"host\":");
    api_json_str(&b, env->host);
    sbuf_printf(&b, ",\"t_ms\":%lld,\"time_utc\":\"%s\",\"interval_ms\":", (long long)t->wall_ms,
                tp_format_utc(t->wall_ms, ts, sizeof(ts)));
    if (t->interval_ms > 0)
        sbuf_printf(&b, "%lld", (long long)t->interval_ms);
    else
        sbuf_printf(&b, "null");
    sbuf_printf(&b, ",\"values\":[");
    for (size_t i = 0; i < set.n; i++) {
        const struct series *s = &set.s[i];

        series_path(s, path, sizeof(path));
        sbuf_printf(&b, "%s{\"path\":", i ? "," : "");
        api_json_str(&b, path);
        sbuf_printf(&b, ",\"unit\":");
        api_json_str(&b, series_unit(s));
        sbuf_printf(&b, ",\"value\":");
        api_json_num(&b, latest_value(t, s));
        sbuf_printf(&b, "}");
    }
    sbuf_printf(&b, "]}\n");
    rc = api_reply(out, &b, NULL);
out:
    series_set_free(&set);
    tick_free(t);
    return rc < 0 ? rc : 0;
}

int api_metrics(const struct api_call *c, struct api_response *out)
{
    const struct api_env *env = c->env;
    struct tick *t = env->live ? live_latest(env->live) : NULL;
    struct api_stats st;
    struct metrics_self self = {0};
    struct sbuf b = {0};
    int rc;

    get_stats(env, &st);
    self.version = env->version;
    self.host = env->host;
    self.clk_tck = env->cpu_ticks_per_s;
    self.ticks = st.ticks;
    self.missed = st.missed;
    self.dropped = st.dropped;
    self.written = st.written;
    self.write_failures = st.write_failures;
    self.queued = st.queued + st.in_flight;
    self.db_bytes = db_bytes(env->db_path);
    self.start_wall_ms = env->start_wall_ms;
    self.last_tick_wall_ms = st.last_tick_wall_ms;
    self.last_collect_ns = st.last_collect_ns;
    rc = metrics_render(t, &self, &b);
    tick_free(t);
    if (rc < 0) {
        sbuf_free(&b);
        return rc;
    }
    return api_reply(out, &b, "text/plain; version=0.0.4; charset=utf-8");
}
