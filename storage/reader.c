/*
 * reader.c - read-only queries of the counter log; see reader.h.
 */
#include "storage/reader.h"

#include "base/sbuf.h"
#include "storage/chunk_sql.h"
#include "storage/db.h"
#include "storage/schema.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
    sqlite3 *conn;
    int tchunks; /* the file has ticks_chunks (schema version 6 on): read the chunked ticks too */
};

_Static_assert(COUNTER_MAX_FIELDS <= 64, "null masks are 64 bits");

int reader_open(const char *path, struct reader **out, char *err, size_t errlen)
{
    struct reader *r = calloc(1, sizeof(*r));
    sqlite3_stmt *st = NULL;
    int rc, version = -1;

    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    rc = sqlite3_open_v2(path, &r->conn, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s read-only: %s", path, sqlite3_errstr(rc));
        reader_close(r);
        return -EIO;
    }
    /* The writer commits in a few ms; a reader waits that out rather than failing. */
    sqlite3_busy_timeout(r->conn, 2000);
    if (chunk_sql_register(r->conn) != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot register the chunk functions", path);
        reader_close(r);
        return -ENOMEM;
    }
    if (sqlite3_prepare_v2(r->conn, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (version < 1 || version > DB_SCHEMA_VERSION) {
        snprintf(err, errlen, "%s: not a perflog database this build reads (schema version %d)",
                 path, version);
        reader_close(r);
        return -EPROTO;
    }
    if (sqlite3_prepare_v2(r->conn,
                           "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                           "'ticks_chunks'",
                           -1, &st, NULL) == SQLITE_OK)
        r->tchunks = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    *out = r;
    return 0;
}

void reader_close(struct reader *r)
{
    if (!r)
        return;
    sqlite3_close_v2(r->conn);
    free(r);
}

const char *reader_errmsg(struct reader *r)
{
    return sqlite3_errmsg(r->conn);
}

void reader_release_memory(struct reader *r)
{
    sqlite3_db_release_memory(r->conn);
}

static int prepare(struct reader *r, const char *sql, sqlite3_stmt **st)
{
    return sqlite3_prepare_v2(r->conn, sql, -1, st, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Step to the end; SQLITE_DONE -> 0, a callback's stop value, or -EIO. */
static int finish(sqlite3_stmt *st, int rc, int stopped)
{
    sqlite3_finalize(st);
    if (stopped)
        return stopped;
    return rc == SQLITE_DONE ? 0 : -EIO;
}

int reader_run_window(struct reader *r, int64_t id, struct reader_run *out)
{
    sqlite3_stmt *st;
    int rc;

    if (prepare(r,
                "SELECT coalesce(status, ''), start_ms, coalesce(end_ms, 0), "
                "coalesce(settled_ms, 0), coalesce(pid, -1) FROM runs WHERE id = ?",
                &st) < 0)
        return -EIO;
    sqlite3_bind_int64(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        snprintf(out->status, sizeof(out->status), "%s", (const char *)sqlite3_column_text(st, 0));
        out->start_ms = sqlite3_column_int64(st, 1);
        out->end_ms = sqlite3_column_int64(st, 2);
        out->settled_ms = sqlite3_column_int64(st, 3);
        out->pid = sqlite3_column_int64(st, 4);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : -EIO;
}

int reader_labelled_report(struct reader *r, const char *label, int64_t before_ms, int64_t *id,
                           char **json_out)
{
    sqlite3_stmt *st;
    int rc;

    if (prepare(r,
                "SELECT id, report_json FROM runs WHERE label = ? AND status = 'settled' AND "
                "end_ms <= ? AND report_json IS NOT NULL ORDER BY end_ms DESC LIMIT 1",
                &st) < 0)
        return -EIO;
    sqlite3_bind_text(st, 1, label, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, before_ms);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *json_out = strdup((const char *)sqlite3_column_text(st, 1));
        *id = sqlite3_column_int64(st, 0);
        if (!*json_out)
            rc = SQLITE_NOMEM;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_NOMEM)
        return -ENOMEM;
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : -EIO;
}

int reader_next_tick(struct reader *r, int64_t from_ms, int64_t *t_ms)
{
    sqlite3_stmt *st;
    int rc;

    /* The plain ticks, then the chunked ones: the smallest max_t_ms at or after from_ms is a
     * tick's time, so only the chunks whose min_t_ms is at or before it can hold an earlier one
     * (one or two on a steady clock), and only those are decoded. */
    if (prepare(r,
                r->tchunks
                    ? "SELECT min(x) FROM (SELECT min(t_ms) AS x FROM ticks WHERE t_ms >= ?1 UNION "
                      "ALL SELECT min(r.v0) FROM ticks_chunks c, chunk_rows(c.t_ms) r WHERE "
                      "c.max_t_ms >= ?1 AND c.min_t_ms <= (SELECT min(max_t_ms) FROM ticks_chunks "
                      "WHERE max_t_ms >= ?1) AND r.v0 >= ?1)"
                    : "SELECT min(t_ms) FROM ticks WHERE t_ms >= ?1",
                &st) < 0)
        return -EIO;
    sqlite3_bind_int64(st, 1, from_ms);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL)
        rc = SQLITE_DONE; /* min() of no rows */
    else if (rc == SQLITE_ROW)
        *t_ms = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : -EIO;
}

int reader_instances(struct reader *r,
                     int (*cb)(void *arg, int obj, const char *name, int64_t inst), void *arg)
{
    sqlite3_stmt *st;
    int rc, stop = 0;

    if (prepare(r, "SELECT id, object, name FROM instances ORDER BY id", &st) < 0)
        return -EIO;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int obj = counter_object_find((const char *)sqlite3_column_text(st, 1));
        const char *name = (const char *)sqlite3_column_text(st, 2);

        if (obj >= 0 && name)
            stop = cb(arg, obj, name, sqlite3_column_int64(st, 0));
    }
    return finish(st, stop ? SQLITE_DONE : rc, stop);
}

static int64_t meta_int(struct reader *r, const char *key)
{
    sqlite3_stmt *st;
    int64_t v = 0;

    if (prepare(r, "SELECT value FROM meta WHERE key = ?", &st) < 0)
        return 0;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

int reader_host(struct reader *r, char *buf, size_t cap)
{
    sqlite3_stmt *st;
    const unsigned char *v;
    int rc;

    if (cap > 0)
        buf[0] = '\0';
    if (prepare(r, "SELECT value FROM meta WHERE key = 'host'", &st) < 0)
        return -EIO;
    rc = sqlite3_step(st);
    v = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
    if (v && cap > 0)
        snprintf(buf, cap, "%s", (const char *)v);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return -EIO;
    return v ? 0 : -ENOENT;
}

int reader_rollup_marks(struct reader *r, int64_t *minute_until_ms, int64_t *hour_until_ms)
{
    int64_t h;

    *minute_until_ms = meta_int(r, "rollup_1m_until_ms");
    h = meta_int(r, "rollup_1h_next_ms");
    *hour_until_ms = h > 0 ? h : 0;
    return 0;
}

int reader_ticks(struct reader *r, int64_t from_ms, int64_t to_ms,
                 int (*cb)(void *arg, int64_t tick, int64_t t_ms, int64_t interval_ms), void *arg)
{
    sqlite3_stmt *st;
    int rc, stop = 0;

    /* plain and chunked alike (ticks_all, but reading only the chunks whose times reach the
     * range, by their index) */
    if (prepare(r,
                r->tchunks
                    ? "SELECT id, t_ms, coalesce(interval_ms, -1) FROM ticks WHERE t_ms BETWEEN ?1 "
                      "AND ?2 UNION ALL SELECT r.tick, r.v0, coalesce(r.v1, -1) FROM ticks_chunks "
                      "c, chunk_rows(c.t_ms, c.interval_ms) r WHERE c.max_t_ms >= ?1 AND "
                      "c.min_t_ms <= ?2 AND r.v0 BETWEEN ?1 AND ?2 ORDER BY 2, 1"
                    : "SELECT id, t_ms, coalesce(interval_ms, -1) FROM ticks WHERE t_ms BETWEEN ?1 "
                      "AND ?2 ORDER BY t_ms, id",
                &st) < 0)
        return -EIO;
    sqlite3_bind_int64(st, 1, from_ms);
    sqlite3_bind_int64(st, 2, to_ms);
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
        stop = cb(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                  sqlite3_column_int64(st, 2));
    return finish(st, stop ? SQLITE_DONE : rc, stop);
}

/* " AND column IN (1,2,3)": ids are integers the caller got from the instances or pdh_paths
 * table, so they are written into the SQL as they are. */
static void id_list(struct sbuf *b, const char *column, const int64_t *ids, size_t nids)
{
    sbuf_printf(b, " AND %s IN (", column);
    for (size_t i = 0; i < nids; i++)
        sbuf_printf(b, "%s%lld", i ? "," : "", (long long)ids[i]);
    sbuf_printf(b, ")");
}

/* 1 when the database has table `table``suffix`: an object's tables come with its first instance,
 * and one of an older schema, not yet upgraded by a perflogd, lacks the chunk tables and the
 * tables of objects added since (obj_smb, obj_nfs). */
static int has_table(struct reader *r, const char *table, const char *suffix)
{
    char sql[160];
    sqlite3_stmt *st;
    int yes = 0;

    snprintf(sql, sizeof(sql), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '%s%s'",
             table, suffix);
    if (prepare(r, sql, &st) < 0)
        return 0;
    yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

static int has_chunk_table(struct reader *r, const struct object_def *od)
{
    return has_table(r, od->table, "_chunks");
}

/* 1 when od's roll-up table of `suffix` has the operations of its per-operation counters (a
 * file of an older perflogd, read without the upgrade a perflogd would make, has not). */
static int has_ops_columns(struct reader *r, const struct object_def *od, const char *suffix)
{
    char table[128];
    sqlite3_stmt *st;
    int yes = 0;

    if (prepare(r, "SELECT 1 FROM pragma_table_info(?1) WHERE name GLOB 'c*_ops'", &st) < 0)
        return 0;
    snprintf(table, sizeof(table), "%s%s", od->table, suffix);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_TRANSIENT);
    yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* The fields of od that its raw table has, as a bit mask: a file of an older perflogd, read
 * without the upgrade a perflogd would make, lacks the columns of fields added since (they are
 * only ever appended). -EIO when the table cannot be read. */
static int64_t present_fields(struct reader *r, const struct object_def *od)
{
    sqlite3_stmt *st;
    int64_t mask = 0;

    if (prepare(r, "SELECT name FROM pragma_table_info(?1)", &st) < 0)
        return -EIO;
    sqlite3_bind_text(st, 1, od->table, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);

        for (size_t f = 0; name && f < od->nfields; f++)
            if (strcmp(name, od->fields[f].column) == 0)
                mask |= INT64_C(1) << f;
    }
    sqlite3_finalize(st);
    return mask;
}

int reader_rows(struct reader *r, int obj, uint32_t fields, const int64_t *insts, size_t ninst,
                int64_t tick_from, int64_t tick_to,
                int (*cb)(void *arg, int64_t tick, int64_t inst, const int64_t *v,
                          uint64_t null_mask),
                void *arg)
{
    const struct object_def *od = &counter_objects[obj];
    struct sbuf b = {0};
    sqlite3_stmt *st;
    int64_t v[COUNTER_MAX_FIELDS] = {0};
    int col[COUNTER_MAX_FIELDS];
    int rc, stop = 0, ncol = 2;
    int64_t present;
    char *sql;

    if ((insts && ninst == 0) || !has_table(r, od->table, ""))
        return 0; /* no rows of an object the file has no table for */
    present = present_fields(r, od);
    if (present < 0)
        return (int)present;
    sbuf_printf(&b, "SELECT o.tick, o.inst");
    for (size_t f = 0; f < od->nfields; f++) {
        col[f] = -1;
        if ((fields & (1u << f)) && (present & (INT64_C(1) << f))) {
            sbuf_printf(&b, ", o.%s", od->fields[f].column);
            col[f] = ncol++;
        }
    }
    /* The raw rows, and the chunked ones of the chunks that overlap the range (by their index
     * on last_tick) */
    sbuf_printf(&b, " FROM (");
    schema_raw_select_fields(&b, od, (uint64_t)present);
    /* each side of the chunk steps' edge (chunk_sql.h) */
    sbuf_printf(&b, " WHERE tick BETWEEN ?1 AND ?2 AND tick >= " CHUNK_EDGE_SQL);
    if (insts)
        id_list(&b, "inst", insts, ninst);
    if (has_chunk_table(r, od)) {
        sbuf_printf(&b, " UNION ALL ");
        schema_chunk_select(
            &b, od,
            " WHERE c.last_tick >= ?1 AND c.first_tick <= ?2 AND c.last_tick < " CHUNK_EDGE_SQL);
        if (insts)
            id_list(&b, "c.inst", insts, ninst);
        sbuf_printf(&b, " AND r.tick BETWEEN ?1 AND ?2");
    }
    sbuf_printf(&b, ") o ORDER BY o.tick, o.inst");
    sql = sbuf_take(&b);
    if (!sql)
        return -ENOMEM;
    rc = prepare(r, sql, &st);
    free(sql);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, tick_from);
    sqlite3_bind_int64(st, 2, tick_to);
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint64_t null_mask = 0;

        for (size_t f = 0; f < od->nfields; f++) {
            if (col[f] < 0 || sqlite3_column_type(st, col[f]) == SQLITE_NULL) {
                null_mask |= 1ull << f;
                v[f] = 0;
            } else {
                v[f] = sqlite3_column_int64(st, col[f]);
            }
        }
        stop = cb(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), v, null_mask);
    }
    return finish(st, stop ? SQLITE_DONE : rc, stop);
}

int reader_process_ids(struct reader *r, int64_t tick_from, int64_t tick_to,
                       int (*cb)(void *arg, int64_t inst, int64_t pid, int64_t ppid), void *arg)
{
    sqlite3_stmt *st;
    int rc, stop = 0;

    /* pid and ppid are fixed for an instance: one row each, by the primary key's tick range,
     * raw or chunked (obj_process_all, since the chunk tables came) */
    if (!has_table(r, counter_objects[OBJ_PROCESS].table, ""))
        return 0; /* no process followed yet: its tables come with the first */
    if (prepare(r,
                has_chunk_table(r, &counter_objects[OBJ_PROCESS])
                    ? "SELECT inst, coalesce(max(pid), -1), coalesce(max(ppid), -1) FROM "
                      "obj_process_all WHERE tick BETWEEN ? AND ? GROUP BY inst"
                    : "SELECT inst, coalesce(max(pid), -1), coalesce(max(ppid), -1) FROM "
                      "obj_process WHERE tick BETWEEN ? AND ? GROUP BY inst",
                &st) < 0)
        return -EIO;
    sqlite3_bind_int64(st, 1, tick_from);
    sqlite3_bind_int64(st, 2, tick_to);
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
        stop = cb(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                  sqlite3_column_int64(st, 2));
    return finish(st, stop ? SQLITE_DONE : rc, stop);
}

int reader_rollups(struct reader *r, int obj, enum reader_tier tier, const int64_t *insts,
                   size_t ninst, int64_t from_ms, int64_t to_ms,
                   int (*cb)(void *arg, const struct reader_rollup_row *row), void *arg)
{
    const struct object_def *od = &counter_objects[obj];
    struct reader_rollup_row row;
    struct sbuf b = {0};
    sqlite3_stmt *st;
    int rc, stop = 0, ops;
    char *sql;

    if (ninst == 0 || od->ncounters > READER_MAX_COUNTERS)
        return ninst == 0 ? 0 : -EINVAL;
    if (!has_table(r, od->table, tier == READER_1H ? "_1h" : "_1m"))
        return 0; /* no buckets of an object the file has no tables for */
    ops = has_ops_columns(r, od, tier == READER_1H ? "_1h" : "_1m");
    sbuf_printf(&b, "SELECT o.bucket_ms, o.inst, o.n");
    for (size_t k = 0; k < od->ncounters; k++)
        sbuf_printf(&b, ", o.c%zu_min, o.c%zu_avg, o.c%zu_max", k, k, k);
    for (size_t k = 0; k < od->ncounters; k++)
        if (od->counters[k].flags & CF_PER_OP)
            sbuf_printf(&b, ops ? ", o.c%zu_ops" : ", NULL", k);
    sbuf_printf(&b, " FROM %s_%s o WHERE o.bucket_ms BETWEEN ? AND ?", od->table,
                tier == READER_1H ? "1h" : "1m");
    id_list(&b, "o.inst", insts, ninst);
    sbuf_printf(&b, " ORDER BY o.bucket_ms");
    sql = sbuf_take(&b);
    if (!sql)
        return -ENOMEM;
    rc = prepare(r, sql, &st);
    free(sql);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, from_ms);
    sqlite3_bind_int64(st, 2, to_ms);
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        memset(&row, 0, sizeof(row));
        row.bucket_ms = sqlite3_column_int64(st, 0);
        row.inst = sqlite3_column_int64(st, 1);
        row.n = sqlite3_column_int64(st, 2);
        for (size_t k = 0; k < od->ncounters; k++) {
            int c = 3 + 3 * (int)k;

            if (sqlite3_column_type(st, c + 1) == SQLITE_NULL) {
                row.null_mask |= 1ull << k;
                continue;
            }
            row.min[k] = sqlite3_column_double(st, c);
            row.avg[k] = sqlite3_column_double(st, c + 1);
            row.max[k] = sqlite3_column_double(st, c + 2);
        }
        for (size_t k = 0, c = 3 + 3 * od->ncounters; k < od->ncounters; k++) {
            if (!(od->counters[k].flags & CF_PER_OP))
                continue;
            row.ops[k] = sqlite3_column_type(st, (int)c) == SQLITE_NULL
                             ? NAN
                             : sqlite3_column_double(st, (int)c);
            c++;
        }
        stop = cb(arg, &row);
    }
    return finish(st, stop ? SQLITE_DONE : rc, stop);
}

/* 1 when the database has the extra PDH series' tables (version 4 on), 0 when not, -EIO. */
static int has_pdh(struct reader *r)
{
    sqlite3_stmt *st;
    int rc;

    if (prepare(r, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'pdh_paths'", &st) <
        0)
        return -EIO;
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -EIO;
}

static const char *text_or_empty(sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);

    return s ? (const char *)s : "";
}

int reader_pdh_paths(struct reader *r,
                     int (*cb)(void *arg, int64_t id, const char *path, const char *object,
                               const char *instance, const char *counter),
                     void *arg)
{
    sqlite3_stmt *st;
    int rc = has_pdh(r), stop = 0;

    if (rc <= 0)
        return rc;
    if (prepare(r, "SELECT id, path, object, instance, counter FROM pdh_paths ORDER BY id", &st) <
        0)
        return -EIO;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
        stop = cb(arg, sqlite3_column_int64(st, 0), text_or_empty(st, 1), text_or_empty(st, 2),
                  text_or_empty(st, 3), text_or_empty(st, 4));
    return finish(st, stop ? SQLITE_DONE : rc, stop);
}

/* Prepare the SQL of b (taken), or -ENOMEM / -EIO. */
static int prepare_built(struct reader *r, struct sbuf *b, sqlite3_stmt **st)
{
    char *sql = sbuf_take(b);
    int rc;

    if (!sql)
        return -ENOMEM;
    rc = prepare(r, sql, st);
    free(sql);
    return rc;
}

int reader_pdh_values(struct reader *r, const int64_t *ids, size_t nids, int64_t tick_from,
                      int64_t tick_to,
                      int (*cb)(void *arg, int64_t tick, int64_t id, double value, int valid),
                      void *arg)
{
    struct sbuf b = {0};
    sqlite3_stmt *st;
    int rc = nids ? has_pdh(r) : 0, stop = 0;

    if (rc <= 0)
        return rc;
    sbuf_printf(&b, "SELECT tick, path_id, value FROM pdh_values WHERE tick BETWEEN ? AND ?");
    id_list(&b, "path_id", ids, nids);
    sbuf_printf(&b, " ORDER BY tick, path_id");
    if ((rc = prepare_built(r, &b, &st)) < 0)
        return rc;
    sqlite3_bind_int64(st, 1, tick_from);
    sqlite3_bind_int64(st, 2, tick_to);
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int valid = sqlite3_column_type(st, 2) != SQLITE_NULL;

        stop = cb(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                  valid ? sqlite3_column_double(st, 2) : 0.0, valid);
    }
    return finish(st, stop ? SQLITE_DONE : rc, stop);
}

int reader_pdh_rollups(struct reader *r, enum reader_tier tier, const int64_t *ids, size_t nids,
                       int64_t from_ms, int64_t to_ms,
                       int (*cb)(void *arg, const struct reader_rollup_row *row), void *arg)
{
    struct reader_rollup_row row;
    struct sbuf b = {0};
    sqlite3_stmt *st;
    int rc = nids ? has_pdh(r) : 0, stop = 0;

    if (rc <= 0)
        return rc;
    sbuf_printf(&b,
                "SELECT bucket_ms, path_id, n, value_min, value_avg, value_max FROM pdh_values_%s "
                "WHERE bucket_ms BETWEEN ? AND ?",
                tier == READER_1H ? "1h" : "1m");
    id_list(&b, "path_id", ids, nids);
    sbuf_printf(&b, " ORDER BY bucket_ms");
    if ((rc = prepare_built(r, &b, &st)) < 0)
        return rc;
    sqlite3_bind_int64(st, 1, from_ms);
    sqlite3_bind_int64(st, 2, to_ms);
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        memset(&row, 0, sizeof(row));
        row.bucket_ms = sqlite3_column_int64(st, 0);
        row.inst = sqlite3_column_int64(st, 1);
        row.n = sqlite3_column_int64(st, 2);
        if (sqlite3_column_type(st, 4) == SQLITE_NULL)
            row.null_mask = 1;
        row.min[0] = sqlite3_column_double(st, 3);
        row.avg[0] = sqlite3_column_double(st, 4);
        row.max[0] = sqlite3_column_double(st, 5);
        stop = cb(arg, &row);
    }
    return finish(st, stop ? SQLITE_DONE : rc, stop);
}
